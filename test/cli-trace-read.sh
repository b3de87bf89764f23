#!/bin/bash
# cli-trace-read.sh - a trace read the same way by every command (one
# reader, format/events.h): the page's timeline and the tree take the same
# events as slices; a refusal names the event it is about; convert writes a
# trace again as a trace, each event as it was.
source "$(dirname "$0")/read-lib.sh"
W=$WORK

# only "X" is a complete slice: an event whose ph merely begins with X is
# none, on the page as in the tree
printf '{"traceEvents":[{"name":"a","ph":"X","pid":1,"tid":1,"ts":0,"dur":5},
{"name":"odd","ph":"XY","pid":1,"tid":1,"ts":1,"dur":2}]}' >"$W/ph.json"
"$KS" report --html "$W/ph.html" "$W/ph.json" 2>"$W/ph.err" || fail "report --html ph.json: $(cat "$W/ph.err")"
slices=$(python3 - "$W/ph.html" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
data = json.loads(re.search(r'id="kscope-a">(.*?)</script>', page, re.S).group(1))
t = data["trace"]
print(" ".join(t["strings"][i] for k in t["tracks"] for i in k["name_i"]))
PY
)
[ "$slices" = a ] && ok "page: only ph X is a slice" || fail "page slices: '$slices'"
"$KS" view "$W/ph.json" | grep -q "odd" && fail "view shows the ph XY event" || ok "tree: only ph X is a node"

# a negative count names the event it is in (events count from 0)
printf '{"traceEvents":[{"name":"k","cat":"kernel","ph":"X","pid":1,"tid":1,"ts":0,"dur":1,"args":{"bytes":-5}}]}' \
    >"$W/neg.json"
bad view-negative-bytes "neg.json: event 0: args.bytes is negative" "$KS" view "$W/neg.json"

# convert: a trace into a trace keeps every event as its file wrote it,
# and the run's facts; the bare-array form becomes the object form
events_equal() { # events_equal IN OUT: same events, same metadata
    python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
ev = lambda d: d if isinstance(d, list) else d["traceEvents"]
meta = lambda d: {} if isinstance(d, list) else d.get("metadata", {})
assert isinstance(b, dict) and b["displayTimeUnit"] == "us", b.keys()
assert ev(a) == ev(b), "events differ"
assert meta(a) == meta(b), (meta(a), meta(b))
PY
}
OWN=$KSCOPE_SOURCE_DIR/test/fuzz/corpus/chrome-trace/kscope-own.json
for f in "$DATA/kscope/trace_host.json" "$DATA/proton/rich_trace.chrome_trace" "$OWN" "$W/ph.json"; do
    n=$(basename "$f")
    "$KS" convert "$f" "$W/$n.chrome_trace" 2>"$W/c.err" && events_equal "$f" "$W/$n.chrome_trace" &&
        [ "$("$KS" view "$f" 2>&1)" = "$("$KS" view "$W/$n.chrome_trace" 2>&1)" ] &&
        ok "convert $n to a trace: every event as written" || fail "convert $n to a trace: $(cat "$W/c.err")"
done
printf '[{"name":"s","ph":"X","pid":1,"tid":1,"ts":1.50,"dur":1e1,"args":{"k":[1,{"x":null}]}}]' >"$W/bare.json"
"$KS" convert --to chrome_trace "$W/bare.json" "$W/bare.out" && events_equal "$W/bare.json" "$W/bare.out" &&
    grep -qF '"ts":1.50,"dur":1e1' "$W/bare.out" && ok "convert --to chrome_trace: numbers as written" ||
    fail "convert --to chrome_trace: $(cat "$W/bare.out")"
rc=0
err=$("$KS" convert "$W/neg.json" /nonexistent-dir/x.chrome_trace 2>&1) || rc=$?
[ $rc = 1 ] && grep -q "x.chrome_trace: cannot write" <<<"$err" && ok "convert to an unwritable trace: exit 1" ||
    fail "convert to an unwritable trace: exit $rc: $err"
bad convert-bad-trace "notjson.json: not valid JSON" sh -c "printf '{x' >'$W/notjson.json'; '$KS' convert '$W/notjson.json' '$W/n.chrome_trace'"
finish
