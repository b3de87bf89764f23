#!/usr/bin/env bash
# multi-devices.sh - two GPUs in one process: builds multi-devices.cu with
# nvcc against libkscope, runs its tree and trace sessions (kernels on
# device 0 under "dev0", on device 1 under "dev1", on both under "both")
# and checks the outputs with multi-devices.py. Prints a SKIP line and
# exits 77 (a skip) when fewer than two GPUs are visible. Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with libkscope.so),
#      KSCOPE_GPU_WORK (scratch folder; outputs land in
#      $KSCOPE_GPU_WORK/multi-devices), KSCOPE_CUDA_ARCH (default native)
set -euo pipefail
src=${KSCOPE_SOURCE_DIR:?}
source "$src/test/gpu/multi-lib.bash"
multi_program multi-devices
