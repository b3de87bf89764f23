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
