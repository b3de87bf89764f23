# cli-run-procs.sh - `kscope run` on several processes: a forking program
# (fork without exec, and fork+exec) gives one file per process, named by
# pid or by rank, each with only its own scopes (mpirun: cli-run-mpi.sh),
# and the fleet hint of rank 0.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-fork $KLINK
build run-scopes $KLINK
cd "$WORK"

# --- fork: the parent writes kscope.hatchet, each child kscope.pid<PID>
run_ok "forking program" -- ./run-fork
[ -f kscope.hatchet ] || fail "parent profile missing"
has kscope.hatchet parent-before-fork || fail "parent lacks its scope"
has kscope.hatchet parent-after-fork || fail "parent lacks its later scope"
has kscope.hatchet forked-child && fail "the child's scope is in the parent's file"
n=$(ls kscope.pid*.hatchet 2>/dev/null | wc -l)
[ "$n" -eq 2 ] || fail "expected 2 child profiles, got $n: $(ls)"
forked=$(grep -l forked-child kscope.pid*.hatchet)
execd=$(grep -l exec-child kscope.pid*.hatchet)
[ -n "$forked" ] && [ -n "$execd" ] && [ "$forked" != "$execd" ] ||
    fail "children files: forked=$forked exec=$execd"
[ -n "$forked" ] && has "$forked" parent-before-fork && fail "forked child carries the parent's scope"
grep -q "3 profiles written" err.txt || fail "summary does not count 3 profiles: $(cat err.txt)"
ok "fork"

# --- a wrapper (a shell that forks the program): the one process that
# wrote gets the plain name
rm -f kscope*.hatchet
"$KS" run -- sh -c './run-scopes; true' >/dev/null 2>err.txt
[ -f kscope.hatchet ] && [ "$(ls kscope*.hatchet | wc -l)" -eq 1 ] ||
    fail "wrapper: expected kscope.hatchet alone: $(ls kscope*) $(cat err.txt)"
grep -q "view it with: .*kscope view kscope.hatchet$" err.txt || fail "wrapper: summary path"
ok "single profile behind a wrapper"

# --- Python multiprocessing (fork): children that end with os._exit and
# pool workers ended by SIGTERM each write their own file
rm -f kscope*.hatchet
"$KS" run -- "$PYTHON" "$PROGS/run-mp.py" >out.txt 2>err.txt
rc=$?
[ $rc -eq 0 ] && grep -qx "mp done" out.txt || fail "multiprocessing: exit $rc: $(cat err.txt)"
has kscope.hatchet mp-parent || fail "multiprocessing: parent profile"
for i in 0 1; do
    [ "$(grep -l "process-child-$i" kscope.pid*.hatchet 2>/dev/null | wc -l)" -eq 1 ] ||
        fail "multiprocessing: process-child-$i not in exactly one file: $(ls)"
done
[ "$(grep -l pool-work kscope.pid*.hatchet 2>/dev/null | wc -l)" -ge 1 ] ||
    fail "multiprocessing: no pool worker profile: $(ls)"
grep -l mp-parent kscope.pid*.hatchet >/dev/null 2>&1 && fail "a child carries the parent's scope"
ok "python multiprocessing"

# --- a rank in the environment names the file; two processes with the same
# rank never share a file
rm -f kscope*.hatchet
RANK=5 "$KS" run -- ./run-scopes >/dev/null 2>&1
[ -f kscope.rank5.hatchet ] || fail "RANK=5 did not give kscope.rank5.hatchet: $(ls)"
rm -f kscope*.hatchet
RANK=1 "$KS" run -- ./run-fork >/dev/null 2>&1
[ -f kscope.rank1.hatchet ] || fail "rank file missing: $(ls)"
n=$(ls kscope.rank1.pid*.hatchet 2>/dev/null | wc -l)
[ "$n" -eq 2 ] || fail "same-rank children did not get their own files: $(ls)"
ok "rank names"

# --- rank profiles: the run summary of rank 0 says how to analyse them
# together (kscope fleet); another rank's, or a run without ranks, does not
rm -f kscope*.hatchet
RANK=0 "$KS" run -- ./run-scopes >/dev/null 2>err.txt
grep -q "fleet export -o kscope.fleet kscope.rank\*.hatchet\$" err.txt &&
    grep -q "fleet summary kscope.fleet\$" err.txt || fail "rank 0: no fleet hint: $(cat err.txt)"
RANK=3 "$KS" run -- ./run-scopes >/dev/null 2>err.txt
grep -q "fleet export" err.txt && fail "rank 3 printed the fleet hint: $(cat err.txt)"
rm -f kscope*.hatchet
"$KS" run -- ./run-scopes >/dev/null 2>err.txt
grep -q "fleet export" err.txt && fail "a run without ranks printed the fleet hint"
ok "fleet hint of rank 0"

finish
