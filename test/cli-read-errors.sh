#!/bin/bash
# cli-read-errors.sh - bad input to the reading commands: each case gets one
# line on stderr naming the file and the problem, exit status 2, no crash
# and no output. Also bad options.
source "$(dirname "$0")/read-lib.sh"

W=$WORK
head -c 300 "$DATA/proton/rich_tree.hatchet" >"$W/truncated.hatchet"
echo 'hello world' >"$W/notjson.hatchet"
echo '[{"frame": oops}]' >"$W/badjson.hatchet"
echo '{"a": 1}' >"$W/object.hatchet"
echo '[1, 2]' >"$W/shape.hatchet"
echo '[{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": 0}}]' >"$W/nodevice.hatchet"
echo '[{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": 1e400}}, {}]' >"$W/hugefloat.hatchet"
echo '[{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": -12}}, {}]' >"$W/negative.hatchet"
echo '[{"frame": {"name": "ROOT"}, "children": [{"frame": {"name": "a\u0000b"}}]}, {}]' \
    >"$W/nul.hatchet"
printf '[{"frame": {"name": "a\001b"}}, {}]' >"$W/rawcontrol.hatchet"
"$PY" -c '
import sys
n = 100000
sys.stdout.write("[" + "{\"frame\":{\"name\":\"a\"},\"children\":[" * n + "]}" * n + ",{}]")
' >"$W/deep.hatchet"
cat "$DATA/proton/proton_run.hatchet" "$DATA/proton/proton_run.hatchet" >"$W/twice.hatchet"
: >"$W/empty.hatchet"
printf '  \n\t\n' >"$W/blank.hatchet"
mkdir -p "$W/dir.hatchet"
"$KS" convert "$DATA/proton/rich_tree.hatchet" "$W/ok.hatchet_msgpack"
head -c 100 "$W/ok.hatchet_msgpack" >"$W/truncated.hatchet_msgpack"
printf '\x92\xc1' >"$W/badmsgpack.hatchet_msgpack"
echo '{"traceEvents": [{"ph": "X", "name": "a", "ts": 0, "dur": -3}]}' >"$W/badtrace.json"

check_file() { # check_file FILE WANT: every reading command refuses FILE
    local f=$W/$1 want=$2 n=${1//[^a-zA-Z0-9]/_}
    bad view-$n "$want" "$KS" view "$f"
    bad top-$n "$want" "$KS" top "$f"
    bad diff-$n "$want" "$KS" diff "$DATA/proton/rich_tree.hatchet" "$f"
    bad merge-$n "$want" "$KS" merge -o "$W/out.hatchet" "$DATA/proton/rich_tree.hatchet" "$f"
    bad convert-$n "$want" "$KS" convert "$f" "$W/out.hatchet"
}
check_file truncated.hatchet "truncated.hatchet: truncated"
check_file notjson.hatchet "notjson.hatchet: not a profile"
check_file badjson.hatchet "badjson.hatchet: not valid JSON"
check_file object.hatchet "object.hatchet: not a Chrome trace"
check_file shape.hatchet "shape.hatchet: element 0 of the top-level array is not an object"
check_file nodevice.hatchet "nodevice.hatchet: missing device-info object"
check_file hugefloat.hatchet "hugefloat.hatchet: number 1e400"
check_file negative.hatchet "negative.hatchet: negative value -12 for metric 'time (ns)'"
check_file nul.hatchet "nul.hatchet: frame name under 'ROOT' contains a NUL character"
check_file rawcontrol.hatchet "rawcontrol.hatchet: not valid JSON"
check_file deep.hatchet "deep.hatchet: calling contexts nested deeper than 4096 levels"
check_file twice.hatchet "twice.hatchet: data after the end of the profile"
check_file empty.hatchet "empty.hatchet: empty file"
check_file blank.hatchet "blank.hatchet: empty file"
check_file dir.hatchet "dir.hatchet: is a directory"
check_file missing.hatchet "missing.hatchet: No such file or directory"
check_file truncated.hatchet_msgpack "truncated.hatchet_msgpack: truncated"
check_file badmsgpack.hatchet_msgpack "badmsgpack.hatchet_msgpack: not valid MessagePack"
check_file badtrace.json "badtrace.json: event 0 ('a'): \"ts\" and \"dur\" must be numbers"
bad merge-trace-bad "notjson.hatchet: not a profile: expected .hatchet JSON" "$KS" merge -o "$W/t.json" \
    "$DATA/kscope/trace_host.json" "$W/notjson.hatchet"
[ ! -e "$W/t.json" ] && ok "no half-written trace left" || fail "a failed merge left $W/t.json"
rc=0
"$KS" merge -o /nonexistent-dir/t.json "$DATA/kscope/trace_host.json" 2>"$W/wt.err" || rc=$?
[ $rc = 1 ] && grep -q "cannot write" "$W/wt.err" && ok "unwritable merged trace: exit 1" ||
    fail "unwritable merged trace: exit $rc: $(cat "$W/wt.err")"

# options
R=$DATA/proton/rich_tree.hatchet
bad opt-depth "-d: 'x' is not a depth" "$KS" view -d x "$R"
bad opt-depth-neg "-d: '-1' is not a depth" "$KS" view -d -1 "$R"
bad opt-threshold "-t: 'abc' is not a number" "$KS" view -t abc "$R"
bad opt-format "-f: 'bogus' is not one of" "$KS" view -f bogus "$R"
bad opt-metric "rich_tree.hatchet: metric 'nosuch' is not in this file" "$KS" view -m nosuch "$R"
bad opt-metric-needs "needs a 'flops16' metric" "$KS" view -m tflop16/s "$DATA/proton/proton_run.hatchet"
bad opt-regex "-i: bad regular expression '('" "$KS" view -i '(' "$R"
bad opt-color "--color: 'pink' is not auto, always or never" "$KS" view --color pink "$R"
bad opt-nofile "no FILE given" "$KS" view
bad opt-twofiles "more than one FILE given" "$KS" view "$R" "$R"
bad opt-unknown "unknown option '--bogus'" "$KS" view --bogus "$R"
bad opt-missing-value "-m needs a value" "$KS" view "$R" -m
bad opt-diff-profile "nope.hatchet: No such file" "$KS" view --diff-profile nope.hatchet "$R"
bad top-limit "-n: 'many' is not a count" "$KS" top -n many "$R"
bad top-color "--color: 'pink' is not auto, always or never" "$KS" top --color pink "$R"
bad top-nofile "no FILE given" "$KS" top
bad top-twofiles "more than one FILE given" "$KS" top "$R" "$R"
bad top-unknown "unknown option '--bogus'" "$KS" top --bogus "$R"
bad top-missing-value "-n needs a value" "$KS" top "$R" -n
bad diff-one "expected two profiles" "$KS" diff "$R"
bad diff-metric "metric 'nosuch' is not in this file" "$KS" diff -m nosuch "$R" "$R"
bad merge-no-output "-o OUT is required" "$KS" merge "$R"
bad merge-no-input "no input files" "$KS" merge -o "$W/x.hatchet"
bad merge-ext "cannot tell the output format" "$KS" merge -o "$W/x.txt" "$R"
bad merge-jobs "-j: '0' is not a number from 1 to 8" "$KS" merge -j 0 -o "$W/x.hatchet" "$R"
bad convert-ext "cannot tell the output format" "$KS" convert "$R" "$W/x.txt"
bad convert-to "--to: 'xml' is not hatchet" "$KS" convert --to xml "$R" "$W/x.hatchet"
bad convert-args "expected IN and OUT" "$KS" convert "$R"
bad convert-unknown "unknown option '--bogus'" "$KS" convert --bogus "$R" "$W/x.hatchet"
bad convert-to-value "--to needs a value" "$KS" convert "$R" "$W/x.hatchet" --to
bad diff-count "-n: 'x' is not a count (a whole number >= 0)" "$KS" diff -n x "$R" "$R"
bad diff-count-negative "-n: '-3' is not a count" "$KS" diff -n -3 "$R" "$R"
bad diff-missing-value "-n needs a value" "$KS" diff "$R" "$R" -n
bad diff-unknown "unknown option '--bogus'" "$KS" diff --bogus "$R" "$R"
bad merge-missing-value "-o needs a value" "$KS" merge -o
bad merge-unknown "unknown option '--bogus'" "$KS" merge --bogus -o "$W/x.hatchet" "$R"
bad report-unknown "unknown option '--bogus'" "$KS" report --bogus "$R"
bad report-n-value "-n needs a value" "$KS" report -n
bad report-html-value "--html needs a value" "$KS" report --html
bad report-max-nodes-value "--max-nodes needs a value" "$KS" report --max-nodes
bad view-many-metrics "-m: at most 16 metrics" "$KS" view -m a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q "$R"
long=$(printf 'a%.0s' $(seq 4200))
# an OUT whose name is too long cannot be written: 1, naming why
rc=0
"$KS" merge -o "$W/$long.json" "$DATA/kscope/trace_host.json" 2>"$W/l.err" || rc=$?
[ $rc = 1 ] && grep -q "cannot write: File name too long" "$W/l.err" &&
    [ "$(wc -l <"$W/l.err")" = 1 ] && ok "merge-long-out: exit 1, one line" ||
    fail "merge-long-out: exit $rc: $(head -c 300 "$W/l.err")"
# an unwritable output is a failure (1), not a usage error
rc=0
"$KS" convert "$R" /nonexistent-dir/x.hatchet 2>"$W/w.err" || rc=$?
[ $rc = 1 ] && grep -q "cannot write" "$W/w.err" && ok "unwritable OUT: exit 1" ||
    fail "unwritable OUT: exit $rc: $(cat "$W/w.err")"
# an OUT that is a folder: merge says so and leaves nothing behind
mkdir -p "$W/outdir.json" "$W/outdir.hatchet"
for out in outdir.json outdir.hatchet; do
    in=$DATA/kscope/trace_host.json
    [ "$out" = outdir.json ] || in=$R
    rc=0
    "$KS" merge -o "$W/$out" "$in" 2>"$W/m.err" || rc=$?
    [ $rc = 1 ] && grep -q "$out: cannot write: Is a directory" "$W/m.err" &&
        [ "$(wc -l <"$W/m.err")" = 1 ] && [ -z "$(ls "$W/$out")" ] &&
        ok "merge into a folder ($out): exit 1, one line" ||
        fail "merge into a folder ($out): exit $rc: $(cat "$W/m.err")"
done
ls "$W" | grep -q '\.tmp' && fail "a failed merge left a temporary file: $(ls "$W")"
finish
