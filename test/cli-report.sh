#!/usr/bin/env bash
# kscope report: a one-page summary of Proton's and kscope's files, the
# errors, and the help text.
set -u
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/check-lib.sh" # KS, PY (the tests' venv), ok, fail, finish
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() { # description, then a command that must succeed
    local what=$1
    shift
    if "$@"; then ok "$what"; else fail "$what"; fi
}
has() { grep -qF -- "$2" "$1"; }

"$KS" report "$src/test/data/proton/rich_tree.hatchet" >"$work/rich.txt" 2>"$work/err.txt"
check "exit 0 on Proton's file" test $? -eq 0
check "device line with peaks" has "$work/rich.txt" \
    "device CUDA 0: arch 90, 132 SMs, 1980 MHz, memory 3201 MHz, 6016-bit bus; peak 988.2 TFLOP/s fp16, 4814 GB/s"
check "GPU time split into kernels and copies" has "$work/rich.txt" \
    "GPU time: 236.704 us (kernels 236.704 us in 13 launches"
check "top kernels table" has "$work/rich.txt" "add_kernel<n=4194304>"
check "scopes by inclusive GPU time, with their context" has "$work/rich.txt" \
    " 29.84%     70.624 us         -  train > step > matmul"
check "nothing on stderr" test ! -s "$work/err.txt"

"$KS" report -n 2 "$src/test/data/kscope/pcsampling.hatchet" >"$work/pcs.txt"
check "PC samples: the hottest lines with their main stall reasons" has "$work/pcs.txt" \
    "      1000   87.0%  long_scoreboard 89%, selected 6%, wait 5%     /src/pcs.cu:41@chain_kernel(float*, int)  [chain_kernel(float*, int)]"
check "PC samples: -n limits the lines" test "$(grep -c '@chain_kernel\|no line information' "$work/pcs.txt")" -eq 2
check "no PC samples: no lines section" sh -c "! grep -q 'source lines' '$work/rich.txt'"

"$bin/example" "$work/host" >/dev/null
"$KS" report -n 2 "$work/host.hatchet" >"$work/host.txt"
check "host-only profile: no GPU time" has "$work/host.txt" "GPU time: 0 ns"
check "host-only profile: scopes by wall time with calls" has "$work/host.txt" \
    "         4  train > step"
check "-n limits the rows" test "$(grep -c ' train' "$work/host.txt")" -eq 2

# copies and sets apart from kernels, records CUPTI dropped, seconds; two
# files: one summary each, a blank line between
cat >"$work/copies.hatchet" <<'JSON'
[{"frame": {"name": "ROOT", "type": "function"},
  "metrics": {"time (ns)": 0, "count": 0, "dropped_records": 5},
  "children": [{"frame": {"name": "step", "type": "function"}, "metrics": {}, "children": [
    {"frame": {"name": "[memcpy HtoD]", "type": "function"}, "children": [],
     "metrics": {"time (ns)": 2000, "count": 2, "bytes": 4096, "device_id": "0", "device_type": "CUDA"}},
    {"frame": {"name": "gemm", "type": "function"}, "children": [],
     "metrics": {"time (ns)": 1500000000, "count": 3, "device_id": "0", "device_type": "CUDA"}}]}]},
 {}]
JSON
"$KS" report "$work/copies.hatchet" "$work/host.hatchet" >"$work/two.txt" 2>"$work/err.txt"
check "copies: exit 0, nothing on stderr" test $? -eq 0 -a ! -s "$work/err.txt"
check "copies and sets counted apart from kernels" has "$work/two.txt" \
    "GPU time: 1.500 s (kernels 1.500 s in 3 launches; copies and sets 2.000 us in 2, 4096 bytes)"
check "dropped records said" has "$work/two.txt" \
    "dropped records: 5 (the GPU totals are short by that many)"
check "two files: two summaries, a blank line between" "$PY" -c '
import sys
text = open(sys.argv[1]).read()
heads = [l for l in text.splitlines() if l.startswith("== ")]
assert [h.rsplit("/", 1)[1] for h in heads] == ["copies.hatchet", "host.hatchet"], heads
assert "\n\n== " in text
' "$work/two.txt"

"$KS" report "$work/missing.hatchet" >"$work/out.txt" 2>"$work/err.txt"
check "missing file: exit 2" test $? -eq 2
check "missing file: one line naming it" test "$(wc -l <"$work/err.txt")" -eq 1
check "missing file: the name is in it" has "$work/err.txt" "missing.hatchet"
"$KS" report -n x "$work/host.hatchet" 2>"$work/err.txt"
check "bad -n: exit 2" test $? -eq 2
"$KS" report 2>"$work/err.txt"
check "no file: exit 2" test $? -eq 2
check "help names every option" sh -c "'$KS' report --help | grep -q -- '-n N'"

# --html: the page itself is checked in a browser (test/browser/); here, its
# text and the errors.
tree=$src/test/data/proton/rich_tree.hatchet
"$KS" report --html "$work/r.html" "$tree" 2>"$work/err.txt"
check "--html: exit 0" test $? -eq 0
check "--html: the data escapes <" sh -c "grep -q 'add_kernel\\\\u003cn=4194304' '$work/r.html'"
check "--html: no external resource" sh -c "! grep -Eqi '(src|href)=\"?(https?:)?//' '$work/r.html'"
check "--html: a CSP that forbids requests" has "$work/r.html" "default-src 'none'"
"$KS" report --html "$work/r.html" "$tree" "$tree" "$tree" 2>"$work/err.txt"
check "--html with three profiles: exit 2" test $? -eq 2
check "--html with three profiles: says so" has "$work/err.txt" "one profile, or two"
"$KS" report --html "$work/m.html" "$work/missing.hatchet" 2>"$work/err.txt"
check "--html, missing file: one line naming it" sh -c \
    "test \$(wc -l <'$work/err.txt') -eq 1 && grep -q missing.hatchet '$work/err.txt'"
check "--html, missing file: no page left" test ! -e "$work/m.html"
"$KS" report --html "$work/d.html" /nonexistent-dir/x.html "$tree" 2>"$work/err.txt"
check "--html, bad input: exit 2" test $? -eq 2
"$KS" report --max-nodes 0 --html "$work/r.html" "$tree" 2>"$work/err.txt"
check "--max-nodes 0: refused" has "$work/err.txt" "--max-nodes needs a number >= 1"
"$KS" report --html "$work/x/y.html" "$tree" 2>"$work/err.txt"
check "--html, unwritable OUT: names it" has "$work/err.txt" "x/y.html: cannot write"

# --html and the run's facts: PROFILE.meta.json beside a tree, a trace's
# metadata; a facts file that cannot be read is said, the page still made.
cp "$tree" "$work/t.hatchet"
printf '{"command":"python train.py --lr 0.1 </script>","host":"gpu7","pid":42,"start_time":"2025-06-01T12:00:00.000Z","kscope_version":"9.9"}\n' \
    >"$work/t.hatchet.meta.json"
"$KS" report --html "$work/f.html" "$work/t.hatchet" 2>"$work/err.txt"
check "--html, facts file: exit 0, only the wrote line" sh -c "test $? -eq 0 &&
    test \$(wc -l <'$work/err.txt') -eq 1 && grep -q '^kscope report: wrote .*/f.html (' '$work/err.txt'"
check "--html, facts file: the run's facts in the page" has "$work/f.html" \
    '"run":{"command":"python train.py --lr 0.1 \u003c/script\u003e","host":"gpu7","pid":"42"'
printf '{"command": "x",' >"$work/t.hatchet.meta.json"
"$KS" report --html "$work/f.html" "$work/t.hatchet" 2>"$work/err.txt"
check "--html, broken facts file: exit 0" test $? -eq 0
check "--html, broken facts file: one warning naming it" sh -c \
    "test \$(grep -c warning '$work/err.txt') -eq 1 && grep -q 't.hatchet.meta.json: the run.s facts are left out' '$work/err.txt'"
check "--html, broken facts file: the page says so" has "$work/f.html" '"run_error":'
printf '[1, 2]' >"$work/t.hatchet.meta.json"
"$KS" report --html "$work/f.html" "$work/t.hatchet" 2>"$work/err.txt"
check "--html, facts file not an object: said" has "$work/err.txt" "not a JSON object"
"$bin/example" "$work/own" trace >/dev/null 2>&1
"$KS" report --html "$work/o.html" "$work/own.chrome_trace" 2>"$work/err.txt"
check "--html, trace: its metadata in the page" sh -c \
    "grep -q '\"metadata\":{\"command\":\"[^\"]*example [^\"]*own trace\"' '$work/o.html'"
# --html of a trace with every kind of event the timeline shows: slices on
# named and sorted thread tracks, instant marks, a launch arrow (s/f),
# counter tracks (one series per numeric arg, "value" by the event's name);
# --max-track-events keeps each track's longest slices and counter samples.
cat >"$work/kinds.json" <<'JSON'
{"traceEvents": [
 {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "trainer"}},
 {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "main"}},
 {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 2, "args": {"sort_index": 5}},
 {"ph": "X", "name": "step", "pid": 1, "tid": 2, "ts": 10, "dur": 100},
 {"ph": "X", "name": "short", "pid": 1, "tid": 2, "ts": 20, "dur": 1},
 {"ph": "X", "name": "long", "pid": 1, "tid": 2, "ts": 30, "dur": 50},
 {"ph": "X", "name": "kernel", "pid": 9, "tid": 7, "ts": 40, "dur": 20},
 {"ph": "i", "name": "checkpoint", "pid": 1, "tid": 2, "ts": 60, "s": "t"},
 {"ph": "s", "name": "launch", "id": 42, "pid": 1, "tid": 2, "ts": 35},
 {"ph": "f", "name": "launch", "id": 42, "pid": 9, "tid": 7, "ts": 40, "bp": "e"},
 {"ph": "C", "name": "memory", "pid": 1, "ts": 10, "args": {"value": 5}},
 {"ph": "C", "name": "memory", "pid": 1, "ts": 50, "args": {"value": 7}},
 {"ph": "C", "name": "memory", "pid": 1, "ts": 90, "args": {"value": 6}},
 {"ph": "C", "name": "gpu", "pid": 1, "ts": 10, "args": {"watts": 300, "celsius": 60}}
]}
JSON
"$KS" report --max-track-events 2 --html "$work/kinds.html" "$work/kinds.json" 2>"$work/err.txt"
check "--html of every trace event kind: exit 0" test $? -eq 0
check "--html of every trace event kind: timeline data" "$PY" -c '
import json, re, sys
html = open(sys.argv[1]).read()
m = re.search(r"<script type=\"application/json\" id=\"kscope-a\">(.*?)</script>", html, re.S)
t = json.loads(m.group(1))["trace"]
S = t["strings"]
tracks = {S[k["name"]]: k for k in t["tracks"]}
main = tracks["main"]
assert main["sort"] == 5 and main["n"] == 3, main
# the 2 longest of 3 (step, long), in time order
assert [S[i] for i in main["name_i"]] == ["step", "long"], main
assert [S[p] for p in t["processes"][1::2]] == ["trainer"], t["processes"]
# times in ns from the first event (t0, 10 us); along a track or a series
# each time is a step from the one before
assert t["t0"] == 10000 and main["ts"] == [0, 20000] and main["dur"] == [100000, 50000], main
assert t["tracks"][1]["name"] == -1 and S[t["tracks"][1]["name_i"][0]] == "kernel"
assert t["marks"] == [0, 50000, S.index("checkpoint"), -1], t["marks"]  # -1: no args
assert t["flows"] == [0, 25000, 1, 30000], t["flows"]  # from track 0 to track 1
series = {S[c["name"]]: c for c in t["counters"]}
assert set(series) == {"memory", "gpu watts", "gpu celsius"}, sorted(series)
mem = series["memory"]
assert mem["n"] == 3 and mem["v"] == [5, 7] and mem["ts"] == [0, 40000], mem
assert series["gpu watts"]["v"] == [300] and series["gpu celsius"]["v"] == [60]
' "$work/kinds.html"

finish
