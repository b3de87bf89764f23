"""MAX's max.profiler API: Trace, traced, Tracer and the profiling switch."""
import asyncio
import gc
import os
import subprocess
import sys

import pytest

import kscope
from kscope import _kscope

from conftest import build_stand_in, child, path, tree


def test_trace_with_mark_and_color(session):
    sid, _ = session
    with kscope.Trace("span", "red") as t:
        t.mark()
    assert t.color == 0xFF0000 and t.message == "span"
    assert kscope.Trace("x").color == 0xB5BAF5  # modular_purple by default
    assert kscope.Trace("x", color="no-such-colour").color == 0xB5BAF5
    assert kscope.Trace("x", 0x123456).color == 0x123456
    path(tree(sid), "span", "span")


def test_trace_bad_color():
    with pytest.raises(ValueError, match="0xRRGGBB"):
        kscope.Trace("x", 0x1000000)


def test_named_colors():
    assert kscope.color("blue") == 0x0000FF
    assert kscope.color("green") == 0x008000
    assert kscope.color("modular_purple") == 0xB5BAF5


def test_traced_bare_and_with_arguments(session):
    sid, _ = session

    @kscope.traced
    def plain(a):
        """Plain doc."""
        return a + 1

    @kscope.traced(message="custom", color="green")
    def custom():
        return "c"

    assert plain(1) == 2 and custom() == "c"
    assert plain.__name__ == "plain" and plain.__doc__ == "Plain doc."
    assert custom.__name__ == "custom"
    root = tree(sid)
    child(root, "plain")
    child(root, "custom")


def test_traced_async(session):
    sid, _ = session

    @kscope.traced
    async def co(x):
        """Async doc."""
        await asyncio.sleep(0)
        return x

    @kscope.traced(message="named_async")
    async def co2():
        return 5

    assert co.__name__ == "co" and co.__doc__ == "Async doc."
    assert asyncio.run(co(3)) == 3
    assert asyncio.run(co2()) == 5
    root = tree(sid)
    child(root, "co")
    child(root, "named_async")


def test_tracer_push_pop_next(session):
    sid, _ = session
    tr = kscope.Tracer("parent")
    tr.push("child")
    tr.mark()
    tr.next("sibling", color="blue")
    assert tr.depth == 2 and _kscope.depth() == 2
    tr.pop()
    tr.cleanup()
    assert tr.depth == 0 and _kscope.depth() == 0
    parent = child(tree(sid), "parent")
    path(parent, "child", "child")  # the mark inside "child"
    child(parent, "sibling")


def test_tracer_context_manager_cleans_up(session):
    sid, _ = session
    with kscope.Tracer("outer") as tr:
        tr.push("a")
        tr.push("b")
        assert _kscope.depth() == 3
    assert _kscope.depth() == 0
    path(tree(sid), "outer", "a", "b")


def test_tracer_cleanup_when_collected(session):
    tr = kscope.Tracer("dropped")
    tr.push("inner")
    assert _kscope.depth() == 2
    del tr
    gc.collect()
    assert _kscope.depth() == 0


def test_tracer_placeholders_keep_balance(session):
    sid, _ = session
    tr = kscope.Tracer()  # no message: a placeholder
    assert tr.depth == 1 and _kscope.depth() == 0
    kscope.set_gpu_profiling_state("off")
    tr.push("off_span")  # profiling off: placeholder
    kscope.set_gpu_profiling_state("on")
    tr.push("on_span")
    assert tr.depth == 3 and _kscope.depth() == 1
    tr.mark()
    tr.pop()
    tr.mark()  # on a placeholder: nothing, no error
    tr.pop()
    tr.pop()
    assert _kscope.depth() == 0
    names = [c["frame"]["name"] for c in tree(sid)["children"]]
    assert names == ["on_span"]


def test_tracer_empty_stack_errors():
    tr = kscope.Tracer()
    tr.pop()
    with pytest.raises(AssertionError, match="stack underflow"):
        tr.mark()
    with pytest.raises(IndexError, match="empty"):
        tr.pop()
    with pytest.raises(IndexError):
        tr.next("x")


def test_tracer_depth_limit(session):
    tr = kscope.Tracer()
    for _ in range(_kscope.TRACER_MAX - 1):
        tr.push()
    with pytest.raises(RecursionError, match="spans"):
        tr.push("one too many")
    tr.cleanup()


def test_profiling_switch(session):
    sid, _ = session
    assert kscope.is_profiling_enabled()
    kscope.set_gpu_profiling_state("off")
    assert not kscope.is_profiling_enabled()
    assert kscope.profiling_level() == "off"
    with kscope.scope("invisible"):
        pass
    kscope.set_gpu_profiling_state("detailed")
    assert kscope.profiling_level() == "detailed"
    with kscope.scope("detailed_scope"):
        pass
    kscope.set_gpu_profiling_state(True)
    assert kscope.profiling_level() == "on"
    kscope.set_gpu_profiling_state(0)
    assert kscope.profiling_level() == "off"

    class Mode:  # like MAX's enum
        name = "ON"
        value = "on"

    kscope.set_gpu_profiling_state(Mode())
    assert kscope.profiling_level() == "on"
    names = [c["frame"]["name"] for c in tree(sid)["children"]]
    assert names == ["detailed_scope"]


@pytest.mark.parametrize("bad", ["loud", 3, -1])
def test_profiling_switch_rejects(bad):
    with pytest.raises(ValueError):
        kscope.set_gpu_profiling_state(bad)


@pytest.mark.parametrize(
    "env, expected",
    [({"KSCOPE_PROFILING": "off"}, "off"), ({"MODULAR_ENABLE_PROFILING": "detailed"}, "detailed"),
     ({}, "on")],
)
def test_profiling_from_environment(env, expected):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("KSCOPE_PROFILING", "MODULAR_ENABLE_PROFILING")}
    out = subprocess.run(
        [sys.executable, "-c", "import kscope; print(kscope.profiling_level())"],
        env={**clean, **env}, capture_output=True, text=True, check=True,
    )
    assert out.stdout.strip() == expected


def test_tracer_collected_inside_another_scope_leaves_it_open(session):
    tr = kscope.Tracer("span")
    outer = kscope.scope("opened_later")
    outer.__enter__()
    del tr
    gc.collect()
    assert _kscope.depth() == 2  # "opened_later" is innermost: nothing was closed
    outer.__exit__(None, None, None)
    _kscope.exit("span")


def test_tracer_collected_on_another_thread_closes_nothing(session):
    import threading

    tr = kscope.Tracer("mine")
    box = [tr]
    del tr
    t = threading.Thread(target=lambda: (box.clear(), gc.collect()))
    t.start()
    t.join()
    assert _kscope.depth() == 1
    _kscope.exit("mine")


def test_detailed_spans_reach_roctx(tmp_path):
    """set_gpu_profiling_state("detailed"): MAX's spans and marks also go to
    roctx (rocprof, Omnitrace), here a stand-in libroctx64 (test/fake-roctx.c)
    that logs the calls per thread; "on" sends nothing."""
    lib = build_stand_in(tmp_path, "roctx")
    code = f"""
import ctypes, json, kscope
sid = kscope.start({str(tmp_path / "prof")!r}, backend="none")
kscope.set_gpu_profiling_state("on")
with kscope.Trace("quiet"):
    pass
kscope.set_gpu_profiling_state("detailed")
with kscope.Trace("request") as t:
    with kscope.Trace("decode"):
        t.mark()
fake = ctypes.CDLL({lib!r})
fake.fake_roctx_log.restype = ctypes.c_char_p
print(json.dumps([fake.fake_roctx_log().decode(), fake.fake_roctx_depth(), fake.fake_roctx_bad()]))
kscope.finalize(sid)
"""
    env = dict(os.environ, KSCOPE_ROCTX_LIBRARY=lib)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    import json
    log, depth, bad = json.loads(r.stdout.strip().splitlines()[-1])
    assert log == "push:request push:decode mark:request pop pop", log
    assert depth == 0 and bad == 0
