#!/usr/bin/env bash
# python-run.sh - the Python package on a real GPU: installs kscope from
# python/ (no registry on the GPU machine: build isolation off, msgpack-c
# and yajl from the prefix tools/gpu-run.sh unpacked), runs every
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
# Build in a copy so the repository's python/ keeps no build output.
cp -r "$src/python" "$work/pkgsrc"
ln -s "$src/src" "$work/src"
ln -s "$src/include" "$work/include"
site=$work/site
if ! (cd "$work/pkgsrc" && python3 -m pip install -q --no-build-isolation --no-deps \
        --target "$site" . >"$work/build.log" 2>&1); then
    # setuptools older than 70.1 without the wheel package cannot make a
    # wheel, and a Python without setuptools cannot run setup.py: build the
    # extension in place with the C compiler alone.
    echo "python-run: pip install failed (see build.log); building in place"
    if ! (cd "$work/pkgsrc" && python3 kscope_setup.py >>"$work/build.log" 2>&1); then
        echo "FAIL python-install: the extension did not build:"
        tail -20 "$work/build.log"
        exit 1
    fi
    site=$work/pkgsrc
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
