#!/usr/bin/env bash
# run-subscriber.sh - kscope next to another CUPTI subscriber: it frees
# CUPTI at finalize, and when another tool holds CUPTI it says so on one
# stderr line and still records host scopes. Run by tools/gpu-run.sh.
# Env: KSCOPE_SOURCE_DIR, KSCOPE_BINARY_DIR, KSCOPE_GPU_WORK.
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work subscriber
gpu_nvcc_kscope "$work/subscriber" "$src/test/gpu/subscriber.cu" -I/usr/local/cuda/include \
    -L/usr/local/cuda/lib64 -lcupti -Xlinker -rpath,/usr/local/cuda/lib64 || exit 1

"$work/subscriber" release "$work/release" >"$work/release.out" 2>"$work/release.err"
check "CUPTI free again after kscope finalize" $? "$(cat "$work/release.out" "$work/release.err")"

"$work/subscriber" busy "$work/busy" >"$work/busy.out" 2>"$work/busy.err"
check "kscope runs beside a CUPTI holder" $? "$(cat "$work/busy.err")"
lines=$(grep -c "^kscope: " "$work/busy.err")
grep -q "another CUPTI subscriber" "$work/busy.err"
check "one line names the other subscriber" $(( $? != 0 || lines != 1 )) \
    "$lines kscope line(s): $(cat "$work/busy.err")"
python3 - "$work/busy.hatchet" <<'PY'
import json, sys
root, _ = json.load(open(sys.argv[1]))
names = []
def walk(n):
    names.append(n["frame"]["name"])
    for c in n.get("children", []):
        walk(c)
walk(root)
sys.exit(0 if "host" in names and "sub_kernel()" not in names else 1)
PY
check "host scope recorded, no kernels" $? "$(cat "$work/busy.hatchet" 2>&1 | head -c 300)"
exit $status
