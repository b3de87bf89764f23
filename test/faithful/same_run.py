"""same_run.py - run a command bare and under `kscope run`, and check that
it did the same: exit status (a death by signal included), stdout, stderr
and every file it wrote, byte for byte. Standard library only.

kscope's own summary follows the program's stderr once the program has
ended: the stderr under kscope must be the bare one followed by lines of
kscope's alone (nothing else is left out of the comparison).

Signals are sent once the program printed a line `ready` on stdout, to the
program's pid, to kscope's pid (bare: the program's) or to the process
group of a new session the run is started in.

Used by the test/cli-run-*.sh scripts; KS (the kscope command to run, a
sanitizer wrapper in sanitized builds) comes from the environment.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

KS = os.environ.get("KS") or os.environ["KSCOPE_CLI"]
# A sanitized build's kscope runs with the sanitizer runtime preloaded,
# which the program then gets too: so does the bare run (run-lib.sh).
SAN_PRELOAD = os.environ.get("KSCOPE_TEST_SAN_PRELOAD")
FAILS = 0
_SUMMARY = re.compile(rb"\n?kscope( run)?: ")


def fail(msg):
    global FAILS
    FAILS += 1
    print(f"FAIL: {msg}", file=sys.stderr, flush=True)


def ok(msg):
    print(f"ok: {msg}", flush=True)


def finish():
    if FAILS:
        print(f"{FAILS} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("all checks passed")
    sys.exit(0)


class Run:
    """What one run did."""

    def __init__(self, status, out, err, files, workdir, pid):
        self.status = status  # Popen.returncode: -N for a death by signal N
        self.out = out
        self.err = err
        self.files = files
        self.dir = workdir
        self.pid = pid  # the program's pid


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def _program_pid(p, under_ks):
    if not under_ks:
        return p.pid
    for _ in range(500):
        kids = _children(p.pid)
        if kids:
            return kids[0]
        time.sleep(0.01)
    return None


def _stop(p, pid, new_session):
    """Kill a run that did not end, the program too (kscope may have left
    it behind); what it printed meanwhile."""
    for target in {p.pid, pid} - {None}:
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    if new_session:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        rest, _ = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:  # a grandchild holds stdout open
        p.stdout.close()
        p.stdout = None
        p.wait()
        rest = b""
    return rest


def _files(root, under_ks):
    found = {}
    for base, dirs, names in os.walk(root):
        for n in names:
            path = os.path.join(base, n)
            rel = os.path.relpath(path, root)
            if under_ks and n.startswith("kscope."):
                continue  # the profiles and their facts
            try:
                with open(path, "rb") as f:
                    found[rel] = f.read()
            except OSError as e:
                found[rel] = f"<unreadable: {e}>".encode()
    return found


def run(cmd, under_ks, ks_args=("-b", "none"), send=(), stdin=None, env=None, setup=None,
        new_session=False, limits=None, timeout=60, after_send=None, outer=()):
    """Run cmd (a list) in a fresh folder (setup(folder) fills it first).
    send: [(signal, "program" | "kscope" | "group"), ...] once `ready` is
    printed; stdin: bytes written to stdin, which is then closed (after the
    signals are sent when there are any), else /dev/null; outer: a command
    prefix that runs the whole (`timeout 1`), outside kscope."""
    workdir = tempfile.mkdtemp(prefix="kscope-same.")
    if setup:
        setup(workdir)
    full = [*outer, *([KS, "run", *ks_args, "--"] if under_ks else []), *cmd]
    if not under_ks and SAN_PRELOAD:
        env = dict(env or os.environ, LD_PRELOAD=SAN_PRELOAD)
    errpath = os.path.join(tempfile.gettempdir(), os.path.basename(workdir) + ".err")

    def pre():
        if limits:
            import resource
            for what, value in limits.items():
                resource.setrlimit(what, (value, value))

    with open(errpath, "wb") as errf:
        p = subprocess.Popen(full, cwd=workdir, stdout=subprocess.PIPE, stderr=errf,
                             stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                             env=env, start_new_session=new_session,
                             preexec_fn=pre if limits else None)
        out = b""
        pid = None
        deadline = time.monotonic() + timeout
        if send:
            while not out.endswith(b"ready\n") and b"ready\n" not in out:
                line = p.stdout.readline()
                if not line:
                    break
                out += line
            pid = _program_pid(p, under_ks)
            for sig, target in send:
                if target == "group":
                    os.killpg(p.pid, sig)
                elif target == "kscope" or pid is None:
                    os.kill(p.pid, sig)
                else:
                    os.kill(pid, sig)
                if after_send:
                    after_send(p, sig)
        if stdin is not None:
            try:
                p.stdin.write(stdin)
                p.stdin.close()
            except BrokenPipeError:
                pass
            p.stdin = None
        try:
            rest, _ = p.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            fail(f"{' '.join(full)}: still running after {timeout} s")
            rest = _stop(p, pid, new_session)
        out += rest
    with open(errpath, "rb") as f:
        err = f.read()
    os.unlink(errpath)
    return Run(p.returncode, out, err, _files(workdir, under_ks), workdir, pid)


def _show(b):
    text = b.decode("utf-8", "replace")
    return text if len(text) < 600 else text[:600] + "..."


def _program_err(bare_err, ks_err):
    """The program's part of the stderr under kscope, or None when what
    follows the bare run's stderr is not kscope's summary."""
    head, tail = ks_err[:len(bare_err)], ks_err[len(bare_err):]
    if head == bare_err and (not tail or _SUMMARY.match(tail)):
        return head
    m = re.search(rb"(?m)^(\n?kscope(?: run)?: )", ks_err)
    return ks_err[:m.start(1)] if m else ks_err


def compare(name, bare, ks, norm=None):
    """Report whether two runs did the same; True when they did. norm, when
    given, rewrites both runs' stdout and the program's stderr first (what
    legitimately varies from run to run, as a test's duration)."""
    ks_err = _program_err(bare.err, ks.err)
    bare_err = bare.err
    if norm:
        bare.out, ks.out = norm(bare.out), norm(ks.out)
        bare_err, ks_err = norm(bare_err), norm(ks_err)
    problems = []
    if bare.status != ks.status:
        problems.append(f"exit status {bare.status} bare, {ks.status} under kscope")
    if bare.out != ks.out:
        problems.append(f"stdout differs:\n--- bare\n{_show(bare.out)}\n--- kscope\n{_show(ks.out)}")
    if bare_err != ks_err:
        problems.append(f"stderr differs:\n--- bare\n{_show(bare.err)}\n--- kscope\n{_show(ks.err)}")
    if bare.files != ks.files:
        names = sorted(set(bare.files) | set(ks.files))
        diff = [n for n in names if bare.files.get(n) != ks.files.get(n)]
        problems.append("files differ: " + ", ".join(
            f"{n} ({bare.files.get(n)!r:.60} bare, {ks.files.get(n)!r:.60} kscope)" for n in diff))
    if problems:
        fail(f"{name}: " + "\n  ".join(problems))
        return False
    ok(name)
    return True


def same(name, cmd, ks_args=("-b", "none"), norm=None, **kw):
    """Run cmd bare and under kscope run with ks_args; compare. Returns
    (bare, kscope) runs (their folders are kept until cleanup())."""
    bare = run(cmd, False, **kw)
    ks = run(cmd, True, ks_args=ks_args, **kw)
    compare(name, bare, ks, norm)
    _made.extend([bare.dir, ks.dir])
    return bare, ks


def same_both(name, cmd, **kw):
    """same() under `-b none` and under the default backend."""
    r = same(f"{name} [-b none]", cmd, ks_args=("-b", "none"), **kw)
    same(f"{name} [default backend]", cmd, ks_args=(), **kw)
    return r


def profiles(run_):
    """The profile files kscope wrote in a run's folder."""
    return sorted(n for n in os.listdir(run_.dir) if n.startswith("kscope.") and
                  (n.endswith(".hatchet") or n.endswith(".chrome_trace")))


_made = []


def cleanup():
    for d in _made:
        shutil.rmtree(d, ignore_errors=True)
