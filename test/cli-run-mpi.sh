# cli-run-mpi.sh - `kscope run -- mpirun -np 4 PROGRAM`: one profile per
# rank, named by rank, each with its scopes; none for mpirun itself.
# Skipped (exit 77) where mpirun is not installed (tools/setup-deps.sh
# installs openmpi-bin).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
if ! command -v mpirun >/dev/null; then
    echo "SKIP: mpirun not installed (apt-get install openmpi-bin)"
    exit 77
fi
build run-scopes $KLINK
cd "$WORK"

"$KS" run -- mpirun -np 4 --oversubscribe --allow-run-as-root ./run-scopes >out.txt 2>err.txt
rc=$?
[ $rc -eq 0 ] || fail "mpirun: exit $rc: $(cat err.txt)"
for r in 0 1 2 3; do
    [ -f kscope.rank$r.hatchet ] || fail "mpirun: kscope.rank$r.hatchet missing"
    [ -f kscope.rank$r.hatchet ] && { has kscope.rank$r.hatchet work || fail "rank $r lacks work"; }
done
# With a GPU driver, a CUDA-aware mpirun initialises CUDA itself and so
# writes its own (empty) profile: a fifth file, kscope.hatchet.
[ "$GPU_DRIVER" = 1 ] && rm -f kscope.hatchet && echo "note: mpirun's own profile allowed (GPU driver)"
n=$(ls kscope*.hatchet | wc -l)
[ "$n" -eq 4 ] || fail "mpirun: expected 4 files, got $n: $(ls kscope*.hatchet)"
[ "$(grep -c 'program output' out.txt)" -eq 4 ] || fail "mpirun: program output changed"
[ "$(grep -c "fleet export -o kscope.fleet kscope.rank\*.hatchet" err.txt)" -eq 1 ] ||
    fail "mpirun: the summary does not say once how to export the ranks: $(cat err.txt)"
ok "mpirun -np 4"
finish
