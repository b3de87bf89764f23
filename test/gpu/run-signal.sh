#!/usr/bin/env bash
# run-signal.sh - on a real GPU, a CUDA program ended by a signal under
# `kscope run` still writes its kernels and ends by that signal (kscope
# too): SIGTERM sent while it launches kernels as fast as it can, SIGTERM
# while it waits in cudaDeviceSynchronize on a long kernel, SIGINT raised
# by the program. Ten trials of each: the handler waits for the profile
# while the interrupted thread may be inside the driver, so a trial that
# deadlocks would end after the handler's bound with no profile (FAIL).
# Each trial's time is printed. Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with the kscope
#      binary and libkscope.so), KSCOPE_GPU_WORK (scratch folder)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work_in run-signal
gpu_nvcc run-signal "$src/test/gpu/run-signal.cu" || exit 1
# kernels FILE: how many kernel launches the profile holds
kernels() {
    python3 - "$1" <<'PY'
import json, sys
n, total, stack = json.load(open(sys.argv[1]))[0], 0, []
stack.append(n)
while stack:
    n = stack.pop()
    if n["frame"].get("type") == "kernel" or "small_kernel" in n["frame"]["name"] or "long_kernel" in n["frame"]["name"]:
        total += int(n["metrics"].get("count", 0))
    stack.extend(n.get("children", []))
print(total)
PY
}

# dfl CMD...: CMD with SIGINT and SIGQUIT at their default action. A
# background job of a shell without job control starts with both ignored
# (so would the program, with or without kscope); this exec puts them back.
# Only as a background job (`dfl CMD &`): it execs, so that $! is CMD's pid.
dfl() {
    exec python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@"
}

# The program alone, started the same way, ends by its raised SIGINT (130).
dfl ./run-signal raise >bare.txt 2>&1 &
wait $!
rc=$?
if [ "$rc" -eq 130 ] && ! grep -q after bare.txt; then
    pass "without kscope, the raise trial ends by SIGINT (130)"
else
    fail "without kscope, the raise trial exits $rc (want 130): the harness changed the signal"
fi

# trial MODE SIGNAL: run, send SIGNAL once "ready" is printed (none for
# raise), check the exit and the profile
trial() {
    local mode=$1 sig=$2 want=$3 t0 t1 rc n
    rm -f kscope.hatchet out.txt
    t0=$(date +%s.%N)
    dfl "$ks" run --top 0 -- ./run-signal "$mode" >out.txt 2>err.txt &
    local pid=$!
    if [ "$sig" != none ]; then
        for _ in $(seq 300); do grep -q ready out.txt 2>/dev/null && break; sleep 0.05; done
        kill -"$sig" "$pid"
    fi
    wait "$pid"
    rc=$?
    t1=$(date +%s.%N)
    n=$([ -f kscope.hatchet ] && kernels kscope.hatchet || echo 0)
    local took
    took=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
    if [ "$rc" -eq "$want" ] && [ "$n" -gt 0 ] && ! grep -q "after\|not killed" out.txt; then
        echo "  $mode/$sig: exit $rc, $n kernel launches in the profile, ${took}s"
        return 0
    fi
    echo "  $mode/$sig: exit $rc (want $want), $n kernel launches, ${took}s: $(tail -2 err.txt)"
    return 1
}

for spec in "loop TERM 143" "sync TERM 143" "raise none 130" "loop INT 130"; do
    set -- $spec
    good=0
    for _ in $(seq 10); do trial "$1" "$2" "$3" && good=$((good + 1)); done
    if [ "$good" -eq 10 ]; then
        pass "$1, signal $2: 10 of 10 trials wrote the kernels and ended by the signal"
    else
        fail "$1, signal $2: $good of 10 trials wrote the kernels and ended by the signal"
    fi
done
exit $status
