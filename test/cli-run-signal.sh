# cli-run-signal.sh - a process of `kscope run` ended by SIGTERM or SIGINT
# still writes what it recorded, and kscope ends by the same signal (the
# shell reports 128+signal).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-sleep $KLINK
cd "$WORK"

# run_and_kill SIGNAL TARGET: start a run, wait for "ready", send SIGNAL to
# TARGET (program or kscope), return the run's exit code.
run_and_kill() {
    local sig=$1 target=$2
    rm -f kscope.hatchet ready.txt
    # A background job of a script starts with SIGINT ignored: restore it.
    "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$KS" run -- ./run-sleep 30 >ready.txt 2>err.txt &
    local ks=$!
    for _ in $(seq 1 100); do
        grep -q ready ready.txt 2>/dev/null && break
        sleep 0.1
    done
    local prog
    prog=$(pgrep -P "$ks" run-sleep)
    if [ "$target" = program ]; then
        kill -"$sig" "$prog"
    else
        kill -"$sig" "$ks"
    fi
    wait "$ks"
}

run_and_kill TERM program
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM: exit $rc, expected 143: $(cat err.txt)"
[ -f kscope.hatchet ] || fail "SIGTERM: no profile written"
[ -f kscope.hatchet ] && { has kscope.hatchet before-signal || fail "SIGTERM: scope lost"; }
[ -f kscope.hatchet ] && { has kscope.hatchet waiting || fail "SIGTERM: open scope not closed"; }
ok "SIGTERM to the program"

run_and_kill INT program
rc=$?
[ $rc -eq 130 ] || fail "SIGINT: exit $rc, expected 130"
[ -f kscope.hatchet ] && has kscope.hatchet before-signal || fail "SIGINT: profile lost"
ok "SIGINT to the program"

run_and_kill TERM kscope
rc=$?
[ $rc -eq 143 ] || fail "SIGTERM to kscope: exit $rc, expected 143"
[ -f kscope.hatchet ] && has kscope.hatchet before-signal || fail "SIGTERM to kscope: profile lost"
grep -q "view it with" err.txt || fail "SIGTERM to kscope: no summary"
ok "SIGTERM to kscope is passed on"
finish
