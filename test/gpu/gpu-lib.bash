# gpu-lib.bash - sourced by the GPU tests (test/gpu/*.sh): the test's
# scratch folder, its PASS/FAIL lines and exit status, the nvcc build of a
# test program (alone or against the built libkscope), and LLNL Hatchet
# from the wheels carried in .whl/peer/. Not a test itself
# (tools/gpu-run.sh runs *.sh only). A test reads:
#
#   src=${KSCOPE_SOURCE_DIR:?}
#   source "$src/test/gpu/gpu-lib.bash"
#   gpu_work NAME [FOLDER]      (or gpu_work_in: and cd there, ks set)
#   gpu_nvcc_kscope "$work/prog" "$src/test/gpu/prog.cu" || exit 1
#   ... pass WHAT / fail WHAT / check WHAT RC DETAIL ...
#   exit $status
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with libkscope.so,
#      for gpu_nvcc_kscope), KSCOPE_GPU_WORK (scratch folder; a temporary
#      one without it), KSCOPE_CUDA_ARCH (nvcc's -arch, default native).

# nvcc where the CUDA toolkit puts it, also when a test is run by hand.
export PATH=$PATH:/usr/local/cuda/bin

gpu_src=${KSCOPE_SOURCE_DIR:?}
# The test's exit status: 1 once a check failed.
status=0

# gpu_work NAME [FOLDER]: NAME is the test's name in its PASS/FAIL lines;
# work=$KSCOPE_GPU_WORK/FOLDER (FOLDER defaults to NAME), emptied.
gpu_work() {
    gpu_test=$1
    work=${KSCOPE_GPU_WORK:-$(mktemp -d)}/${2:-$1}
    rm -rf "$work" && mkdir -p "$work"
}

# gpu_work_in NAME [FOLDER]: gpu_work, then that folder is the current one
# and ks the built kscope command ($KSCOPE_BINARY_DIR/kscope).
gpu_work_in() {
    gpu_work "$@"
    cd "$work" || exit 1
    ks=${KSCOPE_BINARY_DIR:?}/kscope
}

# pass WHAT / fail WHAT: "PASS  NAME: WHAT" / "FAIL  NAME: WHAT"; a FAIL
# makes the exit status 1.
pass() { echo "PASS  $gpu_test: $*"; }
fail() {
    echo "FAIL  $gpu_test: $*"
    status=1
}

# check WHAT RC DETAIL: PASS when RC is 0, else FAIL with DETAIL.
check() {
    if [ "$2" = 0 ]; then pass "$1"; else fail "$1: $3"; fi
}

# gpu_torch [MODULE...]: true when $PY (default python3) imports torch, sees
# a CUDA GPU, and imports each MODULE.
gpu_torch() {
    local m
    local imports=torch
    for m in "$@"; do imports="$imports, $m"; done
    "${PY:-python3}" -c "import $imports; assert torch.cuda.is_available()" 2>/dev/null
}

# gpu_nvcc OUT SRC.cu [NVCC ARGS...]: builds a test program for this
# machine's GPU (or KSCOPE_CUDA_ARCH).
gpu_nvcc() {
    local out=$1 cu=$2
    shift 2
    nvcc -O2 -std=c++17 -arch="${KSCOPE_CUDA_ARCH:-native}" -o "$out" "$cu" "$@"
}

# gpu_nvcc_kscope OUT SRC.cu [NVCC ARGS...]: the same, against kscope's
# headers and the built libkscope (found again at run time).
gpu_nvcc_kscope() {
    local out=$1 cu=$2 bin=${KSCOPE_BINARY_DIR:?}
    shift 2
    gpu_nvcc "$out" "$cu" -I"$gpu_src/include" -L"$bin" -lkscope -Xlinker -rpath,"$bin" "$@"
}

# gpu_peer_hatchet: where LLNL Hatchet is not importable (by $PY, default
# python3), installs it from the wheels in .whl/peer/ (the GPU machine has
# no registry) into $work/peer-site and appends that to PYTHONPATH.
# Returns 0 when Hatchet is there or was installed, 1 when the wheels did
# not install ($work/peer-site.log says why), 2 when there are none.
gpu_peer_hatchet() {
    local py=${PY:-python3}
    "$py" -c "import hatchet" 2>/dev/null && return 0
    ls "$gpu_src"/.whl/peer/*.whl >/dev/null 2>&1 || return 2
    "$py" -m pip install -q --no-index --no-deps --no-compile --target "$work/peer-site" \
        "$gpu_src"/.whl/peer/*.whl >"$work/peer-site.log" 2>&1 || return 1
    export PYTHONPATH=${PYTHONPATH:-}:$work/peer-site
}
