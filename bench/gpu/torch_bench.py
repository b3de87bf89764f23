#!/usr/bin/env python3
"""torch_bench.py MODE [N] [LOOPS] - per-launch cost of N `x.add_(1)` on one element.

MODE: none | kscope (libkscope through ctypes, a tree session, the loop in
one scope) | kscope_trace | proton (triton.profiler) | torch_profiler.
One mode per process (one CUPTI subscriber per process); tools/gpu-run.sh
alternates them. The loop runs LOOPS times (default 5) in the process, so
a disturbed loop does not decide the figure. Prints: mode, N, microseconds
per launch (median of the loops), and the fastest loop's.
"""
import ctypes
import os
import sys
import tempfile
import time

import torch

mode = sys.argv[1] if len(sys.argv) > 1 else "none"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
loops = int(sys.argv[3]) if len(sys.argv) > 3 else 5
workdir = tempfile.mkdtemp(prefix="kscope-torch-bench-")
os.chdir(workdir)

x = torch.zeros(1, device="cuda")
for _ in range(2000):
    x.add_(1)
torch.cuda.synchronize()


class Opts(ctypes.Structure):
    """kscope_session_opts, field for field (include/kscope.h)."""
    _fields_ = [(f, ctypes.c_char_p) for f in ("name", "context", "data", "backend", "mode", "sample",
                                               "device_scopes", "trace_buffer")] + [
        ("compress", ctypes.c_int)]


def loop():
    """Seconds of each of `loops` timed loops, sorted."""
    times = []
    for _ in range(loops):
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return sorted(times)


if mode in ("kscope", "kscope_trace"):
    lib = ctypes.CDLL(os.environ["KSCOPE_LIB"])
    lib.kscope_last_error.restype = ctypes.c_char_p
    data = b"trace" if mode.startswith("kscope_trace") else b"tree"
    opts = Opts(name=b"torch_bench", data=data)
    sid = lib.kscope_start(ctypes.byref(opts))
    if sid < 0:
        sys.exit("kscope_start: " + lib.kscope_last_error().decode())
    for _ in range(500):
        x.add_(1)
    torch.cuda.synchronize()
    lib.kscope_enter(b"loop")
    dt = loop()
    lib.kscope_exit(b"loop")
    if lib.kscope_finalize(sid, None) < 0:
        sys.exit("kscope_finalize: " + lib.kscope_last_error().decode())
elif mode == "proton":
    import triton.profiler as proton
    proton.start("torch_bench")
    for _ in range(500):
        x.add_(1)
    torch.cuda.synchronize()
    dt = loop()
    proton.finalize()
elif mode == "torch_profiler":
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
        for _ in range(500):
            x.add_(1)
        torch.cuda.synchronize()
        dt = loop()
elif mode == "none":
    dt = loop()
else:
    sys.exit(f"unknown mode {mode}")
median = dt[len(dt) // 2]
print(f"{mode} {n} {median * 1e6 / n:.4f} {dt[0] * 1e6 / n:.4f}")
