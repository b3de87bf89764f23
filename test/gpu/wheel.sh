#!/usr/bin/env bash
# wheel.sh - the binary wheel on the GPU machine: installs only the wheel
# (no compiler step, no extra packages; .whl/kscope/ carries the one
# cp39-abi3 wheel `bash tools/wheel.sh` builds, which serves every CPython
# from 3.9), then from it alone: `kscope version` names the CUPTI backend,
# every test/gpu/python-*.py passes, `kscope run` of a torch program
# records its kernels under their scope and `kscope view` shows them.
# Exits 77 with a SKIP line when no wheel was carried, or there is no GPU.
# Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_GPU_WORK (scratch folder; outputs
#      land in $KSCOPE_GPU_WORK/wheel)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
PY=${PYTHON:-python3}
source "$src/test/gpu/gpu-lib.bash"
wheel=$(ls "$src"/.whl/kscope/kscope-*-cp39-abi3-*.whl 2>/dev/null | head -1)
if [ -z "$wheel" ]; then
    echo "SKIP  wheel: no kscope cp39-abi3 wheel in .whl/kscope/ (build it with bash tools/wheel.sh)"
    exit 77
fi
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
    echo "SKIP  wheel: $("$PY" -V 2>&1) is older than the wheel's CPython 3.9"
    exit 77
fi
if ! gpu_torch; then
    echo "SKIP  wheel: needs torch and a CUDA GPU"
    exit 77
fi
gpu_work wheel
export KSCOPE_WHEEL=$wheel PY
source "$src/test/python-lib.sh"
# Every build tool taken away while it installs: a wheel needs none. (Only
# then: Triton compiles its launchers with CC at run time.)
CC=/bin/false CXX=/bin/false install_kscope "$work" wheel || exit 1
echo "wheel: installed $(basename "$wheel") on $("$PY" -V 2>&1)"

case $(command -v kscope) in
"$work"/site/bin/kscope) ;;
*) fail "kscope on PATH is $(command -v kscope), not the wheel's" ;;
esac
kscope version >"$work/version.txt" 2>&1 || fail "kscope version failed"
grep -q 'gpu backend: cupti' "$work/version.txt" ||
    fail "kscope version does not name the CUPTI backend: $(cat "$work/version.txt")"
"$PY" -c 'import kscope, sys; f = kscope.__file__; sys.exit(0 if f.startswith(sys.argv[1]) else f)' \
    "$work/site/" || fail "import kscope did not load the wheel's package"
"$PY" -c 'import kscope._kscope as k; assert k.__file__.endswith("/_kscope.abi3.so"), k.__file__' ||
    fail "the wheel's extension is not the stable-ABI build"

for t in "$src"/test/gpu/python-*.py; do
    echo "== $(basename "$t") (from the wheel)"
    (cd "$work" && timeout 600 "$PY" "$t" "$work") >"$work/$(basename "$t").log" 2>&1 ||
        { fail "$(basename "$t") failed from the wheel:"; tail -20 "$work/$(basename "$t").log"; }
    grep -c '^PASS' "$work/$(basename "$t").log" | sed 's/^/   PASS lines: /'
done

cat >"$work/mm.py" <<'PYEOF'
import torch
import kscope
a = torch.randn(512, 512, device="cuda")
with kscope.scope("wheel_matmul"):
    for _ in range(3):
        b = a @ a
torch.cuda.synchronize()
PYEOF
(cd "$work" && KSCOPE_QUIET=1 timeout 300 kscope run -n wheelrun -o "$work" -- "$PY" mm.py) \
    >"$work/run.log" 2>&1 || { fail "kscope run failed:"; tail -20 "$work/run.log"; }
kscope view "$work/wheelrun.hatchet" >"$work/view.txt" 2>&1 || { fail "kscope view failed:"; cat "$work/view.txt"; }
grep -q wheel_matmul "$work/view.txt" || fail "kscope view shows no wheel_matmul scope"
grep -A3 wheel_matmul "$work/view.txt" | grep -q -i -E 'gemm|kernel|sm90|cutlass' ||
    fail "no kernel under wheel_matmul in kscope view"
[ $status -eq 0 ] && pass "installed alone; kscope version, Python GPU tests, kscope run and view from it"
exit $status
