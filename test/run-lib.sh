# run-lib.sh - helpers shared by the `kscope run` shell tests (sourced).
# Needs KSCOPE_SOURCE_DIR, KSCOPE_BINARY_DIR and KSCOPE_CLI from CTest.
set -u
: "${KSCOPE_SOURCE_DIR:?}" "${KSCOPE_BINARY_DIR:?}" "${KSCOPE_CLI:?}"

source "$KSCOPE_SOURCE_DIR/test/check-lib.sh"
# The interpreter itself, not a version manager's shell shim in front of it.
PYTHON=$("$PY" -c 'import sys; print(sys.executable)')
PROGS=$KSCOPE_SOURCE_DIR/test/progs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kscope-run-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# A machine with a GPU driver (the GPU machine running ctest too): cases
# that need the driver to be missing are skipped there, with a message.
GPU_DRIVER=0
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    GPU_DRIVER=1
fi

# A sanitizer build of libkscope.so needs the sanitizer runtime first in
# every process it is preloaded into: `kscope run` is then started through
# a wrapper that preloads it (the run appends libkscope.so after it). Tools
# of the test itself (pgrep, python) run without it.
if ldd "$KSCOPE_BINARY_DIR/libkscope.so" 2>/dev/null | grep libasan >/dev/null; then
    export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
    # The runs compared with a bare one (test/faithful/same_run.py) then
    # have the runtime preloaded bare too, as under kscope.
    export KSCOPE_TEST_SAN_PRELOAD=$(cc -print-file-name=libasan.so)
    printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$KSCOPE_TEST_SAN_PRELOAD" \
        "$KSCOPE_CLI" >"$WORK/ks"
    chmod +x "$WORK/ks"
    KS=$WORK/ks
fi

# build NAME [cc args...]: compile test/progs/NAME.c against libkscope.
build() {
    local name=$1
    shift
    cc -std=gnu11 -O1 -g -o "$WORK/$name" "$PROGS/$name.c" -I"$KSCOPE_SOURCE_DIR/include" \
        "$@" || {
        echo "cannot build $name" >&2
        exit 1
    }
}

KLINK="-L$KSCOPE_BINARY_DIR -Wl,-rpath,$KSCOPE_BINARY_DIR -lkscope"
# The static library, with what a program linking it needs: the sanitizer
# or coverage runtime of the build that made it.
KSTATIC="$KSCOPE_BINARY_DIR/libkscope.a -lpthread -ldl -lm"
if nm "$KSCOPE_BINARY_DIR/libkscope.a" 2>/dev/null | grep -q ' U __asan_init'; then
    KSTATIC="-fsanitize=address,undefined $KSTATIC"
elif nm "$KSCOPE_BINARY_DIR/libkscope.a" 2>/dev/null | grep -q ' U __gcov_init'; then
    KSTATIC="--coverage $KSTATIC"
fi

# use_fake_gpu: the pretend GPU (test/progs/fake-gpu-*.c, built into
# fake-gpu/ where the build has the CUDA headers) for every kscope run
# after it: its CUPTI and its driver's device file; CUDA_INC is the
# headers' folder, FAKE the pretend GPU's. Without it, the test ends
# skipped (exit 77) with a SKIP line.
FAKE=$KSCOPE_BINARY_DIR/fake-gpu
use_fake_gpu() {
    if [ ! -f "$FAKE/libcupti.so" ]; then
        echo "SKIP: the pretend GPU is built with the CUDA headers only (this build has none)"
        exit 77
    fi
    CUDA_INC=$(sed -n 's/^KSCOPE_CUDA_INCLUDE:PATH=//p' "$KSCOPE_BINARY_DIR/CMakeCache.txt")
    export KSCOPE_CUPTI_LIBRARY=$FAKE/libcupti.so KSCOPE_GPU_DEVICE_GLOB=$FAKE/libcuda.so.1
}

# names FILE: every frame name of a .hatchet file, one per line.
names() {
    "$PY" "$KSCOPE_SOURCE_DIR/test/support/frames.py" names "$1"
}

# run_ok WHAT ARGS...: `kscope run ARGS...`, its output in out.txt and
# err.txt; a failure naming WHAT unless it exits 0.
run_ok() {
    local what=$1 rc
    shift
    "$KS" run "$@" >out.txt 2>err.txt
    rc=$?
    [ $rc -eq 0 ] || fail "$what: exit $rc: $(cat err.txt)"
}

# has FILE NAME: the .hatchet file has a frame called NAME.
has() {
    names "$1" | grep -xF -- "$2" >/dev/null
}

# metric_of FILE NAME METRIC: that metric of the first frame called NAME.
metric_of() {
    "$PY" "$KSCOPE_SOURCE_DIR/test/support/frames.py" metric "$1" "$2" "$3"
}

# parent_of FILE NAME: the name of the parent frame of the first NAME.
parent_of() {
    "$PY" "$KSCOPE_SOURCE_DIR/test/support/frames.py" parent "$1" "$2"
}
