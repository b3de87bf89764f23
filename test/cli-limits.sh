#!/bin/bash
# cli-limits.sh - numbers at their limits and input that is no profile:
#  - a sum past the largest double is refused with one line naming the
#    metric (merge, a trace's durations), never written as null; an
#    integer past int64 (JSON, MessagePack uint64) is read as floating
#    point; ROOT's 0 placeholders keep their metric's type, as Proton
#    writes them; top prints a duration of 1e294 s with a unit;
#  - 2 GB of garbage (a MessagePack array header, "{" then zeros, a
#    string longer than any name) is refused after a bounded prefix in
#    bounded memory by view, report --html and merge; a FIFO where the
#    run's facts go does not hang report --html; a path holding ESC or a
#    newline reaches the terminal escaped.
# The big files are sparse (truncate), so they cost no disk.
source "$(dirname "$0")/read-lib.sh"

W=$WORK
PEAK="python3 $KSCOPE_SOURCE_DIR/test/support/peak-rss.py"
# a sanitizer's runtime holds freed memory (ASan's quarantine): there the
# bound checked is only far below the files' size
ldd "$KS" | grep -q libasan && SAN=1 || SAN=0

# ------------------------------------------------------------ sums
tree() { # tree FILE VALUE: one kernel holding VALUE as its time
    printf '[{"frame":{"name":"ROOT"},"metrics":{"time (ns)":0,"count":0},"children":[{"frame":{"name":"k"},"metrics":{"time (ns)":%s,"count":1,"device_id":"0"},"children":[]}]},{}]' "$2" >"$1"
}
tree "$W/big.hatchet" 1e308
rc=0
"$KS" merge -o "$W/merged.hatchet" "$W/big.hatchet" "$W/big.hatchet" >"$W/m.out" 2>"$W/m.err" || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$W/m.err")" = 1 ] &&
    grep -q "metric 'time (ns)' of 'k' sums past the largest number" "$W/m.err" && [ ! -e "$W/merged.hatchet" ] &&
    ok "merge: a sum past the largest double is refused, naming the metric" ||
    fail "merge of two 1e308 trees: exit $rc, $(cat "$W/m.err"), $(ls "$W")"
printf '{"traceEvents":[{"name":"k","cat":"kernel","ph":"X","pid":1,"tid":1,"ts":0,"dur":1e306}]}' >"$W/long.json"
bad convert-long-trace "long.json: event 0 ('k'): metric 'time (ns)' sums past the largest number" \
    "$KS" convert "$W/long.json" "$W/long.hatchet"
printf '{"traceEvents":[{"name":"s","ph":"X","pid":1,"tid":1,"ts":0,"dur":1e305},{"name":"s","ph":"X","pid":1,"tid":1,"ts":2e305,"dur":1e305}]}' \
    >"$W/twice.json"
bad view-summed-trace "twice.json: event 1 ('s'): metric 'wall_time (ns)' sums past" "$KS" view "$W/twice.json"
# what a command writes, every command reads back
"$KS" merge -o "$W/max.hatchet" "$W/big.hatchet" && "$KS" view "$W/max.hatchet" >/dev/null &&
    ! grep -q null "$W/max.hatchet" && ok "a merged 1e308 reads back" || fail "a merged 1e308 does not read back"

# ------------------------------------------------------- past int64
printf '[{"frame":{"name":"ROOT"},"metrics":{"flops16":0},"children":[{"frame":{"name":"k"},"metrics":{"flops16":10000000000000000000},"children":[]}]},{}]' \
    >"$W/u64.hatchet"
"$PY" - "$W/u64.hatchet_msgpack" <<'PY'
import struct, sys
def s(x): return bytes([0xa0 | len(x)]) + x.encode()
kid = b"\x83" + s("frame") + b"\x81" + s("name") + s("k") + s("metrics") + b"\x81" + s("flops16") + \
    b"\xcf" + struct.pack(">Q", 10**19) + s("children") + b"\x90"
root = b"\x83" + s("frame") + b"\x81" + s("name") + s("ROOT") + s("metrics") + b"\x81" + s("flops16") + \
    b"\x00" + s("children") + b"\x91" + kid
open(sys.argv[1], "wb").write(b"\x92" + root + b"\x80")
PY
for f in u64.hatchet u64.hatchet_msgpack; do
    out=$("$KS" view -m flops16 "$W/$f" 2>&1)
    echo "$out" | grep -q "1.000e+19  └─ k" && ok "$f: an integer past int64 is read (as floating point)" ||
        fail "$f: $out"
done

# ---------------------------------------------------- ROOT's zeros
"$KS" merge -o "$W/rich2.hatchet" "$DATA/proton/rich_tree.hatchet" "$DATA/proton/rich_tree.hatchet"
"$PY" - "$W/rich2.hatchet" "$DATA/proton/rich_tree.hatchet" <<'PY' && ok "merge: ROOT's zeros keep their type" ||
import json, sys
ours, proton = (json.load(open(p))[0]["metrics"] for p in sys.argv[1:])
# as Proton writes them: 0 for an integer metric; 0.0 where a node holds a float
want = {"count": 0, "time (ns)": 0, "bytes": 0, "tokens": 0, "flops32": 0.0}
bad = {k: v for k, v in want.items() if k not in ours or repr(ours[k]) != repr(v)}
assert not bad and repr(proton["count"]) == "0", (bad, ours)
PY
    fail "merge: ROOT's zeros $(head -c 300 "$W/rich2.hatchet")"
(cd "$W" && "$KSCOPE_BINARY_DIR/example" ex tree >/dev/null 2>&1)
grep -q '"tokens":0[,}]' "$W/ex.hatchet" && ok "a session's integer metric: ROOT \"tokens\": 0" ||
    fail "session ROOT: $(head -c 300 "$W/ex.hatchet")"

# ------------------------------------------------- huge durations
tree "$W/slow.hatchet" 1e303
out=$("$KS" top "$W/slow.hatchet")
echo "$out" | grep -q "1.000e+294 s" && [ "$(echo "$out" | grep -Ec '[0-9]{20}')" = 0 ] &&
    ok "top: 1e294 s with a unit" || fail "top of a 1e294 s kernel: $out"

# ------------------------------------------------ garbage, bounded
limit() { # limit NAME WANT_RC WANT_ERR CMD...: refused in bounded memory
    local name=$1 want_rc=$2 want=$3
    shift 3
    read -r rc kib secs < <($PEAK "$@" 2>"$W/$name.err")
    local max=$((64 * 1024))
    [ "$SAN" = 1 ] && max=$((256 * 1024))
    if [ "$rc" != "$want_rc" ] || ! grep -qF -- "$want" "$W/$name.err"; then
        fail "$name: exit $rc: $(head -c 300 "$W/$name.err")"
    elif [ "$kib" -gt "$max" ]; then
        fail "$name: peak $((kib / 1024)) MiB (at most $((max / 1024)) MiB)"
    else
        ok "$name: refused in $secs s, peak $((kib / 1024)) MiB: $(head -c 150 "$W/$name.err")"
    fi
}
printf '\x92' >"$W/garbage.bin" && truncate -s 2G "$W/garbage.bin"
limit view-2g 2 "garbage.bin: element 0 of the top-level array is not an object" "$KS" view "$W/garbage.bin"
limit report-2g 2 "garbage.bin: element 0" "$KS" report --html "$W/g.html" "$W/garbage.bin"
printf '{' >"$W/zeros.json" && truncate -s 2G "$W/zeros.json"
limit merge-2g 2 "zeros.json: not valid JSON" "$KS" merge -o "$W/x.json" "$W/zeros.json"
limit view-2g-json 2 "zeros.json: not valid JSON" "$KS" view "$W/zeros.json"
# a MessagePack string of 4 GB: refused from its header
printf '\x92\xdb\xff\xff\xff\xf0' >"$W/str.hatchet_msgpack" && truncate -s 100M "$W/str.hatchet_msgpack"
limit view-msgpack-string 2 "more than 16 MiB in one string" "$KS" view "$W/str.hatchet_msgpack"
# a JSON string longer than any name: refused once it passes 16 MiB
"$PY" -c 'import sys; sys.stdout.write("[{\"frame\":{\"name\":\"" + "a" * (40 << 20))' >"$W/name.hatchet"
limit view-json-string 2 "no JSON value ends within 16 MiB" "$KS" view "$W/name.hatchet"
"$PY" -c 'import sys; sys.stdout.write("{\"traceEvents\":[{\"name\":\"" + "a" * (40 << 20))' >"$W/name.json"
limit view-trace-string 2 "no JSON value ends within 16 MiB" "$KS" view "$W/name.json"
limit merge-trace-string 2 "no JSON value ends within 16 MiB" "$KS" merge -o "$W/y.json" "$W/name.json"
rm -f "$W/garbage.bin" "$W/zeros.json" "$W/str.hatchet_msgpack" "$W/name.hatchet" "$W/name.json"

# ------------------------------------------------ side files
cp "$DATA/proton/rich_tree.hatchet" "$W/fifo.hatchet"
mkfifo "$W/fifo.hatchet.meta.json"
rc=0
timeout 20 "$KS" report --html "$W/fifo.html" "$W/fifo.hatchet" 2>"$W/fifo.err" || rc=$?
[ $rc = 0 ] && grep -q "fifo.hatchet.meta.json: the run's facts are left out: a FIFO, not a regular file" \
    "$W/fifo.err" && [ -s "$W/fifo.html" ] && ok "report --html: a FIFO for the run's facts is refused, not waited on" ||
    fail "report --html with a FIFO beside: exit $rc: $(cat "$W/fifo.err")"

# a FIFO read on request still waits for its writer (opened without
# blocking to be judged, then as a plain open does)
mkfifo "$W/late.fifo"
(sleep 1 && cat "$DATA/proton/rich_tree.hatchet" >"$W/late.fifo") &
out=$(KSCOPE_READ_SPECIAL=1 timeout 20 "$KS" view "$W/late.fifo" 2>&1) && echo "$out" | grep -q "train" &&
    ok "KSCOPE_READ_SPECIAL=1: a FIFO whose writer comes later is read" || fail "late FIFO writer: $out"
wait

# -------------------------------------------------- hostile paths
evil=$W/$'bad\e[31m\nname.hatchet'
for cmd in "view" "top" "report" "report --html $W/e.html" "diff $DATA/proton/rich_tree.hatchet" \
    "merge -o $W/e.hatchet" "merge -o $W/e.json" "convert"; do
    rc=0
    # shellcheck disable=SC2086
    if [ "$cmd" = convert ]; then
        "$KS" convert "$evil" "$W/e2.hatchet" >"$W/p.out" 2>"$W/p.err" || rc=$?
    else
        "$KS" $cmd "$evil" >"$W/p.out" 2>"$W/p.err" || rc=$?
    fi
    if [ $rc = 0 ] || [ "$(wc -l <"$W/p.err")" != 1 ] || grep -q $'\e' "$W/p.err" ||
        ! grep -qF 'bad\x1b[31m\nname.hatchet: No such file' "$W/p.err"; then
        fail "kscope $cmd on a path with ESC and a newline: exit $rc: $(cat -v "$W/p.err")"
    else
        ok "kscope $cmd: $(cat "$W/p.err")"
    fi
done
finish
