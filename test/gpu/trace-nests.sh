#!/usr/bin/env bash
# trace-nests.sh - every thread track of a `kscope run -d trace` trace of a
# torch training loop nests (test/trace_nests.py): the loop
# (trace_torch.py) calls CUB through torch (embedding_bag's backward on
# autograd's thread, sort, unique, randperm) inside NVTX ranges, with AdamW.
# Run as is, and with CLOCK_MONOTONIC drifting from the CPU's time stamp
# counter (test/progs/skew-clock.c), where launch slices drawn on another
# clock than the scopes would cross the ranges holding them. Says whether
# CUB's own ranges (cub::...) were in the trace. Prints PASS/FAIL lines;
# exits 1 on a failure, 77 without torch or a GPU. Run by tools/gpu-run.sh.
# Env: KSCOPE_SOURCE_DIR, KSCOPE_BINARY_DIR, KSCOPE_GPU_WORK.
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work trace-nests
if ! gpu_torch; then
    echo "SKIP  trace-nests: needs torch with CUDA and a GPU"
    exit 77
fi
cc -shared -fPIC -O1 -o "$work/skew-clock.so" "$src/test/progs/skew-clock.c" -ldl || exit 1
cd "$work"
grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo &&
    echo "NOTE  trace-nests: the CPU's TSC is invariant: kscope's host clock is the TSC" ||
    echo "NOTE  trace-nests: no invariant TSC: kscope's host clock is CLOCK_MONOTONIC"
for run in plain skewed; do
    pre=()
    [ "$run" = skewed ] && pre=(env LD_PRELOAD="$work/skew-clock.so")
    if ! timeout -k 10 240 "${pre[@]}" "$bin/kscope" run -d trace -n "$run" -- \
        python3 "$src/test/gpu/trace_torch.py" 30 >"$run.out" 2>"$run.err"; then
        fail "$run: kscope run failed: $(tail -5 "$run.err")"
        continue
    fi
    if python3 "$src/test/trace_nests.py" "$run.chrome_trace" >"$run.nests"; then
        pass "$run: $(cut -c7- "$run.nests")"
    else
        fail "$run: $(cat "$run.nests")"
    fi
    cub=$(grep -o '"name":"cub::[^"]*"' "$run.chrome_trace" | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' ';')
    launches=$(grep -o '"cat":"launch"' "$run.chrome_trace" | wc -l)
    [ "$launches" -gt 0 ] || fail "$run: no launch slice"
    echo "NOTE  trace-nests: $run: $launches launch slices; CUB ranges: ${cub:-none: the CUB in this torch emits no NVTX ranges}"
done
exit $status
