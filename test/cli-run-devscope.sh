# cli-run-devscope.sh - `kscope run --device-scopes` on the pretend GPU
# (test/progs/fake-gpu-*.c) with a program whose kernel body runs the
# device header's code on the host (progs/run-devscope.c): the option
# reaches the run's session, the kernel's scopes become its children, the
# trace gets per-SM tracks; bad options are refused with one line, exit 2.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
use_fake_gpu
build run-devscope -I"$CUDA_INC" -L"$FAKE" -Wl,-rpath,"$FAKE" -l:libcuda.so.1
cd "$WORK"

# --- the help names the option
"$KS" run --help | grep -q -- '--device-scopes\[=OPTS\]' || fail "run --help lacks --device-scopes"

# --- bad options: one line naming the problem, exit 2, the command never runs
for bad in "clock=wall:clock is globaltimer or clock64" "sample=0:sample is a whole number" \
    "buffer=7:buffer is a number of records" "full=oldest:full is keep-first or keep-newest" \
    "x=1:unknown option"; do
    opt=${bad%%:*} want=${bad#*:}
    "$KS" run --device-scopes="$opt" -- touch ran >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 2 ] || fail "--device-scopes=$opt: exit $rc, want 2"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "--device-scopes=$opt: not one line: $(cat err.txt)"
    grep -q "$want" err.txt || fail "--device-scopes=$opt: message lacks '$want': $(cat err.txt)"
    [ ! -e ran ] || fail "--device-scopes=$opt: the command ran"
done
"$KS" run --device-scopes --sample step:on=1,every=2 -- true 2>err.txt
[ $? -eq 2 ] && grep -q "device scopes and the sampled mode" err.txt ||
    fail "--device-scopes with --sample: $(cat err.txt)"

# --- the run's session records them: children of the kernel, all 12
"$KS" run --top 0 -n tree --device-scopes -- ./run-devscope >out.txt 2>err.txt ||
    fail "run --device-scopes failed: $(cat err.txt)"
grep -q "attached 1" out.txt || fail "the module was not attached: $(cat out.txt)"
"$PY" - tree.hatchet <<'PY' || fail "device scopes missing from the tree"
import json, sys
root = json.load(open(sys.argv[1]))[0]
k = next(c for c in root["children"] if c["frame"]["name"] == "scoped")
p = next(c for c in k["children"] if c["frame"]["name"] == "phase")["metrics"]
assert p["device_count"] == 12 and p["device_time (ns)"] == 3000, p
assert p["device_min_time (ns)"] == 100 and p["device_max_time (ns)"] == 400, p
PY

# --- kscope view's default adds the scopes' column (their own time is not
# the host's or the GPU's): phase's average is 3000 ns over 12 records
"$KS" view tree.hatchet >view.txt 2>err.txt || fail "view of device scopes: $(cat err.txt)"
head -1 view.txt | grep -q "device_avg_time (ns)" || fail "no device column: $(head -1 view.txt)"
grep -E '^ +[0-9.]+ +250\.000 .*phase$' view.txt >/dev/null ||
    fail "phase's average is not 250 ns: $(cat view.txt)"

# --- without the option nothing is attached
"$KS" run --top 0 -n off -- ./run-devscope >out.txt 2>err.txt || fail "plain run failed"
grep -q "attached 0" out.txt || fail "attached without --device-scopes: $(cat out.txt)"
"$KS" view off.hatchet | head -1 | grep -q device_ && fail "a device column without device scopes"

# --- a trace: per-SM tracks, options passed through, a small ring
"$KS" run --top 0 -n tr -d trace --device-scopes=clock=clock64,full=keep-newest,buffer=1k \
    -- ./run-devscope >out.txt 2>err.txt || fail "trace run failed: $(cat err.txt)"
grep -q '"SM 3 warp 0"' tr.chrome_trace || fail "no per-SM track in the trace"
[ "$(grep -o '"device_scope"' tr.chrome_trace | wc -l)" -eq 12 ] ||
    fail "want 12 device-scope slices"
ok "device scopes"
finish
