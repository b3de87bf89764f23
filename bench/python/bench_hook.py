"""bench_hook.py - what hook="triton" adds to one Triton launch.

Launches a small Triton kernel N times in a loop (no synchronisation
inside the loop), alternating over several rounds: no session; no session
with a bare Python enter hook that only evaluates the kernel's
launch_metadata (what any such hook costs in Triton: the part kscope
cannot remove); a kscope session without the hook; a kscope session with
hook="triton" (the kernel has a launch_metadata function); Proton with
hook="triton" when Triton's profiler is present. Prints µs per launch and
the hook's added cost.
Needs torch, Triton and a GPU; prints "skipped" otherwise.

  python bench/python/bench_hook.py [--launches N] [--rounds R]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    try:
        import torch
        import triton
        import triton.language as tl

        if not torch.cuda.is_available():
            raise RuntimeError("no GPU")
    except Exception as e:
        print(f"bench_hook: skipped ({type(e).__name__}: {e})")
        return 0
    import kscope

    def meta(grid, metadata, a):
        return {"name": "bench_add", "bytes": 8.0 * a["n"]}

    @triton.jit(launch_metadata=meta)
    def add1(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)

    x = torch.zeros(256, device="cuda")
    add1[(1,)](x, 256, BLOCK=256)
    torch.cuda.synchronize()
    tmp = tempfile.mkdtemp(prefix="kscope-hook-")

    def loop():
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(args.launches):
            add1[(1,)](x, 256, BLOCK=256)
        torch.cuda.synchronize()
        return (time.perf_counter_ns() - t0) / args.launches / 1000.0

    def none():
        return loop()

    def bare_hook():
        from triton import knobs

        def read_metadata(lazy_dict):
            lazy_dict.get()

        chain = knobs.runtime.launch_enter_hook
        chain.add(read_metadata)
        try:
            return loop()
        finally:
            chain.remove(read_metadata)

    def ks(hook):
        def run():
            s = kscope.start(os.path.join(tmp, "ks"), hook=hook)
            try:
                return loop()
            finally:
                kscope.finalize(s)
        return run

    cases = [("no session", none), ("bare metadata hook", bare_hook),
             ("kscope, no hook", ks(None)), ("kscope, hook=triton", ks("triton"))]
    try:
        import triton.profiler as proton

        def pr():
            s = proton.start(os.path.join(tmp, "proton"), hook="triton")
            try:
                return loop()
            finally:
                proton.finalize(s)

        cases.append(("proton, hook=triton", pr))
    except Exception as e:
        print(f"proton: skipped ({type(e).__name__}: {e})")
    res = {n: [] for n, _ in cases}
    # Proton last: one CUPTI subscriber per process (see bench_scope.py).
    for group in ([c for c in cases if not c[0].startswith("proton")],
                  [c for c in cases if c[0].startswith("proton")]):
        for _ in range(args.rounds):
            for n, f in group:
                if n not in res:
                    continue
                try:
                    res[n].append(f())
                except Exception as e:
                    print(f"{n}: skipped ({type(e).__name__}: {e})")
                    del res[n]
    med = {n: statistics.median(v) for n, v in res.items() if v}
    print(f"{'candidate':28} {'us/launch':>10}")
    for n, _ in cases:
        if n in med:
            print(f"{n:28} {med[n]:10.2f}")
    added = med["kscope, hook=triton"] - med["kscope, no hook"]
    print(f"hook=triton adds {added:.2f} us per launch (target <= 1 us)")
    if "bare metadata hook" in med:
        bare = med["bare metadata hook"] - med["no session"]
        print(f"a bare hook evaluating launch_metadata adds {bare:.2f} us; kscope's own part "
              f"{added - bare:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
