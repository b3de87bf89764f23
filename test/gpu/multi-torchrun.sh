#!/usr/bin/env bash
# multi-torchrun.sh - two ranks under torchrun, profiled by `kscope run`:
#   kscope run -n multi -o DIR [-d trace] -- torchrun --standalone
#       --nproc_per_node 2 multi-torchrun.py DIR
# once for trees (DIR=tree) and once for traces (DIR=trace); each rank runs
# matmul + NCCL all_reduce steps inside NVTX ranges ("warmup", "step") that
# kscope run turns into scopes. Then `kscope merge` of the two rank files
# into merged.hatchet and merged.chrome_trace, and multi-torchrun-check.py
# checks it all. Prints a SKIP line and exits 77 when fewer than two GPUs
# are visible; fails when torch with NCCL is missing. Run by
# tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with the kscope
#      binary and libkscope.so), KSCOPE_GPU_WORK (scratch folder; outputs
#      land in $KSCOPE_GPU_WORK/multi-torchrun), MULTI_STEPS (default 5),
#      MULTI_RUN_TIMEOUT (seconds per kscope run, default 130)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/multi-lib.bash"
multi_need_two_gpus multi-torchrun || exit 77
gpu_work multi-torchrun
ks=$bin/kscope
export MULTI_STEPS=${MULTI_STEPS:-5}
run_limit=${MULTI_RUN_TIMEOUT:-130}

if ! python3 -c 'import torch.distributed as d, sys; sys.exit(0 if d.is_nccl_available() else 1)' \
    2>"$work/torch.err"; then
    echo "FAIL  multi-torchrun: torch with NCCL is not importable: $(tail -1 "$work/torch.err")"
    exit 1
fi
if command -v torchrun >/dev/null 2>&1; then
    launcher=(torchrun)
else
    launcher=(python3 -m torch.distributed.run)
fi

for data in tree trace; do
    dir=$work/$data
    mkdir -p "$dir"
    echo "== kscope run -d $data -- ${launcher[*]} --standalone --nproc_per_node 2"
    # Bounded, so that a hung rank fails this run and the rest still runs
    # within tools/gpu-run.sh's 300 s for the whole test.
    timeout -k 10 "$run_limit" "$ks" run -n multi -o "$dir" -d "$data" -- "${launcher[@]}" \
        --standalone --nproc_per_node 2 "$src/test/gpu/multi-torchrun.py" "$dir" \
        >"$dir/run.log" 2>&1
    rc=$?
    [ $rc -eq 124 ] && echo "(timed out after $run_limit s)"
    tail -40 "$dir/run.log"
    echo "files: $(cd "$dir" && ls | tr '\n' ' ')"
    if [ $rc -ne 0 ]; then
        echo "FAIL  $data run: kscope run exited $rc (see $dir/run.log)"
        status=1
    fi
done

echo "== kscope merge"
if "$ks" merge -o "$work/merged.hatchet" "$work/tree/multi.rank0.hatchet" \
    "$work/tree/multi.rank1.hatchet"; then
    "$ks" view -m time/ms,count,calls -d 3 "$work/merged.hatchet" | sed -n 1,30p
else
    echo "FAIL  kscope merge of the rank trees"
    status=1
fi
if ! "$ks" merge -o "$work/merged.chrome_trace" "$work/trace/multi.rank0.chrome_trace" \
    "$work/trace/multi.rank1.chrome_trace"; then
    echo "FAIL  kscope merge of the rank traces"
    status=1
fi

python3 "$src/test/gpu/multi-torchrun-check.py" "$work" "$MULTI_STEPS" || status=1
exit $status
