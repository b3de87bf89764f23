#!/usr/bin/env bash
# run_bench.sh - what `kscope run` costs a program, side by side in one
# script: a torch loop of N x.add_(1) on one element (run_loop.py) with no
# profiler, the bare CUPTI activity floor (cupti_floor.c as the CUDA
# injection), `kscope run` (tree, exit summary and NVTX capture on), Proton's
# `proton` launcher and torch.profiler. Modes alternate, REPS rounds; the
# table gives the median time per launch, the ratio to the bare run, and
# the cost added per launch against the floor's (goal: kscope within 1.10).
#
# Usage (repository root, GPU machine, after a build):
#     KSCOPE_BINARY_DIR=/tmp/kscope-build bash bench/gpu/run_bench.sh
# Env: REPS (default 5), LAUNCHES (default 20000), CUDA_HOME.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
bin=${KSCOPE_BINARY_DIR:?set KSCOPE_BINARY_DIR to the build folder}
reps=${REPS:-5}
n=${LAUNCHES:-20000}
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d "${TMPDIR:-/tmp}/kscope-run-bench.XXXXXX")
loop=$src/bench/gpu/run_loop.py
cupti_lib=$cuda/extras/CUPTI/lib64
[ -d "$cupti_lib" ] || cupti_lib=$cuda/lib64
if ! cc -shared -fPIC -O2 -o "$work/floor.so" "$src/bench/gpu/cupti_floor.c" -I"$cuda/include" \
    -I"$cuda/extras/CUPTI/include" -L"$cupti_lib" -lcupti -Wl,-rpath,"$cupti_lib"; then
    echo "run_bench: cannot build the CUPTI floor" >&2
    exit 1
fi
if command -v proton >/dev/null 2>&1; then
    proton_cmd=(proton)
else
    proton_cmd=(python3 -m triton.profiler.proton)
fi
mkdir -p "$work/proton" "$work/kscope"

# run_mode MODE: prints the loop's microseconds per launch (empty on failure)
run_mode() {
    case $1 in
    none) python3 "$loop" "$n" ;;
    floor) CUDA_INJECTION64_PATH=$work/floor.so python3 "$loop" "$n" ;;
    kscope) "$bin/kscope" run -o "$work/kscope" -- python3 "$loop" "$n" 2>>"$work/kscope.err" ;;
    proton) (cd "$work/proton" && "${proton_cmd[@]}" "$loop" "$n" 2>>"$work/proton.err") ;;
    torch_profiler) python3 "$loop" "$n" --torch-profiler 2>>"$work/torch.err" ;;
    esac | awk '/^us_per_launch/ {print $2}'
}

modes="none floor kscope proton torch_profiler"
: >"$work/results"
for r in $(seq "$reps"); do
    for m in $modes; do
        v=$(run_mode "$m")
        echo "$m ${v:-fail}" >>"$work/results"
    done
done
echo "== last kscope run summary"
tail -15 "$work/kscope.err"
python3 - "$work/results" "$n" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, v = line.split()
    if v != "fail":
        rows.setdefault(mode, []).append(float(v))
med = {m: statistics.median(v) for m, v in rows.items()}
base, floor = med.get("none"), med.get("floor")
print(f"\ntorch loop of {sys.argv[2]} x.add_(1) on one element (median of runs)")
print(f"{'mode':<16}{'us/launch':>10}{'runs':>6}{'vs none':>9}{'added us':>10}{'vs floor':>10}")
for m in ["none", "floor", "kscope", "proton", "torch_profiler"]:
    if m not in med:
        print(f"{m:<16}{'(failed)':>10}")
        continue
    ratio = f"{med[m] / base:.3f}" if base else "-"
    added = med[m] - base if base else None
    fa = floor - base if base and floor else None
    vs_floor = f"{added / fa:.2f}" if added is not None and fa and fa > 0 else "-"
    print(f"{m:<16}{med[m]:>10.3f}{len(rows[m]):>6}{ratio:>9}"
          f"{(f'{added:.3f}' if added is not None else '-'):>10}{vs_floor:>10}")
if base and floor and "kscope" in med and floor > base:
    r = (med["kscope"] - base) / (floor - base)
    print(f"\nkscope run adds {r:.2f}x the floor's per-launch cost (goal <= 1.10): "
          + ("MET" if r <= 1.10 else "NOT MET"))
PY
echo "(raw results and logs in $work)"
