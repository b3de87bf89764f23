# cli-run-trace-nests.sh - every thread track of a `kscope run -d trace`
# trace nests (test/trace_nests.py), on the pretend GPU: a program annotated
# with NVTX only launches kernels inside a library's range of its own domain
# (as CUB's), a start/end range crosses a pop, another thread pushes ranges.
# Run twice: as is (CLOCK_MONOTONIC, which the launch calls were timed on,
# and the TSC line that times host scopes already differ by hundreds of
# ns), and with CLOCK_MONOTONIC drifting from the CPU's time stamp counter
# (test/progs/skew-clock.c, as an NTP-slewed clock does): launch slices are
# drawn on the host scopes' clock, so they stay inside the ranges that made
# them. (Where the CPU has no invariant TSC kscope
# reads CLOCK_MONOTONIC for both, and the second run shows nothing more.)
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
use_fake_gpu
if [ ! -f "$CUDA_INC/nvtx3/nvToolsExt.h" ]; then
    echo "SKIP: nvtx3 headers not found in $CUDA_INC"
    exit 77
fi
build run-nvtx-gpu -I"$CUDA_INC" -L"$FAKE" -Wl,-rpath,"$FAKE" -l:libcuda.so.1 -ldl -lpthread
cc -shared -fPIC -O1 -o "$WORK/skew-clock.so" "$PROGS/skew-clock.c" -ldl ||
    { echo "cannot build skew-clock.so" >&2; exit 1; }
cd "$WORK"
check() { # NAME: the trace kscope wrote, every host track nested
    local before=$FAILS
    "$PY" "$KSCOPE_SOURCE_DIR/test/trace_nests.py" "$1.chrome_trace" >"$1.nests" 2>&1 ||
        fail "$1: $(cat "$1.nests")"
    grep -q '"name":"cub::DeviceRadixSort::SortPairs"' "$1.chrome_trace" ||
        fail "$1: no CUB range in the trace"
    grep -q '"cat":"launch"' "$1.chrome_trace" || fail "$1: no launch slice in the trace"
    [ "$FAILS" = "$before" ]
}
"$KS" run -d trace -n plain -- ./run-nvtx-gpu >out.txt 2>err.txt ||
    fail "kscope run: $(cat err.txt)"
[ "$(cat out.txt)" = "nvtx gpu program done" ] || fail "program output changed: $(cat out.txt)"
grep -q "failed" err.txt && fail "the program: $(grep failed err.txt | head -3)"
check plain && ok "a trace of NVTX ranges around launches nests"
LD_PRELOAD=$WORK/skew-clock.so "$KS" run -d trace -n skewed -- ./run-nvtx-gpu >out.txt 2>err.txt ||
    fail "kscope run (skewed clock): $(cat err.txt)"
check skewed && ok "launch slices stay in their ranges while CLOCK_MONOTONIC drifts from the TSC"
finish
