#!/usr/bin/env bash
# run-capture.sh - the CUPTI backend on a real GPU: builds capture.cu with
# nvcc against libkscope, runs its scenarios (20,000 empty kernels, busy
# kernel vs cudaEvent time, two streams, a graph captured before the
# session, copies, a state, launch metadata, trace flows) and checks the
# outputs with check_capture.py.
# Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with libkscope.so),
#      KSCOPE_GPU_WORK (scratch folder; outputs land in $KSCOPE_GPU_WORK/capture)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work run-capture capture
gpu_nvcc_kscope "$work/capture" "$src/test/gpu/capture.cu" -ldl || exit 1
KSCOPE_CUPTI_DEBUG=1 "$work/capture" "$work" || exit 1
python3 "$src/test/gpu/check_capture.py" "$work"
