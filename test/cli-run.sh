# cli-run.sh - `kscope run` on a program annotated with kscope scopes: the
# profile file, the exit code, the program's own output, the summary, the
# options, and each error case.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-scopes $KLINK
build run-window $KLINK
build run-sleep $KLINK
cd "$WORK"

# --- a plain run: file written, program's own start/finalize ignored
run_ok "plain run" -- ./run-scopes
[ -f kscope.hatchet ] || fail "kscope.hatchet not written"
[ ! -e program-own-name.hatchet ] || fail "the program's own finalize wrote a file"
for n in outer work done; do
    has kscope.hatchet "$n" || fail "frame $n missing from kscope.hatchet"
done
[ "$(parent_of kscope.hatchet work)" = outer ] || fail "work is not under outer"
[ "$(metric_of kscope.hatchet work calls)" = 3 ] || fail "work calls is not 3"
[ "$(cat out.txt)" = "program output" ] || fail "program stdout changed: $(cat out.txt)"
# kscope is not on PATH here: the command names the binary, and works as shown
grep -q "^view it with: $(realpath "$KSCOPE_CLI") view kscope.hatchet$" err.txt ||
    fail "summary lacks the view command naming the binary: $(cat err.txt)"
view=$(sed -n 's/^view it with: //p' err.txt)
sh -c "$view" | grep -q outer || fail "the shown command does not show the profile: $view"
# a host-only run: where its time went (scopes by wall time, as a kernel
# table would for GPU work), no "GPU time 0 ns", and the page's command
grep -q "^scopes by host wall time:" err.txt && grep -qE "^ *[0-9.]+%  .*  outer > work$" err.txt ||
    fail "host-only summary lacks the scopes table: $(cat err.txt)"
grep -qE "^no GPU work recorded \(host scopes only\) in [0-9.]+ [mun]?s wall$" err.txt ||
    fail "host-only summary lacks its wall time: $(cat err.txt)"
grep -q "GPU time\|no GPU kernels" err.txt && fail "host-only summary speaks of GPU time: $(cat err.txt)"
page=$(sed -n 's/^or as a page (flame graph, timeline): //p' err.txt)
[ "$page" = "$(realpath "$KSCOPE_CLI") report --html kscope.html kscope.hatchet" ] &&
    sh -c "$page" 2>/dev/null && grep -q '</html>' kscope.html ||
    fail "the page command is not shown, or does not work: $page"
ok "plain run"

# --- kscope on PATH: the summary's command is plain "kscope view"
PATH=$(dirname "$KSCOPE_CLI"):$PATH "$KS" run -- ./run-scopes >/dev/null 2>err.txt
grep -q "^view it with: kscope view kscope.hatchet$" err.txt || fail "on PATH: $(cat err.txt)"
ok "summary says kscope when PATH finds it"

# --- exit code propagated; a second run replaces the earlier run's file
"$KS" run -- ./run-scopes 7 >/dev/null 2>err.txt
rc=$?
[ $rc -eq 7 ] || fail "exit code $rc, expected 7"
[ ! -e kscope.pid*.hatchet ] || fail "a re-run did not reuse the name"
ok "exit code"

# --- name, output dir, trace data, --top 0
mkdir -p out
"$KS" run -n myrun -o out -d trace --top 0 -- ./run-scopes >/dev/null 2>err.txt ||
    fail "run with options failed: $(cat err.txt)"
[ -f out/myrun.chrome_trace ] || fail "out/myrun.chrome_trace not written ($(ls out))"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any(e.get("name")=="work" for e in d["traceEvents"])' \
    out/myrun.chrome_trace || fail "trace lacks the work slices"
grep -q "total" err.txt && fail "--top 0 still printed the table"
"$KS" run --name=eq --output-dir=out -- ./run-scopes >/dev/null 2>&1
[ -f out/eq.hatchet ] || fail "--name=VALUE form not honoured"
"$KS" run -o newdir -- ./run-scopes >/dev/null 2>&1
[ -f newdir/kscope.hatchet ] || fail "a missing output directory was not created"
ok "options"

# --- delay: nothing recorded in the first 100 s, so no file
rm -f kscope.hatchet
"$KS" run --delay 100 -- ./run-scopes >/dev/null 2>err.txt
[ ! -e kscope.hatchet ] || { has kscope.hatchet work && fail "--delay recorded the scopes"; }
grep -q "no process recorded anything" err.txt || fail "no-data message missing: $(cat err.txt)"
"$KS" run --duration 100 -- ./run-scopes >/dev/null 2>&1
has kscope.hatchet work || fail "--duration 100 lost the scopes"
ok "delay and duration"

# --- a window that opens and closes while the program runs: a scope before
# it, one in it, one after it, each a second away from the window's edges
"$KS" run --delay 1 --duration 2 -- ./run-window 0:before 2:inside 4:after >/dev/null 2>err.txt
has kscope.hatchet inside || fail "--delay 1 --duration 2 lost the scope in its window: $(cat err.txt)"
has kscope.hatchet before && fail "--delay 1 recorded a scope before the window"
has kscope.hatchet after && fail "--duration 2 recorded a scope after the window"
ok "the window opens and closes during the run"

# --- without the TSC (KSCOPE_NO_TSC: the clock reads CLOCK_MONOTONIC): a
# scope around a one-second sleep lasts at least that second
KSCOPE_NO_TSC=1 "$KS" run --top 0 -- ./run-sleep 1 >/dev/null 2>err.txt
ns=$(metric_of kscope.hatchet waiting "wall_time (ns)")
"$PY" -c 'import sys; assert 1e9 <= float(sys.argv[1]) < 600e9' "$ns" 2>/dev/null ||
    fail "KSCOPE_NO_TSC: the 1 s scope lasted '$ns' ns: $(cat err.txt)"
ok "the clock without the TSC"

# --- Python-level options hand a python command to `python -m kscope`
mkdir -p fakebin
printf '#!/bin/sh\necho "args: $*"\necho "env: $KSCOPE_RUN_CONTEXT $KSCOPE_RUN_HOOK $KSCOPE_RUN_NAME"\n' \
    >fakebin/python3.11
chmod +x fakebin/python3.11
PATH=$WORK/fakebin:$PATH "$KS" run -c python -n pyrun -- python3.11 train.py --lr 1 >out.txt 2>/dev/null
grep -qx "args: -m kscope train.py --lr 1" out.txt || fail "-c python: $(cat out.txt)"
grep -qx "env: python  pyrun" out.txt || fail "-c python env: $(cat out.txt)"
PATH=$WORK/fakebin:$PATH "$KS" run -k triton -- python3.11 train.py >out.txt 2>/dev/null
grep -qx "args: -m kscope train.py" out.txt && grep -qx "env:  triton kscope" out.txt ||
    fail "-k triton: $(cat out.txt)"
PATH=$WORK/fakebin:$PATH "$KS" run -- python3.11 train.py >out.txt 2>/dev/null
grep -qx "args: train.py" out.txt || fail "no Python option: the command changed: $(cat out.txt)"
PATH=$WORK/fakebin:$PATH "$KS" run -c python -- python3.11 -m mod >out.txt 2>/dev/null
grep -qx "args: -m mod" out.txt || fail "python -m MOD was rewritten: $(cat out.txt)"
ok "python commands"

# --- errors: one line, non-zero exit, nothing run
"$KS" run -- ./no-such-program >out.txt 2>err.txt
rc=$?
[ $rc -eq 127 ] || fail "command not found: exit $rc"
[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "command not found: ./no-such-program" err.txt ||
    fail "command not found message: $(cat err.txt)"
"$KS" run -- no-such-command-anywhere 2>err.txt
[ $? -eq 127 ] && grep -q "command not found: no-such-command-anywhere" err.txt ||
    fail "PATH lookup message: $(cat err.txt)"

mkdir -p ro && chmod 555 ro
as_user=()
if [ "$(id -u)" -eq 0 ]; then
    # root may write anywhere: this case runs as nobody (setpriv is part of
    # util-linux), in a folder it can enter
    chmod 755 "$WORK"
    # (a coverage build's counts go where nobody may write them)
    mkdir -p gcov && chmod 777 gcov
    as_user=(env GCOV_PREFIX="$WORK/gcov" setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
"${as_user[@]}" "$KS" run -o ro -- ./run-scopes >out.txt 2>err.txt
rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "cannot write to output directory ro" err.txt ||
    fail "read-only dir: rc $rc, $(cat err.txt)"
[ ! -s out.txt ] || fail "the program ran despite the unwritable directory"
touch afile
"$KS" run -o afile -- ./run-scopes >out.txt 2>err.txt
[ $? -ne 0 ] && grep -q "output directory afile is not a directory" err.txt ||
    fail "file as output dir: $(cat err.txt)"

# a program linked with libcupti drives CUPTI itself
echo 'int cupti_marker(void) { return 1; }' >fake.c
cc -shared -fPIC -o libcupti.so.13 -Wl,-soname,libcupti.so.13 fake.c
echo 'int cupti_marker(void); int main(void) { return cupti_marker() - 1; }' >usescupti.c
cc -o usescupti usescupti.c -L. -l:libcupti.so.13 -Wl,-rpath,"$WORK"
"$KS" run -- ./usescupti >out.txt 2>err.txt
rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "uses CUPTI itself (it links libcupti.so.13)" err.txt ||
    fail "CUPTI user: rc $rc, $(cat err.txt)"

# a program that subscribes to CUPTI while kscope holds it (a library in a
# private scope, as torch.profiler's): one line, non-zero exit, output kept
cc -shared -fPIC -o libcupti.so.13 -Wl,-soname,libcupti.so.13 "$PROGS/fake-cupti.c"
cc -shared -fPIC -o libcuptiplugin.so "$PROGS/cupti-plugin.c" -L. -Wl,--no-as-needed \
    -l:libcupti.so.13 -Wl,-rpath,"$WORK"
build run-capture-dl -ldl
FAKE_CUPTI_RC=39 "$KS" run -- ./run-capture-dl ./libcuptiplugin.so >out.txt 2>err.txt
rc=$?
[ $rc -eq 1 ] || fail "CUPTI conflict: exit $rc, expected 1"
[ "$(cat out.txt)" = "plugin 39" ] || fail "CUPTI conflict: program output changed: $(cat out.txt)"
[ "$(grep -c "subscribes to CUPTI itself" err.txt)" -eq 1 ] ||
    fail "CUPTI conflict message: $(cat err.txt)"
if [ "$GPU_DRIVER" = 1 ]; then
    # kscope holds the real CUPTI there, which the plugin's call reaches
    skip "a free CUPTI (needs a machine without a GPU driver)"
else
    FAKE_CUPTI_RC=0 "$KS" run -- ./run-capture-dl ./libcuptiplugin.so >out.txt 2>err.txt
    [ $? -eq 0 ] && [ "$(cat out.txt)" = "plugin 0" ] && ! grep -q "CUPTI itself" err.txt ||
        fail "a free CUPTI was reported as a conflict: $(cat err.txt)"
fi

# a CUDA program whose GPU work cannot be captured (no driver or CUPTI
# here): one line saying why, non-zero exit, host scopes still written
build run-cuinit $KLINK -ldl
if [ "$GPU_DRIVER" = 1 ]; then
    skip "uncaptured GPU work (needs a machine without a GPU driver)"
else
    "$KS" run -- ./run-cuinit >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 1 ] || fail "uncaptured GPU: exit $rc, expected 1"
    [ "$(cat out.txt)" = "cuinit called" ] || fail "uncaptured GPU: output: $(cat out.txt)"
    [ "$(grep -c "used CUDA but its GPU work was not captured: " err.txt)" -eq 1 ] ||
        fail "uncaptured GPU message: $(cat err.txt)"
    has kscope.hatchet host-work || fail "uncaptured GPU: host scopes lost"
fi
"$KS" run -b none -- ./run-cuinit >out.txt 2>err.txt ||
    fail "-b none: the missing GPU capture was reported: $(cat err.txt)"

CUDA_INJECTION64_PATH=/opt/other/libtool.so "$KS" run -- ./run-scopes >out.txt 2>err.txt
[ $? -ne 0 ] && grep -q "another CUDA tool is attached" err.txt || fail "other injection: $(cat err.txt)"
[ ! -s out.txt ] || fail "the program ran under another tool's injection"

KSCOPE_LIBRARY=/nonexistent/libkscope.so "$KS" run -- ./run-scopes >/dev/null 2>err.txt
[ $? -ne 0 ] && grep -q "KSCOPE_LIBRARY=/nonexistent/libkscope.so" err.txt ||
    fail "bad KSCOPE_LIBRARY: $(cat err.txt)"
ok "errors"

# --- usage errors: exit 2, one line
for args in "" "--" "-d bogus -- ./run-scopes" "-b gpu -- ./run-scopes" "-c x -- ./run-scopes" \
    "-m x -- ./run-scopes" "--top -1 -- ./run-scopes" "--delay abc -- ./run-scopes" \
    "--capture-range=x -- ./run-scopes" "--frobnicate -- ./run-scopes" "-n a/b -- ./run-scopes" \
    "-n"; do
    # shellcheck disable=SC2086
    "$KS" run $args >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] || fail "usage '$args': rc $rc, $(cat err.txt)"
    [ ! -s out.txt ] || fail "usage '$args' ran the program"
done
"$KS" run --help | grep -q "usage: kscope run" || fail "--help"
"$KS" help run | grep -q -- "--capture-range=cudaProfilerApi" || fail "help run"
ok "usage"

finish
