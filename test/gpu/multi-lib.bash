# multi-lib.bash - sourced by the two-GPU tests (test/gpu/multi-*.sh): the
# GPU count check with its SKIP line, NVLink multicast kept off, and the
# nvcc build of a test program against the built libkscope. Not a test
# itself (tools/gpu-run.sh runs *.sh only).
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with libkscope.so),
#      KSCOPE_GPU_WORK (scratch folder).

# Every run here, and every process it starts, keeps NVLink multicast off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

multi_src=${KSCOPE_SOURCE_DIR:?}
multi_bin=${KSCOPE_BINARY_DIR:?}

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
# GPUs are visible (the caller then exits 0).
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

# multi_nvcc OUT SRC.cu: build a test program against libkscope.
multi_nvcc() {
    local arch=${KSCOPE_CUDA_ARCH:-native}
    nvcc -O2 -std=c++17 -arch="$arch" -o "$1" "$2" -I"$multi_src/include" \
        -L"$multi_bin" -lkscope -Xlinker -rpath,"$multi_bin"
}
