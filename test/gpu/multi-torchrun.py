"""multi-torchrun.py OUTDIR - the per-rank workload of multi-torchrun.sh,
started by torchrun (2 ranks) under `kscope run`.

Each rank binds to GPU LOCAL_RANK, then, inside NVTX ranges that `kscope
run` turns into scopes:
  "warmup": one matmul + all_reduce (cuBLAS handle and NCCL communicator
            are created here, so no set-up lands in a step)
  "step":   STEPS times (env MULTI_STEPS, default 5) a 1024x1024 fp16
            matmul and an NCCL all_reduce of its result
It checks the all_reduce's result (the sum over ranks) and writes
OUTDIR/facts.rank<R>.json: rank, device, steps, world size.
"""
import json
import os
import sys

import torch
import torch.distributed as dist

OUT = sys.argv[1]
STEPS = int(os.environ.get("MULTI_STEPS", "5"))
rank = int(os.environ["RANK"])
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl")
world = dist.get_world_size()
nvtx = torch.cuda.nvtx

# Every rank holds the same a and b; rank r scales b by r + 1, so the sum
# over ranks of a @ b_r is (1 + 2 + ... + world) * (a @ b).
g = torch.Generator(device="cuda").manual_seed(1234)
a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16, generator=g) / 32
b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16, generator=g) / 32
mine = b * (rank + 1)

nvtx.range_push("warmup")
c = a @ mine
dist.all_reduce(c)
torch.cuda.synchronize()
nvtx.range_pop()

for _ in range(STEPS):
    nvtx.range_push("step")
    c = a @ mine
    dist.all_reduce(c)
    nvtx.range_pop()
torch.cuda.synchronize()

want = (a.float() @ b.float()) * (world * (world + 1) / 2)
err = (c.float() - want).abs().max().item()
if err > 0.05:
    print(f"rank {rank}: all_reduce result off by {err}", file=sys.stderr)
    sys.exit(1)

with open(os.path.join(OUT, f"facts.rank{rank}.json"), "w") as f:
    json.dump({"rank": rank, "device": torch.cuda.current_device(), "steps": STEPS,
               "world": world}, f)
# No barrier: under NCCL it is one more all_reduce, outside any range.
dist.destroy_process_group()
print(f"rank {rank}: {STEPS} steps on cuda:{local}, max error {err:.4f}")
