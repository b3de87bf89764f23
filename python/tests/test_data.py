"""kscope.data: a live session without writing a file."""
import pytest

import kscope

from conftest import child, files_in


def test_get_keeps_session_running(session, tmp_path):
    sid, _ = session
    with kscope.scope("first"):
        pass
    one = kscope.data.get(sid)
    with kscope.scope("second"):
        pass
    two = kscope.data.get(sid)
    assert [c["frame"]["name"] for c in one[0]["children"]] == ["first"]
    assert [c["frame"]["name"] for c in two[0]["children"]] == ["first", "second"]
    assert files_in(tmp_path) == []  # nothing written yet
    child(two[0], "second")


def test_get_msgpack_holds_the_same_tree(session):
    """The MessagePack form decodes to the tree get() gives."""
    msgpack = pytest.importorskip("msgpack")
    sid, _ = session
    with kscope.scope("outer"):
        with kscope.scope("inner"):
            kscope.add_metrics({"items": 3, "loss": 0.5})
    packed = kscope.data.get_msgpack(sid)
    assert isinstance(packed, bytes)
    unpacked = msgpack.unpackb(packed, raw=False, strict_map_key=False)
    as_json = kscope.data.get(sid)
    # times move on between the two reads: compare the shape and the metrics
    # that do not depend on them
    def shape(node):
        m = {k: v for k, v in node["metrics"].items() if "time" not in k}
        return (node["frame"]["name"], sorted(m.items()),
                [shape(c) for c in node.get("children", [])])
    assert shape(unpacked[0]) == shape(as_json[0])
    inner = child(child(unpacked[0], "outer"), "inner")
    assert inner["metrics"]["items"] == 3 and inner["metrics"]["loss"] == 0.5


def test_get_trace_of_a_trace_session(tmp_path):
    sid = kscope.start(str(tmp_path / "t"), data="trace")
    with kscope.scope("slice"):
        pass
    events = kscope.data.get_trace(sid)["traceEvents"]
    slices = [e for e in events if e.get("name") == "slice"]
    assert slices and all(e["ph"] in ("X", "B", "E") for e in slices)
    kscope.finalize(sid)
    assert files_in(tmp_path) == ["t.chrome_trace"]


def test_without_a_session():
    assert kscope.data.get(None) is None
    assert kscope.data.get_msgpack(None) is None
    assert kscope.data.get_trace(None) is None


def test_get_reads_as_its_json_text_and_equals_msgpack(session):
    """Proton's test_get_data: after deactivate, get() equals the decoded
    get_msgpack() exactly, and it reads like a file of its JSON text, as
    Triton 3.6's viewer.get_raw_metrics (json.load of a file) wants it."""
    import json

    msgpack = pytest.importorskip("msgpack")
    sid, _ = session
    with kscope.scope("test"):
        for _ in range(2):
            with kscope.scope("foo"):
                pass
    kscope.deactivate(sid)
    database = kscope.data.get(sid)
    assert isinstance(database, list) and len(database) == 2
    assert json.load(database) == database
    unpacked = msgpack.loads(kscope.data.get_msgpack(sid), raw=False, strict_map_key=False)
    assert database == unpacked
    assert child(child(database[0], "test"), "foo")["metrics"]["calls"] == 2
