"""corpus_pytest.py - a pure-Python package's own test suite (toolz, from
its source distribution, SDIST) gives the same results under `kscope run`
as bare, with the venv's pytest (VPY); and pytest interrupted by SIGINT
(Ctrl-C) stops as it does bare: `!!! KeyboardInterrupt !!!`, the summary,
exit 2 (test/cli-run-corpus-pytest.sh)."""
import os
import re
import signal
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_run import cleanup, finish, same  # noqa: E402

VPY = os.environ["VPY"]
SDIST = os.environ["SDIST"]
ENV = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # no __pycache__ among the files compared
PYTEST = [VPY, "-m", "pytest", "-p", "no:cacheprovider"]


def unpack(folder):
    """The sdist's files straight into the run's folder."""
    with tarfile.open(SDIST) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/", 1)
            if len(parts) == 2 and parts[1]:
                m.name = parts[1]
                tar.extract(m, folder)


def norm(text):
    """What varies between two runs of a test suite: its durations (and the
    rule of '=' around them, padded to the line's width), and the folder
    each run has to itself."""
    text = re.sub(rb"\bin [0-9.]+s\b", b"in <t>s", text)
    text = re.sub(rb"={2,}", b"==", text)
    return re.sub(rb"/[^ \n'\"]*/kscope-same\.[^/ \n'\"]+", b"<dir>", text)


same("toolz's own test suite under pytest", [*PYTEST, "-q", "toolz"], setup=unpack, env=ENV,
     norm=norm)

INTERRUPTED = """
import time

def test_quick():
    pass

def test_slow():
    print("ready", flush=True); time.sleep(20)  # one line: the interrupt lands on it
"""


def with_slow_test(folder):
    with open(os.path.join(folder, "test_interrupted.py"), "w") as f:
        f.write(INTERRUPTED)


for target in ("program", "kscope"):
    same(f"pytest interrupted by SIGINT to the {target}", [*PYTEST, "-s", "test_interrupted.py"],
         setup=with_slow_test, env=ENV, norm=norm, send=[(signal.SIGINT, target)])

cleanup()
finish()
