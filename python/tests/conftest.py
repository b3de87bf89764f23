"""Shared fixtures for the kscope package's tests (no GPU needed)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import kscope
from kscope import _kscope

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


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


def build_stand_in(folder, name):
    """Compile the stand-in library test/fake-NAME.c (of NVML, ROCm SMI,
    roctx...) into folder/libfake-NAME.so and return its path; skips the
    test without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    source = os.path.join(REPO, "test", f"fake-{name}.c")
    if not cc or not os.path.exists(source):
        pytest.skip(f"needs a C compiler and test/fake-{name}.c")
    lib = os.path.join(str(folder), f"libfake-{name}.so")
    subprocess.run([cc, "-shared", "-fPIC", "-o", lib, source], check=True)
    return lib


def kscope_cli():
    """This checkout's kscope command line: $KSCOPE_CLI, else that of a CMake
    build (build-debug/ or build/); skips the test without one."""
    for path in (os.environ.get("KSCOPE_CLI"), os.path.join(REPO, "build-debug", "kscope"),
                 os.path.join(REPO, "build", "kscope")):
        if path and os.access(path, os.X_OK):
            return path
    pytest.skip("no kscope command line built (build-debug/kscope, build/kscope or KSCOPE_CLI)")


def kscope_run(folder, script, text, *options, args=()):
    """Write `text` to folder/script and run it there with this Python under
    `kscope run OPTIONS -o FOLDER -- python SCRIPT ARGS` (kscope_cli()'s):
    the finished process, its output as text."""
    (folder / script).write_text(text)
    return subprocess.run([kscope_cli(), "run", *options, "-o", str(folder), "--", sys.executable,
                           script, *args], cwd=folder, capture_output=True, text=True, timeout=120)
