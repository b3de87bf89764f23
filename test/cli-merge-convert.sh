#!/bin/bash
# cli-merge-convert.sh - `kscope merge` (trees and traces) and `kscope
# convert` (JSON <-> msgpack, trace -> tree), checked through golden views.
source "$(dirname "$0")/read-lib.sh"

# trees: sums, per-rank min/max/mean and imbalance
(cd "$DATA" && "$KS" merge -o "$WORK/m.hatchet" kscope/run_a.hatchet kscope/run_b.hatchet \
    kscope/run_a.hatchet) || fail "merge trees"
golden merge-tree "$KS" view -m time/us,count,time_rank_min,time_rank_max,time_rank_mean,time_imbalance \
    "$WORK/m.hatchet"
golden merge-tree-wall "$KS" view -m wall_time/us,wall_time_rank_min,wall_time_rank_max,wall_time_imbalance,calls \
    "$WORK/m.hatchet"
golden merge-tree-top "$KS" top "$WORK/m.hatchet"
# msgpack output, one job, and a trace as one of the inputs
(cd "$DATA" && "$KS" merge -j 1 --output "$WORK/m2.hatchet_msgpack" proton/rich_tree.hatchet \
    proton/rich_trace.chrome_trace) || fail "merge to msgpack"
golden merge-mixed "$KS" view -m time/us,count,time_imbalance "$WORK/m2.hatchet_msgpack"

# parallel parsing does not change the result (ranks merge in order)
(cd "$DATA" && "$KS" merge -j 1 -o "$WORK/j1.hatchet" kscope/run_a.hatchet kscope/run_b.hatchet \
    proton/rich_tree.hatchet kscope/run_a.hatchet kscope/run_b.hatchet) || fail "merge -j 1"
(cd "$DATA" && "$KS" merge -j 8 -o "$WORK/j8.hatchet" kscope/run_a.hatchet kscope/run_b.hatchet \
    proton/rich_tree.hatchet kscope/run_a.hatchet kscope/run_b.hatchet) || fail "merge -j 8"
cmp -s "$WORK/j1.hatchet" "$WORK/j8.hatchet" && ok "merge -j 1 == -j 8" || fail "-j changes the merge"

# traces: one process per rank, every event kept
(cd "$DATA" && "$KS" merge -o "$WORK/m.json" kscope/trace_host.json proton/rich_trace.chrome_trace) ||
    fail "merge traces"
golden merge-trace-view "$KS" view -m time/us,count,calls "$WORK/m.json"
"$PY" - "$WORK/m.json" >"$WORK/pids.txt" <<'PY' || fail "merged trace is not JSON"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = sorted({e["args"]["name"] for e in ev if e.get("name") == "process_name"})
print("\n".join(names))
print(len([e for e in ev if e.get("ph") == "X"]), "slices")
print(sorted({e["id"] for e in ev if e.get("ph") in ("s", "f")}))
PY
golden merge-trace-pids cat "$WORK/pids.txt"

# convert: JSON -> msgpack -> JSON keeps every node and metric
"$KS" convert "$DATA/kscope/run_a.hatchet" "$WORK/a.hatchet_msgpack" || fail "convert to msgpack"
"$KS" convert "$WORK/a.hatchet_msgpack" "$WORK/a.hatchet" || fail "convert back"
for m in time/us,count,util calls,wall_time/ms,cpu_time/ns min_time,max_time,bytes,flops16; do
    if diff <("$KS" view -m $m "$DATA/kscope/run_a.hatchet") <("$KS" view -m $m "$WORK/a.hatchet") \
        >/dev/null; then
        ok "round trip keeps $m"
    else
        fail "round trip changed $m"
    fi
done
"$KS" convert --to hatchet "$WORK/a.hatchet_msgpack" "$WORK/a.out" || fail "convert --to"
head -c 1 "$WORK/a.out" | grep -q '\[' && ok "--to hatchet writes JSON" || fail "--to hatchet"
"$KS" convert -t hatchet_msgpack "$DATA/kscope/run_a.hatchet" "$WORK/b.out" || fail "convert -t"
cmp -s "$WORK/b.out" "$WORK/a.hatchet_msgpack" && ok "-t hatchet_msgpack" || fail "-t msgpack differs"
# a trace becomes a tree
"$KS" convert "$DATA/proton/rich_trace.chrome_trace" "$WORK/t.hatchet" || fail "convert trace"
golden convert-trace "$KS" view -m time/us,count "$WORK/t.hatchet"
# trees into a trace name: refused by name, exit 2, nothing written
rc=0
err=$("$KS" merge -o "$WORK/tt.json" "$DATA/kscope/run_a.hatchet" "$DATA/kscope/run_b.hatchet" 2>&1) ||
    rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && grep -q "run_a.hatchet is a calling-context tree" <<<"$err" &&
    [ ! -e "$WORK/tt.json" ] && ok "merge refuses trees into a trace" || fail "merge trees -> .json: $rc $err"
# a tree into a trace: convert names what it cannot do
rc=0
err=$("$KS" convert "$DATA/kscope/run_a.hatchet" "$WORK/a.chrome_trace" 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -q "converting to chrome_trace (a trace) is not supported" <<<"$err" &&
    ok "convert names the unsupported direction" || fail "convert tree -> trace: $rc $err"
for c in merge convert; do
    h1=$("$KS" help $c) && h2=$("$KS" $c --help) || fail "help $c exit status"
    [ "$h1" = "$h2" ] && ok "help $c == $c --help" || fail "$c help texts differ"
done
for opt in --output --jobs _rank_min _imbalance; do
    grep -qF -- "$opt" <<<"$("$KS" help merge)" && ok "merge help: $opt" || fail "merge help: $opt"
done
grep -qF -- "--to" <<<"$("$KS" help convert)" && ok "convert help: --to" || fail "convert help"
finish
