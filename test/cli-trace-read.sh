#!/bin/bash
# cli-trace-read.sh - a trace read the same way by every command: the
# page's timeline and the tree take the same events as slices; a refusal
# names the event it is about.
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
finish
