#!/usr/bin/env python3
"""run_loop.py N [--torch-profiler] - N tiny launches (x.add_(1) on one
element) after a warm-up; prints "us_per_launch X" for the timed loop.
Profiled from the outside (none, the CUPTI floor, kscope run, proton) or,
with --torch-profiler, under torch.profiler. Used by run_bench.sh."""
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
x = torch.zeros(1, device="cuda")


def loop(count):
    t0 = time.perf_counter()
    for _ in range(count):
        x.add_(1)
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
