#!/bin/bash
# cli-outputs.sh - where every writer puts its file (convert, merge -o of
# trees and of traces, report --html, a session's own profile): a symbolic
# link is written through to its target (the link stays), a device node or
# FIFO is written in place (opened, never replaced), a regular file is
# replaced whole or not at all: bad input, a full disk or a kill mid-write
# leave the old file as it was, and a temporary file beside it that a user
# can tell (OUT.kscope-tmp.PID.XXXXXX), which the next write of OUT removes.
# Temporary files never follow a link planted at their name. Writers say
# what they wrote on stderr, and name OUT and the reason when they cannot.
source "$(dirname "$0")/read-lib.sh"

W=$WORK
R=$DATA/kscope/run_a.hatchet
T=$DATA/kscope/trace_host.json
EX=$KSCOPE_BINARY_DIR/example
trap 'umount "$W/small" 2>/dev/null; rm -rf "$WORK"' EXIT

# The writers, each given OUT: w_convert, w_merge (trees), w_trace (merge
# of traces), w_report (--html), w_session (the example's own session).
w_convert() { "$KS" convert "$R" "$1"; }
w_merge() { "$KS" merge -o "$1" "$R" "$R"; }
w_trace() { "$KS" merge -o "$1" "$T" "$T"; }
w_report() { "$KS" report --html "$1" "$R"; }
w_session() { KSCOPE_QUIET=1 "$EX" "${1%.hatchet}" tree >/dev/null; }
WRITERS="convert merge trace report session"
ext_of() { case $1 in trace) echo .json ;; report) echo .html ;; *) echo .hatchet ;; esac; }

# valid FILE: a whole output (a profile that reads back, or a whole page)
valid() {
    case $1 in
    *.html) tail -c 100 "$1" | grep -q '</html>' ;;
    *) "$KS" view "$1" >/dev/null 2>&1 ;;
    esac
}

# temps DIR: the temporary files left in DIR, one per line
temps() { ls -A "$1" | grep -E '\.kscope-tmp\.[0-9]+\.[A-Za-z0-9]{6}$' || true; }

# --- a symbolic link is written through (a relative chain of two links,
# first to a file not there yet, then to one that is): the links stay
for w in $WRITERS; do
    ext=$(ext_of $w) d=$W/link-$w
    mkdir -p "$d/real" "$d/out"
    ln -s "../real/target$ext" "$d/out/mid$ext"
    ln -s "mid$ext" "$d/out/out$ext"
    rc=0
    w_$w "$d/out/out$ext" 2>"$d/err" || rc=$?
    echo old >"$d/real/other"
    if [ $rc = 0 ] && [ -L "$d/out/out$ext" ] && [ -L "$d/out/mid$ext" ] && valid "$d/real/target$ext"; then
        echo stale >"$d/real/target$ext"
        w_$w "$d/out/out$ext" 2>"$d/err" || rc=$?
    fi
    if [ $rc = 0 ] && [ -L "$d/out/out$ext" ] && [ -L "$d/out/mid$ext" ] &&
        valid "$d/real/target$ext" && [ "$(find "$d/out" "$d/real" -mindepth 1 | wc -l)" = 4 ]; then
        ok "$w: a link to a new and to an existing file is written through, the links stay"
    else
        fail "$w through a symbolic link: exit $rc, $(ls -lA "$d/out" "$d/real" | tr '\n' ' ') $(cat "$d/err")"
    fi
done

# --- a device node is written in place, never replaced
if mknod "$W/probe" c 1 3 2>/dev/null; then
    for w in $WRITERS; do
        ext=$(ext_of $w) d=$W/dev-$w
        mkdir -p "$d" && mknod "$d/out$ext" c 1 3
        rc=0
        w_$w "$d/out$ext" 2>"$W/err" || rc=$?
        [ $rc = 0 ] && [ -c "$d/out$ext" ] && [ "$(ls -A "$d")" = "out$ext" ] &&
            ok "$w: a device node at OUT is written, and stays a device" ||
            fail "$w onto a device node: exit $rc, $(ls -lA "$d" | tr '\n' ' ') $(cat "$W/err")"
    done
else
    skip "device nodes as OUT (mknod is not permitted here)"
fi

# --- a FIFO is written in place: its reader gets the whole output
for w in $WRITERS; do
    ext=$(ext_of $w) d=$W/fifo-$w
    mkdir -p "$d" && mkfifo "$d/out$ext"
    timeout 60 cat "$d/out$ext" >"$d/got$ext" &
    reader=$!
    rc=0
    timeout 60 bash -c "$(declare -f w_$w); KS='$KS' R='$R' T='$T' EX='$EX' w_$w '$d/out$ext'" \
        2>"$d/err" || rc=$?
    [ -p "$d/out$ext" ] || kill $reader 2>/dev/null
    wait $reader
    [ $rc = 0 ] && [ -p "$d/out$ext" ] && valid "$d/got$ext" &&
        ok "$w: a FIFO at OUT gets the output, and stays a FIFO" ||
        fail "$w onto a FIFO: exit $rc, $(ls -lA "$d" | tr '\n' ' ') $(cat "$d/err")"
done

# --- report --html: bad input keeps an existing OUT (a file, a device)
echo 'not json' >"$W/bad.hatchet"
echo '<p>the old page</p>' >"$W/keep.html"
cp "$W/keep.html" "$W/keep.before"
for input in "$W/bad.hatchet" "$W/missing.hatchet"; do
    rc=0
    "$KS" report --html "$W/keep.html" "$input" 2>"$W/err" || rc=$?
    [ $rc = 2 ] && cmp -s "$W/keep.html" "$W/keep.before" && [ -z "$(temps "$W")" ] &&
        [ "$(wc -l <"$W/err")" = 1 ] && ok "report --html $(basename "$input"): exit 2, OUT kept" ||
        fail "report --html $(basename "$input"): exit $rc, OUT $(head -c 80 "$W/keep.html"): $(cat "$W/err")"
done
if [ -c "$W/probe" ]; then
    mknod "$W/keep-dev.html" c 1 3
    rc=0
    "$KS" report --html "$W/keep-dev.html" "$W/bad.hatchet" 2>/dev/null || rc=$?
    [ $rc = 2 ] && [ -c "$W/keep-dev.html" ] && ok "report --html, bad input: a device at OUT stays" ||
        fail "report --html, bad input, device at OUT: exit $rc, $(ls -l "$W/keep-dev.html" 2>&1)"
fi

# --- a full disk: a small tmpfs where one can be mounted, else a file
# size limit (ulimit -f: writes past it fail with EFBIG, as on a full disk)
"$PY" - "$W/big.hatchet" "$W/big.json" <<'PY'
import json, sys
kids = [{"frame": {"name": "scope%d" % i}, "metrics": {"wall_time (ns)": i * 1000, "calls": 1},
         "children": [{"frame": {"name": "inner%d" % j}, "metrics": {"wall_time (ns)": j, "calls": 1},
                       "children": []} for j in range(20)]} for i in range(3000)]
json.dump([{"frame": {"name": "ROOT"}, "metrics": {}, "children": kids}, {}], open(sys.argv[1], "w"))
events = [{"name": "slice%d" % i, "ph": "X", "ts": i, "dur": 1, "pid": 1, "tid": 1} for i in range(20000)]
json.dump({"traceEvents": events}, open(sys.argv[2], "w"))
PY
mkdir -p "$W/small"
if mount -t tmpfs -o size=64k tmpfs "$W/small" 2>/dev/null; then
    how="a 64 KiB tmpfs" reason="No space left on device"
    limited() { "$@"; }
else
    how="ulimit -f 64 (no tmpfs can be mounted here)" reason="File too large"
    limited() { (trap '' XFSZ; ulimit -f 64; "$@"); }
fi
S=$W/small
for w in report trace convert; do
    ext=$(ext_of $w)
    echo "the old $w output" >"$S/full$ext"
    cp "$S/full$ext" "$W/full.before"
    case $w in
    report) cmd=("$KS" report --html "$S/full$ext" "$W/big.hatchet") ;;
    trace) cmd=("$KS" merge -o "$S/full$ext" "$W/big.json" "$W/big.json") ;;
    convert) cmd=("$KS" convert "$W/big.hatchet" "$S/full$ext") ;;
    esac
    rc=0
    limited "${cmd[@]}" 2>"$W/err" || rc=$?
    [ $rc = 1 ] && cmp -s "$S/full$ext" "$W/full.before" && [ -z "$(temps "$S")" ] &&
        [ "$(wc -l <"$W/err")" = 1 ] && grep -qF "$S/full$ext: cannot write: $reason" "$W/err" &&
        ok "$w onto a full disk ($how): exit 1, names OUT and why, OUT kept, no temporary left" ||
        fail "$w onto a full disk ($how): exit $rc, $(ls -A "$S" | tr '\n' ' '): $(cat "$W/err")"
    rm -f "$S/full$ext"
done
# a full device (this test's own node like /dev/full: a writer that
# failed must never remove the machine's)
if mknod "$W/full" c 1 7 2>/dev/null; then
    rc=0
    "$KS" report --html "$W/full" "$R" 2>"$W/err" || rc=$?
    [ $rc = 1 ] && grep -qF "$W/full: cannot write: No space left on device" "$W/err" && [ -c "$W/full" ] &&
        ok "report --html onto a full device: exit 1, written in place, says why, the node stays" ||
        fail "report --html onto a full device: exit $rc, $(ls -l "$W/full" 2>&1): $(cat "$W/err")"
fi
"$KS" report --help | grep -q "1 when OUT cannot be written" || fail "report's help does not say exit 1"

# --- killed mid-write: OUT is the old file or the whole new one, only a
# recognisable temporary is left, and the next write removes it
kill_trials() { # kill_trials NAME OUT CMD...
    local name=$1 out=$2 left=0 torn=0
    shift 2
    for i in 1 2 3 4 5 6 7 8; do
        echo old >"$out"
        "$@" 2>/dev/null &
        local pid=$!
        sleep "0.0$i"
        kill -9 $pid 2>/dev/null
        wait $pid 2>/dev/null
        if [ "$(cat "$out" 2>/dev/null)" != old ] && ! valid "$out"; then torn=$((torn + 1)); fi
        local others
        others=$(ls -A "$(dirname "$out")" | grep -vxF "$(basename "$out")" |
            grep -vE '\.kscope-tmp\.[0-9]+\.[A-Za-z0-9]{6}$' || true)
        [ -z "$others" ] || fail "$name: killed, it left $others"
        left=$((left + $(temps "$(dirname "$out")" | grep -c .)))
    done
    "$@" 2>/dev/null || fail "$name: a write after the kills failed"
    [ $torn = 0 ] && [ -z "$(temps "$(dirname "$out")")" ] && valid "$out" &&
        ok "$name: 8 kills mid-write, OUT never torn; $left temporaries left, removed by the next write" ||
        fail "$name: $torn torn outputs, left after a full write: $(temps "$(dirname "$out")")"
}
mkdir -p "$W/kill-report" "$W/kill-merge"
kill_trials "report --html" "$W/kill-report/k.html" "$KS" report --html "$W/kill-report/k.html" "$W/big.hatchet"
kill_trials "merge of traces" "$W/kill-merge/k.json" "$KS" merge -o "$W/kill-merge/k.json" \
    "$W/big.json" "$W/big.json" "$W/big.json"

# --- stale temporaries: one whose writer is gone (its lock is free) is
# removed by the next write of the same OUT; one a live writer holds, one of
# another OUT, a name of another shape and a link are left alone
d=$W/stale
mkdir -p "$d"
echo dead >"$d/out.hatchet.kscope-tmp.999999.abcdef"
echo other >"$d/other.hatchet.kscope-tmp.1.abcdef"
echo shape >"$d/out.hatchet.kscope-tmp.x"
echo victim >"$d/victim"
ln -s victim "$d/out.hatchet.kscope-tmp.5.zzzzzz"
flock "$d/out.hatchet.kscope-tmp.999998.ghijkl" sleep 60 >/dev/null 2>&1 &
holder=$!
for _ in $(seq 100); do flock -n "$d/out.hatchet.kscope-tmp.999998.ghijkl" true || break; sleep 0.05; done
w_convert "$d/out.hatchet" 2>/dev/null || fail "convert beside stale temporaries failed"
pkill -P $holder sleep
wait $holder 2>/dev/null
[ ! -e "$d/out.hatchet.kscope-tmp.999999.abcdef" ] && [ -e "$d/out.hatchet.kscope-tmp.999998.ghijkl" ] &&
    [ -e "$d/other.hatchet.kscope-tmp.1.abcdef" ] && [ -e "$d/out.hatchet.kscope-tmp.x" ] &&
    [ -L "$d/out.hatchet.kscope-tmp.5.zzzzzz" ] && [ "$(cat "$d/victim")" = victim ] &&
    ok "stale temporary of a dead writer removed; a held one, another OUT's, another shape, a link kept" ||
    fail "stale temporaries: $(ls -A "$d" | tr '\n' ' ')"

# --- a link planted at the temporary file's name is never followed: the
# writer's pid and random bytes made known by a preloaded library
if cc -shared -fPIC -o "$W/fixed-names.so" "$KSCOPE_SOURCE_DIR/test/progs/fixed-names.c" 2>"$W/err"; then
    for w in convert merge trace report session; do
        ext=$(ext_of $w) d=$W/plant-$w
        mkdir -p "$d"
        echo victim >"$d/victim"
        ln -s victim "$d/out$ext.tmp4242"                    # an older naming
        ln -s victim "$d/out$ext.kscope-tmp.4242.aaaaaa"     # this one's first name
        ln -s victim "$d/out$ext.tmp.4242.0"
        rc=0
        LD_PRELOAD=$W/fixed-names.so ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0 \
            w_$w "$d/out$ext" 2>"$d/err" || rc=$?
        [ $rc = 0 ] && [ "$(cat "$d/victim")" = victim ] && valid "$d/out$ext" &&
            [ -L "$d/out$ext.tmp4242" ] && [ -L "$d/out$ext.kscope-tmp.4242.aaaaaa" ] &&
            ok "$w: links planted at the temporary names are not followed" ||
            fail "$w with links planted at its temporary names: exit $rc, victim '$(head -c 40 "$d/victim")': $(cat "$d/err")"
    done
else
    fail "cannot build the preload library: $(cat "$W/err")"
fi

# --- what writers say: one line on success; the page written when --html
# is forgotten; a run's facts file given for a profile
for w in convert merge trace report; do
    ext=$(ext_of $w) out=$W/said-$w$(ext_of $w)
    rc=0
    w_$w "$out" 2>"$W/err" || rc=$?
    size=$(stat -c %s "$out")
    [ "$size" -lt 1024 ] && want="$size bytes" || want="[0-9.]+ KiB"
    name=$w
    [ $w = trace ] && name=merge
    [ $rc = 0 ] && [ "$(wc -l <"$W/err")" = 1 ] &&
        grep -qxE "kscope $name: wrote $out \\($want\\)" "$W/err" && ok "$w says: $(cat "$W/err")" ||
        fail "$w: exit $rc, stderr: $(cat "$W/err")"
done
if [ -c "$W/probe" ]; then
    "$KS" convert "$R" "$W/dev-convert/out.hatchet" 2>"$W/err"
    grep -qx "kscope convert: wrote $W/dev-convert/out.hatchet" "$W/err" &&
        ok "a device written: no size" || fail "a device written: $(cat "$W/err")"
fi
(cd "$W" && "$KS" report out.html "$R") >"$W/out" 2>"$W/err"
rc=$?
[ $rc = 2 ] && [ ! -s "$W/out" ] && [ ! -e "$W/out.html" ] && [ "$(wc -l <"$W/err")" = 1 ] &&
    grep -qF "kscope report: out.html is an HTML name, not a profile: --html writes the page there (\`kscope report --html out.html $R\`)" "$W/err" &&
    ok "report out.html PROFILE: exit 2, says that --html writes the page" ||
    fail "report out.html PROFILE: exit $rc: $(cat "$W/err") $(head -3 "$W/out")"
cp "$R" "$W/p.hatchet"
echo '{"command": "x", "pid": 1}' >"$W/p.hatchet.meta.json"
for cmd in view top report diff merge convert; do
    case $cmd in
    diff) args=("$W/p.hatchet" "$W/p.hatchet.meta.json") ;;
    merge) args=(-o "$W/m.hatchet" "$W/p.hatchet.meta.json") ;;
    convert) args=("$W/p.hatchet.meta.json" "$W/c.hatchet") ;;
    *) args=("$W/p.hatchet.meta.json") ;;
    esac
    bad "facts-$cmd" "p.hatchet.meta.json: the run's facts beside the profile $W/p.hatchet (command, host, start time), not a profile: open $W/p.hatchet" \
        "$KS" $cmd "${args[@]}"
done
finish
