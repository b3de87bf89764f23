#!/usr/bin/env bash
# demo.sh - the main job: build kscope, profile the bundled example and
# show its calling-context tree. With a GPU build on a GPU machine, the
# CUDA example runs too and its kernels appear under the scopes that
# launched them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
out=build/demo
mkdir -p "$out"
echo "== kscope run -- example (nested scopes, metrics, a state, a mark)"
./build/kscope run -o "$out" -n example -- ./build/example "$out/example-self"
echo
echo "== kscope view $out/example.hatchet"
./build/kscope view -m wall_time/ms -m calls -m tokens "$out/example.hatchet"
