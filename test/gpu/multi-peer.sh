#!/usr/bin/env bash
# multi-peer.sh - copies between two GPUs: builds multi-peer.cu with nvcc
# against libkscope, runs its tree and trace sessions (cudaMemcpyPeer 0->1,
# cudaMemcpyPeerAsync 1->0, a UVA cudaMemcpy 0->1, a copy within device 0)
# and checks with multi-peer.py that each peer copy is recorded with its
# bytes and both device ids. Prints a SKIP line and exits 77 when fewer than
# two GPUs are visible. Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with libkscope.so),
#      KSCOPE_GPU_WORK (scratch folder; outputs land in
#      $KSCOPE_GPU_WORK/multi-peer), KSCOPE_CUDA_ARCH (default native)
set -euo pipefail
src=${KSCOPE_SOURCE_DIR:?}
source "$src/test/gpu/multi-lib.bash"
multi_program multi-peer
