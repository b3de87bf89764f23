# cli-run-capture.sh - `kscope run --capture-range=cudaProfilerApi` records
# only between cudaProfilerStart and cudaProfilerStop, and the program's
# calls still reach the real functions (a stand-in libcudart here).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
cd "$WORK"
cc -shared -fPIC -o libcudart.so.13 -Wl,-soname,libcudart.so.13 "$PROGS/fake-cudart.c" ||
    exit 1
build run-capture -L"$WORK" -Wl,--no-as-needed -l:libcudart.so.13 -Wl,-rpath,"$WORK" $KLINK

"$KS" run --capture-range=cudaProfilerApi -- ./run-capture >out.txt 2>err.txt
rc=$?
[ $rc -eq 0 ] || fail "exit $rc: $(cat err.txt)"
printf 'real cudaProfilerStart\nreal cudaProfilerStop\nresults 0 0\n' | diff - out.txt >/dev/null ||
    fail "the program's calls did not reach its libcudart: $(cat out.txt)"
has kscope.hatchet inside || fail "the scope inside the capture range is missing"
has kscope.hatchet before && fail "a scope before cudaProfilerStart was recorded"
has kscope.hatchet after && fail "a scope after cudaProfilerStop was recorded"
ok "capture range"

"$KS" run -- ./run-capture >out.txt 2>err.txt || fail "run without capture range failed"
for n in before inside after; do
    has kscope.hatchet $n || fail "without a capture range, $n is missing"
done
grep -q "real cudaProfilerStart" out.txt || fail "forwarding without capture range"
ok "no capture range records everything"

# A library in a private (RTLD_LOCAL) scope, as Python extensions are: the
# call is still forwarded to its own libcudart.
cc -shared -fPIC -o libplugin.so "$PROGS/capture-plugin.c" -L"$WORK" -Wl,--no-as-needed \
    -l:libcudart.so.13 -Wl,-rpath,"$WORK" || exit 1
build run-capture-dl -ldl
"$KS" run --capture-range=cudaProfilerApi -- ./run-capture-dl ./libplugin.so >out.txt 2>err.txt ||
    fail "RTLD_LOCAL plugin run failed: $(cat err.txt)"
printf 'real cudaProfilerStart\nreal cudaProfilerStop\nplugin 0\n' | diff - out.txt >/dev/null ||
    fail "a private-scope libcudart was not reached: $(cat out.txt) $(cat err.txt)"
ok "forwarding into a private scope"

# Outside kscope run the program is untouched.
./run-capture >out.txt && grep -q "results 0 0" out.txt || fail "bare run"
finish
