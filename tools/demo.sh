#!/usr/bin/env bash
# demo.sh - the main job: build kscope, profile the bundled example and
# show its calling-context tree. With a GPU build on a GPU machine, the
# CUDA example runs too and its kernels appear under the scopes that
# launched them. Each step prints a line as it starts and the build its
# progress (every 10%); a failed build prints the end of its log.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf 'demo.sh: [%s] %s\n' "$1" "$2"; }
jobs=$(nproc 2>/dev/null || echo 2)

step 1/4 "system packages (tools/setup-deps.sh)"
bash tools/setup-deps.sh
step 2/4 "configure build/"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
step 3/4 "build ($jobs jobs; a minute or two the first time)"
log=build/demo-build.log
if ! cmake --build build -j"$jobs" 2>&1 | tee "$log" | awk '
    /^\[ *[0-9]+%\]/ {
        p = substr($0, 2, index($0, "%") - 2) + 0
        if (p >= shown) { printf "demo.sh: building: %d%%\n", p; fflush(); shown = p - p % 10 + 10 }
    }'; then
    tail -30 "$log"
    echo "demo.sh: the build failed (whole log: $log)"
    exit 1
fi
step 4/4 "profile the example"
out=build/demo
mkdir -p "$out"
echo "== kscope run -- example (nested scopes, metrics, a state, a mark)"
./build/kscope run -o "$out" -n example -- ./build/example "$out/example-self"
echo
echo "== kscope view $out/example.hatchet"
./build/kscope view -m wall_time/ms -m calls -m tokens "$out/example.hatchet"
