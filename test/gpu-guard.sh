#!/usr/bin/env bash
# gpu-guard.sh SCRIPT - run one GPU test (test/gpu/*.sh) under CTest where a
# GPU and nvcc are there; elsewhere (CI) exit 77, which CTest shows as
# "Skipped", with the reason on one line. tools/gpu-run.sh runs the same
# scripts on the GPU machine.
script=${1:?usage: gpu-guard.sh SCRIPT}
name=$(basename "$script" .sh)
export PATH=$PATH:/usr/local/cuda/bin
if ! command -v nvcc >/dev/null; then
    echo "SKIP: GPU test $name: nvcc not found (run tools/gpu-run.sh on a GPU machine)"
    exit 77
fi
if ! ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
    echo "SKIP: GPU test $name: no NVIDIA GPU here (run tools/gpu-run.sh on a GPU machine)"
    exit 77
fi
export KSCOPE_GPU_WORK=${KSCOPE_GPU_WORK:-${KSCOPE_BINARY_DIR:?}/gpu-work}
mkdir -p "$KSCOPE_GPU_WORK"
exec bash "$script"
