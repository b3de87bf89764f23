"""The package's CUPTI backend on the pretend GPU (test/progs/fake-gpu-*.c,
built by the C build into <build>/fake-gpu): launch metadata from Triton's
hook (the C hook and the Python one) and from kscope.launch_metadata goes
the whole real way, through the extension's kscope_launch_metadata and the
backend, onto the kernel it was given for. Each case runs in a child
Python whose loader finds the stand-in libcuda.so.1. Skipped (with the
reason) where the C build has no pretend GPU (no CUDA headers) or is not
known (KSCOPE_CLI unset)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import child, path


def fake_gpu_dir():
    cli = os.environ.get("KSCOPE_CLI")
    if not cli:
        pytest.skip("KSCOPE_CLI is not set: the C build (and its pretend GPU) is not known")
    d = os.path.join(os.path.dirname(os.path.abspath(cli)), "fake-gpu")
    if not os.path.exists(os.path.join(d, "libcupti.so")):
        pytest.skip(f"no pretend GPU in {d} (the C build had no CUDA headers)")
    return d


PRELUDE = """
import ctypes, sys, types
import kscope
from kscope.hooks import HookManager, LaunchHook

cuda = ctypes.CDLL("libcuda.so.1")
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cuda.cuInit(0) == 0 and cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cuda.cuCtxSetCurrent(ctx) == 0

def launch(name, us):
    f = ctypes.c_void_p()
    assert cuda.cuModuleGetFunction(ctypes.byref(f), None, name.encode()) == 0
    assert cuda.cuLaunchKernel(f, us, 1, 1, 1, 1, 1, 0, None, None, None) == 0

class Chain(list):
    def add(self, f):
        self.append(f)
    def remove(self, f):
        list.remove(self, f)
    def __call__(self, *a):
        for f in self:
            f(*a)

class LazyDict:
    def __init__(self, meta):
        self.data = {"name": meta["name"], "function": None, "stream": 0}
        self.meta = meta
    def get(self):
        return dict(self.data, **self.meta)

runtime = types.SimpleNamespace(launch_enter_hook=Chain(), launch_exit_hook=Chain())
knobs = types.ModuleType("triton.knobs")
knobs.runtime = runtime
triton = types.ModuleType("triton")
triton.knobs = knobs
sys.modules["triton"], sys.modules["triton.knobs"] = triton, knobs
"""


def run(tmp_path, body):
    d = fake_gpu_dir()
    env = dict(os.environ, LD_LIBRARY_PATH=d, KSCOPE_CUPTI_LIBRARY=os.path.join(d, "libcupti.so"),
               KSCOPE_GPU_DEVICE_GLOB=os.path.join(d, "libcuda.so.1"))
    code = PRELUDE + textwrap.dedent(body)
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p")], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with open(str(tmp_path / "p") + ".hatchet") as f:
        return json.load(f)


META = {"name": "add_kernel", "flops16": 10, "bytes": 4.0, "tokens": 3, "ignored": "text",
        "none": None}


def check_metadata(doc):
    k = path(doc[0], "step", "add_kernel")
    m = k["metrics"]
    assert m["count"] == 1 and m["time (ns)"] == 2000
    assert m["flops16"] == 10 and m["bytes"] == 4.0 and m["tokens"] == 3
    assert "ignored" not in m and "none" not in m
    # the next launch has no metadata: its own name
    assert path(doc[0], "step", "raw_name")["metrics"]["count"] == 1
    assert doc[1]["CUDA"]["0"]["num_sms"] == 132


@pytest.mark.parametrize("hook", ["c", "python"])
def test_triton_hook_metadata_reaches_the_kernel(tmp_path, hook):
    doc = run(tmp_path, f"""
        if {hook!r} == "python":
            LaunchHook().configure(include=".*")  # a filter: the Python hook
        sid = kscope.start(sys.argv[1], hook="triton")
        want = LaunchHook().enter if {hook!r} == "python" else kscope._kscope.triton_enter
        assert runtime.launch_enter_hook == [want], runtime.launch_enter_hook
        meta = LazyDict({META!r})
        with kscope.scope("step"):
            runtime.launch_enter_hook(meta)
            launch("raw_name", 2)
            runtime.launch_exit_hook(meta)
            launch("raw_name", 1)
        kscope.check_errors()
        kscope.finalize(sid)
    """)
    check_metadata(doc)


def test_launch_metadata_reaches_the_kernel(tmp_path):
    doc = run(tmp_path, """
        sid = kscope.start(sys.argv[1])
        with kscope.scope("step"):
            kscope.launch_metadata(name="add_kernel", flops16=10, bytes=4.0, custom={"tokens": 3})
            launch("raw_name", 2)
            launch("raw_name", 1)
        kscope.finalize(sid)
    """)
    check_metadata(doc)
    k = path(doc[0], "step", "add_kernel")
    assert child(doc[0], "step")["metrics"]["calls"] == 1 and k["children"] == []
