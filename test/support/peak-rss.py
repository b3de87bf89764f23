"""peak-rss.py - run a command and say how it went: its exit status, its
peak resident memory in KiB (getrusage of the child) and its wall time in
seconds, on one line ("rc kib seconds"), its stdout and stderr passed
through. Standard library only, for the shell tests:
    read rc kib secs < <(python3 test/support/peak-rss.py CMD ARGS... 2>err)"""
import os
import subprocess
import sys
import time

start = time.monotonic()
child = subprocess.Popen(sys.argv[1:], stdout=sys.stderr)
_, status, usage = os.wait4(child.pid, 0)
took = time.monotonic() - start
rc = os.waitstatus_to_exitcode(status)
print(f"{rc} {usage.ru_maxrss} {took:.2f}")
