#!/usr/bin/env python3
"""graphs-torch.py OUTDIR - kscope in torch.cuda.graph captures (run by graphs.sh).

Proton's cudagraph scenarios with kscope's Python package: deactivate and
activate, scopes with host and tensor metrics, Triton launch metadata with
a tensor, all inside the captured region; replays under launch scopes; a
graph built before profiling. Prints PASS/FAIL lines; the exit status is
the number of failures (a broken capture raises and counts as one).
"""
import json
import os
import sys

import torch
import triton
import triton.language as tl

import gpu_checks
import kscope as proton
from gpu_checks import check, child, names

OUT = sys.argv[1]


def metrics(node):
    return (node or {}).get("metrics", {})


def meta_fn(grid, metadata, args):
    x = args["x"]
    return {"name": "foo_test", "bytes": x.numel() * x.element_size(), "flops": x.sum()}


@triton.jit(launch_metadata=meta_fn)
def foo(x, y, z):
    tl.store(z, tl.load(y) + tl.load(x))


def captured_region():
    stream = torch.cuda.Stream()
    torch.cuda.set_stream(stream)
    name = os.path.join(OUT, "torch")
    session = proton.start(name, context="shadow", hook="triton")

    def fn():
        with proton.scope("scope_a", metrics={"bytes": 16}):
            a = torch.ones((2, 2), device="cuda")
        proton.deactivate(session)
        with proton.scope("scope_b", metrics={"sum": 4}):
            b = torch.ones((2, 2), device="cuda")
        proton.activate(session)
        a_sum = a.sum()
        vec = torch.arange(4, device="cuda")
        with proton.scope("scope_t", metrics={"total": a_sum, "vec": vec}):
            c = a + b
        foo[(1, )](a, b, c)

    fn()  # warm-up
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            for i in range(10):
                with proton.scope(f"iter_{i}"):
                    fn()
        check("capture: not broken", True)
    except Exception as exc:  # cudaErrorStreamCaptureInvalidated
        check("capture: not broken", False, repr(exc))
        proton.finalize()
        return
    with proton.scope("test0"):
        g.replay()
    with proton.scope("test1"):
        g.replay()
        g.replay()
    proton.finalize()
    root = json.load(open(name + ".hatchet"))[0]
    check("warm-up: tensor metric read at once", metrics(child(root, "scope_t")).get("total") == 4.0,
          metrics(child(root, "scope_t")))
    for launch, n in (("test0", 1), ("test1", 2)):
        node = child(root, launch)
        kids = [c["frame"]["name"] for c in (node or {}).get("children", [])]
        check(f"{launch}: <captured_at> first", kids[:1] == ["<captured_at>"], kids)
        at = child(node, "<captured_at>")
        ok = True
        for i in range(10):
            it = child(at, f"iter_{i}")
            m_a, m_t = metrics(child(it, "scope_a")), metrics(child(it, "scope_t"))
            foo_m = metrics(child(it, "foo_test"))
            row = (m_a.get("bytes") == 16 * n and child(it, "scope_b") is None and
                   m_t.get("total") == 4.0 * n and m_t.get("vec") == [0, n, 2 * n, 3 * n] and
                   foo_m.get("count") == n and foo_m.get("bytes") == 16 * n and
                   foo_m.get("flops") == 4.0 * n)
            if not row:
                print(f"      {launch}/iter_{i}: scope_a {m_a}, scope_b {child(it, 'scope_b')}, "
                      f"scope_t {m_t}, foo_test {foo_m}")
            ok = ok and row
        check(f"{launch}: every iteration as captured, x{n}", ok)
        everything = names(node)
        check(f"{launch}: kscope's copies never shown",
              not any("copy" in x.lower() or "Memcpy" in x for x in everything),
              sorted(x for x in everything if "copy" in x.lower() or "Memcpy" in x))


def built_before():
    stream = torch.cuda.Stream()
    torch.cuda.set_stream(stream)

    def fn():
        a = torch.ones((2, 2), device="cuda")
        b = torch.ones((2, 2), device="cuda")
        c = a + b
        foo[(1, )](a, b, c)

    fn()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    name = os.path.join(OUT, "before")
    proton.start(name, context="shadow")
    for r in ("replay0", "replay1"):
        with proton.scope(r):
            g.replay()
    proton.finalize()
    root = json.load(open(name + ".hatchet"))[0]
    for r in ("replay0", "replay1"):
        kids = [c["frame"]["name"] for c in (child(root, r) or {}).get("children", [])]
        check(f"before: {r} holds the 3 kernels", len(kids) == 3, kids)


if __name__ == "__main__":
    which = sys.argv[2] if len(sys.argv) > 2 else "captured"
    (built_before if which == "before" else captured_region)()
    sys.exit(gpu_checks.failures)
