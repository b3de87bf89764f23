"""sig_c.py - a C program's signals under `kscope run` are what they are
without it (test/cli-run-sig.sh builds test/progs/run-sig.c into BIN):
default actions (raised, or sent from outside to a single- and a
multi-threaded program), its own handler (once, with its siginfo), ignored
and blocked signals, the dispositions sigaction returns, and the calls that
set them. A program that recorded something still writes its profile when
a signal ends it."""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_run import cleanup, fail, finish, profiles, same, same_both  # noqa: E402

PROG = os.path.join(os.environ["BIN"], "run-sig")
STUCK = os.path.join(os.environ["BIN"], "run-stuck")
NAMES = ["TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "ALRM", "PIPE"]
ANNOTATE = dict(os.environ, ANNOTATE="1")


def sig(name):
    return getattr(signal, "SIG" + name)


def profile_written(label, run_, count=1):
    got = profiles(run_)
    if len(got) != count:
        fail(f"{label}: {len(got)} profile(s) written, expected {count}: {got}")


# --- the default action: raised, the process ends by it ("after" unseen)
for name in NAMES:
    same_both(f"raise SIG{name}", [PROG, "raise", name])
same("raise SIGRTMIN+2", [PROG, "raise", "RTMIN+2"])
same("raise SIGXCPU", [PROG, "raise", "XCPU"])
for name in ["TERM", "INT", "HUP", "USR1"]:
    same(f"raise SIG{name}, 4 threads", [PROG, "raise", name, "threads"])
    same(f"raise SIG{name} on a second thread", [PROG, "raise", name, "threads", "from-thread"])

# --- sent from outside, to a single- and a multi-threaded program
for name in NAMES:
    same(f"SIG{name} sent to the program", [PROG, "wait"], send=[(sig(name), "program")])
for name in ["TERM", "INT", "HUP", "QUIT"]:
    same(f"SIG{name} sent to a 4-thread program", [PROG, "wait", "threads"],
         send=[(sig(name), "program")])

# --- a program that recorded a scope still writes its profile
for name in ["TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "ALRM"]:
    _, ks = same(f"raise SIG{name}, annotated", [PROG, "raise", name], env=ANNOTATE)
    profile_written(f"raise SIG{name}, annotated", ks)
for name in ["TERM", "INT"]:
    label = f"SIG{name} sent to an annotated 4-thread program"
    _, ks = same(label, [PROG, "wait", "threads"], env=ANNOTATE, send=[(sig(name), "program")])
    profile_written(label, ks)
    label = f"raise SIG{name} on a thread of an annotated program"
    _, ks = same(label, [PROG, "raise", name, "threads", "from-thread"], env=ANNOTATE)
    profile_written(label, ks)
    label = f"SIG{name} sent to an annotated program, default backend"
    _, ks = same(label, [PROG, "wait"], ks_args=(), env=ANNOTATE, send=[(sig(name), "program")])
    profile_written(label, ks)

# --- the program's own handler runs, once, with the siginfo it was sent
sender = dict(os.environ, SENDER=str(os.getpid()))
for name in ["TERM", "INT", "HUP", "USR1", "ALRM"]:
    same(f"own SA_SIGINFO handler of SIG{name}", [PROG, "handler", name], env=sender,
         send=[(sig(name), "program")])
    same(f"own handler of SIG{name}, annotated", [PROG, "handler", name],
         env=dict(sender, ANNOTATE="1"), send=[(sig(name), "program")])

# --- ignored and blocked signals stay so, raised and sent
for name in ["TERM", "INT", "HUP", "USR1"]:
    same(f"ignored SIG{name}", [PROG, "ignore", name], send=[(sig(name), "program")], stdin=b"")
    same(f"blocked SIG{name}", [PROG, "block", name], send=[(sig(name), "program")], stdin=b"")
    same(f"blocked SIG{name}, annotated", [PROG, "block", name], env=ANNOTATE,
         send=[(sig(name), "program")], stdin=b"")
# inherited ignored (nohup, a shell's trap '')
same("SIGTERM and SIGHUP inherited ignored",
     ["sh", "-c", f"trap '' TERM HUP; exec {PROG} ignore TERM"], stdin=b"")
same_both("dispositions with SIGTERM, SIGHUP inherited ignored",
          ["sh", "-c", f"trap '' TERM HUP; exec {PROG} query"])

# --- what sigaction returns, and the calls that set dispositions
same_both("every disposition as sigaction returns it", [PROG, "query"])
same("every disposition, annotated", [PROG, "query"], env=ANNOTATE)
for name in ["TERM", "INT"]:
    _, ks = same(f"signal() save and restore of SIG{name}", [PROG, "restore", name],
                 env=ANNOTATE)
    profile_written(f"signal() save and restore of SIG{name}", ks)
    same(f"sigaction save and restore of SIG{name}", [PROG, "restore-sa", name])
    _, ks = same(f"a handler that re-raises SIG{name} with SIG_DFL", [PROG, "reraise", name],
                 env=ANNOTATE)
    profile_written(f"a handler that re-raises SIG{name}", ks)
    same(f"sysv_signal one-shot SIG{name}", [PROG, "sysv", name])
    same(f"sigset SIG_HOLD then a handler, SIG{name}", [PROG, "sigset", name])
same("siginterrupt then signal()", [PROG, "interrupt"])
same_both("each call that sets a disposition, as sigaction then returns it", [PROG, "setters"])

# --- a writer that cannot finish (the interrupted thread holds the lock
# its allocator needs) does not keep the process alive: it ends by the
# signal, without its profile, as it would without kscope
if os.environ.get("KSCOPE_TEST_SAN_PRELOAD"):
    print("note: no stuck-writer case in a sanitized build (its allocator is the sanitizer's)")
else:
    _, ks = same("SIGTERM while the profile's writer is stuck", [STUCK])
    if profiles(ks):
        fail(f"a stuck writer wrote {profiles(ks)}")

cleanup()
finish()
