"""States (Proton): context manager, decorator, enter/exit functions."""
import pytest

import kscope

from conftest import child, path, tree


def test_state_is_the_frame_above_marks(session):
    sid, _ = session
    with kscope.scope("s"):
        with kscope.state("loading"):
            kscope.mark("m")
    node = path(tree(sid), "s", "loading", "m")
    assert node["metrics"]["calls"] == 1


def test_innermost_state_wins(session):
    sid, _ = session
    with kscope.scope("s"):
        kscope.enter_state("outer")
        kscope.enter_state("inner")
        kscope.mark("m")
        kscope.exit_state()
        kscope.mark("m2")
        kscope.exit_state()
    s = child(tree(sid), "s")
    child(child(s, "inner"), "m")
    child(child(s, "outer"), "m2")


def test_state_decorator(session):
    sid, _ = session

    @kscope.state("st")
    def f():
        """Doc."""
        kscope.mark("x")
        return 2

    assert f() == 2 and f.__name__ == "f" and f.__doc__ == "Doc."
    path(tree(sid), "st", "x")


def test_state_without_session_is_a_no_op(tmp_path):
    """A state entered with no session is not kept: a session started
    while it is "open" puts a mark at ROOT, not under it."""
    with kscope.state("nothing"):
        pass
    kscope.enter_state("a")
    sid = kscope.start(str(tmp_path / "s"))
    kscope.mark("m")
    root = tree(sid)
    assert [c["frame"]["name"] for c in root["children"]] == ["m"]
    kscope.exit_state()  # its enter was not recorded either: no error
    kscope.finalize(sid)


def test_exit_state_without_state():
    with pytest.raises(ValueError, match="no state"):
        kscope.exit_state()


def test_state_name_checked():
    with pytest.raises(TypeError):
        kscope.state(5)
    with pytest.raises(TypeError):
        kscope.enter_state(5)
