# cli-run-phases.sh - `kscope run -m periodic_flushing` of a host-only
# program that ends phases itself: every phase is a part file, the run's
# summary names them all (not "no process recorded anything" when the last
# phase is empty of GPU work), and the program's output is untouched.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-phases $KLINK
cd "$WORK"

"$KS" run -n ph -m periodic_flushing -- ./run-phases >out.txt 2>err.txt || fail "exit $?: $(cat err.txt)"
[ "$(cat out.txt)" = "phases done" ] || fail "program output changed: $(cat out.txt)"
for i in 0 1 2 3; do
    has ph.part_$i.hatchet step$i || fail "part $i lacks step$i: $(ls)"
done
has ph.part_0.hatchet step1 && fail "part 0 holds step1"
grep -q "no process recorded anything" err.txt && fail "summary: $(cat err.txt)"
grep -q "5 parts, ph.part_0.hatchet to ph.part_4.hatchet" err.txt ||
    fail "summary does not name every part: $(cat err.txt)"
grep -q "view them with: .* view ph.part_0.hatchet (each part), or .* merge -o ph.hatchet ph.part_\*.hatchet (all summed)" err.txt ||
    fail "summary: $(cat err.txt)"
eval "$(grep -o "[^ ]* merge -o ph.hatchet ph.part_\*.hatchet" err.txt)" >/dev/null 2>&1 || fail "the merge it shows fails"
for i in 0 1 2 3; do has ph.hatchet step$i || fail "merged profile lacks step$i"; done
ok "periodic parts of a host-only program"
finish
