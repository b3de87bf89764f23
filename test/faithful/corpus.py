"""corpus.py - real programs run bare and under `kscope run` give the same
results (test/cli-run-corpus.sh): a shell script using descriptors 3 to 9
across subshells, an asyncio service with its own SIGTERM handler,
multiprocessing with fork and spawn, and make with a few recipes. The
programs are in test/faithful/corpus/; each run gets a fresh copy."""
import os
import shutil
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_run import cleanup, finish, same, same_both  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
PY = os.environ["PYTHON"]


def copy_corpus(folder):
    for name in os.listdir(HERE):
        path = os.path.join(HERE, name)
        if os.path.isfile(path):  # not a __pycache__ left by a Python run
            shutil.copy(path, folder)


same_both("bash script with fds 3-9 across subshells", ["bash", "fds.sh"], setup=copy_corpus)
for target in ("program", "kscope"):
    same_both(f"asyncio service, SIGTERM to the {target}", [PY, "async_service.py"],
              setup=copy_corpus, send=[(signal.SIGTERM, target)])
same_both("multiprocessing, fork and spawn", [PY, "mp.py"], setup=copy_corpus)
if shutil.which("make"):
    same_both("make with a few recipes", ["make"], setup=copy_corpus)
    same("make with a failing recipe", ["make", "fail"], setup=copy_corpus)
    same("make -j2 -k with a failing recipe", ["make", "-j2", "-k", "fail", "joined.txt"],
         setup=copy_corpus,
         # -j2 interleaves the two recipes' lines in no fixed order
         norm=lambda b: b"\n".join(sorted(b.split(b"\n"))))

cleanup()
finish()
