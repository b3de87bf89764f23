#!/usr/bin/env bash
# run-torch.sh - `kscope run -- python` on a torch loop: the kernels under
# the loop's NVTX range "step" must have the same names and counts as
# torch.profiler reports for that loop, and the exit summary's totals must
# match the profile file (run-torch.py). Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with the kscope
#      binary and libkscope.so), KSCOPE_GPU_WORK (scratch folder; outputs
#      land in $KSCOPE_GPU_WORK/run-torch)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work run-torch
py=$src/test/gpu/run-torch.py
if ! gpu_torch; then
    echo "FAIL  run-torch: torch with CUDA is not importable"
    exit 1
fi

# the reference: torch.profiler on the same loop
python3 "$py" work --torch-profiler "$work/torch.json" >"$work/torch.log" 2>&1 || {
    echo "FAIL  run-torch: the torch.profiler run failed: $(tail -3 "$work/torch.log")"
    exit 1
}

timeout -k 10 240 "$bin/kscope" run -n torch -o "$work" --top 50 -- python3 "$py" work \
    >"$work/run.out" 2>"$work/summary.txt"
rc=$?
cat "$work/summary.txt"
if [ $rc -ne 0 ]; then
    echo "FAIL  run-torch: kscope run exited $rc"
    exit 1
fi
if [ "$(cat "$work/run.out")" != "work done" ]; then
    fail "program output changed: $(head -3 "$work/run.out")"
fi
if [ ! -f "$work/torch.hatchet" ]; then
    echo "FAIL  run-torch: no $work/torch.hatchet ($(ls "$work"))"
    exit 1
fi
python3 "$py" check "$work/torch.hatchet" "$work/torch.json" "$work/summary.txt" || status=1
exit $status
