#!/usr/bin/env bash
# python-run.sh - the Python package on a real GPU: installs kscope from
# a copy of the repository's package files (setup.py, pyproject.toml,
# python/; no registry on the GPU machine: build isolation off), runs every
# test/gpu/python-*.py (each prints PASS/FAIL lines and exits non-zero on a
# failure), then the Python scope benchmark. Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_GPU_WORK (scratch folder; outputs
#      land in $KSCOPE_GPU_WORK/python), KSCOPE_DEPS (default /tmp/kscope-deps)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
work=${KSCOPE_GPU_WORK:-$(mktemp -d)}/python
deps=${KSCOPE_DEPS:-/tmp/kscope-deps}
rm -rf "$work" && mkdir -p "$work"
if [ -d "$deps/usr/include" ]; then
    export C_INCLUDE_PATH=$deps/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}
    export LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
    export LD_LIBRARY_PATH=$deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
# Build in a copy so the repository keeps no build output.
mkdir -p "$work/pkgsrc"
cp "$src/setup.py" "$src/pyproject.toml" "$work/pkgsrc/"
cp -r "$src/python" "$work/pkgsrc/python"
rm -rf "$work/pkgsrc/python/build" "$work/pkgsrc/python/kscope/"*.so
ln -s "$src/src" "$work/pkgsrc/src"
ln -s "$src/include" "$work/pkgsrc/include"
site=$work/site
if ! (cd "$work/pkgsrc" && python3 -m pip install -q --no-build-isolation --no-deps \
        --target "$site" . >"$work/build.log" 2>&1); then
    # setuptools older than 70.1 without the wheel package cannot make a
    # wheel, and a Python without setuptools cannot run setup.py: build the
    # extension in place with the C compiler alone.
    echo "python-run: pip install failed (see build.log); building in place"
    if ! (cd "$work/pkgsrc" && python3 python/kscope_setup.py >>"$work/build.log" 2>&1); then
        echo "FAIL python-install: the extension did not build:"
        tail -20 "$work/build.log"
        exit 1
    fi
    site=$work/pkgsrc/python
fi
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import kscope; print('kscope', kscope.__version__, kscope.detect_backend())"
status=0
for t in "$src"/test/gpu/python-*.py; do
    echo "== $(basename "$t")"
    (cd "$work" && timeout 600 python3 "$t" "$work") || status=1
done
echo "== bench/python/bench_scope.py"
(cd "$work" && timeout 300 python3 "$src/bench/python/bench_scope.py") || status=1
echo "== bench/python/bench_hook.py"
(cd "$work" && timeout 300 python3 "$src/bench/python/bench_hook.py") || status=1
exit $status
