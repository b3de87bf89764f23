#!/usr/bin/env python3
"""run_loop.py N [--torch-profiler] [--step-every K] - N tiny launches
(x.add_(1) on one element) after a warm-up; prints "us_per_launch X" for
the timed loop. Profiled from the outside (none, the CUPTI floor, kscope
run, proton) or, with --torch-profiler, under torch.profiler. With
--step-every K, kscope_step() marks a step every K launches when a
preloaded libkscope offers it (`kscope run --sample step:...`); in the
other modes the same check runs and finds nothing. Used by run_bench.sh."""
import ctypes
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
step_every = int(sys.argv[sys.argv.index("--step-every") + 1]) if "--step-every" in sys.argv else 0
x = torch.zeros(1, device="cuda")
kscope_step = getattr(ctypes.CDLL(None), "kscope_step", None) if step_every else None


def loop(count):
    t0 = time.perf_counter()
    for i in range(count):
        x.add_(1)
        if step_every and (i + 1) % step_every == 0 and kscope_step:
            kscope_step()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


loop(2000)
if "--torch-profiler" in sys.argv:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        loop(500)
        dt = loop(n)
else:
    dt = loop(n)
print(f"us_per_launch {dt * 1e6 / n:.4f}")
