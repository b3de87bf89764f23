#!/usr/bin/env bash
# run-paths.sh - on a real GPU, the kscope run paths the pretend GPU alone
# covered before (run-paths.cu): KSCOPE_PROFILING=detailed with kernels
# (scopes and kernels as without it), KSCOPE_PROFILING=off (no scopes, the
# kernels still recorded), periodic parts with kernels (each part holds
# its own step's), a fork without exec under CUPTI (the child's host scope
# in its own profile, the parent's kernels before and after it), 200000
# launches with nothing dropped, and, when torch and Triton are there,
# `kscope run -c python` (Python frames above torch's kernels) and
# `-k triton` (a Triton kernel's launch_metadata on its node). Run by
# tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (build with the kscope
#      binary and libkscope.so), KSCOPE_GPU_WORK (scratch folder; outputs
#      land in $KSCOPE_GPU_WORK/run-paths)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
source "$src/test/gpu/gpu-lib.bash"
gpu_work_in run-paths
# at FILE A/B/C METRIC: that metric of the node at the path under ROOT; a
# kernel matches by its name without the argument list ("mark_kernel" for
# "mark_kernel(int*)")
at() {
    python3 - "$@" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))[0]
for name in sys.argv[2].split("/") if sys.argv[2] else []:
    n = next((c for c in n.get("children", []) if c["frame"]["name"].split("(")[0] == name), None)
    if n is None:
        sys.exit(0)
print(n["metrics"].get(sys.argv[3], ""))
PY
}
gpu_nvcc_kscope run-paths "$src/test/gpu/run-paths.cu" || exit 1

# 1. detailed: the same tree as on, kernels under their scopes
KSCOPE_PROFILING=detailed "$ks" run -n detailed --top 0 -- ./run-paths detailed >out.txt 2>err.txt
if [ $? -eq 0 ] && grep -qx "run-paths detailed done" out.txt &&
    [ "$(at detailed.hatchet outer/mark_kernel count)" = 4 ] &&
    [ "$(at detailed.hatchet outer/inner/mark_kernel count)" = 4 ]; then
    pass "KSCOPE_PROFILING=detailed: 4 kernels under outer, 4 under outer/inner"
else
    fail "detailed: $(tail -3 err.txt; cat out.txt)"
fi

# 2. off: annotations are no-ops; the GPU work is still recorded, at ROOT
KSCOPE_PROFILING=off "$ks" run -n off --top 0 -- ./run-paths off >out.txt 2>err.txt
if [ $? -eq 0 ] && [ -z "$(at off.hatchet outer calls)" ] &&
    [ "$(at off.hatchet mark_kernel count)" = 8 ]; then
    pass "KSCOPE_PROFILING=off: no scopes, the 8 kernels at ROOT"
else
    fail "off: outer '$(at off.hatchet outer calls)', kernels '$(at off.hatchet mark_kernel count)': $(tail -3 err.txt)"
fi

# 3. periodic parts with kernels
"$ks" run -n parts -m periodic_flushing --top 0 -- ./run-paths parts >out.txt 2>err.txt
ok=$?
for s in 0 1 2; do
    [ "$(at parts.part_$s.hatchet step$s/mark_kernel count)" = 3 ] || ok=1
    other=$(((s + 1) % 3))
    [ -z "$(at parts.part_$s.hatchet step$other calls)" ] || ok=1
done
grep -q "4 parts, parts.part_0.hatchet to parts.part_3.hatchet" err.txt || ok=1
if [ $ok -eq 0 ]; then
    pass "periodic parts: each part holds its own step's 3 kernels; the summary covers all 4"
else
    fail "parts: $(ls parts.* 2>&1 | tr '\n' ' '); $(tail -4 err.txt)"
fi

# 4. fork without exec under CUPTI
"$ks" run -n fk --top 0 -- ./run-paths fork >out.txt 2>err.txt
ok=$?
child=$(ls fk.pid*.hatchet 2>/dev/null | head -1)
[ "$(at fk.hatchet before_fork/mark_kernel count)" = 2 ] || ok=1
[ "$(at fk.hatchet after_fork/mark_kernel count)" = 3 ] || ok=1
[ -n "$child" ] && [ "$(at "$child" child_work calls)" = 1 ] || ok=1
if [ $ok -eq 0 ]; then
    pass "fork without exec: the parent's 2 + 3 kernels, the child's scope in $child"
else
    fail "fork: child '${child:-none}': $(ls fk.* 2>&1 | tr '\n' ' '); $(tail -4 err.txt)"
fi

# 5. 200000 launches: every one recorded, nothing dropped
"$ks" run -n many --top 0 -- ./run-paths many >out.txt 2>err.txt
count=$(at many.hatchet burst/mark_kernel count)
dropped=$(at many.hatchet "" dropped_records)
if [ "$count" = 200000 ] && { [ -z "$dropped" ] || [ "$dropped" = 0 ] || [ "$dropped" = 0.0 ]; }; then
    pass "200000 launches: all recorded, none dropped"
else
    fail "many: count '$count', dropped '${dropped:-0}': $(tail -3 err.txt)"
fi

# 6. Python: -c python and -k triton (needs torch, Triton and the package)
if ! gpu_torch triton; then
    echo "SKIP: run-paths python checks (no torch with CUDA and Triton)"
    exit $status
fi
source "$src/test/python-lib.sh"
install_kscope "$work/py" run-paths >/dev/null || exit 1
cat >prog.py <<'PY'
import torch, triton, triton.language as tl

def metadata(grid, kernel, args):
    return {"name": "add_one_named", "flops32": 1024, "bytes": 8192}

@triton.jit(launch_metadata=metadata)
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) + 1, mask=i < n)

def torch_part(x):
    return (x * 2).sum()

x = torch.zeros(1024, device="cuda")
for _ in range(3):
    torch_part(x)
    add_one[(4,)](x, 1024, BLOCK=256)
torch.cuda.synchronize()
print("prog done")
PY
"$ks" run -n pyctx -c python --top 0 -- python3 prog.py >out.txt 2>err.txt
if [ $? -eq 0 ] && grep -qx "prog done" out.txt && python3 - pyctx.hatchet <<'PY'; then
import json, sys
root = json.load(open(sys.argv[1]))[0]
def walk(n, path):
    yield n, path
    for c in n.get("children", []):
        yield from walk(c, path + [n["frame"]["name"]])
hits = [p for n, p in walk(root, []) if "device_id" in n["metrics"] and any("torch_part" in f for f in p)]
sys.exit(0 if hits else 1)
PY
    pass "-c python: torch's kernels under the Python frame torch_part"
else
    fail "-c python: $(tail -3 err.txt)"
fi
"$ks" run -n hook -k triton --top 0 -- python3 prog.py >out.txt 2>err.txt
if [ $? -eq 0 ] && python3 - hook.hatchet <<'PY'; then
import json, sys
root = json.load(open(sys.argv[1]))[0]
stack, found = [root], None
while stack:
    n = stack.pop()
    if n["frame"]["name"] == "add_one_named":
        found = n
    stack.extend(n.get("children", []))
m = found["metrics"] if found else {}
sys.exit(0 if m.get("count") == 3 and m.get("flops32") == 3 * 1024 and m.get("bytes") == 3 * 8192 else 1)
PY
    pass "-k triton: the Triton kernel named by its launch_metadata, with flops32 and bytes"
else
    fail "-k triton: $(tail -3 err.txt)"
fi
exit $status
