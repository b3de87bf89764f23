#!/usr/bin/env bash
# test.sh - build kscope and run every test that this machine can run:
# the C tests and shell tests (CTest), then the Python package's tests.
# GPU tests need a GPU: run tools/gpu-run.sh on a GPU machine.
#
#   bash tools/test.sh                 # Debug build in build-debug/
#   KSCOPE_SANITIZE=ON bash tools/test.sh   # ASan + UBSan build in build-asan/
#
# Every test runs with the Python of a virtual environment inside the
# build folder (build-debug/venv), made first: what the tests need
# (python/tests/requirements.txt) goes there, never into the system's
# Python (with kscope fleet's engines: DuckDB, PyArrow, NumPy; pyspark
# where java is), and CTest gives its python to every test as KSCOPE_PYTHON. A test
# that ran the system's python3 could only use the standard library.
# tools/demo.sh builds in build/, so neither rebuilds the other's files.
# Each step prints a line as it starts; the build and pip show their own
# progress.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
step() { printf '\ntest.sh: [%s] %s (%d s so far)\n' "$1" "$2" $((SECONDS - started)); }

step 1/6 "system packages (tools/setup-deps.sh)"
bash tools/setup-deps.sh

san=${KSCOPE_SANITIZE:-OFF}
build=build-debug
[ "$san" = ON ] && build=build-asan
jobs=$(nproc 2>/dev/null || echo 2)
venv=$PWD/$build/venv

step 2/6 "the tests' Python: $venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
reqs=python/tests/requirements.txt
if ! "$venv/bin/python" -c "import $(grep -v '^#' "$reqs" | paste -sd, -)" >/dev/null 2>&1; then
    echo "test.sh: installing $(grep -v '^#' "$reqs" | paste -sd' ' -) into $venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar on -r "$reqs"
fi
# kscope fleet's engines, for python/tests/test_fleet*.py: DuckDB with what
# export needs (the kscope[fleet] extra), and pyspark where java is
# (kscope[spark]; not in the sanitized pass, whose ASan preload the JVM does
# not run under: its Spark test skips there).
fleet_mods="duckdb, pyarrow, numpy" fleet_pkgs="duckdb pyarrow numpy"
if [ "$san" != ON ] && command -v java >/dev/null; then
    fleet_mods="$fleet_mods, pyspark" fleet_pkgs="$fleet_pkgs pyspark"
fi
if ! "$venv/bin/python" -c "import $fleet_mods" >/dev/null 2>&1; then
    echo "test.sh: installing $fleet_pkgs into $venv"
    "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar on $fleet_pkgs
fi

step 3/6 "configure $build (sanitizers: $san)"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DKSCOPE_SANITIZE="$san" \
    -DKSCOPE_WERROR=ON -DKSCOPE_PYTHON="$venv/bin/python" >/dev/null

step 4/6 "build ($jobs jobs)"
cmake --build "$build" -j"$jobs"

step 5/6 "C and shell tests (CTest)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j"$jobs"

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "test.sh: a GPU is present: run 'bash tools/gpu-run.sh' for the GPU tests"
else
    echo "test.sh: SKIPPED GPU tests (no GPU on this machine); they run with tools/gpu-run.sh"
fi

# The Python package, built and tested with this build's flags: in the
# sanitized pass its extension is compiled with the same sanitizers (in its
# own build folder) and the tests run with the ASan runtime preloaded, as
# Python itself is not built with it; leaks are not checked there (CPython
# keeps objects until exit by design).
step 6/6 "the Python package: pip builds it (a minute), then pytest"
if [ "$san" = ON ]; then
    flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    CFLAGS=$flags LDFLAGS="-fsanitize=address,undefined" KSCOPE_PY_BUILD_BASE=$build/python \
        KSCOPE_PY_PRELOAD=$(cc -print-file-name=libasan.so) \
        ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
        PYTHON=$venv/bin/python KSCOPE_CLI=$PWD/$build/kscope bash python/tests/run.sh
else
    PYTHON=$venv/bin/python KSCOPE_CLI=$PWD/$build/kscope bash python/tests/run.sh
fi
echo "test.sh: all done in $((SECONDS - started)) s"
