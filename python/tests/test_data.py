"""kscope.data: a live session without writing a file."""
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


def test_get_msgpack_is_bytes(session):
    sid, _ = session
    assert isinstance(kscope.data.get_msgpack(sid), bytes)
    assert kscope.data.get_msgpack(None) is None
    assert kscope.data.get_trace(None) is None
