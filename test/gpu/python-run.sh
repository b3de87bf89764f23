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
source "$src/test/gpu/gpu-lib.bash"
gpu_work python-run python
source "$src/test/python-lib.sh"
install_kscope "$work" python-run || exit 1
python3 -c "import kscope; print('kscope', kscope.__version__, kscope.detect_backend())"
for t in "$src"/test/gpu/python-*.py; do
    echo "== $(basename "$t")"
    (cd "$work" && timeout 600 python3 "$t" "$work") || status=1
done
echo "== bench/python/bench_scope.py"
(cd "$work" && timeout 300 python3 "$src/bench/python/bench_scope.py") || status=1
echo "== bench/python/bench_hook.py"
(cd "$work" && timeout 300 python3 "$src/bench/python/bench_hook.py") || status=1
exit $status
