#!/bin/bash
# bench_exec.sh - what `kscope run` adds to each process a program starts:
# a shell loop that execs /bin/true N times (300 by default), bare and
# under `kscope run -b none`, for each kscope binary given (compare two
# builds, say main's and a branch's, on the same machine at the same time).
# A process that never annotates, uses the GPU or NVTX should cost next to
# nothing more (libkscope is loaded and its constructor runs; it starts no
# thread and opens nothing). The test suite checks what kscope decides (no
# thread, no descriptor); these timings depend on the machine, so they
# live here.
#
# usage: bench/bench_exec.sh [KSCOPE_BINARY...]   (default build/kscope)
#        N=1000 ROUNDS=5 bench/bench_exec.sh ...
# Uses hyperfine when installed, else the best of ROUNDS rounds.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- "$HERE/../build/kscope"
bins=()
for ks in "$@"; do bins+=("$(realpath "$ks")"); done
set -- "${bins[@]}"
N=${N:-300}
ROUNDS=${ROUNDS:-5}
W=$(mktemp -d "${TMPDIR:-/tmp}/kscope-bench-exec.XXXXXX")
trap 'rm -rf "$W"' EXIT
printf 'for i in $(seq %d); do /bin/true; done\n' "$N" >"$W/loop.sh"
cd "$W" || exit 2

# seconds COMMAND...: how long one run takes
seconds() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
}

if command -v hyperfine >/dev/null; then
    cmds=("bash loop.sh")
    for ks in "$@"; do cmds+=("$ks run -b none --top 0 -- bash loop.sh"); done
    hyperfine -w 1 -r "$ROUNDS" "${cmds[@]}"
    exit
fi
for ks in "$@"; do
    [ -x "$ks" ] || { echo "bench_exec: no kscope binary at $ks" >&2; exit 2; }
done
# The best of ROUNDS rounds, each running every command once, in turn: a
# machine whose load drifts weighs on all of them alike.
best=()
for _ in $(seq "$ROUNDS"); do
    i=0
    for ks in "" "$@"; do
        if [ -z "$ks" ]; then
            t=$(seconds bash loop.sh)
        else
            t=$(seconds "$ks" run -b none --top 0 -- bash loop.sh)
        fi
        if [ -z "${best[$i]:-}" ] || awk -v t="$t" -v b="${best[$i]}" 'BEGIN {exit !(t < b)}'; then
            best[$i]=$t
        fi
        i=$((i + 1))
    done
done
bare=${best[0]}
printf '%-48s %7.3f s  (%.3f ms per exec)\n' "bare" "$bare" \
    "$(awk -v t="$bare" -v n="$N" 'BEGIN {print t * 1000 / n}')"
i=1
for ks in "$@"; do
    t=${best[$i]}
    printf '%-48s %7.3f s  (+%.3f ms per exec)\n' "$ks" "$t" \
        "$(awk -v t="$t" -v b="$bare" -v n="$N" 'BEGIN {print (t - b) * 1000 / n}')"
    i=$((i + 1))
done
