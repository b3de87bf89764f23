#!/usr/bin/env bash
# test.sh - build kscope and run every test that this machine can run:
# the C tests and shell tests (CTest), then the Python package's tests.
# GPU tests need a GPU: run tools/gpu-run.sh on a GPU machine.
#
#   bash tools/test.sh                 # Debug build in build-debug/
#   KSCOPE_SANITIZE=ON bash tools/test.sh   # ASan + UBSan build in build-asan/
#
# The Python tests run in a virtual environment inside the build folder
# (build-debug/venv): pytest, msgpack, kscope fleet's engines (DuckDB,
# PyArrow, NumPy; pyspark where java is) and the package from this checkout
# are installed there, never into the system's Python. tools/demo.sh builds in
# build/, so neither rebuilds the other's files.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh

san=${KSCOPE_SANITIZE:-OFF}
build=build-debug
[ "$san" = ON ] && build=build-asan
jobs=$(nproc 2>/dev/null || echo 2)

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DKSCOPE_SANITIZE="$san" \
    -DKSCOPE_WERROR=ON >/dev/null
cmake --build "$build" -j"$jobs"
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
if [ -f python/tests/run.sh ]; then
    venv=$PWD/$build/venv
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    if ! "$venv/bin/python" -c "import pytest, msgpack" >/dev/null 2>&1; then
        echo "test.sh: installing pytest msgpack into $venv"
        "$venv/bin/python" -m pip install -q pytest msgpack
    fi
    # kscope fleet's engines, for python/tests/test_fleet*.py: DuckDB with
    # what export needs (the kscope[fleet] extra), and pyspark where java
    # is (kscope[spark]; not in the sanitized pass, whose ASan preload the
    # JVM does not run under: its Spark test skips there).
    fleet_mods="duckdb, pyarrow, numpy" fleet_pkgs="duckdb pyarrow numpy"
    if [ "$san" != ON ] && command -v java >/dev/null; then
        fleet_mods="$fleet_mods, pyspark" fleet_pkgs="$fleet_pkgs pyspark"
    fi
    if ! "$venv/bin/python" -c "import $fleet_mods" >/dev/null 2>&1; then
        echo "test.sh: installing $fleet_pkgs into $venv"
        "$venv/bin/python" -m pip install -q $fleet_pkgs
    fi
    if [ "$san" = ON ]; then
        flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
        CFLAGS=$flags LDFLAGS="-fsanitize=address,undefined" KSCOPE_PY_BUILD_BASE=$build/python \
            KSCOPE_PY_PRELOAD=$(cc -print-file-name=libasan.so) \
            ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0 \
            PYTHON=$venv/bin/python KSCOPE_CLI=$PWD/$build/kscope bash python/tests/run.sh
    else
        PYTHON=$venv/bin/python KSCOPE_CLI=$PWD/$build/kscope bash python/tests/run.sh
    fi
fi
