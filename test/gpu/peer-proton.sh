#!/usr/bin/env bash
# peer-proton.sh - Proton's own tests (test/third_party/proton/, unchanged) against
# kscope: installs kscope from a copy of the package files (as
# python-run.sh), copies the tests to a scratch folder with
# `import triton.profiler as proton` changed to `import kscope as proton`,
# adds a conftest with Triton's `device` and `fresh_knobs` fixtures, runs
# each test id in its own process (with a timeout) and prints a PASS/FAIL
# line per id, the counts per file and the failing ids. Exits 77 with a
# SKIP line without torch, triton or a GPU; 1 when an id listed in
# test/third_party/proton/baseline.txt no longer passes; else 0. The ids that
# passed are left in $KSCOPE_GPU_WORK/peer-proton/passed.txt (a new
# baseline). Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (unused: the package
#      builds its own library), KSCOPE_GPU_WORK (scratch folder; outputs land
#      in $KSCOPE_GPU_WORK/peer-proton), KSCOPE_DEPS (default
#      /tmp/kscope-deps), KSCOPE_PEER_TIMEOUT (seconds per id, default 120),
#      KSCOPE_PEER_JOBS (ids run at once, default 6)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
per_id=${KSCOPE_PEER_TIMEOUT:-120}
PY=${PYTHON:-python3}
source "$src/test/gpu/gpu-lib.bash"

if ! gpu_torch triton pytest; then
    echo "SKIP  peer-proton: needs torch, triton, pytest and a CUDA GPU"
    exit 77
fi

gpu_work peer-proton
source "$src/test/python-lib.sh"
install_kscope "$work" peer-proton || exit 1
# test_profile.py reads profiles through triton.profiler.viewer, which needs
# LLNL Hatchet; the GPU machine has no registry, so its wheels travel in
# .whl/peer/ (fetched where pip works: see docs/gpu.md, GPU tests).
gpu_peer_hatchet
case $? in
1)
    echo "FAIL  peer-proton: the wheels in .whl/peer did not install:"
    tail -5 "$work/peer-site.log"
    exit 1
    ;;
2) echo "NOTE  peer-proton: no llnl-hatchet here and none in .whl/peer: tests reading profiles through the viewer will fail" ;;
esac

# The tests: a copy with only the import changed.
tests=$work/tests
proton_tests peer-proton "$tests" || exit 1

baseline=$src/test/third_party/proton/baseline.txt
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
    # Ids run in parallel (KSCOPE_PEER_JOBS at once), each in its own
    # process; the tally below reads their results in collection order.
    mkdir -p "$work/logs" "$work/rc"
    grep '::' "$work/$name.collect" >"$work/$name.ids"
    export tests work per_id PY
    tr '\n' '\0' <"$work/$name.ids" | xargs -0 -P "${KSCOPE_PEER_JOBS:-6}" -I{} bash -c '
        id=$1; key=$(echo "$id" | tr -c "A-Za-z0-9_.-" "_")
        # each id in a folder of its own: default output names cannot clash
        mkdir -p "$work/cwd/$key"
        (cd "$work/cwd/$key" && timeout "$per_id" "$PY" -m pytest -q -x -p no:cacheprovider \
            --rootdir "$tests" "$tests/$id" \
            >"$work/logs/$key.log" 2>&1)
        echo $? >"$work/rc/$key"' _ {}
    pass=0 fail=0
    while IFS= read -r id; do
        key=$(echo "$id" | tr -c 'A-Za-z0-9_.-' '_')
        log=$work/logs/$key.log
        rc=$(cat "$work/rc/$key" 2>/dev/null || echo 1)
        if [ "$rc" -eq 0 ]; then
            echo "PASS  $id"
            if [ -f "$baseline" ] && ! grep -qxF "$id" "$baseline"; then
                echo "      new: passes, not yet in baseline.txt (add it)"
            fi
            echo "$id" >>"$work/passed.txt"
            pass=$((pass + 1))
        else
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
    done <"$work/$name.ids"
    echo "== $name: $pass passed, $fail failed"
done
echo "== failing ids:"
sed 's/^/   /' "$work/failed.txt"
echo "== passing ids in $work/passed.txt"
exit $regressed
