#!/usr/bin/env bash
# devscope.sh - device-side scopes on a real GPU (devscope.cu, checks in
# devscope_check.py): phases spinning 1x/2x/4x a cycle count give those
# ratios within 5% (globaltimer and clock64); warps doing different work
# show different times; granularity=cta records once per CTA; a 1k buffer
# (8 records per SM) keeps each SM's first 8 and reports exactly the rest
# lost (keep-first), or keeps the newest (keep-newest); sample=4; a kernel first launched inside a stream
# capture, its graph launched 3 times, and two streams; a kernel without
# scopes is unaffected. Prints PASS/FAIL lines; exits 1 on a failure.
# Env: KSCOPE_SOURCE_DIR, KSCOPE_BINARY_DIR, KSCOPE_GPU_WORK (tools/gpu-run.sh).
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work devscope
if ! gpu_nvcc "$work/devscope" "$src/test/gpu/devscope.cu" -I"$src/include" \
    >"$work/nvcc.log" 2>&1; then
    fail "nvcc: $(tail -5 "$work/nvcc.log")"
    exit 1
fi
cd "$work"
run() { # NAME OPTS MODE
    timeout 120 "$bin/kscope" run --top 0 -n "$1" $2 -- ./devscope "$3" >"$1.log" 2>&1 ||
        fail "$1: kscope run failed: $(tail -5 "$1.log")"
}
run phases-ns --device-scopes phases
run phases-cyc --device-scopes=clock=clock64 phases
python3 "$src/test/gpu/devscope_check.py" phases phases-ns.hatchet phases-cyc.hatchet || status=1
run warps --device-scopes warps
run warps-cta --device-scopes=granularity=cta warps
python3 "$src/test/gpu/devscope_check.py" warps warps.hatchet warps-cta.hatchet || status=1
run small-first --device-scopes=buffer=1k small
run small-newest --device-scopes=buffer=1k,full=keep-newest small
run small-sample --device-scopes=sample=4 small
python3 "$src/test/gpu/devscope_check.py" small small-first.hatchet small-newest.hatchet \
    small-sample.hatchet || status=1
run graph --device-scopes graph
python3 "$src/test/gpu/devscope_check.py" graph graph.hatchet || status=1
run plain-off "" plain
run plain-on --device-scopes plain
python3 "$src/test/gpu/devscope_check.py" plain plain-off.hatchet plain-on.hatchet || status=1
# the trace: per-SM tracks with slices inside their kernel
run trace "-d trace --device-scopes" warps
grep -q '"device_scope"' trace.chrome_trace && grep -q '"SM [0-9]* warp [0-9]*"' trace.chrome_trace &&
    pass "trace has per-SM warp tracks of device scopes" ||
    fail "trace lacks device-scope tracks"
exit $status
