"""Shared fixtures for the kscope package's tests (no GPU needed)."""
import json
import os

import pytest

import kscope
from kscope import _kscope


@pytest.fixture(autouse=True)
def clean_state():
    """Every test starts and ends with profiling on, no session, no scope."""
    kscope.set_gpu_profiling_state("on")
    yield
    kscope.set_gpu_profiling_state("on")
    while _kscope.depth() > 0:
        _kscope.exit()
    try:
        _kscope.finalize(None)
    except ValueError:
        pass  # no session left


@pytest.fixture(autouse=True, scope="session")
def no_lost_spans_line():
    """Tests turn MAX's switch on with no session on purpose: the exit
    line kscope.tracing prints for such spans is checked in subprocesses
    (test_max_surface.py), not printed at the end of the test run."""
    yield
    _kscope.max_spans_lost(True)


@pytest.fixture
def session(tmp_path):
    """A running tree session; yields (id, path without extension)."""
    name = str(tmp_path / "prof")
    sid = kscope.start(name)
    yield sid, name
    try:
        kscope.finalize(sid)
    except ValueError:
        pass  # the test finalized it


def tree(sid):
    """The live session's ROOT node."""
    root, devices = kscope.data.get(sid)
    assert isinstance(devices, dict)
    return root


def child(node, name):
    """The child of `node` named `name` (fails the test when missing)."""
    for c in node["children"]:
        if c["frame"]["name"] == name:
            return c
    names = [c["frame"]["name"] for c in node["children"]]
    raise AssertionError(f"no child {name!r} under {node['frame']['name']!r}; children: {names}")


def path(node, *names):
    for n in names:
        node = child(node, n)
    return node


def read_hatchet(name):
    with open(name + ".hatchet") as f:
        return json.load(f)


def files_in(folder):
    return sorted(os.listdir(folder))
