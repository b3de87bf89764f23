#!/bin/bash
# bench_read.sh - how fast the readers are: `kscope view` and `kscope top` of
# a 100 MB .hatchet (targets: <= 2 s and <= 3x the file size in memory) and
# `kscope merge` of 64 rank files of 10 MB each (target: <= 5 s).
#
# usage: bench/bench_read.sh [KSCOPE_BINARY] [WORK_DIR]
#   KSCOPE_BINARY  defaults to build/kscope (build it with the default
#                  RelWithDebInfo type, not Debug or sanitizers)
#   WORK_DIR       where the generated files go (default /tmp/kscope-bench-read;
#                  about 900 MB; kept between runs)
# Each measurement is the best wall time of RUNS runs (default 3) and the
# largest resident memory seen. Exit status 1 when a target is missed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KS=${1:-$HERE/../build/kscope}
W=${2:-/tmp/kscope-bench-read}
RUNS=${RUNS:-3}
GEN=$HERE/gen_big_hatchet.py
mkdir -p "$W/ranks"
[ -x "$KS" ] || { echo "bench_read: no kscope binary at $KS" >&2; exit 2; }

[ -s "$W/pretty100.hatchet" ] || python3 "$GEN" "$W/pretty100.hatchet" 100
[ -s "$W/compact100.hatchet" ] || python3 "$GEN" "$W/compact100.hatchet" 100 --compact
if [ ! -s "$W/ranks/r63.hatchet" ]; then
    seq 0 63 | xargs -P "$(nproc)" -I{} python3 "$GEN" "$W/ranks/r{}.hatchet" 10 --compact --rank {}
fi

FAILED=0
# measure NAME LIMIT_S MEM_LIMIT_BYTES(0: none) FILE_BYTES CMD...
measure() {
    local name=$1 limit=$2 memlimit=$3 bytes=$4
    shift 4
    local best="" rss=0 cpu=""
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f "%e %U %S %M" -o "$W/time.txt" "$@" >/dev/null
        read -r wall user sys kb <"$W/time.txt"
        if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
            best=$wall
            cpu=$(awk "BEGIN{printf \"%.2f\", $user + $sys}")
        fi
        [ "$kb" -gt "$rss" ] && rss=$kb
    done
    local ratio verdict=ok
    ratio=$(awk "BEGIN{printf \"%.2f\", $rss * 1024 / $bytes}")
    awk "BEGIN{exit !($best > $limit)}" && verdict="SLOW (limit ${limit} s)" && FAILED=1
    if [ "$memlimit" != 0 ] && [ $((rss * 1024)) -gt "$memlimit" ]; then
        verdict="$verdict; MEMORY over 3x"
        FAILED=1
    fi
    printf "%-34s %7s s wall %7s s cpu %8d KB  %5sx input  %s\n" "$name" "$best" "$cpu" "$rss" \
        "$ratio" "$verdict"
}

size() { stat -c %s "$1"; }
P=$W/pretty100.hatchet
C=$W/compact100.hatchet
echo "kscope: $KS   machine: $(nproc) CPUs   load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "inputs: $(size "$P") B indented (Proton's layout), $(size "$C") B compact (kscope's)"
measure "view, indented 100 MB" 2 $((3 * $(size "$P"))) "$(size "$P")" "$KS" view "$P"
measure "view, compact 100 MB" 2 $((3 * $(size "$C"))) "$(size "$C")" "$KS" view "$C"
measure "view -m time,util,avg_time compact" 2 $((3 * $(size "$C"))) "$(size "$C")" \
    "$KS" view -m time/ms,util,avg_time/us "$C"
measure "top, compact 100 MB" 2 $((3 * $(size "$C"))) "$(size "$C")" "$KS" top "$C"
RB=$(du -cb "$W"/ranks/r*.hatchet | tail -1 | cut -f1)
measure "merge 64 x 10 MB -> .hatchet" 5 0 "$RB" "$KS" merge -o "$W/merged.hatchet" \
    "$W"/ranks/r*.hatchet
exit $FAILED
