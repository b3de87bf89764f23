"""sig_py.py - a Python program's signals under `kscope run` are what they
are without it: Python installs its own SIGINT handler (KeyboardInterrupt,
`finally`, asyncio's Ctrl-C), signal.getsignal answers as bare, the
save/restore idiom works, SIGTERM's default action ends the process (single-
and multi-threaded, raised or sent), asyncio's own SIGTERM handler runs, and
an annotated program still writes its profile."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_run import cleanup, fail, finish, profiles, same, same_both  # noqa: E402

PY = os.environ["PYTHON"]

KEYBOARD = """
import time
try:
    print("ready", flush=True)
    time.sleep(20)
except KeyboardInterrupt:
    print("KeyboardInterrupt caught")
finally:
    with open("cleanup.txt", "w") as f:
        f.write("finally ran\\n")
    print("finally")
"""
for target in ("program", "kscope"):
    same_both(f"python: SIGINT to the {target}: KeyboardInterrupt, finally, cleanup file",
              [PY, "-c", KEYBOARD], send=[(signal.SIGINT, target)])
same("python: SIGINT to the session's group: KeyboardInterrupt once", [PY, "-c", KEYBOARD],
     send=[(signal.SIGINT, "group")], new_session=True)

same_both("python: signal.getsignal of every signal", [PY, "-c", """
import signal
for s in sorted(signal.valid_signals()):
    print(int(s), signal.getsignal(s))
"""])

same_both("python: old = signal.signal(sig, h); signal.signal(sig, old); then SIGTERM", [PY, "-c", """
import os, signal
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
    old = signal.signal(s, lambda *a: None)
    signal.signal(s, old)
    print(s.name, signal.getsignal(s))
os.kill(os.getpid(), signal.SIGTERM)
print("after")
"""])

for name in ("SIGTERM", "SIGHUP", "SIGUSR1", "SIGQUIT"):
    same(f"python: os.kill(os.getpid(), {name})", [PY, "-c", f"""
import os, signal
print("before", flush=True)
os.kill(os.getpid(), signal.{name})
print("after")
"""])

THREADS = """
import os, threading, time
ANNOTATE = os.environ.get("ANNOTATE")
if ANNOTATE:
    import ctypes
    lib = ctypes.CDLL(None)
    enter = getattr(lib, "kscope_enter", None)  # the preloaded libkscope's, under kscope run
    if enter:
        enter(b"python-main")
def work():
    while True:
        time.sleep(0.01)
for _ in range(4):
    threading.Thread(target=work, daemon=True).start()
print("ready", flush=True)
time.sleep(20)
print("not killed")
"""
same_both("python: SIGTERM sent to a 5-thread program", [PY, "-c", THREADS],
          send=[(signal.SIGTERM, "program")])
_, ks = same("python: SIGTERM sent to an annotated 5-thread program", [PY, "-c", THREADS],
             env=dict(os.environ, ANNOTATE="1"), send=[(signal.SIGTERM, "program")])
if len(profiles(ks)) != 1:
    fail(f"annotated python killed by SIGTERM: profiles {profiles(ks)}")

ASYNC_INT = """
import asyncio
async def main():
    print("ready", flush=True)
    await asyncio.sleep(20)
asyncio.run(main())
"""
same("python: asyncio.run and Ctrl-C (SIGINT)", [PY, "-c", ASYNC_INT],
     send=[(signal.SIGINT, "program")])

ASYNC_TERM = """
import asyncio, signal
async def main():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    await stop.wait()
    print("SIGTERM handled, stopping cleanly")
asyncio.run(main())
"""
for target in ("program", "kscope"):
    same_both(f"python: asyncio with its own SIGTERM handler, SIGTERM to the {target}",
              [PY, "-c", ASYNC_TERM], send=[(signal.SIGTERM, target)])

same("python: timeout --foreground -s INT around kscope run: the traceback",
     [PY, "-c", "import time; print('sleeping', flush=True); time.sleep(20)"],
     outer=["timeout", "--foreground", "-s", "INT", "3"])  # after Python started, even slowed

cleanup()
finish()
