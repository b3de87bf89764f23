#!/usr/bin/env bash
# cli-run-sample.sh - `kscope run --sample`: bad specs are refused with
# one line (exit 2), the spec reaches the program as KSCOPE_SAMPLE, and a
# CUDA program run on the pretend GPU (test/progs/fake-gpu-*.c: the
# stand-in driver injects libkscope at cuInit) is captured in its windows
# only: the profile
# says what it sampled, its est_ metrics scale exactly, and the run's
# summary and `kscope view` say so.
. "$KSCOPE_SOURCE_DIR/test/run-lib.sh"
cd "$WORK" || exit 1

# --- usage errors: exit 2, one line naming the spec
for spec in bogus time:on=1ms time:on=5,every=1s step:on=2,every=1 step:on=1,every=2,often=3; do
    "$KS" run --sample "$spec" -- true >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -qF "sample '$spec'" err.txt ||
        fail "--sample $spec: rc $rc, $(cat err.txt)"
done
"$KS" run --sample >out.txt 2>err.txt
[ $? -eq 2 ] && grep -q "option --sample needs a value" err.txt || fail "--sample alone: $(cat err.txt)"
KSCOPE_SAMPLE=sometimes "$KS" run -- true >out.txt 2>err.txt
[ $? -eq 2 ] && grep -q "KSCOPE_SAMPLE" err.txt && grep -q "sample 'sometimes'" err.txt ||
    fail "bad KSCOPE_SAMPLE: $(cat err.txt)"
"$KS" help run | grep -q -- "--sample SPEC" || fail "help run lacks --sample"
"$KS" run --sample step:on=1,every=2 --pc-sampling -- true >out.txt 2>err.txt
[ $? -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "cannot be combined" err.txt ||
    fail "--sample with --pc-sampling: $(cat err.txt)"
KSCOPE_SAMPLE=time:on=1s,every=1min "$KS" run --pc-sampling -- true >out.txt 2>err.txt
[ $? -eq 2 ] && grep -q "cannot be combined" err.txt || fail "KSCOPE_SAMPLE with --pc-sampling: $(cat err.txt)"
"$KS" run --sample off --pc-sampling -b none -- true >out.txt 2>err.txt ||
    fail "--sample off with --pc-sampling: $(cat err.txt)"
ok "usage"

# --- the spec reaches every process of the run
out=$("$KS" run --sample step:on=1,every=5 -- sh -c 'echo "$KSCOPE_SAMPLE"' 2>/dev/null)
[ "$out" = "step:on=1,every=5" ] || fail "KSCOPE_SAMPLE in the program: '$out'"
ok "environment"

# --- a CUDA program on the pretend GPU
if ! "$KS" version | grep -q cupti || [ ! -f "$FAKE/libcupti.so" ]; then
    skip "sampled GPU capture (this build has no CUPTI backend)"
    finish
fi
CUDA_INC=$(sed -n 's/^KSCOPE_CUDA_INCLUDE:PATH=//p' "$KSCOPE_BINARY_DIR/CMakeCache.txt")
build run-sample $KLINK -I"$CUDA_INC" -L"$FAKE" -Wl,-rpath,"$FAKE" -l:libcuda.so.1
fakerun() {
    KSCOPE_CUPTI_LIBRARY=$FAKE/libcupti.so KSCOPE_GPU_DEVICE_GLOB=$FAKE/libcuda.so.1 "$KS" run "$@"
}

# one step in five of ten: steps 0 and 5, two launches each
fakerun --sample step:on=1,every=5 -- ./run-sample 10 >out.txt 2>err.txt ||
    fail "sampled run: $(cat err.txt)"
[ "$(cat out.txt)" = "ran 10 steps" ] || fail "sampled run: program output $(cat out.txt)"
[ "$(parent_of kscope.hatchet empty_kernel)" = train ] || fail "kernel not under its scope"
[ "$(metric_of kscope.hatchet empty_kernel count)" = 4 ] ||
    fail "sampled count: $(metric_of kscope.hatchet empty_kernel count)"
[ "$(metric_of kscope.hatchet empty_kernel est_count)" = 20.0 ] ||
    fail "est_count: $(metric_of kscope.hatchet empty_kernel est_count)"
[ "$(metric_of kscope.hatchet ROOT sampled_fraction)" = 0.2 ] ||
    fail "sampled_fraction: $(metric_of kscope.hatchet ROOT sampled_fraction)"
# ROOT's numbers keep their type, as Proton writes them
[ "$(metric_of kscope.hatchet ROOT steps)" = 10 ] && [ "$(metric_of kscope.hatchet ROOT sampled_steps)" = 2 ] ||
    fail "steps: $(metric_of kscope.hatchet ROOT steps) $(metric_of kscope.hatchet ROOT sampled_steps)"
[ "$(metric_of kscope.hatchet ROOT est_count)" = 0.0 ] || fail "est_count is not listed as inclusive"
note="sampled: GPU work recorded in 2 of 10 steps (20.00%)"
grep -qF "$note" err.txt || fail "run summary lacks the sampling line: $(cat err.txt)"
"$KS" view kscope.hatchet >view.txt || fail "view of a sampled profile"
tail -1 view.txt | grep -qF "$note" || fail "view lacks the sampling line: $(tail -2 view.txt)"
"$KS" view -m est_time/ns,time/ns kscope.hatchet >view.txt || fail "view -m est_time/ns"
grep -E '^ *20000(\.0+)? +4000(\.0+)? +ROOT' view.txt >/dev/null ||
    fail "est_time/ns column: $(head -3 view.txt)"
ok "step sampling"

# proton-viewer reads it unchanged, and its metric names do not collide
pv=${KSCOPE_PEER_VENV:-$KSCOPE_SOURCE_DIR/build-peer/venv}/bin/proton-viewer
if [ -x "$pv" ]; then
    "$pv" -m time/ns kscope.hatchet 2>&1 | grep -qE '^4000\.000 ROOT' || fail "proton-viewer time/ns"
    "$pv" -m est_time kscope.hatchet 2>&1 | grep -qE '^20000\.000 ROOT' || fail "proton-viewer est_time"
    "$pv" -m count kscope.hatchet 2>&1 | grep -qE '^4\.000 ROOT' || fail "proton-viewer count"
    ok "proton-viewer"
else
    skip "proton-viewer (no peer venv; bash tools/peer-venv.sh makes one)"
fi

# the same program without sampling: every launch, no sampling figures
fakerun -- ./run-sample 10 >out.txt 2>err.txt || fail "full run: $(cat err.txt)"
[ "$(metric_of kscope.hatchet empty_kernel count)" = 20 ] || fail "full count"
[ -z "$(metric_of kscope.hatchet ROOT sampled_fraction)" ] || fail "full run says it sampled"
[ -z "$(metric_of kscope.hatchet empty_kernel est_count)" ] || fail "full run has estimates"
! grep -q "sampled:" err.txt || fail "full run summary mentions sampling"
ok "full run"

# a time window that never opens: nothing captured, fraction 0, no estimate
fakerun --sample time:on=1ms,every=2h,first=1h -- ./run-sample 10 >out.txt 2>err.txt ||
    fail "time run: $(cat err.txt)"
! has kscope.hatchet empty_kernel || fail "a kernel outside every window was recorded"
[ "$(metric_of kscope.hatchet ROOT sampled_fraction)" = 0.0 ] ||
    fail "time fraction: $(metric_of kscope.hatchet ROOT sampled_fraction)"
has kscope.hatchet train || fail "host scopes were not kept"
"$KS" view -m wall_time/ms kscope.hatchet | tail -1 |
    grep -qF "sampled: GPU work recorded in 0 windows, 0.00% of the run" ||
    fail "view of a profile that sampled nothing: $("$KS" view -m wall_time/ms kscope.hatchet | tail -2)"
ok "time sampling"

finish
