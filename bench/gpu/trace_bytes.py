#!/usr/bin/env python3
"""trace_bytes.py [N] - bytes per kernel of a trace: kscope's against
torch.profiler's, for the same torch loop (N `x.add_(1)` on one element,
default 20000, the loop of torch_bench.py).

Each tracer runs in a process of its own (one CUPTI subscriber per
process): kscope through libkscope (ctypes; KSCOPE_LIB names it, as for
torch_bench.py), a trace session with the loop in one scope, written plain
and gzip-compressed (--compress's format); torch.profiler (CPU and CUDA
activities) exporting its Chrome trace, gzip-compressed afterwards at the
same level as kscope's (3) for a like-for-like figure. Prints a table:
tracer, kernels in the trace, bytes, bytes per kernel, and the peak
resident memory of the process (which holds the whole trace in
torch.profiler's case until it is exported).
"""
import ctypes
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile

N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 20000


class Opts(ctypes.Structure):
    """kscope_session_opts, field for field (include/kscope.h)."""
    _fields_ = [(f, ctypes.c_char_p) for f in ("name", "context", "data", "backend", "mode", "sample",
                                               "device_scopes", "trace_buffer")] + [
        ("compress", ctypes.c_int)]


def torch_loop(x, n):
    for _ in range(n):
        x.add_(1)


def run_kscope(workdir, compress):
    import torch
    x = torch.zeros(1, device="cuda")
    torch_loop(x, 2000)
    torch.cuda.synchronize()
    lib = ctypes.CDLL(os.environ["KSCOPE_LIB"])
    lib.kscope_last_error.restype = ctypes.c_char_p
    name = os.path.join(workdir, "kscope_trace").encode()
    opts = Opts(name=name, data=b"trace", compress=1 if compress else 0)
    sid = lib.kscope_start(ctypes.byref(opts))
    if sid < 0:
        sys.exit("kscope_start: " + lib.kscope_last_error().decode())
    lib.kscope_enter(b"loop")
    torch_loop(x, N)
    torch.cuda.synchronize()
    lib.kscope_exit(b"loop")
    path = ctypes.create_string_buffer(4096)
    lib.kscope_output_path(sid, None, path, len(path))
    if lib.kscope_finalize(sid, None) < 0:
        sys.exit("kscope_finalize: " + lib.kscope_last_error().decode())
    return path.value.decode()


def run_torch(workdir):
    import torch
    from torch.profiler import ProfilerActivity, profile
    x = torch.zeros(1, device="cuda")
    torch_loop(x, 2000)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch_loop(x, N)
        torch.cuda.synchronize()
    path = os.path.join(workdir, "torch_trace.json")
    prof.export_chrome_trace(path)
    return path


def kernels(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "kernel")


def child(mode):
    workdir = tempfile.mkdtemp(prefix="kscope-trace-bytes-")
    path = run_torch(workdir) if mode == "torch" else run_kscope(workdir, mode == "kscope_gz")
    rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rows = [(mode, path)]
    if mode == "torch":  # the same trace, compressed as kscope compresses
        gz = path + ".gz"
        with open(path, "rb") as src, gzip.open(gz, "wb", compresslevel=3) as dst:
            dst.write(src.read())
        rows.append(("torch_gz", gz))
    for name, p in rows:
        size = os.path.getsize(p)
        k = kernels(p)
        print(json.dumps({"tracer": name, "kernels": k, "bytes": size,
                          "per_kernel": size / k if k else 0, "rss_kb": rss_kb}))


def main():
    print(f"trace_bytes: {N} x.add_(1), one kernel each")
    print(f"{'tracer':<12} {'kernels':>8} {'bytes':>12} {'bytes/kernel':>13} {'peak RSS MB':>12}")
    for mode in ("kscope", "kscope_gz", "torch"):
        out = subprocess.run([sys.executable, __file__, str(N), "--child", mode],
                             capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{mode:<12} failed: {out.stderr.strip()[-300:]}")
            continue
        for line in out.stdout.splitlines():
            r = json.loads(line)
            print(f"{r['tracer']:<12} {r['kernels']:>8} {r['bytes']:>12} {r['per_kernel']:>13.1f} "
                  f"{r['rss_kb'] / 1024:>12.1f}")
    print("(bytes/kernel: the whole file over its kernels: host slices, launch calls and "
          "flows included; torch_gz: torch.profiler's file gzip-compressed at level 3)")


if __name__ == "__main__":
    if "--child" in sys.argv:
        child(sys.argv[sys.argv.index("--child") + 1])
    else:
        main()
