#!/usr/bin/env bash
# run.sh - what a profiled process holds and writes: peak resident memory
# and bytes on disk per million distinct scopes (tree) and per million
# events (trace: half host slices, half kernels with their launch), for 1M,
# 10M and 100M, printed as a table. A size that does not fit the machine's
# memory or disk (or is past MAX, default 10000000; MAX_GZ for compressed
# traces, default MAX) is extrapolated from the largest measured one and
# marked so: a tree's memory and every file's bytes per million, a trace's
# memory as measured (it is bounded by its budget, not by its length). Each
# size runs in a process of its own (memory_bench), so each peak is its own.
#
# usage: bench/memory/run.sh [BUILD_DIR] [WORK_DIR]
#   BUILD_DIR  a RelWithDebInfo build with memory_bench (default build/)
#   WORK_DIR   where the files go (default /tmp/kscope-bench-memory; up to
#              about 4 GB at 10M; removed after each size)
# Env: MAX (largest size measured), SIZES (default "1000000 10000000
# 100000000"), KSCOPE_TRACE_BUFFER (the trace budget; default 64M).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
B=${1:-$HERE/../../build}
W=${2:-/tmp/kscope-bench-memory}
MAX=${MAX:-10000000}
SIZES=${SIZES:-"1000000 10000000 100000000"}
BIN=$B/memory_bench
[ -x "$BIN" ] || { echo "run.sh: no memory_bench in $B (cmake --build $B --target memory_bench)" >&2; exit 2; }
mkdir -p "$W"

# field LINE KEY: the value of key=value in a memory_bench line.
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# row MODE N FORMAT: one measured (or extrapolated) row.
declare -A last_mb_per last_mb last_disk_per
row() {
    local mode=$1 n=$2 fmt=$3 key="$1/$3"
    local m=$((n / 1000000)) max=$MAX
    [ "$fmt" = chrome_trace_gz ] && max=${MAX_GZ:-$MAX}
    if [ "$n" -gt "$max" ] && [ -n "${last_mb_per[$key]:-}" ]; then
        local mb
        mb=$(awk -v m="$m" -v r="${last_mb_per[$key]}" -v l="${last_mb[$key]}" -v mode="$mode" \
            'BEGIN{print mode == "trace" ? l : r*m}')
        awk -v m="$m" -v mb="$mb" -v d="${last_disk_per[$key]}" -v mode="$mode" -v fmt="$fmt" \
            'BEGIN{printf "%-6s %-16s %6dM %10.0f %10.1f %12.0f %10.1f  extrapolated%s\n",
            mode, fmt, m, mb, mb/m, d*m, d, mode == "trace" ? " (memory: bounded)" : ""}'
        return
    fi
    local line
    line=$("$BIN" "$mode" "$n" "$W" ${fmt:+$fmt}) || { echo "run.sh: $mode $n failed" >&2; return; }
    local base peak bytes path
    base=$(field "$line" base_kb)
    peak=$(field "$line" peak_kb)
    bytes=$(field "$line" file_bytes)
    path=$(field "$line" file)
    rm -f "$path"
    last_mb_per[$key]=$(awk -v p="$peak" -v b="$base" -v m="$m" 'BEGIN{print (p-b)/1024/m}')
    last_mb[$key]=$(awk -v p="$peak" -v b="$base" 'BEGIN{print (p-b)/1024}')
    last_disk_per[$key]=$(awk -v x="$bytes" -v m="$m" 'BEGIN{print x/1e6/m}')
    awk -v m="$m" -v p="$peak" -v b="$base" -v x="$bytes" -v mode="$mode" -v fmt="$fmt" \
        -v dr="$(grep -o 'dropped=[0-9]*' <<<"$line" || true)" \
        'BEGIN{printf "%-6s %-16s %6dM %10.0f %10.1f %12.0f %10.1f  measured %s\n", mode, fmt, m,
        (p-b)/1024, (p-b)/1024/m, x/1e6, x/1e6/m, dr}'
}

printf "%-6s %-16s %7s %10s %10s %12s %10s\n" mode format size "peak MiB" "MiB/1M" "disk MB" \
    "MB/1M"
for n in $SIZES; do
    row tree "$n" ""
done
for n in $SIZES; do
    row trace "$n" chrome_trace
    row trace "$n" chrome_trace_gz
done
echo "(peak: the process's peak resident memory less what it held before the session;"
echo " tree: N distinct sibling scopes; trace: N events, half host slices, half kernels"
echo " delivered as a GPU backend does, each with its launch slice and flow)"
