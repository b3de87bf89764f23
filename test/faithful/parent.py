"""parent.py - `kscope run` itself stands for the program to whoever holds
its pid (test/cli-run-parent.sh builds test/progs/run-sig.c into BIN):
every signal sent to kscope reaches the program once (its handler runs, or
it dies and kscope ends by the same signal, so a Python parent sees -N);
a signal sent to a process group reaches the program once, whether kscope
leads the group or not; the terminal's Ctrl-C and reads reach the program
as they would bare; a program that stops stops kscope, and continues with
it; a program outlives no SIGKILL of kscope."""
import os
import pty
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_run import KS, cleanup, fail, finish, ok, same, same_both  # noqa: E402

PROG = os.path.join(os.environ["BIN"], "run-sig")
ANY = dict(os.environ, ANY_SENDER="1")  # forwarded: the sender is kscope, not us

# --- signals sent to kscope's pid reach the program: its handler runs once
for name in ("USR1", "USR2", "TERM", "INT", "HUP", "QUIT", "ALRM", "WINCH", "CONT", "URG"):
    same(f"SIG{name} to kscope's pid: the program's handler runs once",
         [PROG, "handler", name], env=ANY, send=[(getattr(signal, "SIG" + name), "kscope")])
# ... or the program dies of it, and kscope ends by the same signal
for name in ("TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "ALRM", "PIPE"):
    same_both(f"SIG{name} to kscope's pid: the program dies of it, so does kscope",
              [PROG, "wait"], send=[(getattr(signal, "SIG" + name), "kscope")])

# --- a signal sent to a process group reaches the program once
# kscope leads the group (a new session): the program has a group of its own
for name in ("USR1", "TERM", "INT"):
    same(f"SIG{name} to the group kscope leads: the program's handler runs once",
         [PROG, "handler", name], env=ANY, new_session=True,
         send=[(getattr(signal, "SIG" + name), "group")])
same("SIGTERM to the group kscope leads: the program dies of it", [PROG, "wait"],
     new_session=True, send=[(signal.SIGTERM, "group")])
# kscope is one of a group it does not lead (a script's child): it leaves
# the group, the program stays in it
SCRIPT = ["sh", "-c", 'trap "" USR1 TERM; "$@"; echo "exit $?"', "sh"]
for name in ("USR1", "TERM"):
    same(f"SIG{name} to a script's group holding kscope: the handler runs once",
         [PROG, "handler", name], env=ANY, outer=SCRIPT, new_session=True,
         send=[(getattr(signal, "SIG" + name), "group")])

# --- the terminal: Ctrl-C reaches the program once, and it can read it


def on_pty(cmd, keys, wait_for=b"ready"):
    """Run cmd as the session leader of a new terminal; once it printed
    wait_for, type keys. Returns (wait status, what the terminal showed)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    shown, typed = b"", False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        if not typed and wait_for in shown:
            time.sleep(0.05)  # it waits in its read or sleep by now
            os.write(fd, keys)
            typed = True
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return status, shown


def program_part(shown):
    """The terminal's text before kscope's summary (its line ends aside)."""
    i = shown.find(b"kscope: ")
    return (shown if i < 0 else shown[:i]).rstrip(b"\r\n")


def same_on_pty(label, cmd, keys, wait_for=b"ready"):
    bare = on_pty(cmd, keys, wait_for)
    ks = on_pty([KS, "run", "-b", "none", "--", *cmd], keys, wait_for)
    if bare[0] != ks[0] or program_part(bare[1]) != program_part(ks[1]):
        fail(f"{label}: bare {bare[0]} {bare[1]!r}, kscope {ks[0]} {ks[1]!r}")
    else:
        ok(label)


same_on_pty("Ctrl-C on the terminal: the program's handler runs once",
            [PROG, "handler", "INT"], b"\x03")
same_on_pty("Ctrl-C on the terminal: the program dies of it", [PROG, "wait"], b"\x03")
same_on_pty("the program reads the terminal (foreground)",
            ["sh", "-c", 'echo ready; read line; echo "got [$line]"'], b"typed\n")

# --- a program that stops stops kscope, and continues with it


def state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def wait_state(pid, want, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if state(pid) in want:
            return True
        time.sleep(0.02)
    return False


def stop_and_continue(label, new_session):
    p = subprocess.Popen([KS, "run", "-b", "none", "--", PROG, "wait"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, start_new_session=new_session)
    p.stdout.readline()  # ready
    kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
    prog = int(kids[0])
    os.kill(p.pid, signal.SIGTSTP)
    stopped = wait_state(prog, "T") and wait_state(p.pid, "T")
    got = f"program {state(prog)}, kscope {state(p.pid)}"
    os.kill(p.pid, signal.SIGCONT)
    running = wait_state(prog, "SR") and wait_state(p.pid, "SR")
    got += f"; after SIGCONT: program {state(prog)}, kscope {state(p.pid)}"
    os.kill(p.pid, signal.SIGTERM)
    rc = p.wait(timeout=30)
    if not stopped or not running or rc != -signal.SIGTERM:
        fail(f"{label}: {got}; exit {rc}")
    else:
        ok(label)


stop_and_continue("SIGTSTP to kscope (a child of a script): both stop, SIGCONT: both run", False)
stop_and_continue("SIGTSTP to kscope (a session of its own): both stop, SIGCONT: both run", True)

# --- SIGKILL of kscope takes the program with it
for new_session in (False, True):
    p = subprocess.Popen([KS, "run", "-b", "none", "--", PROG, "wait"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, start_new_session=new_session)
    p.stdout.readline()
    prog = int(open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()[0])
    p.kill()
    p.wait()
    label = f"SIGKILL to kscope{' (own session)' if new_session else ''}: the program dies too"
    if wait_state(prog, ("gone", "Z")):
        ok(label)
    else:
        fail(f"{label}: the program ({prog}) is still {state(prog)}")
        os.kill(prog, signal.SIGKILL)

cleanup()
finish()
