#!/usr/bin/env bash
# run_bench.sh - what kscope costs a program, each way of running it side
# by side in one script, modes alternating within each round (the order
# rotates from round to round) so that the shared machine's slow stretches
# fall on every mode alike. Three sections:
#
#   c      launch_bench.cu, LAUNCHES empty kernels (<<<1,1>>>), REPS rounds:
#            bare          no profiler
#            floor         cupti_floor.c as the CUDA injection: concurrent-kernel
#                          records only, walked and dropped (any CUPTI tracer pays it)
#            floor_cb      the floor plus a callback at each launch call's begin
#                          and end noting its correlation id (FLOOR_CALLBACKS=1):
#                          what any attribution of kernels to launches costs
#            inproc        kscope_start in the program once CUDA is up (tree)
#            inproc_early  kscope_start before CUDA is initialised
#            run_none      kscope run -b none (preload, NVTX and CUDA injection
#                          entries, no GPU capture)
#            run_tree      kscope run (tree), a program that never annotates
#                          (its launches are not followed one by one)
#            run_scoped    kscope run (tree), the loop inside one scope (an
#                          annotated program: every launch is followed)
#            run_trace     kscope run -d trace
#            sampled_off   kscope run --sample with no window in the loop: the
#                          cost between windows
#            sampled_10    kscope run --sample step:on=1,every=10 with a step
#                          every 1000 launches: one step in ten captured
#   torch  run_loop.py, LAUNCHES x.add_(1) on one element, TORCH_REPS rounds:
#          bare, floor, run_tree, sampled_off, sampled_10, proton, torch_profiler
#   train  train_step.py, a small GPT training step (6 layers, bf16, AdamW),
#          TRAIN_STEPS timed steps, TRAIN_REPS rounds: bare, floor, run_none,
#          run_full, run_sampled (step:on=1,every=10), sampled_off, proton;
#          then the top-10 kernels' shares
#          of GPU time in the last round's full and sampled profiles.
#
# The C loop has two tables: wall time per launch (loop and final
# synchronise), and the launching thread's CPU time per launch in the loop
# (the launches' own cost, less disturbed by a neighbour's load). Each
# table gives per mode the median and quartiles, the ratio to bare,
# and what the mode adds over bare as a multiple of what the floor adds
# with a bootstrap 95% interval (bench_stats.py); the C loop's table adds
# the same against floor_cb. The issue's goals: run_tree and run_trace
# within 1.10 of the floor; sampled within 1.02 of bare on the torch loop
# and 1.005 on the training step.
#
# Usage (repository root, GPU machine, after a build):
#     KSCOPE_BINARY_DIR=/tmp/kscope-build bash bench/gpu/run_bench.sh
# Env: SECTIONS (default "c torch train"; torch and train need torch),
# REPS (default 15), TORCH_REPS (default 5), TRAIN_REPS (default 3),
# LAUNCHES (default 20000), C_MODES (the C loop's modes, default all),
# TRAIN_STEPS (default 30), CUDA_HOME, PIN_CPUS (the
# C loop's processes run on these CPUs, default 2-5 where taskset exists:
# a process that lands on another socket runs 1.5x slower, noise larger
# than what is measured; "" to leave them free).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=${KSCOPE_BINARY_DIR:?set KSCOPE_BINARY_DIR to the build folder}
sections=${SECTIONS:-c torch train}
n=${LAUNCHES:-20000}
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d "${TMPDIR:-/tmp}/kscope-run-bench.XXXXXX")
stats=$src/bench/gpu/bench_stats.py
ks=$bin/kscope
cupti_lib=$cuda/extras/CUPTI/lib64
[ -d "$cupti_lib" ] || cupti_lib=$cuda/lib64
if ! cc -shared -fPIC -O2 -o "$work/floor.so" "$src/bench/gpu/cupti_floor.c" -I"$cuda/include" \
    -I"$cuda/extras/CUPTI/include" -L"$cupti_lib" -lcupti -Wl,-rpath,"$cupti_lib"; then
    echo "run_bench: cannot build the CUPTI floor" >&2
    exit 1
fi
mkdir -p "$work/out"
# No window opens during the run: what a launch costs between windows.
off_spec=time:on=1ms,every=1h,first=1h
ten_spec=step:on=1,every=10

# rounds RESULTS REPS RUNNER MODE...: RUNNER MODE prints one value (empty:
# failed); the order of the modes rotates from round to round.
rounds() {
    local results=$1 reps=$2 runner=$3
    shift 3
    local modes=("$@") count=$#
    : >"$results"
    for r in $(seq "$reps"); do
        for i in $(seq 0 $((count - 1))); do
            local m=${modes[$(((i + r) % count))]}
            local v
            v=$("$runner" "$m")
            echo "$r $m ${v:-fail}" >>"$results"
        done
    done
}

# failures RESULTS ERRLOG: when a run failed, the end of what the runs said
# on stderr (a failed mode is reported, never silently left out)
failures() {
    grep -q ' fail$' "$1" && [ -s "$2" ] || return 0
    echo "some runs failed; the last lines of $2:"
    tail -n 12 "$2" | sed 's/^/    /'
}

have_torch() {
    python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null
}

# ------------------------------------------------------------- C loop
c_mode() {
    local lb=$launch_bench_plain out
    local -a pin=()
    [ -n "$pin_cpus" ] && pin=(taskset -c "$pin_cpus")
    case $1 in
    bare) out=$("${pin[@]}" "$lb" none "$n" "$work/out") ;;
    floor) out=$(CUDA_INJECTION64_PATH=$work/floor.so "${pin[@]}" "$lb" none "$n" "$work/out") ;;
    floor_cb) out=$(CUDA_INJECTION64_PATH=$work/floor.so FLOOR_CALLBACKS=1 "${pin[@]}" "$lb" none "$n" "$work/out") ;;
    inproc) out=$("${pin[@]}" "$lb" tree "$n" "$work/out") ;;
    inproc_early) out=$("${pin[@]}" "$lb" tree_early "$n" "$work/out") ;;
    run_none) out=$("${pin[@]}" "$ks" run -b none -o "$work/out" --top 0 -- "$lb" none "$n" "$work/out") ;;
    run_tree) out=$("${pin[@]}" "$ks" run -o "$work/out" --top 0 -- "$lb" none "$n" "$work/out") ;;
    run_scoped) out=$("${pin[@]}" "$ks" run -o "$work/out" --top 0 -- "$lb" scoped "$n" "$work/out") ;;
    run_trace) out=$("${pin[@]}" "$ks" run -d trace -o "$work/out" --top 0 -- "$lb" none "$n" "$work/out") ;;
    sampled_off) out=$("${pin[@]}" "$ks" run --sample "$off_spec" -o "$work/out" --top 0 -- "$lb" none "$n" "$work/out") ;;
    sampled_10) out=$("${pin[@]}" "$ks" run --sample "$ten_spec" -o "$work/out" --top 0 -- "$lb" none "$n" "$work/out") ;;
    esac 2>>"$work/c.err"
    echo "$out" | awk 'NF >= 6 {print $3, $6}' | tail -1
}

c_section() {
    # launch_bench without CUPTI linked: kscope run refuses a program that
    # links CUPTI itself, and the floors come as injections
    launch_bench_plain=$work/launch_bench_plain
    if ! nvcc -O2 -std=c++17 -arch=native -DLAUNCH_BENCH_NO_CUPTI -o "$launch_bench_plain" \
        "$src/bench/gpu/launch_bench.cu" -I"$src/include" -I"$cuda/include" -L"$bin" -lkscope \
        -Xlinker -rpath,"$bin" >"$work/nvcc.log" 2>&1; then
        echo "run_bench: cannot build launch_bench without CUPTI (see $work/nvcc.log)"
        return
    fi
    export STEP_EVERY=1000 # a step mark every 1000 launches, in every mode
    pin_cpus=${PIN_CPUS-2-5}
    command -v taskset >/dev/null 2>&1 || pin_cpus=
    [ -n "$pin_cpus" ] && echo "C loop pinned to CPUs $pin_cpus (taskset)"
    local modes=(bare floor floor_cb inproc inproc_early run_none run_tree run_scoped run_trace
        sampled_off sampled_10)
    [ -n "${C_MODES:-}" ] && read -r -a modes <<<"$C_MODES"
    rounds "$work/c-both.txt" "${REPS:-15}" c_mode "${modes[@]}"
    unset STEP_EVERY
    # wall time per launch, and the launching thread's CPU time per launch
    awk '{print $1, $2, $3}' "$work/c-both.txt" >"$work/c.txt"
    awk '{print $1, $2, (NF >= 4 ? $4 : "fail")}' "$work/c-both.txt" >"$work/c-cpu.txt"
    python3 "$stats" "$work/c.txt" "C loop: $n empty kernels, ${REPS:-15} rounds" "us per launch" \
        bare floor,floor_cb "${modes[@]}"
    python3 "$stats" "$work/c-cpu.txt" "C loop, the launching thread's CPU time" \
        "CPU us per launch" bare floor,floor_cb "${modes[@]}"
    failures "$work/c.txt" "$work/c.err"
}

# ---------------------------------------------------------- torch loop
if command -v proton >/dev/null 2>&1; then
    proton_cmd=(proton)
else
    proton_cmd=(python3 -m triton.profiler.proton)
fi

torch_mode() {
    local loop=("$src/bench/gpu/run_loop.py" "$n" --step-every 1000)
    case $1 in
    bare) python3 "${loop[@]}" ;;
    floor) CUDA_INJECTION64_PATH=$work/floor.so python3 "${loop[@]}" ;;
    run_tree) "$ks" run -o "$work/out" --top 0 -- python3 "${loop[@]}" ;;
    sampled_off) "$ks" run --sample "$off_spec" -o "$work/out" --top 0 -- python3 "${loop[@]}" ;;
    sampled_10) "$ks" run --sample "$ten_spec" -o "$work/out" --top 0 -- python3 "${loop[@]}" ;;
    proton) (cd "$work/out" && "${proton_cmd[@]}" "${loop[@]}") ;;
    torch_profiler) python3 "${loop[@]}" --torch-profiler ;;
    esac 2>>"$work/torch.err" | awk '/^us_per_launch/ {print $2}'
}

torch_section() {
    local modes=(bare floor run_tree sampled_off sampled_10 proton torch_profiler)
    rounds "$work/torch.txt" "${TORCH_REPS:-5}" torch_mode "${modes[@]}"
    python3 "$stats" "$work/torch.txt" "torch loop: $n x.add_(1), ${TORCH_REPS:-5} rounds" \
        "us per launch" bare floor "${modes[@]}"
    failures "$work/torch.txt" "$work/torch.err"
}

# ------------------------------------------------------ training step
train_mode() {
    local step=("$src/bench/gpu/train_step.py" "${TRAIN_STEPS:-30}")
    case $1 in
    bare) python3 "${step[@]}" ;;
    floor) CUDA_INJECTION64_PATH=$work/floor.so python3 "${step[@]}" ;;
    run_none) "$ks" run -b none -o "$work/train" --top 0 -- python3 "${step[@]}" ;;
    run_full) "$ks" run -n full -o "$work/train" --top 0 -- python3 "${step[@]}" ;;
    run_sampled) "$ks" run -n sampled --sample "$ten_spec" -o "$work/train" --top 0 -- python3 "${step[@]}" ;;
    sampled_off) "$ks" run -n off --sample "$off_spec" -o "$work/train" --top 0 -- python3 "${step[@]}" ;;
    proton) (cd "$work/train" && "${proton_cmd[@]}" "${step[@]}") ;;
    esac 2>>"$work/train.err" | awk '/^ms_per_step/ {print $2}'
}

train_section() {
    mkdir -p "$work/train"
    local modes=(bare floor run_none run_full run_sampled sampled_off proton)
    rounds "$work/train.txt" "${TRAIN_REPS:-3}" train_mode "${modes[@]}"
    python3 "$stats" "$work/train.txt" \
        "training step (GPT, 6 layers, bf16): ${TRAIN_STEPS:-30} steps, ${TRAIN_REPS:-3} rounds" \
        "ms per step" bare floor "${modes[@]}"
    failures "$work/train.txt" "$work/train.err"
    PYTHONPATH=$src/bench/gpu python3 - "$work/train/full.hatchet" "$work/train/sampled.hatchet" <<'PY'
import sys
from kernel_shares import shares

try:
    full, _ = shares(sys.argv[1])
    sampled, fraction = shares(sys.argv[2])
except (OSError, ValueError, IndexError) as e:
    sys.exit(f"top-10 shares: cannot read the profiles ({e})")
top = sorted(full, key=full.get, reverse=True)[:10]
print(f"\ntop-10 kernels, share of GPU time: full profile vs sampled (sampled_fraction {fraction})")
worst = 0.0
for k in top:
    d = sampled.get(k, 0.0) - full[k]
    worst = max(worst, abs(d))
    print(f"{full[k]:7.2f}% {sampled.get(k, 0.0):7.2f}% {d:+6.2f}  {k[:90]}")
print(f"largest difference {worst:.2f} percentage points (goal <= 2): "
      + ("MET" if worst <= 2 else "NOT MET"))
PY
}

for s in $sections; do
    case $s in
    c) c_section ;;
    torch | train)
        if have_torch; then
            "${s}_section"
        else
            echo "run_bench: SKIP $s (no torch with CUDA)"
        fi
        ;;
    *) echo "run_bench: unknown section '$s' (c, torch, train)" >&2 ;;
    esac
done
echo "(raw results and logs in $work)"
