"""The Triton launch hook, driven with stand-ins for Triton's LazyDict and
knobs (no Triton or GPU needed)."""
import os
import sys
import types

import pytest

import kscope
from kscope import _kscope
from kscope.hooks import HookManager, LaunchHook


class FakeLazyDict:
    """Triton's LazyDict: .data is cheap, .get() runs launch_metadata."""

    def __init__(self, name, meta):
        self.data = {"name": name, "function": None, "stream": 0}
        self.meta = meta
        self.evaluated = 0

    def get(self):
        self.evaluated += 1
        return dict(self.data, **self.meta)


class FakeChain:
    def __init__(self):
        self.calls = []

    def add(self, f):
        if f not in self.calls:
            self.calls.append(f)

    def remove(self, f):
        if f in self.calls:
            self.calls.remove(f)

    def __call__(self, *a):
        for f in self.calls:
            f(*a)


def install_triton(monkeypatch, enter_hook, exit_hook):
    """A stand-in `triton` package (for this test) whose knobs.runtime holds
    the two launch hooks given; returns that runtime."""
    runtime = types.SimpleNamespace(launch_enter_hook=enter_hook, launch_exit_hook=exit_hook)
    knobs = types.ModuleType("triton.knobs")
    knobs.runtime = runtime
    triton = types.ModuleType("triton")
    triton.knobs = knobs
    monkeypatch.setitem(sys.modules, "triton", triton)
    monkeypatch.setitem(sys.modules, "triton.knobs", knobs)
    return runtime


@pytest.fixture
def fake_triton(monkeypatch):
    yield install_triton(monkeypatch, FakeChain(), FakeChain())
    HookManager.unregister()
    LaunchHook().configure()
    LaunchHook().python_frames = False


@pytest.fixture
def calls(monkeypatch):
    """The metadata dicts the hook hands to the C side (through the Python
    hook: the C one does not look up launch_metadata_dict). These tests are
    about which launches the hook passes on; that the C side puts a dict on
    its kernel is test_pretend_gpu.py's, through the real path."""
    monkeypatch.setattr(LaunchHook, "fast", False)
    seen = []
    monkeypatch.setattr(_kscope, "launch_metadata_dict",
                        lambda meta: seen.append({k: v for k, v in meta.items()
                                                  if k not in ("function", "stream")}))
    return seen


def test_launch_metadata_dict_checks():
    class Item:
        def item(self):
            raise ArithmeticError("item failed")

    with pytest.raises(TypeError, match="dict"):
        _kscope.launch_metadata_dict([("name", "k")])
    with pytest.raises(ArithmeticError):
        _kscope.launch_metadata_dict({"name": "k", "x": Item()})
    meta = {"name": "k", "function": object(), "stream": 0, "flops16": 10, "bytes": 4.0,
            "tokens": 3, "ignored": "text", "flag": True, 5: 1, "none": None}
    # what reaches a kernel of these is checked on the pretend GPU
    # (test_pretend_gpu.py)
    assert _kscope.launch_metadata_dict(meta) is None


def test_hook_installed_while_a_session_wants_it(fake_triton, tmp_path, calls):
    sid = kscope.start(str(tmp_path / "h"), hook="triton")
    hook = LaunchHook()
    assert hook.enter in fake_triton.launch_enter_hook.calls
    meta = FakeLazyDict("add_kernel", {"flops32": 8.0, "bytes": 16})
    fake_triton.launch_enter_hook(meta)
    fake_triton.launch_exit_hook(meta)
    assert calls == [{"name": "add_kernel", "flops32": 8.0, "bytes": 16}]
    kscope.deactivate(sid)
    assert hook.enter not in fake_triton.launch_enter_hook.calls
    kscope.activate(sid)
    assert hook.enter in fake_triton.launch_enter_hook.calls
    kscope.finalize(sid)
    assert fake_triton.launch_enter_hook.calls == []
    assert fake_triton.launch_exit_hook.calls == []


def test_include_exclude(fake_triton, tmp_path, calls):
    LaunchHook().configure(include="matmul_.*", exclude=".*_slow")
    kscope.start(str(tmp_path / "h"), hook="triton")
    kernels = [FakeLazyDict(n, {}) for n in ("matmul_fast", "matmul_slow", "add")]
    for k in kernels:
        fake_triton.launch_enter_hook(k)
        fake_triton.launch_exit_hook(k)
    assert [c["name"] for c in calls] == ["matmul_fast"]
    assert [k.evaluated for k in kernels] == [1, 0, 0]  # filtered before launch_metadata


def test_old_style_single_hook(monkeypatch, tmp_path, calls):
    runtime = install_triton(monkeypatch, None, None)
    sid = kscope.start(str(tmp_path / "h"), hook="triton")
    runtime.launch_enter_hook(FakeLazyDict("k", {}))
    assert runtime.launch_exit_hook is None  # nothing to do after a launch
    assert calls == [{"name": "k"}]
    LaunchHook().python_frames = True  # now there is: both hooks, chained
    runtime.launch_enter_hook(FakeLazyDict("k2", {}))
    runtime.launch_exit_hook(FakeLazyDict("k2", {}))
    assert calls[-1] == {"name": "k2"} and _kscope.depth() == 0
    kscope.finalize(sid)
    LaunchHook().python_frames = False
    assert runtime.launch_enter_hook is None and runtime.launch_exit_hook is None


def test_hook_errors_surface_at_next_call(fake_triton, tmp_path):
    sid = kscope.start(str(tmp_path / "h"), hook="triton")

    class Broken(FakeLazyDict):
        def get(self):
            raise KeyError("launch_metadata exploded")

    fake_triton.launch_enter_hook(Broken("k", {}))  # must not raise into Triton
    fake_triton.launch_exit_hook(Broken("k", {}))
    with pytest.raises(RuntimeError, match="launch_metadata exploded"):
        kscope.deactivate(sid)
    kscope.check_errors()  # reported once


def test_c_hook_in_the_common_case(fake_triton, tmp_path):
    """No filter, no python context: Triton calls the C hook and no exit
    hook; a filter or the python context swaps in the Python hooks, and
    back again when they go."""
    hook = LaunchHook()
    sid = kscope.start(str(tmp_path / "h"), hook="triton")
    assert fake_triton.launch_enter_hook.calls == [_kscope.triton_enter]
    assert fake_triton.launch_exit_hook.calls == []
    meta = FakeLazyDict("k", {"flops16": 2.0, "bytes": 8})
    assert fake_triton.launch_enter_hook(meta) is None
    assert meta.evaluated == 1
    hook.configure(include="k.*")
    assert fake_triton.launch_enter_hook.calls == [hook.enter]
    assert fake_triton.launch_exit_hook.calls == []
    hook.configure()
    assert fake_triton.launch_enter_hook.calls == [_kscope.triton_enter]
    hook.python_frames = True
    assert fake_triton.launch_enter_hook.calls == [hook.enter]
    assert fake_triton.launch_exit_hook.calls == [hook.exit]
    hook.python_frames = False
    assert fake_triton.launch_enter_hook.calls == [_kscope.triton_enter]
    assert fake_triton.launch_exit_hook.calls == []
    kscope.deactivate(sid)
    assert fake_triton.launch_enter_hook.calls == []
    hook.configure(exclude="x")  # no session wants the hook: nothing installed
    assert fake_triton.launch_enter_hook.calls == []
    kscope.finalize(sid)


def test_c_hook_keeps_the_first_error():
    class Broken(FakeLazyDict):
        def get(self):
            raise KeyError(f"first {self.data['name']}")

    class NotADict(FakeLazyDict):
        def get(self):
            return [("name", "k")]

    assert _kscope.take_hook_error() is None
    assert _kscope.triton_enter(Broken("a", {})) is None
    assert _kscope.triton_enter(NotADict("b", {})) is None
    assert _kscope.triton_enter(Broken("c", {})) is None
    with pytest.raises(RuntimeError, match="first a") as info:
        kscope.check_errors()
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.__cause__.__traceback__ is not None
    kscope.check_errors()  # reported once, the later ones dropped
    assert _kscope.take_hook_error() is None
    _kscope.triton_enter(NotADict("b", {}))
    assert isinstance(_kscope.take_hook_error(), TypeError)


def test_c_hook_lets_interrupts_through():
    class Interrupted(FakeLazyDict):
        def get(self):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _kscope.triton_enter(Interrupted("k", {}))
    assert _kscope.take_hook_error() is None


def test_hook_without_triton(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "triton", None)
    with pytest.raises(RuntimeError, match="triton"):
        kscope.start(str(tmp_path / "h"), hook="triton")
    assert dict(HookManager.session_hooks) == {} and HookManager.active_hooks == []
    assert os.listdir(tmp_path) == []  # no session was started, no file written


def test_python_frames_around_launch(fake_triton, tmp_path, calls):
    sid = kscope.start(str(tmp_path / "p"), context="python")
    meta = FakeLazyDict("k", {})

    def launcher_in_user_code():
        fake_triton.launch_enter_hook(meta)
        depth = _kscope.depth()
        fake_triton.launch_exit_hook(meta)
        return depth

    depth = launcher_in_user_code()
    assert depth > 0 and _kscope.depth() == 0
    root = kscope.data.get(sid)[0]
    names = []
    node = root
    while node["children"]:
        node = node["children"][0]
        names.append(node["frame"]["name"])
    assert names[-1].startswith(__file__ + ":")
    assert names[-1].endswith("@__call__")  # FakeChain stands where Triton's chain would be
    assert names[-2].endswith("@launcher_in_user_code")
    assert any(n.endswith("@test_python_frames_around_launch") for n in names)
    # no frame inside the installed package itself (the checkout's own path
    # may well contain "/kscope/")
    pkg = os.path.dirname(os.path.abspath(kscope.__file__)) + os.sep
    assert not any(os.path.abspath(n.split(":")[0]).startswith(pkg) for n in names)
    kscope.finalize(sid)


def test_launch_metadata_arguments_checked():
    with pytest.raises(TypeError, match="custom"):
        kscope.launch_metadata(name="k", custom=[1])
    with pytest.raises(TypeError, match="not a number"):
        kscope.launch_metadata(name="k", custom={"x": "y"})
    with pytest.raises(TypeError):
        kscope.launch_metadata(flops8="many")
    with pytest.raises(ValueError, match="at most"):
        kscope.launch_metadata(custom={f"m{i}": 1.0 for i in range(65)})


def test_hook_requested_under_the_launcher(fake_triton, tmp_path, calls):
    from kscope.flags import flags

    sid = kscope.start(str(tmp_path / "launcher"))
    flags.command_line, flags.command_line_session = True, sid
    try:
        assert kscope.start("from_script", hook="triton") == sid
        fake_triton.launch_enter_hook(FakeLazyDict("k", {}))
        fake_triton.launch_exit_hook(FakeLazyDict("k", {}))
        assert calls == [{"name": "k"}]
    finally:
        flags.command_line, flags.command_line_session = False, None
    kscope.finalize(sid)
    assert fake_triton.launch_enter_hook.calls == []
