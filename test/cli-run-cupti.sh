# cli-run-cupti.sh - `kscope run` on a CUDA program, on the pretend GPU
# (test/progs/fake-gpu-*.c: the stand-in driver injects libkscope at
# cuInit, the stand-in CUPTI records the work): kernels and copies under
# the program's scopes, the summary's kernel table, capture ranges through
# the driver's profiler callbacks and through the interposed calls, trace
# data, dropped records, periodic parts, a forked child, a program linked
# with libkscope.a, and a program that SIGTERM ends (raised, or sent while
# it launches): its kernels are written, it ends by the signal.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
use_fake_gpu
GPU="-I$CUDA_INC -L$FAKE -Wl,-rpath,$FAKE -l:libcuda.so.1 -ldl"
build run-gpu $KLINK $GPU
mv "$WORK/run-gpu" "$WORK/gpu-shared"
build run-gpu $KSTATIC $GPU
mv "$WORK/run-gpu" "$WORK/gpu-static"
cd "$WORK"

# at FILE A/B/C [METRIC]: the metric (default calls, else count) of the
# node at that path under ROOT; empty when there is no such node.
at() {
    "$PY" -c '
import json, sys
n = json.load(open(sys.argv[1]))[0]
for name in sys.argv[2].split("/"):
    n = next((c for c in n.get("children", []) if c["frame"]["name"] == name), None)
    if n is None:
        sys.exit(0)
m = n["metrics"]
print(m.get(sys.argv[3]) if len(sys.argv) > 3 else m.get("calls", m.get("count")))
' "$@"
}

# --- kernels and copies under the program's scopes; the kernel table
"$KS" run -- ./gpu-shared >out.txt 2>err.txt
rc=$?
[ $rc -eq 0 ] || fail "plain run: exit $rc: $(cat err.txt)"
[ "$(cat out.txt)" = "gpu program done" ] || fail "program output: $(cat out.txt)"
[ "$(at kscope.hatchet step1/add_kernel 'time (ns)')" = 2000 ] || fail "add_kernel under step1"
[ "$(at kscope.hatchet step2/mul_kernel 'time (ns)')" = 3000 ] || fail "mul_kernel under step2"
[ "$(at kscope.hatchet "step1/Memcpy HtoD" bytes)" = 64 ] || fail "the copy is not under step1"
grep -Eq "^ *[0-9.]+%.* 2 .*mul_kernel$" err.txt || fail "summary lacks mul_kernel, 2 calls: $(cat err.txt)"
grep -q "no GPU kernels" err.txt && fail "summary says no kernels"
grep -q "not captured" err.txt && fail "the run says GPU work was lost: $(cat err.txt)"
"$PY" -c '
import json, sys
doc = json.load(open("kscope.hatchet"))
assert doc[1]["CUDA"]["0"]["num_sms"] == 132, doc[1]
' || fail "device info missing"
ok "kernels under scopes"

# --- a program that never annotates: its launches are not followed one by
# one (every kernel goes to the root anyway), except in a trace, where
# launches are on the host timeline
KSCOPE_CUPTI_DEBUG=1 "$KS" run -n bare -- ./gpu-shared bare >/dev/null 2>err.txt ||
    fail "bare: $(cat err.txt)"
[ "$(at bare.hatchet plain_kernel)" = 3 ] || fail "bare: plain_kernel is not at the root, 3 calls"
[ "$(at bare.hatchet "Memcpy HtoD" bytes)" = 64 ] || fail "bare: the copy is not at the root"
grep -q "calls followed 0$" err.txt || fail "bare: launches were followed: $(grep 'cupti buffer' err.txt)"
KSCOPE_CUPTI_DEBUG=1 "$KS" run -n baretrace -d trace -- ./gpu-shared bare >/dev/null 2>err.txt ||
    fail "bare trace: $(cat err.txt)"
grep -Eq "calls followed [1-9]" err.txt || fail "bare trace: launches not followed"
ok "a program without annotations: launches followed only for a trace"

# --- the same with the program linked with libkscope.a
"$KS" run -n static -- ./gpu-static >/dev/null 2>err.txt || fail "static: $(cat err.txt)"
[ "$(at static.hatchet step1/mul_kernel)" = 1 ] || fail "static: mul_kernel is not under step1"
[ "$(at static.hatchet step2/add_kernel)" = 1 ] || fail "static: add_kernel is not under step2"
ok "static library, kernels under its scopes"

# --- capture range: the driver's profiler callbacks (a program linked
# with the static runtime) and the interposed exported calls
for mode in range api; do
    "$KS" run -n "$mode" --capture-range=cudaProfilerApi -- ./gpu-shared "$mode" \
        >/dev/null 2>err.txt || fail "$mode: $(cat err.txt)"
    [ "$(at "$mode.hatchet" inside/in_range)" = 1 ] || fail "$mode: in_range not recorded"
    for n in before_range after_range add_kernel step1; do
        has "$mode.hatchet" "$n" && fail "$mode: $n recorded outside the range"
    done
done
ok "capture range"

# --- trace data: kernel slices on the GPU's track
"$KS" run -n tr -d trace -- ./gpu-shared >/dev/null 2>err.txt || fail "trace: $(cat err.txt)"
"$PY" -c '
import json
ev = json.load(open("tr.chrome_trace"))["traceEvents"]
k = [e for e in ev if e.get("name") == "add_kernel" and e.get("ph") == "X"]
s = [e for e in ev if e.get("name") == "step1" and e.get("ph") == "X"]
assert len(k) == 2 and len(s) == 1, (k, s)
assert k[0]["pid"] != s[0]["pid"] or k[0]["tid"] != s[0]["tid"], "kernel on the host track"
assert all(abs(e["dur"] - 2.0) < 1e-6 for e in k), k
assert all(e["ts"] >= s[0]["ts"] for e in k), "a kernel starts before its launch"
' || fail "trace: kernel slices"
# the HTML report's timeline of it: GPU tracks, launch arrows
"$KS" report --html tr.html tr.chrome_trace >/dev/null 2>err.txt || fail "report: $(cat err.txt)"
"$PY" -c '
import json, re
html = open("tr.html").read()
m = re.search(r"<script type=\"application/json\" id=\"kscope-a\">(.*?)</script>", html, re.S)
tl = json.loads(m.group(1))["trace"]
names = [tl["strings"][t["name"]] for t in tl["tracks"]]
assert "stream 7" in names, names
assert {"add_kernel", "mul_kernel", "Memcpy HtoD"} <= set(tl["strings"]), tl["strings"]
assert len(tl["flows"]) == 6 * 4, "one arrow per launch, copy included: %r" % tl["flows"]
' || fail "report: the trace's timeline"
ok "trace data, and its HTML timeline"

# --- dropped records: counted in the profile and said in the summary
"$KS" run -n drop -- ./gpu-shared drop >/dev/null 2>err.txt
[ "$(metric_of drop.hatchet ROOT dropped_records)" = 2 ] || fail "dropped_records is not 2"
grep -q "2 GPU records dropped" err.txt || fail "summary does not say 2 dropped: $(cat err.txt)"
ok "dropped records"

# --- periodic parts: each part holds its own step's kernels
"$KS" run -n per -m periodic_flushing -- ./gpu-shared parts >/dev/null 2>err.txt ||
    fail "parts: $(cat err.txt)"
has per.part_0.hatchet step1 && has per.part_0.hatchet add_kernel || fail "part 0 lacks step1"
has per.part_0.hatchet step2 && fail "part 0 holds step2"
[ "$(at per.part_1.hatchet step2/add_kernel)" = 1 ] || fail "part 1 lacks step2's kernels"
ok "periodic parts"

# --- fork without exec: the child writes its own host scopes; the
# parent keeps capturing
"$KS" run -n fk -- ./gpu-shared fork >/dev/null 2>err.txt || fail "fork: $(cat err.txt)"
child=$(ls fk.pid*.hatchet 2>/dev/null)
[ -n "$child" ] && has "$child" child_work || fail "fork: the child's profile: $(ls)"
[ -n "$child" ] && has "$child" add_kernel && fail "fork: the child holds the parent's kernels"
[ "$(at fk.hatchet step1/mul_kernel)" = 1 ] && [ "$(at fk.hatchet step2/mul_kernel)" = 1 ] ||
    fail "fork: the parent lost its kernels"
ok "fork"

# --- SIGTERM ends a CUDA program that never annotated: the finisher
# writes its kernels (without waiting for the GPU), the process and kscope
# end by SIGTERM, nothing runs after the raise
rm -f kscope*.hatchet
"$KS" run -- ./gpu-shared term >out.txt 2>err.txt
rc=$?
[ $rc -eq 143 ] || fail "raised SIGTERM: exit $rc, expected 143 (killed by SIGTERM): $(cat err.txt)"
[ -s out.txt ] && fail "the program ran on after raise(SIGTERM): $(cat out.txt)"
[ "$(at kscope.hatchet plain_kernel count)" = 3 ] || fail "raised SIGTERM: the 3 kernels not written"
ok "raise(SIGTERM) in a CUDA program"
# While it launches, the signal mostly finds the program's thread inside the
# driver holding CUPTI's lock, which the profile's writer needs: that
# thread goes on until the writer is done. Ten trials, each must write.
written=0
for trial in $(seq 10); do
    rm -f kscope*.hatchet out.txt
    "$KS" run -- ./gpu-shared loop >out.txt 2>err.txt &
    ks=$!
    for _ in $(seq 200); do grep -q ready out.txt 2>/dev/null && break; sleep 0.05; done
    kill -TERM "$(pgrep -P $ks)"
    wait $ks
    rc=$?
    n=$(at kscope.hatchet loop_kernel count 2>/dev/null)
    if [ $rc -eq 143 ] && [ "$(at kscope.hatchet plain_kernel count)" = 3 ] && [ "${n:-0}" -gt 0 ]; then
        written=$((written + 1))
    else
        echo "trial $trial: exit $rc, loop_kernel '${n}': $(tail -2 err.txt)"
    fi
done
[ $written -eq 10 ] || fail "SIGTERM while launching: $written of 10 trials wrote the kernels, ended by SIGTERM"
ok "SIGTERM to a CUDA program while it launches"

finish
