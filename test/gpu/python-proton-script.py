"""python-proton-script.py - a Proton-style script, unchanged but for its
import line (`import kscope as proton`), then a check of what it wrote.

    python3 test/gpu/python-proton-script.py WORKDIR
"""
import json
import os
import sys

import kscope as proton  # was: import triton.profiler as proton
import torch
import triton
import triton.language as tl

WORK = sys.argv[1] if len(sys.argv) > 1 else "."
NAME = os.path.join(WORK, "proton_style")


def metadata_fn(grid, metadata, args):
    return {"name": "scaled_copy", "bytes": 8.0 * args["n"], "flops16": float(args["n"])}


@triton.jit(launch_metadata=metadata_fn)
def scale(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


x = torch.randn(1 << 16, device="cuda")
o = torch.empty_like(x)
a = torch.randn(512, 512, device="cuda")

session = proton.start(NAME, hook="triton")
for step in range(3):
    with proton.scope("step", {"tokens": 128, "step_idx (pty)": step}):
        with proton.cpu_timed_scope("prepare"):
            y = a @ a
        proton.enter_scope("triton_part")
        scale[(triton.cdiv(x.numel(), 1024),)](x, o, x.numel(), BLOCK=1024)
        proton.exit_scope("triton_part")
        with proton.state("loading"):
            a.add_(0.0)
proton.deactivate(session)
z = a @ a  # not recorded
proton.activate(session)
with proton.scope("after"):
    torch.cuda.synchronize()
proton.finalize()

failures = []


def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


with open(NAME + ".hatchet") as f:
    root, devices = json.load(f)
step = [c for c in root["children"] if c["frame"]["name"] == "step"]
check("step scope", len(step) == 1, [c["frame"]["name"] for c in root["children"]])
if step:
    m = step[0]["metrics"]
    check("step metrics", m.get("tokens") == 384 and m.get("step_idx") == 2, m)
    kids = {c["frame"]["name"]: c for c in step[0]["children"]}
    check("cpu_timed_scope", "cpu_time (ns)" in kids.get("prepare", {}).get("metrics", {}), kids.keys())
    tp = kids.get("triton_part", {"children": []})
    sc = [c for c in tp["children"] if c["frame"]["name"] == "scaled_copy"]
    check("launch metadata", sc and sc[0]["metrics"].get("flops16") == 3.0 * (1 << 16)
          and sc[0]["metrics"].get("bytes") == 3 * 8.0 * (1 << 16), sc)
    loading = kids.get("loading")
    check("state above kernels", loading is not None and any(
        "device_type" in c["metrics"] for c in loading["children"]), kids.keys())
check("device info", "CUDA" in devices and devices["CUDA"], devices)
print(f"{6 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
