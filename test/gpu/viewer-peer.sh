#!/usr/bin/env bash
# viewer-peer.sh - kscope's and Proton's profiles of one torch program, on a
# real GPU: `kscope diff` pairs every kernel of Proton's file (mangled
# names) with kscope's (demangled by the recorder; the readers demangle
# Proton's), the counts agree, and kscope's file opens in Triton's
# proton-viewer for every numeric metric (--print-sorted too) and in
# Hatchet's from_literal, where llnl-hatchet is installed or in .whl/peer/
# (else that part says SKIP). Exits 77 with a SKIP line without torch,
# triton or a GPU.
# Run by tools/gpu-run.sh.
#
# Env: KSCOPE_SOURCE_DIR (repo), KSCOPE_BINARY_DIR (the build: its kscope),
#      KSCOPE_GPU_WORK (scratch folder; outputs land in
#      $KSCOPE_GPU_WORK/viewer-peer), KSCOPE_DEPS (default /tmp/kscope-deps)
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
ks=${KSCOPE_BINARY_DIR:?}/kscope
PY=${PYTHON:-python3}
source "$src/test/gpu/gpu-lib.bash"

if ! gpu_torch triton.profiler; then
    echo "SKIP  viewer-peer: needs torch, triton and a CUDA GPU"
    exit 77
fi
gpu_work viewer-peer
source "$src/test/python-lib.sh"
install_kscope "$work" viewer-peer || exit 1

cat >"$work/workload.py" <<'PYEOF'
"""One program, profiled by Proton (argv[1] proton) or kscope (kscope)."""
import sys

import torch

if sys.argv[1] == "kscope":
    import kscope as proton
else:
    import triton.profiler as proton

x = torch.ones(1 << 20, device="cuda")
a = torch.randn(512, 512, device="cuda")
x.add_(1)  # warm up: cuBLAS sets up (and may memset) its workspace once
torch.mm(a, a)
torch.cuda.synchronize()
s = proton.start(sys.argv[2])
for _ in range(3):
    with proton.scope("step"):
        x.add_(1)
        torch.mm(a, a)
torch.cuda.synchronize()
proton.finalize(s)
PYEOF
for who in proton kscope; do
    (cd "$work" && KSCOPE_QUIET=1 timeout 300 "$PY" workload.py $who "$work/$who") \
        >"$work/$who.log" 2>&1 || fail "$who run: $(tail -3 "$work/$who.log")"
done
[ -s "$work/proton.hatchet" ] && [ -s "$work/kscope.hatchet" ] || {
    fail "no profiles: $(ls "$work")"
    exit 1
}

# Every kernel pairs: no row of the diff is on one side only.
out=$("$ks" diff --all -m count "$work/proton.hatchet" "$work/kscope.hatchet" 2>&1) ||
    fail "diff: $out"
echo "$out"
if grep -q "only in" <<<"$out"; then
    fail "kernels that did not pair (Proton's mangled vs kscope's names)"
elif ! grep -q "step > " <<<"$out"; then
    fail "no kernel under step in the diff"
elif awk 'NR > 2 && $3 != "0" { bad = 1 } END { exit !bad }' <<<"$out"; then
    fail "kernel counts differ between Proton's profile and kscope's"
else
    pass "every kernel of Proton's profile pairs with kscope's, same counts"
fi
grep -q '"_Z' "$work/proton.hatchet" || echo "NOTE  viewer-peer: Proton's names are not mangled here"

# kscope's file in the real proton-viewer and Hatchet (Hatchet from the
# wheels in .whl/peer/ when the machine lacks it, as peer-proton.sh).
gpu_peer_hatchet
if ! "$PY" -c "import hatchet, triton.profiler.viewer" 2>/dev/null; then
    echo "SKIP  viewer-peer: proton-viewer part: no llnl-hatchet here and none in .whl/peer/"
    exit $status
fi
"$PY" - "$work/kscope.hatchet" >"$work/jobs.json" <<'PYEOF'
import json, sys
path = sys.argv[1]
doc = json.load(open(path))
nums, other, stack = set(), set(), [doc[0]]
while stack:
    n = stack.pop()
    for k, v in n["metrics"].items():
        (nums if isinstance(v, (int, float)) else other).add(k)
    stack.extend(n["children"])
jobs = [{"literal": path}]
for m in sorted(nums - other):
    jobs.append({"viewer": ["-m", m.split("(")[0].strip().lower(), "--print-sorted", path]})
print(json.dumps(jobs))
PYEOF
if ! "$PY" "$src/test/support/peer_viewer.py" <"$work/jobs.json" >"$work/results.json"; then
    fail "peer_viewer.py failed"
    exit 1
fi
"$PY" - "$work/jobs.json" "$work/results.json" <<'PYEOF' || status=1
import json, sys
jobs, results = (json.load(open(p)) for p in sys.argv[1:3])
bad = [(j, r["error"]) for j, r in zip(jobs, results) if r["rc"]]
for j, e in bad:
    print(f"FAIL  viewer-peer: {j}: {e}")
if not bad:
    print(f"PASS  viewer-peer: proton-viewer and from_literal open kscope's profile "
          f"({len(jobs) - 1} metrics)")
sys.exit(1 if bad else 0)
PYEOF
exit $status
