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

# Control characters in names (JSON holds them escaped) are read, and every
# printer shows them escaped: no ESC byte reaches the terminal.
cat >"$W/control.hatchet" <<'JSON'
[{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": 0, "count": 0},
  "children": [{"frame": {"name": "a\tb\u001b[31mc"},
                "metrics": {"time (ns)": 5, "count": 1, "dev\u001bice_id": "0",
                            "device_id": "0", "device_type": "CUDA"}}]},
 {"CUDA\u001b[2J": {"0": {"arch": "9\u001b0", "num_sms": 1}}}]
JSON
"$KS" convert "$W/control.hatchet" "$W/control.hatchet_msgpack" || fail "convert of control names failed"
for cmd in "view" "view -l" "top" "report" "diff $W/control.hatchet"; do
    for f in control.hatchet control.hatchet_msgpack; do
        out=$W/out.txt rc=0
        $KS $cmd "$W/$f" >"$out" 2>&1 || rc=$?
        if [ "$rc" != 0 ]; then
            fail "kscope $cmd $f: exit $rc ($(head -c 200 "$out"))"
        elif grep -q $'\x1b' "$out"; then
            fail "kscope $cmd $f printed a raw ESC"
        else
            ok "kscope $cmd $f shows control characters escaped"
        fi
    done
done
$KS view "$W/control.hatchet" | grep -qF 'a\tb\x1b[31mc' || fail "view does not show the name escaped"
$KS view -l "$W/control.hatchet" | grep -qF 'CUDA\x1b[2J 0: arch 9\x1b0' ||
    fail "view -l does not show device info escaped: $($KS view -l "$W/control.hatchet")"

# Inputs that are not regular files are refused at once (a FIFO without a
# writer would block for ever), unless KSCOPE_READ_SPECIAL=1 asks for them.
mkfifo "$W/fifo.hatchet"
bad fifo-view "fifo.hatchet: is a FIFO, not a regular file (set KSCOPE_READ_SPECIAL=1" \
    timeout 20 "$KS" view "$W/fifo.hatchet"
bad fifo-merge "is a FIFO" timeout 20 "$KS" merge -o "$W/m.json" "$T" "$W/fifo.hatchet"
bad urandom-view "/dev/urandom: is a character device" timeout 20 "$KS" view /dev/urandom
out=$(KSCOPE_READ_SPECIAL=1 timeout 20 "$KS" view /dev/stdin <"$T") && [ -n "$out" ] &&
    ok "KSCOPE_READ_SPECIAL=1 reads a pipe" || fail "KSCOPE_READ_SPECIAL=1 view of a pipe failed"
# A big file that is no profile is refused from its first bytes, not after
# reading it whole: the command stays far below the file's size in memory.
truncate -s 2G "$W/zeros.json"
small_rss() { # small_rss NAME: the last command's peak memory (in $W/rss) < 300 MB
    local kb
    kb=$(tail -1 "$W/rss")
    [ "$kb" -lt 300000 ] && ok "$1: peak memory $kb kB" || fail "$1: peak memory $kb kB"
}
bad zeros-view "zeros.json: not a profile" /usr/bin/time -o "$W/rss" -f %M "$KS" view "$W/zeros.json"
small_rss zeros-view
bad zeros-merge "zeros.json: not a profile" \
    /usr/bin/time -o "$W/rss" -f %M "$KS" merge -o "$W/m.json" "$T" "$W/zeros.json"
small_rss zeros-merge

# A string where a number belongs is refused, naming the node and metric.
echo '[{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": 0}, "children": [
  {"frame": {"name": "k"}, "metrics": {"time (ns)": "500"}}]}, {}]' >"$W/strtime.hatchet"
bad string-metric "strtime.hatchet: metric 'time (ns)' of 'k' is a string (\"500\"), not a number" \
    "$KS" view "$W/strtime.hatchet"

# Output to a full disk is an error for every command that prints.
P=$DATA/proton/rich_tree.hatchet
for cmd in "view $P" "view -l $P" "top $P" "report $P" "diff $P $P" "version" "help" \
    "view --help"; do
    rc=0
    $KS $cmd >/dev/full 2>"$W/full.err" || rc=$?
    if [ "$rc" = 0 ]; then
        fail "kscope $cmd >/dev/full exited 0"
    elif [ "$(wc -l <"$W/full.err")" != 1 ] || ! grep -q "cannot write to standard output" "$W/full.err"; then
        fail "kscope $cmd >/dev/full: stderr: $(cat "$W/full.err")"
    else
        ok "kscope $cmd >/dev/full: exit $rc, $(cat "$W/full.err")"
    fi
done

# Every CTest test has a time limit (a hung test fails instead of stalling).
if [ -n "${KSCOPE_BINARY_DIR:-}" ]; then
    untimed=$(ctest --test-dir "$KSCOPE_BINARY_DIR" --show-only=json-v1 | "$PY" -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    if not any(p["name"] == "TIMEOUT" for p in t.get("properties", [])):
        print(t["name"])')
    [ -z "$untimed" ] && ok "every test has a timeout" || fail "tests without a timeout: $untimed"
fi

finish
