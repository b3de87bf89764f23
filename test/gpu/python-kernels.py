"""python-kernels.py - the kscope Python package against real kernels.

Checks, each printing PASS or FAIL: torch kernels under a scope; a Triton
kernel with hook="triton" and a launch_metadata function (name, flops32,
bytes, a custom number on its node); include/exclude on kernel names;
context="python" frames above torch and Triton kernels; a CUDA graph
captured before the session and replayed under a scope; profiled_region's
kernel table; detect_backend. Exits 1 when any check fails.

    python3 test/gpu/python-kernels.py WORKDIR
"""
import io
import json
import os
import sys
import traceback

import kscope

WORK = sys.argv[1] if len(sys.argv) > 1 else "."
failures = []


def check(name, fn):
    try:
        fn()
        print(f"PASS {name}")
    except Exception:
        failures.append(name)
        print(f"FAIL {name}")
        traceback.print_exc()


def load(name):
    with open(name + ".hatchet") as f:
        return json.load(f)[0]


def kernels(node, stack=()):
    """(path of frame names, kernel node) for every GPU node."""
    here = stack + (node["frame"]["name"],)
    if "device_type" in node["metrics"]:
        yield here, node
    for c in node["children"]:
        yield from kernels(c, here)


def out(name):
    return os.path.join(WORK, name)


import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def add_meta(grid, metadata, args):
    n = args["n"]
    return {"name": f"add_{n}", "flops32": float(n), "bytes": 12.0 * n, "my_count": 3}


@triton.jit(launch_metadata=add_meta)
def add_kernel(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask),
             mask=mask)


N = 4096
x = torch.ones(N, device="cuda")
y = torch.ones(N, device="cuda")
o = torch.empty(N, device="cuda")


def launch_add():
    add_kernel[(triton.cdiv(N, 1024),)](x, y, o, N, BLOCK=1024)


launch_add()  # compile outside any session
torch.cuda.synchronize()


def torch_under_scope():
    name = out("torch_scope")
    s = kscope.start(name)
    t = torch.zeros(1, device="cuda")
    with kscope.scope("torch_step"):
        for _ in range(100):
            t.add_(1)
    torch.cuda.synchronize()
    kscope.finalize(s)
    found = [(p, k) for p, k in kernels(load(name)) if "torch_step" in p]
    assert found, "no kernel under torch_step"
    total = sum(k["metrics"]["count"] for _, k in found)
    assert total == 100, f"count {total} != 100"
    for _, k in found:
        assert k["metrics"]["device_type"] == "CUDA" and k["metrics"]["time (ns)"] > 0


def triton_hook_metadata():
    name = out("triton_hook")
    s = kscope.start(name, hook="triton")
    with kscope.scope("triton_step"):
        for _ in range(10):
            launch_add()
    torch.cuda.synchronize()
    kscope.finalize(s)
    found = [(p, k) for p, k in kernels(load(name)) if p[-1] == f"add_{N}"]
    assert found, f"no kernel named add_{N}: {[p for p, _ in kernels(load(name))]}"
    path, k = found[0]
    assert "triton_step" in path, path
    m = k["metrics"]
    assert m["count"] == 10, m
    assert m.get("flops32") == 10.0 * N, m
    assert m.get("bytes") == 10 * 12.0 * N, m
    assert m.get("my_count") == 30, m


def triton_hook_exclude():
    name = out("triton_exclude")
    kscope.LaunchHook().configure(exclude="add_.*")
    try:
        s = kscope.start(name, hook="triton")
        launch_add()
        torch.cuda.synchronize()
        kscope.finalize(s)
    finally:
        kscope.LaunchHook().configure()
    names = [p[-1] for p, _ in kernels(load(name))]
    assert names and f"add_{N}" not in names, names
    assert any("add_kernel" in n for n in names), names


def user_function():
    launch_add()
    x.mul_(1.0)


def python_context():
    name = out("python_ctx")
    s = kscope.start(name, context="python")
    user_function()
    torch.cuda.synchronize()
    kscope.finalize(s)
    found = list(kernels(load(name)))
    assert len(found) >= 2, found
    for path, _ in found:
        frames = [p for p in path if "@" in p]
        assert any(f.endswith("@user_function") for f in frames), path
        assert not any(os.sep + "kscope" + os.sep in f for f in frames), path
        assert not any(f.split(":")[0].startswith(os.path.dirname(triton.__file__)) for f in frames), path


def cuda_graph():
    t = torch.zeros(1, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            t.add_(1)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(10):
            t.add_(1)
    torch.cuda.synchronize()
    name = out("graph")
    s = kscope.start(name)  # the graph was built before the session
    with kscope.scope("graph_replay"):
        for _ in range(5):
            g.replay()
    torch.cuda.synchronize()
    kscope.finalize(s)
    found = [(p, k) for p, k in kernels(load(name)) if "graph_replay" in p]
    total = sum(k["metrics"]["count"] for _, k in found)
    assert total == 50, f"{total} kernels under graph_replay, expected 50"


def profiled_region_table():
    text = io.StringIO()
    with kscope.profiled_region(top_n=5, out=text) as nothing:  # as MAX's: yields None
        for _ in range(20):
            launch_add()
        torch.cuda.synchronize()
    s = text.getvalue()
    print(s)
    assert nothing is None
    assert "Top" in s and "GPU kernels" in s, s
    assert "add_kernel" in s, s


def backend():
    b = kscope.detect_backend()
    assert b.gpu and b.gpu_count >= 1 and b.cupti, str(b)


check("torch kernels under a scope", torch_under_scope)
check("hook=triton launch metadata", triton_hook_metadata)
check("hook=triton exclude", triton_hook_exclude)
check("context=python frames", python_context)
check("CUDA graph replayed under a scope", cuda_graph)
check("profiled_region kernel table", profiled_region_table)
check("detect_backend", backend)
print(f"{7 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
