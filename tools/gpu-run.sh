#!/usr/bin/env bash
# gpu-run.sh - the one script for the GPU machine: build kscope, run the GPU
# tests and the GPU benchmarks, print a summary table last.
#
# Usage (repository root, on the GPU machine, with .deps/ carried along;
# fill .deps/ first with tools/device-deps.sh where apt works):
#     OUT=/some/folder bash tools/gpu-run.sh [all|test|bench|gpu]
# all: every step; test: steps 1-4; bench: 1, 2, 5; gpu: 1, 2, 4, 5 (no ctest);
# gputest: 1, 2, 4 (the GPU tests alone); cbench: 1, 2 and the C launch
# benchmark of step 5 alone (MODES picks its modes); compare: 1, 2 and
# bench/compare.sh alone; runbench: 1, 2 and bench/gpu/run_bench.sh alone
# (SECTIONS picks c, torch, train; default all three); devbench: 1, 2 and
# bench/gpu/devscope_bench.sh alone; pcsbench: 1, 2 and pcs_bench.py alone;
# tracebytes: 1, 2 and bench/gpu/trace_bytes.py alone (bytes per kernel of
# kscope's trace, plain and gzip, against torch.profiler's; LAUNCHES kernels).
#
# With BASE=DIR (an earlier checkout, carried along), step 2 also builds
# it and step 5 ends with bench/compare.sh: this checkout against BASE,
# side by side (C scopes, kscope's launch modes, Python scopes).
#
# Steps:
#   1. unpack .deps/*.deb (msgpack-c, yajl, cmocka, pkgconf) with dpkg -x
#      into /tmp/kscope-deps and point pkg-config, CMake and the loader at it;
#   2. configure and build (ninja, RelWithDebInfo, warnings not fatal: the
#      machine's compiler may be newer) into /tmp/kscope-build;
#   3. ctest: the CPU tests, on this machine too;
#   4. GPU tests: every test/gpu/*.sh, each run with KSCOPE_SOURCE_DIR,
#      KSCOPE_BINARY_DIR and KSCOPE_GPU_WORK set; it passes when it exits 0;
#   5. benchmarks (bench/gpu/): cupti_probe.cu's record dump (a diagnostic
#      of what CUPTI writes for each launch kind); ts_probe.cu (when CUPTI
#      calls the timestamp callback, what API records cost); launch_bench.cu's modes
#      (none, the bare CUPTI activity floor, the floor plus the launch
#      callbacks kscope's attribution needs, the floor plus external
#      correlation records, kscope tree, trace, a scope per launch)
#      run alternately in separate processes, REPS times, medians and minima
#      compared as ratios; its alt_floor and alt_kscope modes (the CUPTI
#      floors, and kscope's shut / quiet / open states, interleaved in one
#      process); kscope tree peak memory at 1k vs 1M launches;
#      torch_bench.py (none, kscope tree and trace through ctypes, Proton,
#      torch.profiler) likewise, TORCH_REPS times; run_bench.sh's C section
#      (bare, the floor as an injection, in-process kscope, kscope run tree
#      and trace, sampled; 15 rounds, bootstrap intervals of the ratios to
#      the floor); pcs_bench.py (PC sampling next to Proton's);
#      devscope_bench.sh (device scopes, and each part of a record alone);
#   6. a summary table on stdout and in $OUT/summary.txt.
#
# Files left in $OUT: build.log ctest.log gpu-tests.log bench.log
# summary.txt artifacts.tar.gz (the GPU tests' outputs); the benchmarks add
# run_bench.log (and its raw results in run_bench-raw/), pcs_bench.log and
# devscope_bench.log.
# Env: REPS (default 5), LAUNCHES (default 20000), TORCH_REPS (default 3),
# GPU_TESTS (globs of test/gpu/*.sh names to run, separated by spaces, in
# that order; default all).
set -u
what=${1:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-out}
mkdir -p "$out"
prefix=/tmp/kscope-deps
build=/tmp/kscope-build
work=/tmp/kscope-gpu-work
reps=${REPS:-5}
launches=${LAUNCHES:-20000}
summary=$out/summary.txt
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
# keep_raw LOG: run_bench.sh's raw results (named on LOG's last line) into
# $OUT/run_bench-raw/, to be read again off the machine
keep_raw() {
    local dir
    dir=$(sed -n 's/^(raw results and logs in \(.*\))$/\1/p' "$1" | tail -1)
    [ -n "$dir" ] && mkdir -p "$out/run_bench-raw" && cp "$dir"/*.txt "$dir"/*.err "$out/run_bench-raw/" 2>/dev/null
    return 0
}
# ran_alone TITLE: the end of a step run alone: a blank line, TITLE and
# stdin (its log, or the lines of it that matter) added to the summary;
# the summary printed; exit 0.
ran_alone() {
    note ""
    note "$1"
    cat >>"$summary"
    cat "$summary"
    exit 0
}

# ---------------------------------------------------------------- 1. deps
rm -rf "$prefix" && mkdir -p "$prefix"
for deb in "$root"/.deps/*.deb; do
    [ -e "$deb" ] || { echo "no .deps/*.deb: run tools/device-deps.sh first" >&2; exit 1; }
    dpkg -x "$deb" "$prefix"
done
libdir=$prefix/usr/lib/x86_64-linux-gnu
for pc in "$libdir"/pkgconfig/*.pc; do
    sed -i "s|^prefix=.*|prefix=$prefix/usr|" "$pc"
done
# msgpack-c 4 names its file msgpack.pc; the build asks for msgpack-c.
[ -e "$libdir/pkgconfig/msgpack-c.pc" ] ||
    sed 's/^Name: .*/Name: msgpack-c/' "$libdir/pkgconfig/msgpack.pc" >"$libdir/pkgconfig/msgpack-c.pc"
export PKG_CONFIG_PATH=$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export CMAKE_PREFIX_PATH=$prefix/usr
export LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# tests that compile against the toolkit find its libraries and headers
export LIBRARY_PATH=$libdir${LIBRARY_PATH:+:$LIBRARY_PATH}
export C_INCLUDE_PATH=$prefix/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}
export PATH=$PATH:/usr/local/cuda/bin
pkgconfig_arg=()
if ! command -v pkg-config >/dev/null; then
    pkgconfig_arg=(-DPKG_CONFIG_EXECUTABLE="$prefix/usr/bin/pkgconf")
fi

# --------------------------------------------------------------- 2. build
{
    echo "== machine"
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1
    nvcc --version 2>&1 | tail -2
    ls -l /usr/local/cuda/lib64/libcupti* 2>&1
    python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1
    echo "== configure"
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKSCOPE_WERROR=OFF \
        "${pkgconfig_arg[@]}" 2>&1
    echo "== build"
    cmake --build "$build" -j 16 -- -k 0 2>&1
} >"$out/build.log"
build_rc=$?
if [ ! -e "$build/libkscope.so" ]; then
    note "BUILD FAILED (see build.log)"
    tail -40 "$out/build.log"
    exit 1
fi
note "build: ok (libkscope.so built; full log build.log)"
base_build=/tmp/kscope-build-base
if [ -n "${BASE:-}" ]; then
    base_src=$(cd "$BASE" && pwd)
    { cmake -S "$base_src" -B "$base_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DKSCOPE_WERROR=OFF -DKSCOPE_TESTS=OFF "${pkgconfig_arg[@]}" &&
        cmake --build "$base_build" -j 16; } >"$out/build-base.log" 2>&1 &&
        note "build of BASE ($BASE): ok" || note "build of BASE ($BASE): FAILED (see build-base.log)"
fi
compare() {
    [ -n "${BASE:-}" ] && [ -e "$base_build/libkscope.so" ] || return 0
    note ""
    note "this checkout against BASE=$BASE (bench/compare.sh, medians of ${REPS:-5}):"
    # the base's Python package needs the unpacked msgpack-c and yajl
    C_INCLUDE_PATH=$prefix/usr/include LIBRARY_PATH=$libdir BASE_SRC=$base_src \
        BASE_BUILD=$base_build NEW_BUILD=$build COMPARE_RAW=$out/compare-raw.log \
        timeout 540 bash "$root/bench/compare.sh" \
        >"$out/compare.log" 2>&1
    sed -n '/^benchmark/,$p' "$out/compare.log" | tee -a "$summary"
}
if [ "$what" = compare ]; then
    compare
    cat "$summary"
    exit 0
fi
if [ "$what" = devbench ]; then
    # Device scopes' cost, and each part of a record alone.
    KSCOPE_SOURCE_DIR=$root KSCOPE_BINARY_DIR=$build OUT=$work timeout 400 \
        bash "$root/bench/gpu/devscope_bench.sh" >"$out/devscope_bench.log" 2>&1
    ran_alone "device scopes (bench/gpu/devscope_bench.sh):" <"$out/devscope_bench.log"
fi
if [ "$what" = pcsbench ]; then
    # PC sampling next to Proton's, alone.
    (
        source "$root/test/python-lib.sh"
        KSCOPE_SOURCE_DIR=$root install_kscope "$work/pcs-bench" pcs-bench >/dev/null &&
            timeout 400 python3 "$root/bench/gpu/pcs_bench.py" "${PCS_REPS:-2}"
    ) >"$out/pcs_bench.log" 2>&1
    ran_alone "PC sampling, kscope and Proton (bench/gpu/pcs_bench.py):" \
        < <(grep -E '^(kernel|big|small|kscope fixed)' "$out/pcs_bench.log")
fi
if [ "$what" = tracebytes ]; then
    # Bytes per kernel event: kscope's trace against torch.profiler's.
    KSCOPE_LIB=$build/libkscope.so LD_PRELOAD=$build/libkscope.so timeout 300 \
        python3 "$root/bench/gpu/trace_bytes.py" "$launches" >"$out/trace_bytes.log" 2>&1
    ran_alone "trace bytes per kernel, kscope and torch.profiler (bench/gpu/trace_bytes.py):" \
        <"$out/trace_bytes.log"
fi
if [ "$what" = runbench ]; then
    # What kscope costs, every way of running it, in one script.
    KSCOPE_BINARY_DIR=$build SECTIONS=${SECTIONS:-c torch train} timeout 570 \
        bash "$root/bench/gpu/run_bench.sh" >"$out/run_bench.log" 2>&1
    keep_raw "$out/run_bench.log"
    ran_alone "bench/gpu/run_bench.sh (SECTIONS=${SECTIONS:-c torch train}):" \
        < <(grep -v '^(raw results' "$out/run_bench.log")
fi

# ---------------------------------------------------------- 3. CPU tests
if [ "$what" = all ] || [ "$what" = test ]; then
    # the GPU tests run in step 4
    (cd "$build" && timeout 300 ctest -j 8 --timeout 60 --output-on-failure -E '^gpu-') >"$out/ctest.log" 2>&1
    note "ctest: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
fi

# ---------------------------------------------------------- 4. GPU tests
gpu_fail=0
if [ "$what" != bench ] && [ "$what" != cbench ]; then
    rm -rf "$work" && mkdir -p "$work"
    nvidia-smi -L 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
    : >"$out/gpu-tests.log"
    set -f # the globs are matched against test/gpu/, not this folder
    globs=(${GPU_TESTS:-*})
    set +f
    tests=()
    for g in "${globs[@]}"; do
        tests+=("$root"/test/gpu/$g.sh)
    done
    for t in "${tests[@]}"; do
        [ -e "$t" ] || { note "gpu test $(basename "$t" .sh): no such test"; continue; }
        name=$(basename "$t" .sh)
        echo "== $name" >>"$out/gpu-tests.log"
        KSCOPE_SOURCE_DIR=$root KSCOPE_BINARY_DIR=$build KSCOPE_GPU_WORK=$work \
            timeout 300 bash "$t" >>"$out/gpu-tests.log" 2>&1
        case $? in
        0) note "gpu test $name: PASS" ;;
        77) note "gpu test $name: SKIP ($(grep -m1 "^SKIP  $name" "$out/gpu-tests.log" | cut -c7-))" ;;
        *)
            note "gpu test $name: FAIL (see gpu-tests.log)"
            gpu_fail=$((gpu_fail + 1))
            ;;
        esac
    done
    grep -E '^(PASS|FAIL|SKIP)  |^SKIP: ' "$out/gpu-tests.log" | tee -a "$summary"
    (cd "$work" && tar czf "$out/artifacts.tar.gz" --exclude='*/capture/capture' . 2>/dev/null)
fi

# --------------------------------------------------------- 5. benchmarks
if [ "$what" != test ] && [ "$what" != gputest ]; then
    if [ "$what" != cbench ]; then
        # Host annotation cost from C (no GPU involved; this machine's CPU).
        note ""
        note "scope cost from C (bench_scope):"
        "$build/bench_scope" >"$out/bench_scope.log" 2>&1
        sed -n '/^what/,$p' "$out/bench_scope.log" | tee -a "$summary"
    fi
    bench_bin=$work/bench
    mkdir -p "$bench_bin"
    nvcc -O2 -std=c++17 -arch=native -o "$bench_bin/launch_bench" "$root/bench/gpu/launch_bench.cu" \
        -I"$root/include" -I/usr/local/cuda/include -L"$build" -lkscope -Xlinker -rpath,"$build" \
        -L/usr/local/cuda/lib64 -lcupti -Xlinker -rpath,/usr/local/cuda/lib64 >"$out/bench.log" 2>&1
    nvcc -O2 -std=c++17 -arch=native -o "$bench_bin/cupti_probe" "$root/bench/gpu/cupti_probe.cu" \
        -L/usr/local/cuda/lib64 -lcupti -lcuda -Xlinker -rpath,/usr/local/cuda/lib64 >>"$out/bench.log" 2>&1
    echo "== cupti_probe" >>"$out/bench.log"
    timeout 60 "$bench_bin/cupti_probe" >>"$out/bench.log" 2>&1
    nvcc -O2 -std=c++17 -arch=native -o "$bench_bin/ts_probe" "$root/bench/gpu/ts_probe.cu" \
        -L/usr/local/cuda/lib64 -lcupti -Xlinker -rpath,/usr/local/cuda/lib64 >>"$out/bench.log" 2>&1
    echo "== ts_probe" >>"$out/bench.log"
    timeout 60 "$bench_bin/ts_probe" >>"$out/bench.log" 2>&1 || echo "ts_probe: exit $?" >>"$out/bench.log"
    modes=${MODES:-none floor floor_cb floor_ext tree trace tree_scoped}
    for r in $(seq "$reps"); do
        for m in $modes; do
            "$bench_bin/launch_bench" "$m" "$launches" "$bench_bin" >>"$out/bench.log" 2>&1
        done
    done
    for n in 1000 1000000; do
        "$bench_bin/launch_bench" tree "$n" "$bench_bin" >>"$out/bench.log" 2>&1
    done
    # the same states interleaved in one process (paired rounds)
    for m in alt_floor alt_kscope alt_kscope_trace; do
        pin=()
        command -v taskset >/dev/null && pin=(taskset -c "${PIN_CPUS:-2-5}")
        data=tree
        [ "$m" = alt_kscope_trace ] && data=trace
        ALT_DATA=$data timeout 120 "${pin[@]}" "$bench_bin/launch_bench" "${m%_trace}" 0 "$bench_bin" \
            >"$out/$m.log" 2>&1
        cat "$out/$m.log" >>"$out/bench.log"
    done
    tmodes="none kscope kscope_trace proton torch_profiler"
    [ "$what" = cbench ] && TORCH_REPS=0
    for r in $(seq "${TORCH_REPS:-3}"); do
        for m in $tmodes; do
            # preloaded: torch's libraries use up the static TLS that a
            # dlopen'ed libkscope would need (initial-exec thread state)
            KSCOPE_LIB=$build/libkscope.so LD_PRELOAD=$build/libkscope.so timeout 120 python3 "$root/bench/gpu/torch_bench.py" \
                "$m" "$launches" 2>>"$out/bench.log" | sed 's/^/torch_/' >>"$out/bench.log"
        done
    done
    [ "$what" != cbench ] && compare
    if [ "$what" != cbench ]; then
        # What kscope run, in-process kscope and the sampled mode cost over
        # the floor (runbench runs the torch and training sections too).
        KSCOPE_BINARY_DIR=$build SECTIONS=${RUN_SECTIONS:-c} REPS=${RUN_REPS:-15} \
            timeout 300 bash "$root/bench/gpu/run_bench.sh" \
            >"$out/run_bench.log" 2>&1
        note ""
        note "kscope's cost, every way of running it (bench/gpu/run_bench.sh):"
        grep -v '^(raw results' "$out/run_bench.log" | tee -a "$summary"
        keep_raw "$out/run_bench.log"
        # PC sampling next to Proton's (the Python package, built as the
        # Python GPU tests build it).
        (
            source "$root/test/python-lib.sh"
            KSCOPE_SOURCE_DIR=$root install_kscope "$work/pcs-bench" pcs-bench >/dev/null &&
                timeout 240 python3 "$root/bench/gpu/pcs_bench.py" "${PCS_REPS:-2}"
        ) >"$out/pcs_bench.log" 2>&1
        note ""
        note "PC sampling, kscope and Proton (bench/gpu/pcs_bench.py):"
        grep -E '^(kernel|big|small|kscope fixed)' "$out/pcs_bench.log" | tee -a "$summary"
        # Device scopes' cost, and each part of a record alone.
        KSCOPE_SOURCE_DIR=$root KSCOPE_BINARY_DIR=$build OUT=$work timeout 400 \
            bash "$root/bench/gpu/devscope_bench.sh" >"$out/devscope_bench.log" 2>&1
        note ""
        note "device scopes (bench/gpu/devscope_bench.sh):"
        tee -a "$summary" <"$out/devscope_bench.log"
    fi
    python3 - "$out/bench.log" "$launches" <<'PY' | tee -a "$summary"
import statistics, sys
rows = {}
mem = {}
n_main = int(sys.argv[2])
for line in open(sys.argv[1]):
    f = line.split()
    try:
        n, us = int(f[1]), float(f[2])
    except (IndexError, ValueError):
        continue
    if f[0] == "tree" and n != n_main:
        mem[n] = int(f[3])
        continue
    if n == n_main:
        rows.setdefault(f[0], []).append(us)
def table(title, modes, base, floor):
    # Medians, and minima (the machine is shared: the least disturbed run).
    print(f"\n{title}")
    print(f"{'mode':<22}{'median us':>10}{'min us':>8}{'runs':>5}"
          f"{'vs none':>9}{'vs floor':>9}{'min/min floor':>14}")
    med = {m: statistics.median(v) for m, v in rows.items()}
    low = {m: min(v) for m, v in rows.items()}
    for m in modes:
        if m not in rows:
            print(f"{m:<22}{'(no run)':>10}")
            continue
        vn = f"{med[m] / med[base]:.3f}" if base in med else "-"
        vf = f"{med[m] / med[floor]:.3f}" if floor in med else "-"
        vm = f"{low[m] / low[floor]:.3f}" if floor in low else "-"
        print(f"{m:<22}{med[m]:>10.3f}{low[m]:>8.3f}{len(rows[m]):>5}{vn:>9}{vf:>9}{vm:>14}")
c_modes = ["none", "floor", "floor_cb", "floor_ext", "tree", "trace", "tree_scoped"]
c_modes += [m for m in rows if m not in c_modes and not m.startswith("torch_")]  # MODES's others
table(f"C loop of {n_main} empty kernels (median of runs)", c_modes, "none", "floor")
for m in ("alt_floor", "alt_kscope", "alt_kscope_trace"):  # tables of their own
    try:
        text = open(f"{sys.argv[1].rsplit('/', 1)[0]}/{m}.log").read()
        print("\n" + "\n".join(l for l in text.splitlines() if "_round " not in l))
    except OSError:
        print(f"\n{m}: (no run)")
table(f"torch loop of {n_main} x.add_(1)",
      ["torch_none", "torch_kscope", "torch_kscope_trace", "torch_proton",
       "torch_torch_profiler"],
      "torch_none", None)
if mem:
    print("\nkscope tree peak RSS: " + ", ".join(f"{n} launches {kb / 1024:.1f} MiB" for n, kb in sorted(mem.items())))
PY
fi

echo
echo "==== summary"
cat "$summary"
exit $((gpu_fail > 0 || build_rc != 0))
