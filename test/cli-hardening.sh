#!/bin/bash
# cli-hardening.sh - the reading commands under hostile conditions: a write
# that fails leaves the previous output whole, no temporary file stays.
source "$(dirname "$0")/read-lib.sh"

W=$WORK
T=$DATA/kscope/trace_host.json

# A merge that fails half way (its second input is bad) keeps the old OUT.
"$KS" merge -o "$W/merged.json" "$T" "$T" || fail "merge of two traces failed"
cp "$W/merged.json" "$W/merged.before"
echo '{"traceEvents": [' >"$W/cut.json"
"$KS" merge -o "$W/merged.json" "$T" "$W/cut.json" 2>/dev/null && fail "merge of a cut trace passed"
if cmp -s "$W/merged.json" "$W/merged.before"; then
    ok "failed trace merge keeps the previous output"
else
    fail "failed trace merge changed or removed the previous output"
fi
[ -z "$(ls "$W" | grep '\.tmp')" ] && ok "no temporary file left" || fail "temporary files left: $(ls "$W")"

finish
