"""Proton's hooks package: HookManager's bookkeeping, the LaunchHook
singleton, the launch_metadata state, launch ids, Triton's own
HookManager, knobs.proton.disable (stand-ins for Triton: no GPU needed)."""
import os
import sys
import threading
import types

import pytest

import kscope
from kscope import _kscope
from kscope.hooks import COMPUTE_METADATA_SCOPE_NAME, Hook, HookManager, LaunchHook
from kscope.hooks import launch as launch_mod

from conftest import child, path, tree
from test_hooks import FakeLazyDict, fake_triton  # noqa: F401 - the fixture


def test_launch_hook_is_a_singleton_with_proton_priority():
    assert LaunchHook() is LaunchHook()
    assert isinstance(LaunchHook(), Hook) and LaunchHook.priority == 100
    assert COMPUTE_METADATA_SCOPE_NAME == "__proton_launch_metadata"
    LaunchHook().configure(include="a.*")
    try:
        assert LaunchHook()._include_pattern == "a.*"  # construction keeps the filter
    finally:
        LaunchHook().configure()


def test_hook_manager_bookkeeping_is_protons(fake_triton, tmp_path):
    sid = kscope.start(str(tmp_path / "h"), hook="triton")
    kscope.activate(sid)
    kscope.activate(sid)
    assert HookManager.active_hooks == [LaunchHook()]
    assert HookManager.session_hooks[sid] == {LaunchHook(): True}
    kscope.deactivate(sid)
    assert HookManager.session_hooks[sid] == {LaunchHook(): False}
    assert HookManager.active_hooks == []
    kscope.deactivate(sid)  # twice is fine
    kscope.finalize(None)
    assert dict(HookManager.session_hooks) == {} and HookManager.active_hooks == []


def test_other_hooks_go_through_the_dispatcher(fake_triton, tmp_path):
    seen = []

    class Recorder(Hook):
        def enter(self, metadata):
            seen.append(("enter", metadata.data["name"]))

        def exit(self, metadata):
            seen.append(("exit", metadata.data["name"]))

    rec = Recorder()
    HookManager.register(rec, 7)
    assert fake_triton.launch_enter_hook.calls == [HookManager.enter]
    fake_triton.launch_enter_hook(FakeLazyDict("k", {}))
    fake_triton.launch_exit_hook(FakeLazyDict("k", {}))
    assert seen == [("enter", "k"), ("exit", "k")]
    HookManager.unregister(7)
    assert fake_triton.launch_enter_hook.calls == []


def test_tritons_hook_manager_dispatches_when_its_profiler_is_loaded(fake_triton, tmp_path,
                                                                      monkeypatch):
    log = []

    class TritonHookManager:
        @staticmethod
        def register(hook, session):
            log.append(("register", type(hook).__name__, session))

        @staticmethod
        def activate(session=None):
            log.append(("activate", session))

        @staticmethod
        def deactivate(session=None):
            log.append(("deactivate", session))

        @staticmethod
        def unregister(session=None):
            log.append(("unregister", session))

    mod = types.ModuleType("triton.profiler.hooks.hook")
    mod.HookManager = TritonHookManager
    monkeypatch.setitem(sys.modules, "triton.profiler.hooks.hook", mod)
    sid = kscope.start(str(tmp_path / "h"), hook="triton")
    assert fake_triton.launch_enter_hook.calls == []  # Triton's manager installs its own
    kscope.deactivate(sid)
    kscope.activate(sid)
    kscope.finalize(sid)
    assert log == [("register", "LaunchHook", sid), ("deactivate", sid), ("activate", sid),
                   ("unregister", sid)]


def test_launch_metadata_runs_inside_its_state(session):
    sid, _ = session

    class Evaluates(FakeLazyDict):
        def get(self):
            kscope.mark("work_in_metadata")  # stands for a kernel launched by .item()
            return super().get()

    with kscope.scope("s"):
        _kscope.triton_enter(Evaluates("k", {"flops16": 1.0}))  # the C hook
        hook = LaunchHook()
        hook.fast = False
        try:
            hook.enter(Evaluates("k2", {}))  # the Python hook
        finally:
            hook.fast = True
    state = path(tree(sid), "s", COMPUTE_METADATA_SCOPE_NAME)
    assert child(state, "work_in_metadata")["metrics"]["calls"] == 2
    kscope.check_errors()


def test_launch_ids_count_up_per_launch_and_thread(session):
    ids = []
    _kscope.triton_enter(FakeLazyDict("k", {}))
    first = launch_mod.id.get()
    _kscope.triton_enter(FakeLazyDict("k", {}))
    assert launch_mod.id.get() == first + 1

    def worker():
        seen = [launch_mod.id.get("none yet")]
        for _ in range(50):
            _kscope.triton_enter(FakeLazyDict("k", {}))
            seen.append(launch_mod.id.get())
        ids.append(seen)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert ids[0][0] == ids[1][0] == "none yet"
    assert len(set(ids[0][1:]) | set(ids[1][1:])) == 100


def test_start_adopts_a_launch_hook_objects_filter(fake_triton, tmp_path):
    class LaunchHookOfTriton:  # Triton's LaunchHook after configure(include=...)
        _include_pattern = "foo.*"
        _exclude_pattern = None

    LaunchHookOfTriton.__name__ = "LaunchHook"
    sid = kscope.start(str(tmp_path / "h"), hook=LaunchHookOfTriton())
    try:
        assert LaunchHook()._include_pattern == "foo.*"
        assert fake_triton.launch_enter_hook.calls == [LaunchHook().enter]
    finally:
        kscope.finalize(sid)
        LaunchHook().configure()
    with pytest.raises(ValueError, match="not None, 'triton' or a LaunchHook"):
        kscope.start(str(tmp_path / "x"), hook=object())
    with pytest.raises(ValueError, match="hook 'tritn'"):
        kscope.start(str(tmp_path / "x"), hook="tritn")


@pytest.mark.parametrize("disable", [True, False])
def test_knobs_proton_disable(fake_triton, tmp_path, monkeypatch, disable):
    triton = sys.modules["triton"]
    monkeypatch.setattr(triton.knobs, "proton", types.SimpleNamespace(disable=disable),
                        raising=False)
    sid = kscope.start(str(tmp_path / "p"))
    kscope.enter_scope("test0")
    kscope.exit_scope()
    kscope.finalize()
    assert (sid is None) == disable
    assert os.path.exists(tmp_path / "p.hatchet") != disable


def test_proton_disable_variable_without_triton(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)
    monkeypatch.setenv("TRITON_PROTON_DISABLE", "1")
    assert kscope.start(str(tmp_path / "p")) is None
    assert os.listdir(tmp_path) == []


def test_metadata_state(session):
    sid, _ = session
    with kscope.scope("s"):
        with kscope.metadata_state():
            kscope.mark("metric_work")  # stands for x.sum() on the GPU
        kscope.mark("own_work")

    @kscope.metadata_state()
    def compute():
        kscope.mark("decorated")

    compute()
    s = child(tree(sid), "s")
    child(child(s, COMPUTE_METADATA_SCOPE_NAME), "metric_work")
    child(s, "own_work")
    child(child(tree(sid), COMPUTE_METADATA_SCOPE_NAME), "decorated")


class TensorMetric:
    """A 0-d GPU tensor as launch_metadata returns it (Proton's
    test_tensor_metrics_hook): reading its value (.item()) copies it to the
    host, GPU work that belongs to the metadata state, not to the scope."""

    def __init__(self, value):
        self.value = value

    def item(self):
        kscope.mark("copy_to_host")  # stands for the device-to-host copy
        return self.value


def test_tensor_metric_values_are_read_inside_the_state(session):
    sid, _ = session
    with kscope.scope("s"):
        _kscope.triton_enter(FakeLazyDict("k", {"flops": TensorMetric(8.0)}))  # the C hook
        hook = LaunchHook()
        hook.fast = False
        try:
            hook.enter(FakeLazyDict("k2", {"flops": TensorMetric(2.0)}))  # the Python hook
        finally:
            hook.fast = True
    kscope.check_errors()
    s = path(tree(sid), "s")
    assert child(child(s, COMPUTE_METADATA_SCOPE_NAME), "copy_to_host")["metrics"]["calls"] == 2
    assert [c["frame"]["name"] for c in s["children"]] == [COMPUTE_METADATA_SCOPE_NAME]


def test_tritons_launch_id_is_set_when_its_launch_module_is_loaded(fake_triton, tmp_path,
                                                                   monkeypatch):
    """Proton's test_hook_multiple_threads reads Triton's own
    `triton.profiler.hooks.launch.id` (a ContextVar) after each launch: with
    that module loaded, kscope's hook sets it to kscope's launch id, in the
    launching thread's context."""
    import contextvars

    mod = types.ModuleType("triton.profiler.hooks.launch")
    mod.id = contextvars.ContextVar("id", default=None)
    monkeypatch.setitem(sys.modules, "triton.profiler.hooks.launch", mod)
    sid = kscope.start(str(tmp_path / "h"), hook="triton")
    seen = []

    def worker(name):
        for _ in range(20):
            fake_triton.launch_enter_hook(FakeLazyDict(name, {}))
            seen.append(mod.id.get())
            assert mod.id.get() == launch_mod.id.get()

    threads = [threading.Thread(target=worker, args=(n,)) for n in ("foo", "bar")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    kscope.finalize(sid)
    assert None not in seen and len(set(seen)) == 40
    assert mod.id.get() is None  # this thread launched nothing
