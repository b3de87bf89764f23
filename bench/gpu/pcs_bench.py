"""pcs_bench.py - PC sampling's cost, kscope next to Proton, on one workload.

Two Triton kernels with the same body (a loop of loads and adds over a
buffer larger than L2), sized so that one takes about 1 ms and the other
about 0.07 ms per launch (calibrated once, bare, in this process). Each
mode runs in a process of its own, the modes alternating REPS times:

  none      no profiler
  kscope    kscope.start(mode="pcsampling"), the default interval
  kscope512 kscope.start(mode="pcsampling:interval=512"): twice the rate
            (any kscopeN: interval N)
  proton    triton.profiler.start(mode="pcsampling"), its default interval

PCS_MODES (env) picks the modes, separated by spaces (default the four
above).

Each process launches `big` BIG times and `small` SMALL times (after a few
warm-up launches), timing each loop between two synchronisations, and
reads its profile for the samples below each kernel. Printed: per kernel
and mode the median time per launch, the slowdown against none, the
added time per launch, and the samples per launch; last, kscope's fixed
cost per launch (the small kernel's added time).

Samples are counted two ways. `num_samples` is each profile's own total.
`once` counts every hardware sample once: kscope collects each stall
reason's all-samples counter only, so it equals its num_samples; Proton
also collects the "_not_issued" counters (a subset of the same samples)
and adds them to num_samples, so a sample taken while its warp was not
issued counts twice there. Proton's num_stalled_samples leaves the
not-issued counters out, so it is Proton's `once`.

    python3 bench/gpu/pcs_bench.py [REPS]  (env: BIG, SMALL launches; PCS_MODES)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import triton
import triton.language as tl

N = 1 << 26  # floats: 256 MB, more than L2
BLOCK = 1024
GRID = (1024, )


@triton.jit
def big(x_ptr, y_ptr, n_iter, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(n_iter):
        acc += tl.load(x_ptr + (offs + i * 1048576) % n)
    tl.store(y_ptr + offs, acc)


@triton.jit
def small(x_ptr, y_ptr, n_iter, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(n_iter):
        acc += tl.load(x_ptr + (offs + i * 1048576) % n)
    tl.store(y_ptr + offs, acc)


def timed(kernel, x, y, n_iter, launches):
    """Seconds per launch over `launches` launches."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(launches):
        kernel[GRID](x, y, n_iter, N, BLOCK=BLOCK)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / launches


def calibrate():
    x = torch.rand(N, device="cuda")
    y = torch.empty(GRID[0] * BLOCK, device="cuda")
    for n in (16, 256):
        timed(big, x, y, n, 3)
    t16, t256 = timed(big, x, y, 16, 20), timed(big, x, y, 256, 20)
    slope = (t256 - t16) / 240
    base = t16 - 16 * slope
    return max(1, round((1.0e-3 - base) / slope)), max(1, round((0.07e-3 - base) / slope))


def samples_below(path, name, metric):
    """`metric` summed over the subtrees of the nodes named `name` of a
    .hatchet, and the dropped samples."""
    root = json.load(open(path))[0]
    total, stack = 0, [(root, False)]
    while stack:
        node, inside = stack.pop()
        inside = inside or node["frame"]["name"] == name
        if inside:
            total += node["metrics"].get(metric, 0)
        stack.extend((c, inside) for c in node.get("children", []))
    return total, root["metrics"].get("dropped_samples", 0)


def child(mode, n_big, n_small, launches_big, launches_small):
    x = torch.rand(N, device="cuda")
    y = torch.empty(GRID[0] * BLOCK, device="cuda")
    out = tempfile.mkdtemp()
    path = os.path.join(out, "bench")
    prof = None
    pc_mode = "pcsampling"
    if mode.startswith("kscope"):
        import kscope as prof
        if mode != "kscope":
            pc_mode = "pcsampling:interval=" + mode[len("kscope"):]
    elif mode == "proton":
        import triton.profiler as prof
    if prof:
        prof.start(path, mode=pc_mode)
    res = {"mode": mode}
    for kernel, n_iter, launches in ((big, n_big, launches_big), (small, n_small, launches_small)):
        timed(kernel, x, y, n_iter, 3)  # warm-up (and the module's load)
        res[kernel.__name__] = timed(kernel, x, y, n_iter, launches)
    if prof:
        prof.finalize()
        for kernel, launches in ((big, launches_big), (small, launches_small)):
            file, name = path + ".hatchet", kernel.__name__
            s, dropped = samples_below(file, name, "num_samples")
            once = s if mode != "proton" else samples_below(file, name, "num_stalled_samples")[0]
            res[name + "_samples"] = s / (launches + 3)
            res[name + "_once"] = once / (launches + 3)
            res["dropped"] = dropped
    print("RESULT " + json.dumps(res), flush=True)


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    launches_big, launches_small = int(os.environ.get("BIG", 40)), int(os.environ.get("SMALL", 200))
    n_big, n_small = calibrate()
    print(f"pcs_bench: big n_iter={n_big}, small n_iter={n_small}; {launches_big} and "
          f"{launches_small} launches per process; {reps} alternations", flush=True)
    modes = os.environ.get("PCS_MODES", "none kscope kscope512 proton").split()
    runs = {m: [] for m in (["none"] + [m for m in modes if m != "none"])}
    for r in range(reps):
        for mode in runs:
            cmd = [sys.executable, __file__, "--child", mode, str(n_big), str(n_small),
                   str(launches_big), str(launches_small)]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
            if p.returncode or not lines:
                print(f"pcs_bench: {mode} failed (exit {p.returncode}): {p.stderr[-2000:]}")
                continue
            res = json.loads(lines[-1][7:])
            runs[mode].append(res)
            print(f"  rep {r} {mode}: " + ", ".join(f"{k} {v:.6g}" for k, v in res.items()
                                                      if k != "mode"), flush=True)

    def med(mode, key):
        vals = [r[key] for r in runs[mode] if key in r]
        return statistics.median(vals) if vals else float("nan")

    print(f"{'kernel':6} {'mode':9} {'ms/launch':>10} {'slowdown':>9} {'added us':>9} "
          f"{'num_samples/launch':>19} {'once/launch':>12}")
    for k in ("big", "small"):
        base = med("none", k)
        for mode in runs:
            t = med(mode, k)
            s = med(mode, k + "_samples") if mode != "none" else float("nan")
            once = med(mode, k + "_once") if mode != "none" else float("nan")
            print(f"{k:6} {mode:9} {t * 1e3:10.3f} {t / base:8.2f}x {(t - base) * 1e6:9.1f} "
                  f"{s:19.0f} {once:12.0f}")
    print(f"kscope fixed cost per launch (small kernel): "
          f"{(med('kscope', 'small') - med('none', 'small')) * 1e6:.1f} us; dropped samples "
          f"{med('kscope', 'dropped'):.0f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], *map(int, sys.argv[3:7]))
    else:
        main()
