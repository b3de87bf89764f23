"""Proton's scope API: scope, cpu_timed_scope, enter_scope/exit_scope,
metrics of every accepted type, suffixes, decorators, errors."""
import asyncio
import contextlib
import inspect
import sys
import threading

import pytest

import kscope
from kscope import _kscope

from conftest import child, path, tree


def test_scope_context_manager_nests(session):
    sid, _ = session
    with kscope.scope("outer") as s:
        assert s.name == "outer"
        assert _kscope.depth() == 1
        with kscope.scope("inner"):
            assert _kscope.depth() == 2
    assert _kscope.depth() == 0
    inner = path(tree(sid), "outer", "inner")
    assert inner["metrics"]["calls"] == 1
    assert inner["metrics"]["wall_time (ns)"] > 0


def test_same_scope_twice_merges(session):
    sid, _ = session
    for _ in range(3):
        with kscope.scope("again"):
            pass
    assert child(tree(sid), "again")["metrics"]["calls"] == 3


def test_scope_keyword_arguments(session):
    sid, _ = session
    with kscope.scope(name="kw", metrics={"n": 1}):
        pass
    assert child(tree(sid), "kw")["metrics"]["n"] == 1


class FakeTensor:
    """Stands for a 0-d torch tensor: only .item() is used."""

    def __init__(self, v):
        self.v = v

    def item(self):
        return self.v


def test_metric_types(session):
    sid, _ = session
    metrics = {
        "i": 3,
        "f": 2.5,
        "b": True,
        "iv": [1, 2, 3],
        "fv": [1.5, 2.0],
        "tv": (4, 5),
        "t0": FakeTensor(7),
        "tf": FakeTensor(0.25),
    }
    with kscope.scope("m", metrics):
        pass
    m = child(tree(sid), "m")["metrics"]
    assert m["i"] == 3 and isinstance(m["i"], int)
    assert m["f"] == 2.5
    assert m["b"] == 1
    assert m["iv"] == [1, 2, 3]
    assert m["fv"] == [1.5, 2.0]
    assert m["tv"] == [4, 5]
    assert m["t0"] == 7
    assert m["tf"] == 0.25


def test_metric_suffixes(session):
    sid, _ = session
    for step in (1, 2):
        with kscope.scope("parent"):
            with kscope.scope("leaf", {"tokens": 5, "wait (ns)(exc)": 10, "step (pty)": step}):
                pass
    root = tree(sid)
    leaf = path(root, "parent", "leaf")["metrics"]
    assert leaf["tokens"] == 10  # inclusive: summed
    assert leaf["wait (ns)"] == 20  # exclusive: summed, suffix stripped
    assert leaf["step"] == 2  # property: last value wins
    assert root["metrics"]["tokens"] == 0  # inclusive metrics are announced on ROOT
    assert "wait (ns)" not in root["metrics"]
    assert "step" not in root["metrics"]


def test_cpu_timed_scope(session):
    sid, _ = session
    with kscope.cpu_timed_scope("busy") as s:
        sum(range(1000))
    assert s.flags == _kscope.CPU_TIMED
    m = child(tree(sid), "busy")["metrics"]
    assert m["cpu_time (ns)"] > 0


def test_enter_exit_scope(session):
    sid, _ = session
    a = kscope.enter_scope("a", metrics={"x": 1})
    b = kscope.enter_scope("b")
    assert a > 0 and b > a
    assert kscope.exit_scope("b") == b
    assert kscope.exit_scope() == a
    assert path(tree(sid), "a")["metrics"]["x"] == 1
    path(tree(sid), "a", "b")


def test_enter_scope_without_session_returns_minus_one():
    assert kscope.enter_scope("nothing") == -1
    assert kscope.exit_scope("nothing") == -1


def test_exit_scope_mismatch_names_both_and_keeps_stack(session):
    kscope.enter_scope("first")
    with pytest.raises(ValueError, match="'second'.*'first'"):
        kscope.exit_scope("second")
    assert _kscope.depth() == 1
    kscope.exit_scope("first")


def test_exit_scope_with_nothing_open():
    with pytest.raises(ValueError, match="no scope opened by enter_scope"):
        kscope.exit_scope("x")


def test_with_mismatch_raises_value_error(session):
    s = kscope.scope("a")
    s.__enter__()
    kscope.enter_scope("b")
    with pytest.raises(ValueError, match="'a' does not match the innermost scope 'b'"):
        s.__exit__(None, None, None)
    kscope.exit_scope("b")


def test_metric_type_mismatch_is_type_error(session):
    with kscope.scope("a", {"n": 1}):
        pass
    with pytest.raises(TypeError, match="n"):
        with kscope.scope("b", {"n": 1.5}):
            pass
    assert _kscope.depth() == 0  # the failed scope was not left open


def test_reserved_metric(session):
    with pytest.raises(ValueError, match="reserved"):
        with kscope.scope("a", {"cpu_time (ns)": 1}):
            pass


@pytest.mark.parametrize(
    "metrics, error",
    [
        ({"x": "text"}, TypeError),
        ({"x": [1, "a"]}, TypeError),
        ({"x": None}, TypeError),
        ({1: 2}, TypeError),
        ({"x": float("nan")}, ValueError),
        ({"x": 2**70}, OverflowError),
    ],
)
def test_bad_metric_values(session, metrics, error):
    with pytest.raises(error):
        with kscope.scope("bad", metrics):
            pass
    assert _kscope.depth() == 0


def test_bad_constructor_arguments():
    with pytest.raises(TypeError, match="str"):
        kscope.scope(3)
    with pytest.raises(TypeError, match="dict"):
        kscope.scope("a", [1])
    with pytest.raises(TypeError):
        kscope.scope("a", {}, 3)
    with pytest.raises(TypeError, match="colour"):  # CPython's message names it
        kscope.scope("a", colour=1)
    with pytest.raises(ValueError, match="NUL"):
        kscope.scope("a\0b")
    with pytest.raises(ValueError, match="empty"):
        with kscope.scope(""):
            pass


def test_scope_as_decorator_keeps_metadata(session):
    sid, _ = session

    @kscope.scope("deco", {"calls_made": 1})
    def work(x, y=2):
        """Adds."""
        return x + y

    assert work.__name__ == "work"
    assert work.__doc__ == "Adds."
    assert work.__wrapped__ is not None
    assert work(1, y=3) == 4
    assert work(1) == 3
    m = child(tree(sid), "deco")["metrics"]
    assert m["calls"] == 2
    assert m["calls_made"] == 2


def test_decorated_function_raising_closes_scope(session):
    sid, _ = session

    @kscope.cpu_timed_scope("boom")
    def boom():
        raise KeyError("k")

    with pytest.raises(KeyError):
        boom()
    assert _kscope.depth() == 0
    assert child(tree(sid), "boom")["metrics"]["calls"] == 1


def test_decorated_method_binds(session):
    sid, _ = session

    class C:
        @kscope.scope("method")
        def m(self, v):
            return (self, v)

    c = C()
    assert c.m(5) == (c, 5)
    assert C.m(c, 6) == (c, 6)
    assert C.m.__name__ == "m"
    assert C.m.__dict__["__wrapped__"] is not None
    child(tree(sid), "method")


def test_async_decorator(session):
    sid, _ = session

    @kscope.scope("coro")
    async def coro(n):
        """Sleeps."""
        await asyncio.sleep(0)
        with kscope.scope("inside"):
            await asyncio.sleep(0)
        return n * 2

    assert inspect.iscoroutinefunction(coro)
    assert coro.__name__ == "coro" and coro.__doc__ == "Sleeps."
    assert asyncio.run(coro(4)) == 8
    assert _kscope.depth() == 0
    node = child(tree(sid), "coro")
    assert node["metrics"]["calls"] == 1  # one await, three resumes
    child(node, "inside")


@pytest.mark.parametrize("decorator", [kscope.scope("slow"), kscope.cpu_timed_scope("slow"),
                                       kscope.traced(message="slow")])
def test_async_call_counts_once_with_its_wall_time(session, decorator):
    sid, _ = session
    kscope.set_gpu_profiling_state("on")

    @decorator
    async def slow():
        for _ in range(5):
            await asyncio.sleep(0.001)

    asyncio.run(slow())
    node = child(tree(sid), "slow")
    assert node["metrics"]["calls"] == 1
    assert node["metrics"]["wall_time (ns)"] >= 5_000_000


def test_async_metrics_once_per_call(session):
    sid, _ = session

    @kscope.scope("m", {"tokens": 2})
    async def m():
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(m())
    asyncio.run(m())
    node = child(tree(sid), "m")
    assert node["metrics"]["calls"] == 2 and node["metrics"]["tokens"] == 4


def test_async_interleaved_tasks_never_mismatch(session):
    sid, _ = session

    @kscope.scope("task")
    async def task(i):
        for _ in range(3):
            await asyncio.sleep(0)
        return i

    async def main():
        return await asyncio.gather(*(task(i) for i in range(4)))

    assert asyncio.run(main()) == [0, 1, 2, 3]
    assert _kscope.depth() == 0
    assert child(tree(sid), "task")["metrics"]["calls"] == 4


def test_async_exception_propagates(session):
    @kscope.scope("afail")
    async def afail():
        await asyncio.sleep(0)
        raise RuntimeError("inner")

    with pytest.raises(RuntimeError, match="inner"):
        asyncio.run(afail())
    assert _kscope.depth() == 0


def test_decorating_a_non_callable():
    with pytest.raises(TypeError, match="callable"):
        kscope.scope("x")(3)


def test_exit_stack_and_explicit_calls(session):
    sid, _ = session
    with contextlib.ExitStack() as stack:
        stack.enter_context(kscope.scope("es"))
        assert _kscope.depth() == 1
    assert _kscope.depth() == 0
    s = kscope.scope("manual")
    assert s.__enter__() is s
    assert s.__exit__(None, None, None) is False
    assert type(s).__enter__(s) is s
    assert type(s).__exit__(s, None, None, None) is False
    with pytest.raises(TypeError):
        type(s).__enter__(3)
    with pytest.raises(TypeError):
        s(1, 2)
    assert child(tree(sid), "manual")["metrics"]["calls"] == 2
    assert "scope" in repr(s)


def test_scope_without_session_records_nothing(tmp_path):
    with kscope.scope("before"):
        sid = kscope.start(str(tmp_path / "late"))
        with kscope.scope("during"):
            pass
    names = [c["frame"]["name"] for c in tree(sid)["children"]]
    assert names == ["during"]
    kscope.finalize(sid)


def test_scoped_decorator_default_name(session):
    sid, _ = session

    @kscope.scoped
    def helper():
        return 1

    @kscope.scoped(name="named", cpu_timed=True)
    def other():
        return 2

    assert helper() == 1 and other() == 2
    root = tree(sid)
    child(root, helper.__qualname__)
    assert "cpu_time (ns)" in child(root, "named")["metrics"]


def test_add_metrics_and_mark(session):
    sid, _ = session
    with kscope.scope("s"):
        kscope.add_metrics({"late": 4})
        kscope.mark("tick")
    node = child(tree(sid), "s")
    assert node["metrics"]["late"] == 4
    assert child(node, "tick")["metrics"]["calls"] == 1


def test_scope_entered_while_off_never_exits_after_on(session):
    # Entered while profiling is off, the scope records nothing, so its exit
    # must leave alone the scope below it, even once profiling is back on;
    # twice with the same literal, the second time with an object that was
    # already entered while recording.
    kscope.enter_scope("outer")
    for _ in range(2):
        with kscope.scope("made_off"):
            pass
        kscope.set_gpu_profiling_state("off")
        with kscope.scope("made_off"):
            kscope.set_gpu_profiling_state("on")
            assert _kscope.depth() == 1
        assert _kscope.depth() == 1
    kscope.set_gpu_profiling_state("off")
    s = kscope.scope("made_off")
    kscope.set_gpu_profiling_state("on")
    with s:  # made while off, entered while on: recorded
        assert _kscope.depth() == 2
    assert kscope.exit_scope("outer") > 0
    sid, _ = session
    assert path(tree(sid), "outer", "made_off")["metrics"]["calls"] == 3


def test_scope_entered_while_on_exits_while_off(session):
    for _ in range(2):
        with kscope.scope("on_then_off"):
            kscope.set_gpu_profiling_state("off")
        assert _kscope.depth() == 0
        kscope.set_gpu_profiling_state("on")


def test_reused_scope_objects_start_fresh(session):
    name = "fresh"
    a = kscope.scope(name)
    a.__enter__()
    del a  # dropped while entered: its scope stays open
    assert _kscope.depth() == 1
    b = kscope.scope(name)
    assert b.__exit__(None, None, None) is False  # b entered nothing
    assert _kscope.depth() == 1
    with b:
        assert _kscope.depth() == 2
    assert _kscope.depth() == 1
    c = kscope.scope(name)
    assert c is not b  # b is still held
    del b, c


def test_scope_objects_keep_their_own_fields():
    # Objects are reused (same name) and their memory recycled (others):
    # nothing of one use may show in the next.
    names = [f"n{i}" for i in range(300)]
    for rnd in range(3):
        for i, n in enumerate(names):
            if i % 3 == 0:
                s = kscope.scope(n, {"k": i}) if rnd == 1 else kscope.scope(n)
                assert (s.name, s.flags, s.color) == (n, 0, 0)
                assert s.metrics == ({"k": i} if rnd == 1 else None)
            elif i % 3 == 1:
                s = kscope.cpu_timed_scope(n)
                assert (s.name, s.flags, s.metrics) == (n, _kscope.CPU_TIMED, None)
            else:
                s = kscope.Trace(n, color=0x123456) if rnd == 1 else kscope.Trace(n)
                assert s.message == n and s.flags == 0
                assert s.color == (0x123456 if rnd == 1 else kscope.Trace("x").color)
            del s
    same = "same"
    for _ in range(2):
        assert kscope.cpu_timed_scope(same).flags == _kscope.CPU_TIMED
        assert kscope.scope(same).flags == 0
        assert kscope.Trace(same, color="red").color != kscope.Trace(same).color


def test_reused_scope_across_sessions(tmp_path):
    for i in range(2):
        sid = kscope.start(str(tmp_path / f"s{i}"))
        for _ in range(2):
            with kscope.scope("across"):
                with kscope.cpu_timed_scope("inner_ct"):
                    pass
        node = path(tree(sid), "across", "inner_ct")
        assert node["metrics"]["calls"] == 2
        kscope.finalize(sid)
    with kscope.scope("across"):  # no session: nothing, no error
        assert _kscope.depth() == 0


def test_threads_share_names_not_scope_objects(session):
    # Threads entering the same literal concurrently: each pass must get an
    # object that no other thread is using, or an exit would be lost.
    sid, _ = session
    depths = []

    def work():
        for _ in range(3000):
            with kscope.scope("thr"):
                with kscope.cpu_timed_scope("thr_in"):
                    pass
        depths.append(_kscope.depth())

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert depths == [0, 0, 0, 0]
    assert path(tree(sid), "thr", "thr_in")["metrics"]["calls"] == 4 * 3000
