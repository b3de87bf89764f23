#!/usr/bin/env bash
# bench-cli.sh - `kscope bench` on a real GPU: every way of the kernel loop
# gets a row with numbers, the floor saw the loop's records, and the
# interleaved table (kscope's shut, quiet and open states in one process)
# has its rows, open costing more than shut (following every launch
# costs CUPTI's callbacks: on the H200 open adds 1.5-2x what quiet adds;
# shut over open would mean the states were swapped). Run by
# tools/gpu-run.sh.
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work_in bench-cli

out=$("$ks" bench --child floor 1000) || fail "floor child"
[ "$(echo "$out" | awk '{print $4}')" -ge 3000 ] 2>/dev/null && pass "the floor saw its records: $out" ||
    fail "the floor saw: $out (1000 + 2000 warm-up expected)"

"$ks" bench -n 8000 -r 3 --torch-rounds 0 >out.txt 2>err.txt || fail "kscope bench: $(cat err.txt)"
cat out.txt
for way in "bare" "floor" "in-process" "kscope run" "kscope run, annotated" \
    "sampled (between windows)" "shut (no capture)" "quiet (activity records)" \
    "open (every launch followed)"; do
    grep -E "^$(printf '%s' "$way" | sed 's/[()]/\\&/g') +[0-9]+ +[0-9.]+ " out.txt >/dev/null ||
        fail "row '$way': $(grep -F "$way" out.txt)"
done
grep -q "Pretend GPU" out.txt && fail "the pretend GPU answered"
median() { grep -F "$1" out.txt | awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) {print $(i + 1); exit}}'; }
shut=$(median "shut (no capture)")
open=$(median "open (every launch followed)")
awk -v s="${shut:-0}" -v o="${open:-0}" 'BEGIN {exit !(s > 0 && o > s)}' &&
    pass "interleaved: shut $shut us, open $open us per launch" ||
    fail "interleaved: open ($open) should cost more than shut ($shut)"
exit $status
