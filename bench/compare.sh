#!/usr/bin/env bash
# compare.sh - this checkout against an earlier one, side by side on one
# machine: the C scope benchmark (bench_scope), the launch benchmark's
# kscope modes (launch_bench tree/trace, next to none and the CUPTI floor)
# and the Python scope benchmark, each run alternately REPS times so the
# machine's noise hits both alike. Prints medians and ratios (this / base).
#
#   BASE_SRC=DIR BASE_BUILD=DIR NEW_BUILD=DIR [REPS=5] [PY_REPS=3] bash bench/compare.sh
#
# BASE_BUILD and NEW_BUILD are CMake build folders of BASE_SRC and of this
# checkout (tools/gpu-run.sh makes both when BASE is set). The GPU part
# runs when nvcc and a GPU are there; the Python part when the package
# builds in place (python/kscope_setup.py) for both. COMPARE_RAW=FILE keeps
# every measurement ("group side name value" lines).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base_src=${BASE_SRC:?}
base_build=${BASE_BUILD:?}
new_build=${NEW_BUILD:?}
reps=${REPS:-5}
launches=${LAUNCHES:-20000}
work=$(mktemp -d "${TMPDIR:-/tmp}/kscope-compare.XXXXXX")
log=$work/compare.log
: >"$log"

# --- C scope cost: each line "name value unit"
for r in $(seq "$reps"); do
    for side in base new; do
        b=$base_build
        [ "$side" = new ] && b=$new_build
        "$b/bench_scope" 2>/dev/null | awk -v s="$side" 'NF == 3 && $2 ~ /^[0-9.]+$/ {print "scope", s, $1, $2}' >>"$log"
    done
done

# --- launches (GPU)
if command -v nvcc >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
    for side in base new; do
        b=$base_build
        s=$base_src
        [ "$side" = new ] && b=$new_build && s=$root
        nvcc -O2 -std=c++17 -arch=native -o "$work/launch_$side" "$s/bench/gpu/launch_bench.cu" \
            -I"$s/include" -I/usr/local/cuda/include -L"$b" -lkscope -Xlinker -rpath,"$b" \
            -L/usr/local/cuda/lib64 -lcupti -Xlinker -rpath,/usr/local/cuda/lib64 >>"$work/nvcc.log" 2>&1
    done
    for r in $(seq "$reps"); do
        for m in none floor; do
            "$work/launch_new" "$m" "$launches" "$work" 2>/dev/null | awk '{print "launch both", $1, $3}' >>"$log"
        done
        for m in tree trace; do
            for side in base new; do
                "$work/launch_$side" "$m" "$launches" "$work" 2>/dev/null |
                    awk -v s="$side" '{print "launch", s, $1, $3}' >>"$log"
            done
        done
    done
fi

# --- Python scopes: each side's package built in place in a copy
py_ok=1
for side in base new; do
    s=$base_src
    [ "$side" = new ] && s=$root
    mkdir -p "$work/py_$side"
    cp -r "$s/python" "$work/py_$side/python"
    ln -s "$s/src" "$work/py_$side/src"
    ln -s "$s/include" "$work/py_$side/include"
    (cd "$work/py_$side/python" && python3 kscope_setup.py >"$work/py_$side.log" 2>&1) || py_ok=0
done
if [ "$py_ok" = 1 ]; then
    for r in $(seq "${PY_REPS:-3}"); do
        for side in base new; do
            PYTHONPATH=$work/py_$side/python python3 "$root/bench/python/bench_scope.py" --rounds 3 \
                2>/dev/null | awk -v s="$side" -F'  +' '$2 ~ /^ *[0-9.]+$/ {gsub(/ /, "_", $1); print "python", s, $1, $2}' >>"$log"
        done
    done
else
    echo "compare: the Python package did not build for both sides (see $work/py_*.log)"
fi

python3 - "$log" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 4:
        continue
    try:
        rows.setdefault((f[0], f[2]), {}).setdefault(f[1], []).append(float(f[3]))
    except ValueError:
        pass
print(f"{'benchmark':<40}{'base':>10}{'this':>10}{'this/base':>11}{'runs':>6}")
for (group, name), sides in rows.items():
    if "both" in sides:
        v = sides["both"]
        print(f"{group + ' ' + name:<40}{statistics.median(v):>10.3f}{'':>10}{'':>11}{len(v):>6}")
        continue
    b, n = sides.get("base"), sides.get("new")
    if not b or not n:
        continue
    mb, mn = statistics.median(b), statistics.median(n)
    ratio = f"{mn / mb:.3f}" if mb else "-"
    print(f"{group + ' ' + name:<40}{mb:>10.3f}{mn:>10.3f}{ratio:>11}{min(len(b), len(n)):>6}")
PY
[ -n "${COMPARE_RAW:-}" ] && cp "$log" "$COMPARE_RAW"
rm -rf "$work"
