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
work=${KSCOPE_GPU_WORK:-$(mktemp -d)}/capture
rm -rf "$work" && mkdir -p "$work"
nvcc -O2 -std=c++17 -arch=native -o "$work/capture" "$src/test/gpu/capture.cu" \
    -I"$src/include" -L"$bin" -lkscope -ldl -Xlinker -rpath,"$bin" || exit 1
KSCOPE_CUPTI_DEBUG=1 "$work/capture" "$work" || exit 1
python3 "$src/test/gpu/check_capture.py" "$work"
