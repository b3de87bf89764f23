#!/usr/bin/env bash
# run-range.sh - `kscope run --capture-range=cudaProfilerApi` on a real GPU:
# only the kernels launched between cudaProfilerStart and cudaProfilerStop
# are recorded, with the program built against the shared cudart (calls
# reach kscope's preloaded stand-ins) and the static cudart (only a CUPTI
# callback on cuProfilerStart/Stop can see those). Also --delay. Run by
# tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with the kscope
#      binary and libkscope.so), KSCOPE_GPU_WORK (scratch folder; outputs
#      land in $KSCOPE_GPU_WORK/run-range)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work run-range
# counts FILE: "name count" per kernel of a .hatchet file
counts() {
    python3 - "$1" <<'PY'
import collections, json, sys
root = json.load(open(sys.argv[1]))[0]
c, stack = collections.Counter(), [root]
while stack:
    n = stack.pop()
    if "device_id" in n["metrics"]:
        c[n["frame"]["name"]] += n["metrics"].get("count", 0)
    stack.extend(n.get("children", []))
for k, v in sorted(c.items()):
    print(k, v)
PY
}

for cudart in shared static; do
    exe=$work/range-$cudart
    if ! gpu_nvcc "$exe" "$src/test/gpu/run-range.cu" -cudart "$cudart"; then
        check "build with the $cudart cudart" 1 "nvcc failed"
        continue
    fi
    "$bin/kscope" run -n $cudart -o "$work" --capture-range=cudaProfilerApi -- "$exe" 10 \
        >"$work/$cudart.out" 2>"$work/$cudart.err"
    check "$cudart cudart: exit code" $? "$(cat "$work/$cudart.err")"
    [ "$(cat "$work/$cudart.out")" = "range done" ]
    check "$cudart cudart: program output kept" $? "$(cat "$work/$cudart.out")"
    got=$(counts "$work/$cudart.hatchet" 2>&1 | tr '\n' ' ')
    [ "$got" = "inside_kernel(int*) 10 " ]
    check "$cudart cudart: only the 10 kernels inside the range" $? "got: $got"
done

# --delay longer than the run: nothing recorded; --delay 0 + --duration:
# everything
"$bin/kscope" run -n delayed -o "$work" --delay 60 -- "$work/range-shared" 10 \
    >/dev/null 2>"$work/delayed.err"
got=$( [ -f "$work/delayed.hatchet" ] && counts "$work/delayed.hatchet" | tr '\n' ' ')
[ -z "$got" ]
check "--delay 60 records no kernel" $? "got: $got"
"$bin/kscope" run -n whole -o "$work" --duration 60 -- "$work/range-shared" 10 \
    >/dev/null 2>"$work/whole.err"
got=$(counts "$work/whole.hatchet" 2>&1 | tr '\n' ' ')
[ "$got" = "after_kernel(int*) 10 before_kernel(int*) 10 inside_kernel(int*) 10 " ]
check "--duration 60 records all 30 kernels" $? "got: $got"
exit $status
