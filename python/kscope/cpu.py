"""cpu.py - CPU use of a set of processes (MAX's CPU metrics), from /proc.

    with CPUMetricsCollector([pid, ...]) as c:
        ...
    stats = c.get_stats()   # CPUMetrics of the block (MAX's fields first)

collect_pids_for_port(port) finds the processes listening on a TCP port
(IPv4 and IPv6) and their descendants. A process that exits mid-way is
counted up to its last reading and in `exited`, never an error; as in
MAX, a PID that does not exist when the block begins is skipped, and the
elapsed time is the block's (clock_end - clock_start) whatever the PIDs.
"""
import os
from collections import namedtuple
from dataclasses import dataclass

from . import _kscope


@dataclass
class CPUMetrics:
    """MAX's CPUMetrics (user, user_percent, system, system_percent,
    elapsed) and kscope's additions, which have defaults."""

    user: float  # CPU seconds in user mode within the interval
    user_percent: float  # of one core
    system: float
    system_percent: float
    elapsed: float  # seconds
    rss_bytes: int = 0
    threads: int = 0
    exited: int = 0  # processes that ended within the interval


@dataclass(frozen=True)
class ProcessMetrics:
    pid: int
    exited: bool
    user: float
    system: float
    user_percent: float
    system_percent: float
    rss_bytes: int
    threads: int


def collect_pids_for_port(port):
    """Sorted PIDs of the processes listening on TCP `port` and their
    descendants; [] when none listens, as for a port no process can listen
    on (0, or above 65535: MAX's answer too). TypeError for a port that is
    not an integer (MAX's [] would read as "nothing listens");
    PermissionError when the listener belongs to a user this process
    cannot see."""
    if isinstance(port, bool) or not isinstance(port, int):
        raise TypeError(f"port must be an int, not {type(port).__name__}")
    if not 1 <= port <= 65535:
        return []
    try:
        return _kscope.pids_for_port(port)
    except OSError as e:
        raise PermissionError(str(e)) from None


# A process's CPU times in seconds, as psutil's Process.cpu_times() gives
# them on Linux (what MAX's cpu_times_start and cpu_times_end hold).
CPUTimes = namedtuple("CPUTimes", "user system children_user children_system iowait")


def cpu_times(pid):
    """CPUTimes of a process from /proc/PID/stat, or None when it does not
    exist (MAX's None for a process that is gone)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) "
    tick = os.sysconf("SC_CLK_TCK")
    try:
        user, system, cuser, csystem = (int(fields[i]) / tick for i in range(11, 15))
        iowait = int(fields[39]) / tick if len(fields) > 39 else 0.0
    except (IndexError, ValueError):
        return None
    return CPUTimes(user, system, cuser, csystem, iowait)


def _alive(pids):
    return [p for p in pids if os.path.exists(f"/proc/{p}")]


def _now():
    """kscope's monotonic clock in seconds (the clock of the C readings)."""
    return _kscope.now_ns() / 1e9


class CPUMetricsCollector:
    """CPU use of `pids` over the `with` block, with MAX's attributes:
    `pids`, `clock_start` and `clock_end` (monotonic seconds at the block's
    ends), `cpu_times_start` and `cpu_times_end` ({pid: CPUTimes, or None
    for a process that did not exist}). get_stats() after the block
    measures up to its end, over elapsed = clock_end - clock_start; a PID
    that does not exist is skipped (no CPU time), the elapsed time is still
    the block's. Inside the block (where MAX raises) it measures up to the
    call."""

    def __init__(self, pids):
        self.pids = [int(p) for p in pids]
        self.clock_start = None
        self.clock_end = None
        self.cpu_times_start = {}
        self.cpu_times_end = {}
        self._procs = None
        self._final = None
        self.processes = []

    def __enter__(self):
        self._final = None
        self.clock_end = None
        self.cpu_times_start = {pid: cpu_times(pid) for pid in self.pids}
        self.cpu_times_end = {}
        self.clock_start = _now()
        pids = _alive(self.pids)
        try:
            self._procs = _kscope.CpuProcs(pids)
        except ProcessLookupError:  # one ended just now: skip it, as MAX does
            self._procs = _kscope.CpuProcs(_alive(pids))
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._procs is not None:
            self._final = self._measure(final=True)
            self._procs = None
        return False

    def _measure(self, final=False):
        now = _now()
        totals, per = self._procs.update()
        if final:
            self.clock_end = now
            self.cpu_times_end = {pid: cpu_times(pid) for pid in self.pids}
        elapsed = now - self.clock_start
        if elapsed <= 0:
            raise RuntimeError("Elapsed time must be positive")
        self.processes = [ProcessMetrics(**p) for p in per]
        totals.update(elapsed=elapsed, user_percent=100.0 * totals["user"] / elapsed,
                      system_percent=100.0 * totals["system"] / elapsed)
        return CPUMetrics(**totals)

    def get_stats(self):
        if self._final is not None:
            return self._final
        if self._procs is None:
            raise RuntimeError(
                "Must use CPUMetricsCollector as a context manager before calling get_stats")
        return self._measure()
