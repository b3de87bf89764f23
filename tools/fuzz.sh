#!/usr/bin/env bash
# fuzz.sh - build the readers' libFuzzer harnesses (test/fuzz/, clang with
# ASan and UBSan, in build-fuzz/) and run each for FUZZ_SECONDS (default 20)
# from its seed corpus (test/fuzz/corpus/<name>/, copied: the repository's
# corpus is not changed). A crash, a sanitizer report or a disagreement
# between whole and chunked reads fails the run; the input is left in
# build-fuzz/.
#
#   bash tools/fuzz.sh                 # every harness, 20 s each
#   FUZZ_SECONDS=600 bash tools/fuzz.sh hatchet-json
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang >/dev/null || { echo "fuzz.sh: needs clang (apt-get install clang)" >&2; exit 2; }
secs=${FUZZ_SECONDS:-20}
jobs=$(nproc 2>/dev/null || echo 2)
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(hatchet-json msgpack chrome-trace)
CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSCOPE_FUZZ=ON \
    -DKSCOPE_TESTS=OFF -DKSCOPE_CUDA=OFF -DKSCOPE_WERROR=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target "${names[@]/#/fuzz-}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for n in "${names[@]}"; do
    work=build-fuzz/corpus-$n
    rm -rf "$work"
    cp -r "test/fuzz/corpus/$n" "$work"
    echo "fuzz.sh: fuzz-$n for ${secs}s"
    # A finding fails the run and its report is shown (the log keeps all).
    log=build-fuzz/fuzz-$n.log
    if ! (cd build-fuzz && "./test/fuzz/fuzz-$n" -max_total_time="$secs" -max_len=65536 \
        -seed="${FUZZ_SEED:-0}" -print_final_stats=1 "corpus-$n" >"fuzz-$n.log" 2>&1); then
        grep -v '^#[0-9]' "$log" | tail -60
        echo "fuzz.sh: fuzz-$n found a problem; the input is in build-fuzz/ (log: $log)" >&2
        exit 1
    fi
    tail -4 "$log"
done
