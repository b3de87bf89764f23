"""cpu.py - CPU use of a set of processes (MAX's CPU metrics), from /proc.

    with CPUMetricsCollector([pid, ...]) as c:
        ...
    stats = c.get_stats()   # CPUMetrics of the block (MAX's fields first)

collect_pids_for_port(port) finds the processes listening on a TCP port
(IPv4 and IPv6) and their descendants. A process that exits mid-way is
counted up to its last reading and in `exited`, never an error; as in
MAX, a PID that does not exist when the block begins is skipped.
"""
import os
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
    """Sorted PIDs of the processes listening on `port` and their
    descendants ([] when none). ValueError outside 1..65535; PermissionError
    when the listener belongs to a user this process cannot see."""
    try:
        return _kscope.pids_for_port(port)
    except OSError as e:
        raise PermissionError(str(e)) from None


def _alive(pids):
    return [p for p in pids if os.path.exists(f"/proc/{p}")]


class CPUMetricsCollector:
    """CPU use of `pids` over the `with` block. get_stats() after the block
    measures up to its end (as MAX); inside the block, up to the call."""

    def __init__(self, pids):
        self.pids = [int(p) for p in pids]
        self._procs = None
        self._final = None
        self.processes = []

    def __enter__(self):
        self._final = None
        pids = _alive(self.pids)
        try:
            self._procs = _kscope.CpuProcs(pids)
        except ProcessLookupError:  # one ended just now: skip it, as MAX does
            self._procs = _kscope.CpuProcs(_alive(pids))
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._procs is not None:
            self._final = self._measure()
            self._procs = None
        return False

    def _measure(self):
        totals, per = self._procs.update()
        self.processes = [ProcessMetrics(**p) for p in per]
        return CPUMetrics(**totals)

    def get_stats(self):
        if self._final is not None:
            return self._final
        if self._procs is None:
            raise RuntimeError(
                "Must use CPUMetricsCollector as a context manager before calling get_stats")
        return self._measure()
