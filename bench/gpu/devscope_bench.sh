#!/usr/bin/env bash
# devscope_bench.sh - the cost of device-side scopes: devscope_bench.cu's
# memory-bound and compute-bound kernels (~55 and ~420 us on the H200) with
# 0, 1, 4 and 16 scopes per thread, each run bare, under kscope run (no device scopes),
# and under kscope run --device-scopes at warp and at CTA granularity.
# Prints one line per kernel and scope count: median kernel times (us) and
# the slowdown ratios against the bare run and against kscope without
# device scopes (what the scopes themselves cost). Then, without kscope,
# devscope_parts.cu: the memory-bound kernel at 4 and 16 scopes with each
# part of a record alone (the clock reads, the claim's atomic on one
# counter or on per-SM counters, the store to host-mapped or to device
# memory, and a whole record), as ratios to the chunked kernel alone.
# Env: KSCOPE_SOURCE_DIR (repo, default .), KSCOPE_BINARY_DIR (with kscope),
#      OUT (where the binary and logs go; default a temporary folder).
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:-.}
bin=${KSCOPE_BINARY_DIR:?}
work=${OUT:-$(mktemp -d)}/devscope_bench
mkdir -p "$work"
export PATH=$PATH:/usr/local/cuda/bin
nvcc -O3 -arch=native -I"$src/include" -o "$work/bench" "$src/bench/gpu/devscope_bench.cu" ||
    exit 1
nvcc -O3 -arch=native -I"$src/include" -o "$work/parts" "$src/bench/gpu/devscope_parts.cu" ||
    exit 1
cd "$work"
med() { sed -n 's/^median_us //p' "$1"; }
printf '%-5s %3s %9s %9s %9s %9s %8s %8s %8s %8s\n' kernel S bare_us kscope_us warp_us cta_us \
    warp/bare warp/ks cta/bare cta/ks
for k in mem comp; do
    for s in 0 1 4 16; do
        ./bench "$k" "$s" >bare.txt 2>&1
        "$bin/kscope" run --top 0 -n ks -- ./bench "$k" "$s" >ks.txt 2>&1
        "$bin/kscope" run --top 0 -n warp --device-scopes -- ./bench "$k" "$s" >warp.txt 2>&1
        "$bin/kscope" run --top 0 -n cta --device-scopes=granularity=cta -- ./bench "$k" "$s" \
            >cta.txt 2>&1
        b=$(med bare.txt) q=$(med ks.txt) w=$(med warp.txt) c=$(med cta.txt)
        if [ -z "$b" ] || [ -z "$q" ] || [ -z "$w" ] || [ -z "$c" ]; then
            echo "$k $s: a run printed no median; its end:"
            for f in bare ks warp cta; do
                grep -q '^median_us' $f.txt || tail -n 3 $f.txt | sed "s/^/    $f: /"
            done
            continue
        fi
        python3 - "$k" "$s" "$b" "$q" "$w" "$c" <<'PY'
import sys
k, s, b, q, w, c = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
print(f"{k:5s} {s:>3s} {b:9.1f} {q:9.1f} {w:9.1f} {c:9.1f} {w/b:8.3f} {w/q:8.3f} {c/b:8.3f} {c/q:8.3f}")
PY
    done
done

# What each part of a record costs the memory-bound kernel, without kscope.
parts=(none clock atomic sharded host device record shardrec sharddev claimfirst)
echo
printf '%-3s' S
printf ' %10s' "${parts[@]}"
echo "   (us; ratio to none below)"
for s in 4 16; do
    times=()
    for p in "${parts[@]}"; do
        times+=("$(./parts "$p" "$s" | sed -n 's/^median_us //p')")
    done
    printf '%-3s' "$s"
    printf ' %10s' "${times[@]}"
    echo
    python3 - "$s" "${times[@]}" <<'PY'
import sys
s, t = sys.argv[1], [float(v) if v else float("nan") for v in sys.argv[2:]]
print(f"{'':3s}" + "".join(f" {v / t[0]:10.3f}" for v in t))
PY
done
