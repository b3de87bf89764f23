"""fds.py - `kscope run` never reads, writes or closes a descriptor the
program may own, in the program or in any child it forks, and starts no
thread in a process that needs none (test/cli-run-fds.sh builds
test/progs/run-fds.c into BIN): closing every descriptor then opening
files, a reused fd 3 read later, dup2 over low descriptors, a pipe shared
with a forked child, the first free descriptor, `ulimit -n 16`, shells'
descriptors across subshells and command substitution, and the same in
Python."""
import os
import resource
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from same_run import cleanup, fail, finish, profiles, same, same_both  # noqa: E402

PROG = os.path.join(os.environ["BIN"], "run-fds")
PY = os.environ["PYTHON"]
ANNOTATE = dict(os.environ, ANNOTATE="1")


def with_input(text):
    def setup(folder):
        with open(os.path.join(folder, "in.txt"), "w") as f:
            f.write(text)
    return setup


# --- C: every descriptor closed, then the program's own on 3 and 4
for env, tag in ((None, ""), (ANNOTATE, ", annotated")):
    same_both(f"close 3..1023, open two files, raise SIGTERM{tag}", [PROG, "closeall", "raise"],
              env=env)
    _, ks = same(f"close 3..1023, open two files, SIGTERM from outside{tag}",
                 [PROG, "closeall", "wait"], env=env, send=[(signal.SIGTERM, "program")])
    if env and len(profiles(ks)) != 1:
        fail(f"closeall, annotated: no profile written: {profiles(ks)}")
    same_both(f"close 3..1023, read a reused fd 3 20 ms later{tag}", [PROG, "readlater"],
              env=env, setup=with_input("ABCDEF\n"))
    same(f"fd 3 reused for a file starting with '#'{tag}", [PROG, "readlater"], env=env,
         setup=with_input("#!comment\n"))
    same_both(f"dup2 over fds 3 and 4, a forked child writes through them{tag}",
              [PROG, "dup2"], env=env)
    same_both(f"a pipe on fds 3/4 shared with a forked child{tag}", [PROG, "pipefork"], env=env)
    same_both(f"the first free descriptor{tag}", [PROG, "firstfd"], env=env)
    same(f"ulimit -n 16{tag}", [PROG, "maxfds"], env=env,
         limits={resource.RLIMIT_NOFILE: 16})
same_both("no thread in a process that recorded nothing", [PROG, "threads"])

# --- shells: descriptors across subshells and command substitution
same_both("bash: exec 3>&1; x=$(echo hi >&3; echo captured)",
          ["bash", "-c", 'exec 3>&1; x=$(echo hi >&3; echo captured); echo "[$x]"'])
same_both("bash: exec 3>out; (echo x >&3)",
          ["bash", "-c", "exec 3>out; (echo x >&3); echo done; cat out"])
same("bash: exec 3<in.txt; sleep 0.1; read <&3",
     ["bash", "-c", 'exec 3<in.txt; sleep 0.1; read -r line <&3; echo "got [$line]"'],
     setup=with_input("#first line\n"))
same("bash: fds 3-9 each in its own subshell",
     ["bash", "-c", "for i in 3 4 5 6 7 8 9; do eval \"exec $i>f$i\"; done; "
      "for i in 3 4 5 6 7 8 9; do (eval \"echo fd $i >&$i\"); done; cat f*"])
if shutil.which("dash"):
    same("dash: exec 3>&1; x=$(echo hi >&3; echo captured)",
         ["dash", "-c", 'exec 3>&1; x=$(echo hi >&3; echo captured); echo "[$x]"'])
    same("dash: exec 3>out; (echo x >&3)", ["dash", "-c", "exec 3>out; (echo x >&3); cat out"])

# --- Python
same_both("python: os.pipe() on fds 3/4 shared with a forked child", [PY, "-c", """
import os
r, w = os.pipe()
print("pipe", r, w, flush=True)
pid = os.fork()
if pid == 0:
    os.close(r); os.write(w, b"hello from the child"); os._exit(0)
os.close(w)
data = b""
while True:
    chunk = os.read(r, 100)
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
print("read", data)
"""])
same("python: close 3..1023, read a reused fd 3 20 ms later", [PY, "-c", """
import os, time
os.closerange(3, 1024)
fd = os.open("in.txt", os.O_RDONLY)
time.sleep(0.02)
print(fd, os.read(fd, 100))
"""], setup=with_input("A file\n"))
FORK = """
import os
print("threads", len(os.listdir("/proc/self/task")), flush=True)
pid = os.fork()
if pid == 0:
    os._exit(0)
print("child", os.waitpid(pid, 0)[1])
"""
same_both("python: threads before os.fork(), and the warning about them",
          [PY, "-W", "always", "-c", FORK])
# Python 3.12 and later warn on stderr when a multi-threaded process forks.


def newer_python():
    """A Python 3.12 or later, as its own path (not a version manager's shim)."""
    for name in ("python3.13", "python3.12"):
        if not shutil.which(name):
            continue
        got = subprocess.run([name, "-c", "import sys; print(sys.executable)"],
                             capture_output=True, text=True).stdout.strip()
        if got and os.access(got, os.X_OK):
            return name, got
    return None, None


name, newer = newer_python()
if newer:
    same_both(f"{name}: no multi-threaded fork() DeprecationWarning",
              [newer, "-W", "always", "-c", FORK])
else:
    print("note: no python3.12 or later here: its fork() warning is not checked")

cleanup()
finish()
