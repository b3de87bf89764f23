"""Sessions with Proton's signatures, the profile decorator, and the three
output formats checked field by field."""
import asyncio
import json
import os
import re

import pytest

import kscope
from kscope import _kscope

from conftest import child, path, read_hatchet, tree


def test_start_returns_id_and_default_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sid = kscope.start()
    assert isinstance(sid, int) and sid >= 0
    with kscope.scope("x"):
        pass
    kscope.finalize(sid)
    assert os.path.exists(tmp_path / (kscope.DEFAULT_PROFILE_NAME + ".hatchet"))


def test_hatchet_json_fields(session):
    sid, name = session
    with kscope.scope("step", {"tokens": 7, "ratio": 0.5, "hist": [1, 2]}):
        with kscope.cpu_timed_scope("inner"):
            kscope.mark("m")
    kscope.finalize(sid, output_format="hatchet")
    doc = read_hatchet(name)
    assert isinstance(doc, list) and len(doc) == 2
    root, devices = doc
    assert root["frame"] == {"name": "ROOT", "type": "function"}
    assert root["metrics"]["tokens"] == 0 and root["metrics"]["ratio"] == 0
    assert isinstance(devices, dict)
    step = child(root, "step")
    assert step["frame"] == {"name": "step", "type": "function"}
    m = step["metrics"]
    assert m["calls"] == 1 and isinstance(m["calls"], int)
    assert m["tokens"] == 7 and m["ratio"] == 0.5 and m["hist"] == [1, 2]
    assert m["wall_time (ns)"] > 0
    inner = child(step, "inner")
    assert inner["metrics"]["cpu_time (ns)"] > 0
    assert inner["metrics"]["wall_time (ns)"] <= m["wall_time (ns)"]
    assert child(inner, "m")["children"] == []


def test_hatchet_msgpack_matches_json(session):
    msgpack = pytest.importorskip("msgpack")
    sid, name = session
    with kscope.scope("a", {"n": 3, "v": [1.5, 2.5]}):
        with kscope.scope("b"):
            pass
    live = kscope.data.get_msgpack(sid)
    as_json = kscope.data.get(sid)
    assert msgpack.unpackb(live, strict_map_key=False) == as_json
    kscope.finalize(sid, "hatchet_msgpack")
    with open(name + ".hatchet_msgpack", "rb") as f:
        doc = msgpack.unpackb(f.read(), strict_map_key=False)
    root = doc[0]
    assert root["frame"]["name"] == "ROOT"
    a = child(root, "a")
    assert a["metrics"]["n"] == 3 and a["metrics"]["v"] == [1.5, 2.5]
    assert child(a, "b")["metrics"]["calls"] == 1


def test_msgpack_bytes_shape(session):
    sid, _ = session
    data = kscope.data.get_msgpack(sid)
    assert isinstance(data, bytes)
    assert data[0] == 0x92  # a two-element array: ROOT and device info
    assert b"ROOT" in data


def test_chrome_trace_fields(tmp_path):
    name = str(tmp_path / "tl")
    sid = kscope.start(name, data="trace")
    with kscope.scope("a", {"n": 2}):
        kscope.mark("tick")
    live = kscope.data.get_trace(sid)
    kscope.finalize(sid)
    with open(name + ".chrome_trace") as f:
        doc = json.load(f)
    assert doc["displayTimeUnit"] == "us"
    events = doc["traceEvents"]
    assert any(e["ph"] == "M" for e in events)
    (a,) = [e for e in events if e["name"] == "a"]
    assert a["ph"] == "X" and a["dur"] >= 0 and a["ts"] >= 0
    assert a["args"]["n"] == 2
    assert a["args"]["call_stack"][-1] == "a"
    (tick,) = [e for e in events if e["name"] == "tick"]
    assert a["ts"] <= tick["ts"] <= a["ts"] + a["dur"]
    assert [e["name"] for e in live["traceEvents"] if e["ph"] != "M"] == [
        e["name"] for e in events if e["ph"] != "M"
    ]


def test_compressed_trace_within_its_buffer(tmp_path):
    """compress=True writes <name>.chrome_trace.gz; trace_buffer bounds the
    memory its events take (a size, or a number of bytes)."""
    import gzip
    name = str(tmp_path / "gz")
    sid = kscope.start(name, data="trace", compress=True, trace_buffer="1M")
    for _ in range(3):
        with kscope.scope("a"):
            pass
    assert _kscope.output_path(sid).endswith("gz.chrome_trace.gz")
    kscope.finalize(sid)
    with gzip.open(name + ".chrome_trace.gz", "rt") as f:
        doc = json.load(f)
    assert sum(1 for e in doc["traceEvents"] if e["name"] == "a" and e["ph"] == "X") == 3
    assert not os.path.exists(name + ".chrome_trace")
    sid = kscope.start(str(tmp_path / "n"), data="trace", trace_buffer=4 << 20)
    kscope.finalize(sid)
    assert os.path.exists(str(tmp_path / "n") + ".chrome_trace")
    with pytest.raises(ValueError, match="lots"):
        kscope.start(str(tmp_path / "bad"), data="trace", trace_buffer="lots")


def test_finalize_format_must_fit_data(tmp_path):
    sid = kscope.start(str(tmp_path / "t"), data="trace")
    with pytest.raises(ValueError, match="records a trace"):
        kscope.finalize(sid, "hatchet")
    kscope.finalize(sid)
    assert os.listdir(tmp_path) == ["t.chrome_trace"]


def test_deactivate_pauses_recording(session):
    sid, _ = session
    with kscope.scope("on1"):
        pass
    kscope.deactivate(sid)
    with kscope.scope("paused"):
        pass
    kscope.activate(sid)
    with kscope.scope("on2"):
        pass
    kscope.deactivate(flushing=True)
    kscope.activate()
    names = [c["frame"]["name"] for c in tree(sid)["children"]]
    assert "on1" in names and "on2" in names and "paused" not in names


def test_two_sessions_at_once(tmp_path):
    a = kscope.start(str(tmp_path / "a"))
    b = kscope.start(str(tmp_path / "b"))
    assert a != b
    with kscope.scope("both"):
        pass
    kscope.deactivate(b)
    with kscope.scope("only_a"):
        pass
    kscope.finalize(b)
    kscope.finalize(a)
    names_a = [c["frame"]["name"] for c in read_hatchet(str(tmp_path / "a"))[0]["children"]]
    names_b = [c["frame"]["name"] for c in read_hatchet(str(tmp_path / "b"))[0]["children"]]
    assert names_a == ["both", "only_a"] or sorted(names_a) == ["both", "only_a"]
    assert names_b == ["both"]


def test_finalize_all(tmp_path):
    kscope.start(str(tmp_path / "x"))
    kscope.start(str(tmp_path / "y"))
    kscope.finalize()
    assert sorted(os.listdir(tmp_path)) == ["x.hatchet", "y.hatchet"]


@pytest.mark.parametrize(
    "kwargs, error, text",
    [
        (dict(context="gpu"), ValueError, "context 'gpu'"),
        (dict(data="table"), ValueError, "data 'table'"),
        (dict(hook="torch"), ValueError, "hook 'torch'"),
        (dict(backend="rocm"), RuntimeError, "backend 'rocm'"),
        (dict(mode="bogus"), ValueError, "mode 'bogus' is not periodic_flushing or pcsampling"),
        (dict(mode="pcsampling:interval=3"), ValueError, "interval '3' is not a number of cycles"),
        (dict(mode="pcsampling", data="trace"), ValueError, "use data=tree"),
        (dict(sample="sometimes"), ValueError, "sample 'sometimes'"),
        (dict(sample="time:on=2s,every=1s"), ValueError, "on is longer than every"),
        (dict(sample="step:on=1,every=2", mode="pcsampling"), ValueError, "cannot be combined"),
        (dict(device_scopes="clock=wall"), ValueError, "clock is globaltimer or clock64"),
        (dict(device_scopes={"sample": 0}), ValueError, "sample is a whole number"),
        (dict(device_scopes={"buffer": "12"}), ValueError, "buffer is a number of records"),
        (dict(device_scopes="full=drop"), ValueError, "full is keep-first or keep-newest"),
        (dict(device_scopes="colour=red"), ValueError, "unknown option"),
        (dict(device_scopes=3), TypeError, "device_scopes must be"),
        (dict(device_scopes=True, sample="step:on=1,every=2"), ValueError,
         "device scopes and the sampled mode"),
    ],
)
def test_start_rejects_bad_options(tmp_path, kwargs, error, text):
    with pytest.raises(error, match=text):
        kscope.start(str(tmp_path / "bad"), **kwargs)


@pytest.mark.parametrize("value", [True, "on", "clock=clock64,granularity=cta",
                                   {"sample": 4, "buffer": "1k", "full": "keep-newest"}])
def test_device_scopes_option(tmp_path, value):
    """device_scopes= takes True, a string or a dict of options; with no
    GPU the session records host scopes and writes ROOT without losses."""
    sid = kscope.start(str(tmp_path / "d"), device_scopes=value)
    kscope.enter_scope("host")
    kscope.exit_scope("host")
    kscope.finalize(sid)
    assert (tmp_path / "d.hatchet").exists()


def test_sampled_session_and_steps(tmp_path, monkeypatch):
    """sample= is a start option (also of @profile); step() marks steps
    and returns None whether or not a session samples by them. GPU work
    and what it yields are tested in C (test-sample, test-gpu-sample)."""
    sid = kscope.start(str(tmp_path / "s"), sample="step:on=1,every=4")
    with kscope.scope("train"):
        for _ in range(3):
            assert kscope.step() is None
    assert "train" in [c["frame"]["name"] for c in tree(sid)["children"]]
    with pytest.raises(ValueError, match="another session samples by 'step:on=1,every=4'"):
        kscope.start(str(tmp_path / "t"), sample="step:on=1,every=5")
    kscope.finalize(sid)
    assert kscope.step() is None
    monkeypatch.setenv("KSCOPE_SAMPLE", "time:on=1ms")
    with pytest.raises(ValueError, match="KSCOPE_SAMPLE=sample 'time:on=1ms'"):
        kscope.start(str(tmp_path / "u"))
    sid = kscope.start(str(tmp_path / "u"), sample="off")  # the option wins over the variable
    kscope.finalize(sid)

    @kscope.profile(name=str(tmp_path / "d"), sample="time:on=10ms,every=1s")
    def work():
        kscope.step()

    work()
    kscope.finalize()


def test_errors_on_unknown_session_and_format(session):
    sid, _ = session
    with pytest.raises(ValueError, match="Session has not been initialized: 1000"):
        kscope.finalize(1000)
    with pytest.raises(ValueError, match="Session has not been initialized: 1000"):
        kscope.activate(1000)
    with pytest.raises(ValueError, match="format 'csv'"):
        kscope.finalize(sid, "csv")
    with pytest.raises(ValueError, match="Session"):
        kscope.data.get(1000)
    assert kscope.data.get(None) is None
    assert kscope.last_error()  # the C message of the last failure


def test_too_many_sessions(tmp_path):
    for i in range(_kscope.MAX_SESSIONS):
        kscope.start(str(tmp_path / f"s{i}"))
    with pytest.raises(RuntimeError, match="sessions"):
        kscope.start(str(tmp_path / "one_more"))


def test_unwritable_output_is_os_error(tmp_path):
    with pytest.raises(OSError, match="missing_dir"):
        kscope.start(str(tmp_path / "missing_dir" / "x"))


def test_profile_decorator_bare_and_with_args(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @kscope.profile
    def bare():
        """Bare."""
        with kscope.scope("in_bare"):
            return 1

    @kscope.profile(name=str(tmp_path / "named"), data="tree")
    def named(x):
        with kscope.scope("in_named"):
            return x

    assert bare.__name__ == "bare" and bare.__doc__ == "Bare."
    assert bare() == 1
    assert named(5) == 5
    kscope.finalize()
    root = read_hatchet(str(tmp_path / "named"))[0]
    child(root, "in_named")
    child(read_hatchet(str(tmp_path / kscope.DEFAULT_PROFILE_NAME))[0], "in_bare")


def test_profile_decorator_async(tmp_path):
    @kscope.profile(name=str(tmp_path / "async"))
    async def run():
        with kscope.scope("in_async"):
            await asyncio.sleep(0)
        return 3

    assert asyncio.run(run()) == 3
    kscope.finalize()
    child(read_hatchet(str(tmp_path / "async"))[0], "in_async")


def test_output_path_and_dropped(session):
    sid, name = session
    assert _kscope.output_path(sid, "hatchet") == name + ".hatchet"
    assert _kscope.output_path(sid, "hatchet_msgpack") == name + ".hatchet_msgpack"
    assert _kscope.dropped(sid) == 0


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_version_agrees_everywhere():
    """The C library's version (kscope.h), the installed distribution's
    (python/kscope_setup.py) and the CMake project's are one version."""
    import importlib.metadata

    with open(os.path.join(REPO, "CMakeLists.txt")) as f:
        cmake = re.search(r"project\(kscope VERSION ([0-9.]+)", f.read()).group(1)
    assert kscope.__version__ == cmake
    assert importlib.metadata.version("kscope") == cmake


def test_errors_table_follows_the_header():
    """Each code of kscope.h's KSCOPE_ERRNO_MAP has its name and message."""
    with open(os.path.join(REPO, "include", "kscope.h")) as f:
        entries = re.findall(r'XX\((E[A-Z]+), "([^"]+)"\)', f.read())
    assert len(entries) > 20
    for i, (name, message) in enumerate(entries):
        assert _kscope.strerror(-999 + i) == ("KSCOPE_" + name, message)


def test_scope_inside_thread(session):
    import threading

    sid, _ = session

    def work():
        with kscope.scope("threaded"):
            pass

    t = threading.Thread(target=work)
    t.start()
    t.join()
    root = tree(sid)
    found = []

    def walk(n):
        if n["frame"]["name"] == "threaded":
            found.append(n)
        for c in n["children"]:
            walk(c)

    walk(root)
    assert found and found[0]["metrics"]["calls"] == 1


def test_pcsampling_mode(tmp_path):
    """Proton's spellings: mode="pcsampling" and mode=PCSampling(interval=N);
    without a GPU the session records what it can and writes its file."""
    assert str(kscope.mode.PCSampling()) == "pcsampling:interval=1024"
    assert str(kscope.mode.PCSampling(interval=2000)) == "pcsampling:interval=2000"
    for bad in (0, -5, 1.5, True):
        with pytest.raises(ValueError, match="Interval must be a positive integer"):
            kscope.mode.PCSampling(interval=bad)
    a = kscope.start(str(tmp_path / "a"), mode="pcsampling", backend="none")
    b = kscope.start(str(tmp_path / "b"), mode=kscope.mode.PCSampling(interval=4096), backend="none")
    c = kscope.start(str(tmp_path / "c"), mode="pc_sampling:interval=1000", backend="none")
    with kscope.scope("s"):
        pass
    assert len({a, b, c}) == 3
    kscope.finalize()
    assert sorted(os.listdir(tmp_path)) == ["a.hatchet", "b.hatchet", "c.hatchet"]
