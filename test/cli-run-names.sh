# cli-run-names.sh - runs of `kscope run` with the same name in one folder
# never lose a profile: several at once (some through a wrapper, whose
# profile is renamed to the plain name at the end), each profile with its
# own run's facts beside it; a run that ends while another goes on is not
# overwritten by it. A killed run leaves nothing for ever: its folder in
# TMPDIR and its claims are removed by the next run, and its name is free
# again. The summary of a process killed after writing a part tells what
# is on disk instead of "no profile written".
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-scopes $KLINK
build run-sleep $KLINK
build run-phases $KLINK
cd "$WORK"
export TMPDIR=$WORK/tmp
mkdir -p "$TMPDIR"

# wait_for FILE TEXT: until FILE holds a line TEXT (at most 30 s)
wait_for() {
    for _ in $(seq 300); do
        grep -qx "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# check_trial DIR N: every run's summary in DIR/e*.txt names a profile that
# exists, no two the same, each with its own run's facts (pid) beside it,
# and DIR holds N profiles. Prints what is wrong.
check_trial() {
    local dir=$1 n=$2 names="" e pid name
    for e in "$dir"/e*.txt; do
        read -r pid name < <(sed -n 's/^kscope: profile of pid \([0-9]*\): \(.*\)$/\1 \2/p' "$e")
        [ -n "$name" ] && [ -f "$dir/$name" ] || { echo "$(basename "$e") names no profile: $(cat "$e")"; return; }
        grep -q "\"pid\":$pid," "$dir/$name.meta.json" 2>/dev/null ||
            { echo "$name.meta.json is not pid $pid's: $(cat "$dir/$name.meta.json" 2>&1)"; return; }
        names="$names $name"
    done
    [ "$(echo $names | tr ' ' '\n' | sort -u | wc -l)" = "$n" ] || { echo "names:$names"; return; }
    [ "$(ls "$dir" | grep -c '\.hatchet$')" = "$n" ] || { echo "files: $(ls "$dir" | tr '\n' ' ')"; return; }
    [ -z "$(ls -A "$dir" | grep kscope-claim)" ] || echo "claims left: $(ls -A "$dir")"
}

# --- four runs at once, two of them through a shell (renamed at the end),
# repeated: never a lost profile, never a swapped facts file
bad_trials=0
for t in $(seq 10); do
    d=$WORK/same$t
    mkdir -p "$d"
    cd "$d"
    # every run started before any program records (each waits for "go"):
    # the runs overlap for sure; 1, 2 exec the program (the run's own
    # process), 3, 4 start it as a child (renamed to the plain name)
    for i in 1 2 3 4; do
        how=exec
        [ $i -le 2 ] || how=
        "$KS" run -n same -- sh -c "touch $WORK/w$i; while [ ! -e $WORK/go ]; do sleep 0.01; done
            $how $WORK/run-scopes" >/dev/null 2>"$d/e$i.txt" &
    done
    for _ in $(seq 600); do [ -e "$WORK/w1" ] && [ -e "$WORK/w2" ] && [ -e "$WORK/w3" ] && [ -e "$WORK/w4" ] && break; sleep 0.05; done
    touch "$WORK/go"
    wait
    rm -f "$WORK"/w? "$WORK/go"
    cd "$WORK"
    why=$(check_trial "$d" 4)
    [ -z "$why" ] || { bad_trials=$((bad_trials + 1)); echo "trial $t: $why"; }
done
[ $bad_trials = 0 ] && ok "10 trials of 4 runs -n same at once: 4 profiles each, facts beside their own" ||
    fail "$bad_trials of 10 trials of 4 runs at once lost or mixed a profile"

# --- a run that ends while another goes on: the longer one does not
# overwrite it, though it names its profile only once it ends
d=$WORK/overlap
mkdir -p "$d"
cd "$d"
"$KS" run -n same -- "$WORK/run-sleep" 1 >"$WORK/long.out" 2>"$d/e1.txt" &
long=$!
wait_for "$WORK/long.out" ready || fail "the long run did not start"
"$KS" run -n same -- "$WORK/run-scopes" >/dev/null 2>"$d/e2.txt"
wait $long
cd "$WORK"
why=$(check_trial "$d" 2)
[ -z "$why" ] && grep -q "profile of pid [0-9]*: same.pid[0-9]*.hatchet" "$d/e1.txt" &&
    ok "a run that ended meanwhile keeps same.hatchet; the longer one takes its pid name" ||
    fail "overlapping runs: $why $(cat "$d/e1.txt")"

# --- a normal run leaves nothing in TMPDIR
"$KS" run -o "$WORK" -n alone -- ./run-scopes >/dev/null 2>err.txt || fail "run: $(cat err.txt)"
[ -z "$(ls -A "$TMPDIR")" ] && ok "a run leaves nothing in TMPDIR" || fail "left in TMPDIR: $(ls -A "$TMPDIR")"

# --- kscope run killed (SIGKILL): its folder and its claim stay until the
# next run, which removes them and gets the name
d=$WORK/killed
mkdir -p "$d"
"$KS" run -o "$d" -n k -m periodic_flushing -- ./run-phases wait >"$WORK/out" 2>/dev/null &
ks=$!
wait_for "$WORK/out" ready || fail "the periodic run did not start"
prog=$(pgrep -P $ks)
kill -9 $ks
wait $ks 2>/dev/null
kill -9 $prog
left=$(ls -A "$TMPDIR")
[ -n "$left" ] && [ -n "$(ls -A "$d" | grep kscope-claim)" ] ||
    fail "a killed run left no folder or claim to clean (TMPDIR: $left; $(ls -A "$d"))"
"$KS" run -o "$d" -n k -- ./run-scopes >/dev/null 2>"$d/e.txt" || fail "the next run: $(cat "$d/e.txt")"
[ -z "$(ls -A "$TMPDIR")" ] && [ -z "$(ls -A "$d" | grep kscope-claim)" ] &&
    grep -q "profile of pid [0-9]*: killed/k.hatchet$" "$d/e.txt" &&
    ok "a killed run's folder ($left) and claim are removed by the next run, which gets the name" ||
    fail "after a killed run: TMPDIR $(ls -A "$TMPDIR"), $(ls -A "$d" | tr '\n' ' '), $(cat "$d/e.txt")"

# --- the program killed after writing a part: the summary shows it
d=$WORK/parts
mkdir -p "$d"
"$KS" run -o "$d" -n p -m periodic_flushing -- ./run-phases wait >"$WORK/out2" 2>"$d/err" &
ks=$!
wait_for "$WORK/out2" ready || fail "the periodic run did not start"
prog=$(pgrep -P $ks)
kill -9 $prog
wait $ks
grep -q "no profile written" "$d/err" && fail "the summary says no profile was written: $(cat "$d/err")"
grep -q "pid $prog ended before it said what it wrote (was it killed?); its profile is on disk:" "$d/err" &&
    grep -q "profile of pid $prog: parts/p.part_0.hatchet" "$d/err" &&
    ok "a program killed after its first part: the summary shows the part on disk" ||
    fail "summary of a killed program with a part: $(cat "$d/err")"
finish
