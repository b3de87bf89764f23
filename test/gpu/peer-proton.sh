#!/usr/bin/env bash
# peer-proton.sh - Proton's own tests (test/peer/proton/, unchanged) against
# kscope: installs kscope from a copy of the package files (as
# python-run.sh), copies the tests to a scratch folder with
# `import triton.profiler as proton` changed to `import kscope as proton`,
# adds a conftest with Triton's `device` and `fresh_knobs` fixtures, runs
# each test id in its own process (with a timeout) and prints a PASS/FAIL
# line per id, the counts per file and the failing ids. Exits 77 with a
# SKIP line without torch, triton or a GPU; 1 when an id listed in
# test/peer/proton/baseline.txt no longer passes; else 0. The ids that
# passed are left in $KSCOPE_GPU_WORK/peer-proton/passed.txt (a new
# baseline). Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (unused: the package
#      builds its own library), KSCOPE_GPU_WORK (scratch folder; outputs land
#      in $KSCOPE_GPU_WORK/peer-proton), KSCOPE_DEPS (default
#      /tmp/kscope-deps), KSCOPE_PEER_TIMEOUT (seconds per id, default 300)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
work=${KSCOPE_GPU_WORK:-$(mktemp -d)}/peer-proton
per_id=${KSCOPE_PEER_TIMEOUT:-300}
PY=${PYTHON:-python3}

if ! "$PY" -c "import torch, triton, pytest; assert torch.cuda.is_available()" 2>/dev/null; then
    echo "SKIP  peer-proton: needs torch, triton, pytest and a CUDA GPU"
    exit 77
fi

rm -rf "$work" && mkdir -p "$work"
source "$src/test/python-lib.sh"
install_kscope "$work" peer-proton || exit 1

# The tests: a copy with only the import changed.
tests=$work/tests
mkdir -p "$tests"
for f in "$src"/test/peer/proton/test_*.py; do
    sed 's/^import triton\.profiler as proton$/import kscope as proton/' "$f" >"$tests/$(basename "$f")"
    if ! grep -q '^import kscope as proton$' "$tests/$(basename "$f")"; then
        echo "FAIL  peer-proton: $(basename "$f") has no 'import triton.profiler as proton' line"
        exit 1
    fi
done
cat >"$tests/conftest.py" <<'PYEOF'
"""The fixtures Triton's own conftest gives Proton's tests."""
import pytest


@pytest.fixture
def device():
    return "cuda"


@pytest.fixture
def fresh_knobs():
    from triton._internal_testing import _fresh_knobs_impl

    fresh_function, reset_function = _fresh_knobs_impl()
    try:
        yield fresh_function()
    finally:
        reset_function()
PYEOF

baseline=$src/test/peer/proton/baseline.txt
: >"$work/passed.txt"
: >"$work/failed.txt"
regressed=0
for file in "$tests"/test_*.py; do
    name=$(basename "$file")
    if ! (cd "$tests" && "$PY" -m pytest -q --collect-only -p no:cacheprovider "$name" \
            >"$work/$name.collect" 2>&1); then
        echo "FAIL  peer-proton: $name: collection failed:"
        tail -20 "$work/$name.collect"
        regressed=1
        continue
    fi
    pass=0 fail=0
    while IFS= read -r id; do
        log=$work/logs/$(echo "$id" | tr -c 'A-Za-z0-9_.-' '_').log
        mkdir -p "$work/logs"
        if (cd "$tests" && timeout "$per_id" "$PY" -m pytest -q -x -p no:cacheprovider "$id" \
                >"$log" 2>&1); then
            echo "PASS  $id"
            echo "$id" >>"$work/passed.txt"
            pass=$((pass + 1))
        else
            rc=$?
            why=""
            [ "$rc" -eq 124 ] && why=" (timed out after ${per_id}s)"
            echo "FAIL  $id$why"
            echo "$id" >>"$work/failed.txt"
            fail=$((fail + 1))
            if [ -f "$baseline" ] && grep -qxF "$id" "$baseline"; then
                echo "      regressed: passed in baseline.txt; log: $log"
                regressed=1
            fi
        fi
    done < <(grep '::' "$work/$name.collect")
    echo "== $name: $pass passed, $fail failed"
done
echo "== failing ids:"
sed 's/^/   /' "$work/failed.txt"
echo "== passing ids in $work/passed.txt"
exit $regressed
