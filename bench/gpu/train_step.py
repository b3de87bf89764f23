#!/usr/bin/env python3
"""train_step.py [STEPS] [--proton|--torch-profiler] - a real training step:
a small GPT (6 layers, 768 wide, 12 heads, random weights), batch 8 x 512
tokens, AdamW, bf16 autocast, after 5 warm-up steps. Prints "ms_per_step
X" (median of the timed steps) and "ms_steps a,b,..." Each step ends with
kscope_step() when a preloaded libkscope offers it, so `kscope run
--sample step:on=1,every=10` captures one step in ten. Run from outside
(bare, kscope run, proton) by run_bench.sh."""
import ctypes
import math
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 30
VOCAB, CTX, WIDTH, HEADS, LAYERS, BATCH = 50304, 512, 768, 12, 6, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(WIDTH), nn.LayerNorm(WIDTH)
        self.qkv, self.proj = nn.Linear(WIDTH, 3 * WIDTH), nn.Linear(WIDTH, WIDTH)
        self.up, self.down = nn.Linear(WIDTH, 4 * WIDTH), nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(WIDTH, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, WIDTH), nn.Embedding(CTX, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln, self.head = nn.LayerNorm(WIDTH), nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


torch.manual_seed(0)
model = GPT().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
idx = torch.randint(0, VOCAB, (BATCH, CTX), device="cuda")
kscope_step = getattr(ctypes.CDLL(None), "kscope_step", None)


def step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(idx, idx)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def run(steps):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = step()
        if kscope_step:  # a switch of GPU capture counts in the step's time
            kscope_step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    assert math.isfinite(loss.item())
    return times


run(5)
if "--torch-profiler" in sys.argv:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        times = run(STEPS)
elif "--proton" in sys.argv:
    import triton.profiler as proton

    proton.start("train_step")
    times = run(STEPS)
    proton.finalize()
else:
    times = run(STEPS)
print(f"ms_per_step {statistics.median(times) * 1e3:.4f}")
print("ms_steps " + ",".join(f"{t * 1e3:.3f}" for t in times))
