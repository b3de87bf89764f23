#!/usr/bin/env bash
# coverage.sh - line coverage of the tests this machine runs (CTest: the C
# tests, the shell tests and the programs they run under kscope run), per
# folder of src/. Builds build-cov/ with gcc --coverage, runs the tests,
# and prints one line per folder: lines covered, lines, percent; then the
# total. gcovr (a Debian package) reads the counts; it is installed here if
# missing. The goal: 90% for every folder but the GPU backend's, 75% for
# src/gpu/cupti on a machine without a GPU.
#
#   bash tools/coverage.sh              # build, test, print
#   bash tools/coverage.sh --files      # also one line per file
#   KSCOPE_COVERAGE_TESTS=REGEX bash tools/coverage.sh   # only those tests
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
if ! command -v gcovr >/dev/null; then
    echo "coverage: installing gcovr"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gcovr >/dev/null
fi
files=0
[ "${1:-}" = --files ] && files=1
jobs=$(nproc 2>/dev/null || echo 2)
build=build-cov

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DKSCOPE_SANITIZE=OFF \
    -DCMAKE_C_FLAGS="--coverage -fprofile-update=atomic" -DCMAKE_EXE_LINKER_FLAGS="--coverage" \
    -DCMAKE_SHARED_LINKER_FLAGS="--coverage -Wl,-u,__gcov_dump" \
    -DCMAKE_MODULE_LINKER_FLAGS="--coverage" >/dev/null
cmake --build "$build" -j"$jobs" >/dev/null
find "$build" -name '*.gcda' -delete
# The tests' own counts (threads update them atomically; libkscope.so keeps
# libgcov's __gcov_dump, which it calls before a process ends through _exit
# or a signal, src/run/launcher.c). A failing test
# still counts what it ran; cli-layout and cli-install fail in this build by
# design (libgcov's symbols are exported from libkscope.so).
ctest --test-dir "$build" -j"$jobs" --output-on-failure ${KSCOPE_COVERAGE_TESTS:+-R "$KSCOPE_COVERAGE_TESTS"} \
    >"$build/coverage-ctest.log" 2>&1 ||
    echo "coverage: failed in this build: $(sed -n 's/^.* - \([^ ]*\) (Failed)$/\1/p' \
        "$build/coverage-ctest.log" | tr '\n' ' ')(see $build/coverage-ctest.log)"

gcovr -r . --filter 'src/' --json-summary "$build/coverage.json" "$build" >/dev/null
python3 - "$build/coverage.json" "$files" <<'EOF'
import collections, json, os, sys
doc = json.load(open(sys.argv[1]))
per = collections.OrderedDict()
rows = []
for f in sorted(doc["files"], key=lambda f: f["filename"]):
    folder = os.path.dirname(f["filename"])
    c, n = per.get(folder, (0, 0))
    per[folder] = (c + f["line_covered"], n + f["line_total"])
    rows.append((f["filename"], f["line_covered"], f["line_total"]))
def pct(c, n):
    return 100.0 * c / n if n else 100.0
print(f"{'folder':<26} {'covered':>8} {'lines':>7} {'percent':>8}")
for folder, (c, n) in sorted(per.items()):
    print(f"{folder:<26} {c:>8} {n:>7} {pct(c, n):>7.1f}%")
tc = sum(c for c, _ in per.values())
tn = sum(n for _, n in per.values())
print(f"{'total':<26} {tc:>8} {tn:>7} {pct(tc, tn):>7.1f}%")
if sys.argv[2] == "1":
    print()
    for name, c, n in rows:
        print(f"{name:<40} {c:>6} {n:>6} {pct(c, n):>7.1f}%")
EOF
