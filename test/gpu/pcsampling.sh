#!/usr/bin/env bash
# pcsampling.sh - PC sampling on a real GPU:
#   1. a CUDA C kernel built with -lineinfo (pcsampling.cu), run under
#      `kscope run --pc-sampling`: its hottest line must be the dependent
#      load chain (HOT-LINE) and that line's main stall the long
#      scoreboard; the arithmetic line (MATH-LINE) must have samples, mostly
#      for another reason; `kscope top --lines` must list the hot line first;
#   2. Triton and torch kernels from Python (pcsampling_triton.py):
#      start(mode=PCSampling(interval=N)) puts the Triton kernel's samples
#      on its source lines and torch's on its kernels;
#   3. Proton's own test_pcsampling (3 times, each in its own process:
#      KSCOPE_PCS_REPEAT) and test_profile_mode, unchanged but for
#      `import kscope as proton`.
# Prints PASS/FAIL lines; exits 1 on a failure, 77 (SKIP) without a GPU.
# Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with the kscope
#      binary), KSCOPE_GPU_WORK (scratch folder; outputs land in
#      $KSCOPE_GPU_WORK/pcsampling), KSCOPE_DEPS (default /tmp/kscope-deps)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
source "$src/test/python-lib.sh"
gpu_work pcsampling

# The Python package builds while the CUDA part runs.
have_py=0
if gpu_torch triton; then
    have_py=1
    (install_kscope "$work/py" pcsampling && echo "$PYTHONPATH" >"$work/pythonpath") \
        >"$work/install.log" 2>&1 &
    install_pid=$!
fi

# ------------------------------------------------------------ 1. CUDA C
if ! gpu_nvcc "$work/pcsampling" "$src/test/gpu/pcsampling.cu" -lineinfo -I"$src/include" \
    >"$work/nvcc.log" 2>&1; then
    fail "nvcc: $(tail -5 "$work/nvcc.log")"
else
    (cd "$work" && KSCOPE_PCS_DEBUG=${KSCOPE_PCS_DEBUG:-1} timeout 120 "$bin/kscope" run \
        --pc-sampling -n cuda -- ./pcsampling 10) >"$work/run.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] && pass "kscope run --pc-sampling exits 0" || fail "kscope run: exit $rc: $(tail -20 "$work/run.log")"
    hot=$(grep -n 'HOT-LINE' "$src/test/gpu/pcsampling.cu" | cut -d: -f1)
    math=$(grep -n 'MATH-LINE' "$src/test/gpu/pcsampling.cu" | cut -d: -f1)
    python3 "$src/test/gpu/pcsampling_check.py" "$work/cuda.hatchet" "$hot" "$math" 10 ||
        status=1
    "$bin/kscope" top --lines -n 5 "$work/cuda.hatchet" >"$work/top-lines.txt" 2>&1
    first=$(sed -n 2p "$work/top-lines.txt")
    grep -q "pcsampling.cu:$hot@chase_and_compute" <<<"$first" &&
        pass "kscope top --lines lists the hot line first: $first" ||
        fail "kscope top --lines: $(cat "$work/top-lines.txt")"
    "$bin/kscope" view --lines "$work/cuda.hatchet" >"$work/view-lines.txt" 2>&1 ||
        fail "kscope view --lines: $(cat "$work/view-lines.txt")"
fi

# ---------------------------------------------------- 2. Triton, torch
if [ "$have_py" = 0 ]; then
    echo "SKIP: pcsampling: Triton, torch and Proton's tests need torch, triton and a GPU"
else
    if ! wait "$install_pid"; then
        fail "the Python package did not install: $(tail -20 "$work/install.log")"
    else
        export PYTHONPATH=$(cat "$work/pythonpath")
        if ! (cd "$work" && KSCOPE_PCS_DEBUG=1 timeout 300 python3 \
            "$src/test/gpu/pcsampling_triton.py" "$work" 2>"$work/triton.err"); then
            status=1
            echo "      its stderr (KSCOPE_PCS_DEBUG=1), last lines:"
            tail -25 "$work/triton.err" | sed 's/^/      /'
        fi
        # ------------------------------------------- 3. Proton's tests
        # test_profile.py imports triton.profiler.viewer, which needs LLNL
        # Hatchet: from the wheels in .whl/peer/ when the machine lacks it.
        gpu_peer_hatchet
        proton_tests pcsampling "$work/peer" test_profile.py test_api.py || status=1
        # test_pcsampling KSCOPE_PCS_REPEAT times (default 3), each in its
        # own process: its finalize once crashed on some machines only
        for id in test_profile.py::test_pcsampling test_api.py::test_profile_mode; do
            if [ "${id%%::*}" = test_profile.py ] && ! python3 -c "import hatchet" 2>/dev/null; then
                echo "SKIP: pcsampling: Proton's $id needs LLNL Hatchet (none here, none in .whl/peer/)"
                continue
            fi
            runs=1 ok=0
            [ "${id##*::}" = test_pcsampling ] && runs=${KSCOPE_PCS_REPEAT:-3}
            for i in $(seq "$runs"); do
                log=$work/peer/$(basename "$id").$i.log
                (cd "$work/peer" && timeout 300 python3 -X faulthandler -m pytest -q -x \
                    -p no:cacheprovider "$id" >"$log" 2>&1) && ok=$((ok + 1)) ||
                    echo "      run $i: $(tail -30 "$log")"
            done
            [ "$ok" = "$runs" ] && pass "Proton's $id ($ok of $runs runs)" ||
                fail "Proton's $id: $ok of $runs runs passed"
        done
    fi
fi
exit $status
