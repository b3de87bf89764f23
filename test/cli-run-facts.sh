# cli-run-facts.sh - the run's facts (command, host, pid, start time,
# version): beside a tree profile of `kscope run` as PROFILE.meta.json,
# written like profiles (no temporary file left); in a trace's metadata,
# also for a program that starts its own session; the command of a run's
# child process next to its own; a facts file that cannot be written is
# reported and the profile stays.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-scopes $KLINK
cd "$WORK"

# field FILE KEY [trace]: one fact from a facts file, or from a trace's metadata.
field() {
    "$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
d = d["metadata"] if len(sys.argv) > 3 else d
print(d.get(sys.argv[2], "(absent)"))
' "$@"
}

# words LINE: the words a shell reads from LINE, one per line.
words() {
    "$PY" -c 'import shlex, sys; print("\n".join(shlex.split(sys.argv[1])))' "$1"
}

# --- a tree: the facts file, its fields, the command as typed (quoted)
"$KS" run -n tree -- ./run-scopes 0 "it's" 'a b' '$HOME' >/dev/null 2>err.txt ||
    fail "run failed: $(cat err.txt)"
[ -f tree.hatchet.meta.json ] || fail "no tree.hatchet.meta.json beside tree.hatchet ($(ls))"
cmd=$(field tree.hatchet.meta.json command)
[ "$(words "$cmd")" = "$(printf '%s\n' ./run-scopes 0 "it's" 'a b' '$HOME')" ] ||
    fail "command does not read back as typed: $cmd"
[ "$(field tree.hatchet.meta.json process)" = "(absent)" ] ||
    fail "process given though it is the command"
[ "$(field tree.hatchet.meta.json host)" = "$(hostname)" ] || fail "host is not $(hostname)"
[ "$(field tree.hatchet.meta.json kscope_version)" = "$("$KS" version | awk '{print $2}')" ] ||
    fail "kscope_version is not $("$KS" version)"
case $(field tree.hatchet.meta.json pid) in '' | *[!0-9]*) fail "pid is not a number" ;; esac
"$PY" - tree.hatchet.meta.json <<'EOF' || fail "start_time is not a recent ISO 8601 UTC time"
import calendar, json, sys, time
t = json.load(open(sys.argv[1]))["start_time"]
assert t.endswith("Z") and len(t) == 24, t
assert abs(calendar.timegm(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) - time.time()) < 120, t
EOF
ls -a | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls -a)"
"$KS" view tree.hatchet | grep -q work || fail "the profile does not read back"
ok "tree profile: PROFILE.meta.json with the run's facts"

# --- a second run replaces it
"$KS" run -n tree -- ./run-scopes 0 again >/dev/null 2>&1
[ "$(words "$(field tree.hatchet.meta.json command)" | tail -1)" = again ] ||
    fail "a second run did not replace the facts"
ok "a new run replaces the facts"

# --- a trace: the facts are its metadata, no file beside it
"$KS" run -n tl -d trace -- ./run-scopes 0 x >/dev/null 2>err.txt || fail "trace run: $(cat err.txt)"
[ "$(field tl.chrome_trace command t)" = "./run-scopes 0 x" ] ||
    fail "trace metadata command: $(field tl.chrome_trace command t)"
[ "$(field tl.chrome_trace host t)" = "$(hostname)" ] || fail "trace metadata host"
[ ! -e tl.chrome_trace.meta.json ] || fail "a facts file beside a trace"
"$KS" view tl.chrome_trace | grep -q work || fail "the trace with metadata does not read back"
ok "trace: the facts in its metadata"

# --- a child of the run: the run's command and its own
"$KS" run -n kid -- sh -c './run-scopes 0 child; true' >/dev/null 2>err.txt ||
    fail "sh run: $(cat err.txt)"
kid=$(ls kid*.hatchet | head -1)
[ -n "$kid" ] || fail "the child wrote no profile ($(ls))"
[ "$(field "$kid.meta.json" command)" = "sh -c './run-scopes 0 child; true'" ] ||
    fail "child: command is not the run's: $(field "$kid.meta.json" command)"
[ "$(field "$kid.meta.json" process)" = "./run-scopes 0 child" ] ||
    fail "child: process is not its own: $(field "$kid.meta.json" process)"
ok "a child process: the run's command and its own"

# --- a program that starts its own trace session: its own command line
"$KSCOPE_BINARY_DIR/example" own trace >/dev/null 2>&1 || fail "example failed"
[ "$(field own.chrome_trace command t)" = "$KSCOPE_BINARY_DIR/example own trace" ] ||
    fail "own session: command $(field own.chrome_trace command t)"
"$KSCOPE_BINARY_DIR/example" owntree tree >/dev/null 2>&1
[ ! -e owntree.hatchet.meta.json ] || fail "a program's own tree session wrote a facts file"
ok "own sessions: a trace names its command; a tree gets no file"

# --- the facts file cannot be written: said, the run fails, the profile stays
mkdir blocked.hatchet.meta.json
"$KS" run -n blocked -- ./run-scopes >/dev/null 2>err.txt
rc=$?
[ $rc -ne 0 ] || fail "a facts file that could not be written: exit 0"
grep -q "cannot write the run's facts beside the profile" err.txt ||
    fail "the failure is not said: $(cat err.txt)"
"$KS" view blocked.hatchet | grep -q work || fail "the profile was lost"
ok "facts that cannot be written: reported, profile kept"

finish
