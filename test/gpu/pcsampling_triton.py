"""pcsampling_triton.py WORK - PC sampling from Python on Triton and torch
kernels: start(mode=kscope.mode.PCSampling(interval=N)) with the Triton
hook; the Triton kernel's samples land on its source lines (this file's,
with the loop the hottest), torch's kernels (no line information) keep
theirs on their own nodes. Prints PASS/FAIL lines; exits 1 on a failure."""
import json
import os
import sys

import torch
import triton
import triton.language as tl

import kscope

work = sys.argv[1]
failed = False


def check(ok, what):
    global failed
    print(("PASS" if ok else "FAIL") + "  pcsampling (Python): " + what)
    failed |= not ok


@triton.jit
def spin(x_ptr, y_ptr, ITERS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    for _ in range(ITERS):
        x = x * 1.000001 + 0.5  # SPIN-LINE
    tl.store(y_ptr + offs, x)


x = torch.randn(1 << 20, device="cuda")
y = torch.empty_like(x)
grid = (x.numel() // 1024, )
torch.cuda.synchronize()
# Source lines come from the module CUDA loads at the kernel's first launch
# (in this process): that must come after the start.
name = os.path.join(work, "triton")
kscope.start(name, mode=kscope.mode.PCSampling(interval=512), hook="triton")
with kscope.scope("torch"):
    for _ in range(20):
        z = (x * 2.0).sin()
with kscope.scope("triton"):
    for _ in range(5):
        spin[grid](x, y, ITERS=2000, BLOCK=1024)
kscope.finalize()

root = json.load(open(name + ".hatchet"))[0]
by_name = {c["frame"]["name"]: c for c in root["children"]}
tri = by_name.get("triton", {"children": []})
kern = [c for c in tri["children"] if "spin" in c["frame"]["name"]]
check(len(kern) == 1, f"the Triton kernel's node ({[c['frame']['name'] for c in tri['children']]})")
lines = kern[0]["children"] if kern else []
samples = sum(c["metrics"].get("num_samples", 0) for c in lines)
check(samples > 0 and all("@" in c["frame"]["name"] for c in lines),
      f"its samples are on source lines ({len(lines)} lines, {samples} samples)")
spin_line = next(i + 1 for i, t in enumerate(open(__file__)) if "SPIN-LINE" in t and "x *" in t)
hottest = max(lines, key=lambda c: c["metrics"].get("num_samples", 0))["frame"]["name"] if lines else ""
check(f"{os.path.basename(__file__)}:{spin_line}@" in hottest,
      f"the hottest is the loop's line {spin_line} ({hottest})")
t = by_name.get("torch", {"children": []})
torch_samples = 0
stack = list(t["children"])
while stack:
    n = stack.pop()
    torch_samples += n["metrics"].get("num_samples", 0)
    stack.extend(n.get("children", []))
check(torch_samples > 0, f"torch's kernels have samples ({torch_samples}: "
      f"{[c['frame']['name'][:40] for c in t['children']]})")
print(f"      dropped samples: {root['metrics'].get('dropped_samples', 0)}")
sys.exit(1 if failed else 0)
