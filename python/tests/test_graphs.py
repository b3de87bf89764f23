"""CUDA graph capture from Python, on a pretend GPU (no GPU needed).

test/progs/fake-cupti.c built whole stands in for CUPTI and the CUDA
driver (loaded as libcuda.so.1 before kscope starts, so the CUPTI backend
finds it); the tests drive it as torch.cuda.graph would: a stream begins a
capture, kernels are launched into it, the graph is instantiated and
launched. FakeCudaTensor stands in for a CUDA tensor: reading it (.item())
while a capture is open fails the test, as it ends a real capture.

Each case runs in its own process: the backend, once started on the
pretend GPU, stays on it.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CUDA_INCLUDE = os.environ.get("CUDA_HOME", "/usr/local/cuda") + "/include"


@pytest.fixture(scope="module")
def fake_gpu(tmp_path_factory):
    """The pretend GPU as a library named libcuda.so.1."""
    if not shutil.which("cc") or not os.path.exists(os.path.join(CUDA_INCLUDE, "cupti.h")):
        pytest.skip("needs cc and the CUDA headers (CUPTI) to build the stand-in driver")
    folder = tmp_path_factory.mktemp("fake")
    lib = folder / "libcuda.so.1"
    subprocess.run(["cc", "-shared", "-fPIC", "-DFAKE_CUPTI_FULL", "-I" + CUDA_INCLUDE, "-o",
                    str(lib), "-Wl,-soname,libcuda.so.1",
                    os.path.join(REPO, "test", "progs", "fake-cupti.c"), "-lpthread"],
                   check=True)
    # the extension must have the CUPTI backend
    probe = "import kscope; kscope.start(%r, backend='cupti'); kscope.finalize()" % str(folder / "p")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    if "built without" in r.stderr:
        pytest.skip("this kscope was built without the CUPTI backend")
    return str(lib)


PRELUDE = textwrap.dedent("""
    import ctypes, json, sys
    gpu = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
    gpu.fake_stream.restype = ctypes.c_void_p
    for f in ("fake_end_capture", "fake_instantiate"):
        getattr(gpu, f).restype = ctypes.c_void_p
        getattr(gpu, f).argtypes = [ctypes.c_void_p]
    for f in ("fake_begin_capture", "fake_exec_destroy", "fake_graph_destroy"):
        getattr(gpu, f).argtypes = [ctypes.c_void_p]
    gpu.fake_launch.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    gpu.fake_graph_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    gpu.fake_count.argtypes = [ctypes.c_char_p]
    import kscope
    from kscope import _kscope, _graphs
    stream = gpu.fake_stream(0)
    capturing = [False]

    class FakeCudaTensor:
        copies = []  # every clone: what a launch writes its values to

        def __init__(self, values, is_float=True):
            kind = ctypes.c_double if is_float else ctypes.c_int64
            self.buf = (kind * len(values))(*values)
            self.is_float = is_float
            self.is_cuda = True

        def is_floating_point(self):
            return self.is_float

        def detach(self):
            return self

        def double(self):
            return self

        def long(self):
            return self

        def reshape(self, *shape):
            return self

        def clone(self):
            gpu.fake_launch(stream, b"kscope_copy")  # the copy, inside the capture
            c = FakeCudaTensor(list(self.buf), self.is_float)
            FakeCudaTensor.copies.append(c)
            return c

        def numel(self):
            return len(self.buf)

        def data_ptr(self):
            return ctypes.addressof(self.buf)

        def get_device(self):
            return 0

        def item(self):
            assert not capturing[0], "a tensor was read during a capture"
            return self.buf[0]

        def tolist(self):
            assert not capturing[0], "a tensor was read during a capture"
            return list(self.buf)

    def begin():
        gpu.fake_begin_capture(stream)
        capturing[0] = True

    def end():
        capturing[0] = False
        return gpu.fake_end_capture(stream)

    def child(node, name):
        for c in node["children"]:
            if c["frame"]["name"] == name:
                return c
        raise AssertionError(f"no {name!r} under {node['frame']['name']!r}: "
                             f"{[c['frame']['name'] for c in node['children']]}")

    def names(node):
        out = {node["frame"]["name"]}
        for c in node["children"]:
            out |= names(c)
        return out

    def nothing_done_in_capture():
        for what in (b"sync_in_capture", b"flush_in_capture", b"alloc_in_capture"):
            assert gpu.fake_count(what) == 0, what
""")


def run(fake_gpu, tmp_path, body):
    script = tmp_path / "case.py"
    script.write_text(PRELUDE + textwrap.dedent(body))
    env = dict(os.environ, KSCOPE_CUPTI_LIBRARY=fake_gpu, KSCOPE_GPU_DEVICE_GLOB=fake_gpu)
    r = subprocess.run([sys.executable, str(script), fake_gpu, str(tmp_path / "out")],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_deactivate_scopes_and_tensor_metrics_in_a_capture(fake_gpu, tmp_path):
    """Proton's test_cudagraph_deactivate and test_tensor_metrics_cudagraph:
    deactivate/activate, scopes with host and tensor metrics, launch
    metadata with a tensor, all inside the capture; one launch under
    test0, two under test1."""
    run(fake_gpu, tmp_path, """
        s = kscope.start(sys.argv[2], hook=None)
        x = FakeCudaTensor([1.0])
        vec = FakeCudaTensor([0, 1, 2, 3], is_float=False)

        def fn(i):
            with kscope.scope("scope_a", metrics={"bytes": 16}):
                gpu.fake_launch(stream, b"ones")
            kscope.deactivate(s)
            with kscope.scope("scope_b", metrics={"sum": 4}):
                gpu.fake_launch(stream, b"ones_b")
            kscope.activate(s)
            with kscope.scope("scope_t", metrics={"total": x, "vec": vec}):
                gpu.fake_launch(stream, b"mul")
            _kscope.launch_metadata_dict({"name": "foo_test", "bytes": 16, "flops": x})
            gpu.fake_launch(stream, b"foo")
            kscope.launch_metadata(name="bar_test", flops32=x, custom={"c": x, "n": 2})
            gpu.fake_launch(stream, b"bar")

        fn(-1)  # warm-up, outside the capture: values read at once
        begin()
        for i in range(10):
            with kscope.scope(f"iter_{i}"):
                fn(i)
        g = end()
        nothing_done_in_capture()
        e = gpu.fake_instantiate(g)
        # what each launch writes to the copies: 4.0 and 10 * j, then 1.0 and j
        for c in FakeCudaTensor.copies:
            for j in range(len(c.buf)):
                c.buf[j] = 4.0 if c.is_float else 10 * j
        with kscope.scope("test0"):
            gpu.fake_graph_launch(e, stream)
        data = kscope.data.get(s)[0]
        for c in FakeCudaTensor.copies:
            for j in range(len(c.buf)):
                c.buf[j] = 1.0 if c.is_float else j
        with kscope.scope("test1"):
            gpu.fake_graph_launch(e, stream)
            gpu.fake_graph_launch(e, stream)
        # the copies live as long as the graph (and its launches' values)
        assert len(_graphs.held) == 50
        gpu.fake_exec_destroy(e)
        gpu.fake_graph_destroy(g)
        _kscope.graph_release()
        assert len(_graphs.held) == 50
        kscope.finalize()
        assert len(_graphs.held) == 0
        nothing_done_in_capture()
        root = json.load(open(sys.argv[2] + ".hatchet"))[0]

        # the warm-up, read at once
        assert child(root, "scope_t")["metrics"]["total"] == 1.0
        assert child(root, "scope_t")["metrics"]["vec"] == [0, 1, 2, 3]
        assert child(root, "foo_test")["metrics"]["flops"] == 1.0
        # one launch: ten iterations of the capture
        at = child(child(root, "test0"), "<captured_at>")
        assert len(child(root, "test0")["children"]) == 1
        for i in range(10):
            it = child(at, f"iter_{i}")
            assert [c["frame"]["name"] for c in it["children"]].count("scope_b") == 0
            assert child(it, "scope_a")["metrics"]["bytes"] == 16
            assert child(child(it, "scope_a"), "ones")["metrics"]["count"] == 1
            assert child(it, "scope_t")["metrics"]["total"] == 4.0
            assert child(it, "scope_t")["metrics"]["vec"] == [0, 10, 20, 30]
            foo = child(it, "foo_test")
            assert foo["metrics"]["count"] == 1
            assert foo["metrics"]["bytes"] == 16
            assert foo["metrics"]["flops"] == 4.0
            bar = child(it, "bar_test")["metrics"]
            assert (bar["count"], bar["flops32"], bar["c"], bar["n"]) == (1, 4.0, 4.0, 2.0), bar
        # two launches, other values
        at1 = child(child(root, "test1"), "<captured_at>")
        it = child(at1, "iter_3")
        assert child(it, "scope_t")["metrics"]["total"] == 2.0
        assert child(it, "scope_t")["metrics"]["vec"] == [0, 2, 4, 6]
        assert child(it, "foo_test")["metrics"]["flops"] == 2.0
        assert child(it, "foo_test")["metrics"]["count"] == 2
        # kscope's own copies are never shown; the data read mid-way agrees
        assert "kscope_copy" not in names(root) and "Memcpy DtoH" not in names(root)
        assert child(child(child(data, "test0"), "<captured_at>"), "iter_0")
    """)


def test_triton_hook_tensor_metric_in_a_capture_lands_on_its_kernel(fake_gpu, tmp_path):
    """Proton's test_multiple_sessions_cudagraph_metric_kernels and
    test_periodic_flushing_cudagraph: the Triton hook evaluates
    launch_metadata inside the "__proton_launch_metadata" state, but a
    tensor value captured there belongs to the kernel it describes, under
    the scopes of the launch (both the C hook and the Python hook)."""
    run(fake_gpu, tmp_path, """
        from kscope.hooks import LaunchHook
        s = kscope.start(sys.argv[2], hook=None)
        x = FakeCudaTensor([1.0])

        class Lazy:  # Triton's LazyDict
            def __init__(self, name):
                self.data = {"name": name}
            def get(self):
                return {"name": self.data["name"], "bytes": 16, "flops": x}

        hook = LaunchHook()
        begin()
        with kscope.scope("c_hook"):
            _kscope.triton_enter(Lazy("foo_c"))
            gpu.fake_launch(stream, b"foo_c")
        hook.configure(include="foo")  # a filter: the Python hook
        with kscope.scope("py_hook"):
            hook.enter(Lazy("foo_py"))
            gpu.fake_launch(stream, b"foo_py")
        hook.configure()
        g = end()
        e = gpu.fake_instantiate(g)
        for c in FakeCudaTensor.copies:
            c.buf[0] = 3.0
        with kscope.scope("replay"):
            gpu.fake_graph_launch(e, stream)
        kscope.finalize()
        root = json.load(open(sys.argv[2] + ".hatchet"))[0]
        at = child(child(root, "replay"), "<captured_at>")
        for scope, kernel in (("c_hook", "foo_c"), ("py_hook", "foo_py")):
            m = child(child(at, scope), kernel)["metrics"]
            assert (m["count"], m["bytes"], m["flops"]) == (1, 16, 3.0), m
        assert "__proton_launch_metadata" not in names(at), names(at)
    """)


def test_stopping_forgets_the_values(fake_gpu, tmp_path):
    """Once the last session ends kscope no longer sees graphs destroyed: the
    copies are let go, and later launches add no values."""
    run(fake_gpu, tmp_path, """
        kscope.start(sys.argv[2] + "1")
        begin()
        with kscope.scope("s", metrics={"t": FakeCudaTensor([2.0])}):
            gpu.fake_launch(stream, b"k")
        g = end()
        e = gpu.fake_instantiate(g)
        assert len(_graphs.held) == 1
        kscope.finalize()
        assert len(_graphs.held) == 0
        kscope.start(sys.argv[2] + "2")
        with kscope.scope("again"):
            gpu.fake_graph_launch(e, stream)
        kscope.finalize()
        # the session began after the capture: the work goes to the launch
        root = json.load(open(sys.argv[2] + "2.hatchet"))[0]
        assert child(child(root, "again"), "k")["metrics"]["count"] == 1
        assert names(root) == {"ROOT", "again", "k"}
    """)


def test_graph_built_before_start_warns_once(fake_gpu, tmp_path):
    """Proton's test_cudagraph_not_captured_by_profiler."""
    r = run(fake_gpu, tmp_path, """
        begin()
        gpu.fake_launch(stream, b"ones")
        gpu.fake_launch(stream, b"add")
        g = end()
        e = gpu.fake_instantiate(g)
        kscope.start(sys.argv[2])
        with kscope.scope("replay0"):
            gpu.fake_graph_launch(e, stream)
        with kscope.scope("replay1"):
            gpu.fake_graph_launch(e, stream)
        kscope.finalize()
        root = json.load(open(sys.argv[2] + ".hatchet"))[0]
        for r in ("replay0", "replay1"):
            assert sorted(c["frame"]["name"] for c in child(root, r)["children"]) == ["add", "ones"]
    """)
    assert r.stderr.count("Cannot find graph for graphExecId:") == 1, r.stderr
    assert "start profiling before the graph is created" in r.stderr


def test_tensor_metric_in_a_capture_kscope_cannot_follow(fake_gpu, tmp_path):
    """A capture that torch reports but kscope's backend does not follow (no
    GPU backend here): the tensor is left out, never read."""
    r = run(fake_gpu, tmp_path, """
        import types
        torch = types.ModuleType("torch")
        torch.cuda = types.SimpleNamespace(is_current_stream_capturing=lambda: capturing[0])
        sys.modules["torch"] = torch
        s = kscope.start(sys.argv[2], backend="none")
        capturing[0] = True
        with kscope.scope("s", metrics={"t": FakeCudaTensor([2.0]), "n": 3}):
            pass
        capturing[0] = False
        with kscope.scope("after", metrics={"t": FakeCudaTensor([2.0])}):
            pass
        kscope.finalize()
        root = json.load(open(sys.argv[2] + ".hatchet"))[0]
        assert "t" not in child(root, "s")["metrics"]
        assert child(root, "s")["metrics"]["n"] == 3
        assert child(root, "after")["metrics"]["t"] == 2.0
    """)
    assert r.stderr.count("left out") == 1, r.stderr
