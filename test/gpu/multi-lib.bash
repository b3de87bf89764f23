# multi-lib.bash - sourced by the two-GPU tests (test/gpu/multi-*.sh): the
# GPU count check with its SKIP line, NVLink multicast kept off, and a CUDA
# program's build, run and check. Sources gpu-lib.bash (the scratch folder,
# PASS/FAIL lines, nvcc). Not a test itself (tools/gpu-run.sh runs *.sh
# only).
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with libkscope.so),
#      KSCOPE_GPU_WORK (scratch folder), KSCOPE_CUDA_ARCH (default native).

# Every run here, and every process it starts, keeps NVLink multicast off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

source "${KSCOPE_SOURCE_DIR:?}/test/gpu/gpu-lib.bash"
: "${KSCOPE_BINARY_DIR:?}"

# GPUs this process may use: nvidia-smi's list, narrowed by
# CUDA_VISIBLE_DEVICES when it is set.
multi_gpu_count() {
    local n=0
    if command -v nvidia-smi >/dev/null 2>&1; then
        n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    fi
    if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
        local visible
        visible=$(printf '%s' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' |
            grep -c '[^[:space:]]' || true)
        [ "$visible" -lt "$n" ] && n=$visible
    fi
    echo "$n"
}

# multi_need_two_gpus TEST: returns 1 after a SKIP line when fewer than two
# GPUs are visible (the caller then exits 77, a skip).
multi_need_two_gpus() {
    local n
    n=$(multi_gpu_count)
    if [ "$n" -lt 2 ]; then
        echo "SKIP  $1: fewer than two GPUs visible (needs 2 GPUs, found $n)"
        return 1
    fi
    echo "$1: $n GPUs visible; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE" \
        "TORCH_SYMM_MEM_DISABLE_MULTICAST=$TORCH_SYMM_MEM_DISABLE_MULTICAST" \
        "NVSHMEM_DISABLE_NVLS=$NVSHMEM_DISABLE_NVLS"
    return 0
}

# multi_program NAME: the whole test NAME of a CUDA program: a SKIP line
# and exit 77 with fewer than two GPUs; else builds test/gpu/NAME.cu
# against libkscope into $work ($KSCOPE_GPU_WORK/NAME), runs it with $work
# as its output folder (a FAIL line and exit 1 when it fails), then checks
# the outputs with test/gpu/NAME.py, whose exit status ends the test.
multi_program() {
    multi_need_two_gpus "$1" || exit 77
    gpu_work "$1"
    gpu_nvcc_kscope "$work/$1" "$gpu_src/test/gpu/$1.cu" || exit
    if ! "$work/$1" "$work"; then
        echo "FAIL  $1: the program failed (see above)"
        exit 1
    fi
    python3 "$gpu_src/test/gpu/$1.py" "$work"
    exit
}
