"""Proton's API as Proton has it: session ids, errors, metric values and
their placement, exit_scope(metrics=), the proton knobs."""
import os

import pytest

import kscope
from kscope import _kscope

from conftest import child, path, tree


def test_session_ids_count_up_and_never_repeat(tmp_path):
    a = kscope.start(str(tmp_path / "a"))
    kscope.finalize(a)
    b = kscope.start(str(tmp_path / "b"))
    assert b == a + 1
    c = kscope.start(str(tmp_path / "c"))
    assert c == b + 1
    kscope.finalize()
    # The finalized ids reach nothing, though their slots were reused.
    for sid in (a, b, c):
        with pytest.raises(RuntimeError, match=f"Session has not been initialized: {sid}"):
            kscope.activate(sid)


def test_unknown_session_raises_both_proton_and_kscope_classes(session):
    with pytest.raises(kscope.SessionError) as info:
        kscope.deactivate(10**6)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ValueError)
    assert "Session has not been initialized: 1000000" in str(info.value)


def test_metric_type_mismatch_has_proton_words(session):
    with kscope.scope("test0", {"a": 1.0}):
        pass
    with pytest.raises(RuntimeError, match=r"Metric value type mismatch for valueId 0 \(a\): "
                       r"current=double, new=uint64_t"):
        with kscope.scope("test0", {"a": 1}):
            pass
    with pytest.raises(TypeError, match="new=int64_t"):  # kscope's class too
        with kscope.scope("test0", {"a": -1}):
            pass


def test_text_values_for_property_and_exclusive_metrics(session):
    sid, _ = session
    with kscope.scope("p", {"a (pty)": "1"}):
        with kscope.scope("q", {"b (exc)": "x"}):
            pass
    kscope.enter_scope("r", metrics={"a (pty)": 1.0})  # another node, another type
    kscope.exit_scope()
    root = tree(sid)
    assert child(root, "p")["metrics"]["a"] == "1"
    assert path(root, "p", "q")["metrics"]["b"] == "x"
    assert child(root, "r")["metrics"]["a"] == 1.0
    assert "a" not in root["metrics"] and "b" not in root["metrics"]


def test_text_value_for_inclusive_metric_is_refused(session):
    with pytest.raises(TypeError, match="only \\(pty\\) and \\(exc\\) metrics hold text"):
        with kscope.scope("s", {"tokens": "many"}):
            pass


def test_exit_scope_takes_metrics(session):
    sid, _ = session
    kscope.enter_scope("test4")
    kscope.exit_scope(metrics={"b": 1.0})
    kscope.enter_scope("test5")
    kscope.exit_scope("test5", metrics={"c": 2})
    root = tree(sid)
    assert child(root, "test4")["metrics"]["b"] == 1.0
    assert child(root, "test5")["metrics"]["c"] == 2
    assert kscope.context.depth(sid) == 0


def test_exit_scope_with_wrong_name_adds_no_metrics(session):
    sid, _ = session
    kscope.enter_scope("outer")
    with pytest.raises(ValueError, match="'wrong'"):
        kscope.exit_scope("wrong", metrics={"b": 1.0})
    kscope.exit_scope("outer")
    assert "b" not in child(tree(sid), "outer")["metrics"]


def test_exit_scope_with_metrics_when_the_recorder_has_none_open(session):
    kscope.enter_scope("a")
    _kscope.exit()  # left behind enter_scope's back
    with pytest.raises(ValueError, match="exit of scope 'a' but no scope is open"):
        kscope.exit_scope("a", metrics={"b": 1})
    _kscope.enter("a")  # both sides agree again: the scope is left once
    kscope.exit_scope("a")
    assert _kscope.depth() == 0


def test_return_codes_raise_only_through_check_rc():
    """Every kscope return code becomes an exception in one place, which
    raises none for 0 or more: no other code of the extension maps codes
    to exceptions."""
    src = os.path.join(os.path.dirname(__file__), "..", "src")
    if not os.path.isdir(src):
        pytest.skip("needs the package's C sources")
    for name in sorted(os.listdir(src)):
        text = open(os.path.join(src, name)).read()
        assert "raise_rc" not in text, name
        calls = text.count("exception_for(")
        assert calls == (2 if name == "module.c" else 0), (name, calls)  # its definition, one use
    module = open(os.path.join(src, "module.c")).read()
    body = module[module.index("int check_rc(int64_t rc)"):]
    body = body[:body.index("\n}\n")]
    assert "if (rc >= 0)\n        return 0;" in body


def test_metrics_under_a_state_go_to_the_state_node(session):
    sid, _ = session
    kscope.enter_scope("test0")
    kscope.enter_state("state")
    kscope.enter_scope("test1", metrics={"a": 1.0})
    kscope.exit_scope()
    kscope.exit_state()
    kscope.exit_scope()
    test1 = path(tree(sid), "test0", "test1")
    assert [c["frame"]["name"] for c in test1["children"]] == ["state"]
    assert child(test1, "state")["metrics"]["a"] == 1.0
