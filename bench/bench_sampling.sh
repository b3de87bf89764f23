#!/bin/bash
# bench_sampling.sh - how many samples the background recorder takes per
# second (through `kscope monitor`): at 100, 10 and 1 ms intervals for a
# fixed time, against interval x duration (target: within 10% at 100 and
# 10 ms, within 50% at 1 ms, where a busy machine makes the thread skip
# missed ticks), and the CPU a busy process is measured at (target: above
# 50% of a core on an idle machine). The tests check only what holds on any
# machine (order, never more samples than the interval allows); these
# figures depend on the machine and its load, so they live here.
#
# usage: bench/bench_sampling.sh [KSCOPE_BINARY]   (default build/kscope)
# One line per figure with PASS/FAIL; exit status 1 when a target is missed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
KS=${1:-$HERE/../build/kscope}
[ -x "$KS" ] || { echo "bench_sampling: no kscope binary at $KS" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/kscope-bench-sampling.XXXXXX")
trap 'kill "$busy" "$idle" 2>/dev/null; rm -rf "$W"' EXIT
failed=0

python3 -c 'while True: pass' &
busy=$!
sleep 1000 &
idle=$!

# rate INTERVAL_MS SECONDS TOLERANCE
rate() {
    "$KS" monitor --no-gpu --pid "$idle" --interval "$1" --duration "$2" -o "$W/r.csv" 2>/dev/null
    python3 - "$W/r.csv" "$1" "$2" "$3" <<'PY' || failed=1
import csv, sys
rows = len(list(csv.DictReader(open(sys.argv[1]))))
interval, seconds, tol = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
want = seconds * 1000 / interval
ok = abs(rows - want) <= tol * want
print("%-5s samples at %g ms for %g s: %d (expected %.0f, within %.0f%%)" % (
    "PASS" if ok else "FAIL", interval, seconds, rows, want, 100 * tol))
sys.exit(0 if ok else 1)
PY
}
rate 100 3 0.1
rate 10 1 0.1
rate 1 0.5 0.5

"$KS" monitor --no-gpu --pid "$busy" --interval 50 --duration 1 -o "$W/busy.csv" 2>/dev/null
python3 - "$W/busy.csv" <<'PY' || failed=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))[:-1]
mean = sum(float(r["cpu_percent"]) for r in rows) / max(len(rows), 1)
ok = mean > 50
print("%-5s busy process measured at %.1f%% of a core (target above 50%%)" % (
    "PASS" if ok else "FAIL", mean))
sys.exit(0 if ok else 1)
PY
exit $failed
