"""Python frames as scopes (context="python")."""
import kscope
from kscope import _kscope, context


def inner_frames():
    return _kscope.enter_frames()


def test_enter_frames_names_and_order(session):
    sid, _ = session
    n = inner_frames()
    assert n == _kscope.depth() and n >= 2
    _kscope.exit_frames(n)
    assert _kscope.depth() == 0
    chain = []
    node = kscope.data.get(sid)[0]
    while node["children"]:
        node = node["children"][0]
        chain.append(node["frame"]["name"])
    assert chain[-1] == f"{__file__}:{inner_frames.__code__.co_firstlineno + 1}@inner_frames"
    assert chain[-2].endswith("@test_enter_frames_names_and_order")
    assert all(not n.startswith(context.PACKAGE_DIR) for n in chain)


def test_enter_frames_without_session_records_nothing():
    assert _kscope.enter_frames() == 0


def test_python_context_session_without_triton_or_torch(tmp_path):
    sid = kscope.start(str(tmp_path / "py"), context="python")
    with kscope.scope("still_works"):
        pass
    kscope.finalize(sid)
    assert kscope.LaunchHook().python_frames is False


def test_torch_function_mode_wraps_ops_in_frames(tmp_path, monkeypatch):
    """A stand-in torch whose ops go through the active TorchFunctionMode,
    as torch's do: each op runs under the caller's Python frames."""
    import sys
    import types

    active = []

    class TorchFunctionMode:
        def __enter__(self):
            active.append(self)
            return self

        def __exit__(self, *exc):
            active.remove(self)

    def op(x):
        def impl(v):
            return _kscope.depth(), v + 1

        if active:
            return active[-1].__torch_function__(impl, (), (x,), None)
        return impl(x)

    torch = types.ModuleType("torch")
    overrides = types.ModuleType("torch.overrides")
    overrides.TorchFunctionMode = TorchFunctionMode
    torch.overrides = overrides
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.overrides", overrides)
    monkeypatch.setattr(context, "_torch_mode", None)

    sid = kscope.start(str(tmp_path / "t"), context="python")
    assert len(active) == 1

    def model_forward():
        return op(1)

    depth, value = model_forward()
    assert value == 2 and depth >= 2 and _kscope.depth() == 0
    chain = []
    node = kscope.data.get(sid)[0]
    while node["children"]:
        node = node["children"][0]
        chain.append(node["frame"]["name"])
    assert chain[-1].endswith("@op") and chain[-2].endswith("@model_forward")
    kscope.finalize(sid)
    assert active == []  # the mode is gone with the last python-context session
    assert op(5) == (0, 6)


def test_torch_imported_after_start_gets_the_mode(tmp_path, monkeypatch):
    """`kscope run -c python` starts the session before the program
    imports torch: the mode is pushed right after that import (a stand-in
    torch package on disk), and a session that ends first leaves the
    import alone."""
    import sys

    pkg = tmp_path / "torch"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from . import overrides\nimported = True\n")
    (pkg / "overrides.py").write_text(
        "active = []\n"
        "class TorchFunctionMode:\n"
        "    def __enter__(self):\n"
        "        active.append(self)\n"
        "        return self\n"
        "    def __exit__(self, *exc):\n"
        "        active.remove(self)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("torch", "torch.overrides"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(context, "_torch_mode", None)

    try:
        sid = kscope.start(str(tmp_path / "late"), context="python")
        import torch  # noqa: F401 - the stand-in

        assert torch.imported and len(torch.overrides.active) == 1
        kscope.finalize(sid)
        assert torch.overrides.active == []

        for name in ("torch", "torch.overrides"):
            del sys.modules[name]
        sid = kscope.start(str(tmp_path / "gone"), context="python")
        kscope.finalize(sid)
        import torch  # noqa: F811 - imported again, after the session ended

        assert torch.overrides.active == [] and not any(
            type(f).__name__ == "_AfterTorchImport" for f in sys.meta_path)
    finally:  # later tests must not find the stand-in
        for name in ("torch", "torch.overrides"):
            sys.modules.pop(name, None)


def test_context_depth(session):
    sid, _ = session
    assert kscope.context.depth(sid) == 0
    with kscope.scope("a"):
        assert kscope.context.depth(sid) == 1
    assert kscope.context.depth(sid + 1) is None
    kscope.set_gpu_profiling_state("off")
    assert kscope.context.depth(sid) is None
