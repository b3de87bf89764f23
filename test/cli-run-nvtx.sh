# cli-run-nvtx.sh - `kscope run` is the NVTX injection: a C program using
# only nvtx3 (push/pop, start/end, domains, registered strings, marks) gets
# each range as a scope of the tree.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
NVTX_INC=${CUDA_HOME:-/usr/local/cuda}/include
if [ ! -f "$NVTX_INC/nvtx3/nvToolsExt.h" ]; then
    echo "SKIP: nvtx3 headers not found in $NVTX_INC (set CUDA_HOME)"
    exit 77
fi
build run-nvtx -I"$NVTX_INC" -ldl -lpthread
cd "$WORK"

"$KS" run -- ./run-nvtx >out.txt 2>err.txt
rc=$?
[ $rc -eq 0 ] || fail "exit code $rc: $(cat err.txt)"
[ "$(cat out.txt)" = "nvtx program done" ] || fail "program output changed: $(cat out.txt)"
[ -f kscope.hatchet ] || fail "no profile written: $(cat err.txt)"
for n in step forward backward checkpoint load decode overlap-a overlap-b registered-op \
    domain-range cross-thread after-cross; do
    has kscope.hatchet "$n" || fail "NVTX range $n is not a scope"
done
[ "$(parent_of kscope.hatchet forward)" = step ] || fail "forward not under step"
[ "$(parent_of kscope.hatchet backward)" = step ] || fail "backward not under step"
[ "$(parent_of kscope.hatchet checkpoint)" = forward ] || fail "mark not under forward"
[ "$(parent_of kscope.hatchet decode)" = load ] || fail "decode not under load"
[ "$(parent_of kscope.hatchet overlap-b)" = overlap-a ] || fail "overlap-b not under overlap-a"
[ "$(parent_of kscope.hatchet after-cross)" = ROOT ] ||
    fail "a range ended on another thread stayed open: after-cross under $(parent_of kscope.hatchet after-cross)"
[ "$(metric_of kscope.hatchet registered-op calls)" = 2 ] || fail "registered-op calls is not 2"
[ "$(metric_of kscope.hatchet step calls)" = 1 ] || fail "step calls is not 1"
ok "nvtx ranges become scopes"

# Without kscope run the same program runs untouched.
./run-nvtx >out.txt 2>&1 && [ "$(cat out.txt)" = "nvtx program done" ] || fail "bare run"
ok "bare run"
finish
