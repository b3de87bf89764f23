#!/usr/bin/env bash
# tsan.sh - the tests that annotate from several threads while another
# finalizes (test-core, test-hardening), the sampled mode's switching
# thread (test-sample) and the CUPTI backend on the pretend GPU, whose CUPTI
# hands buffers back on its own thread while threads launch (test-gpu-cupti,
# CUDA builds), and device scopes' reader thread beside it
# (test-gpu-devscope, CUDA builds), built with ThreadSanitizer in build-tsan/. Only those are
# built, so it takes a few minutes on two
# cores. Any race report fails the run.
#
#   bash tools/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DKSCOPE_SANITIZE=THREAD >/dev/null
targets="test-core test-session test-hardening test-sample"
known=$(cmake --build build-tsan --target help)
grep -q ' test-gpu-cupti$' <<<"$known" && targets="$targets test-gpu-cupti"
grep -q ' test-gpu-devscope$' <<<"$known" && targets="$targets test-gpu-devscope"
cmake --build build-tsan -j"$jobs" --target $targets
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
ctest --test-dir build-tsan --output-on-failure -R "^(${targets// /|})\$"
