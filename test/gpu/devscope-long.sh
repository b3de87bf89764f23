#!/usr/bin/env bash
# devscope-long.sh - device-side scopes over a long run (devscope-long.cu):
# 1056 CTAs x 8 warps with 4 scopes per thread (outer { inner }, a, b), 210
# launches back to back, about 7.1M records through the default 1M-record
# buffer. With kernels of a few milliseconds the reader keeps up: none is
# lost and each scope counts exactly one record per warp and launch, inner
# nested under outer. With kernels of microseconds (records far faster
# than any host can take them) what is kept and what is counted lost add
# up to every record made. Prints PASS/FAIL lines and the figures; exits 1
# on a failure. Env: KSCOPE_SOURCE_DIR, KSCOPE_BINARY_DIR, KSCOPE_GPU_WORK.
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work devscope-long
if ! gpu_nvcc "$work/devscope-long" "$src/test/gpu/devscope-long.cu" -I"$src/include" \
    -I"$src/test/gpu" >"$work/nvcc.log" 2>&1; then
    fail "nvcc: $(tail -5 "$work/nvcc.log")"
    exit 1
fi
cd "$work"
run() { # NAME SPIN: kscope run with the default device-scope options
    local t0=$SECONDS
    if ! timeout 200 "$bin/kscope" run --top 0 -n "$1" --device-scopes -- ./devscope-long "$2" 210 \
        >"$1.log" 2>&1; then
        fail "$1: kscope run failed: $(tail -5 "$1.log")"
        return 1
    fi
    echo "NOTE  devscope-long: $1: $(grep -m1 '^devscope-long:' "$1.log"), $((SECONDS - t0)) s in all"
}
run slow 6000000 && { python3 "$src/test/gpu/devscope_check.py" long slow.hatchet 210 0 || status=1; }
run fast 20000 && { python3 "$src/test/gpu/devscope_check.py" long fast.hatchet 210 any || status=1; }
exit $status
