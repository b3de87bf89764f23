"""cpu.py - CPU use of a set of processes (MAX's CPU metrics), from /proc.

    with CPUMetricsCollector([pid, ...]) as c:
        ...
        stats = c.get_stats()   # CPUMetrics since the block began

collect_pids_for_port(port) finds the processes listening on a TCP port
(IPv4 and IPv6) and their descendants. A process that exits mid-way is
counted up to its last reading and in `exited`, never an error.
"""
from dataclasses import dataclass

from . import _kscope


@dataclass(frozen=True)
class CPUMetrics:
    user: float  # CPU seconds in user mode within the interval
    user_percent: float  # of one core
    system: float
    system_percent: float
    elapsed: float  # seconds
    rss_bytes: int
    threads: int
    exited: int  # processes that ended within the interval


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


class CPUMetricsCollector:
    """CPU use of `pids` from the start of the `with` block."""

    def __init__(self, pids):
        self.pids = [int(p) for p in pids]
        self._procs = None
        self.processes = []

    def __enter__(self):
        self._procs = _kscope.CpuProcs(self.pids)
        return self

    def __exit__(self, exc_type, exc, tb):
        return False

    def get_stats(self):
        if self._procs is None:
            raise RuntimeError("CPUMetricsCollector used outside its `with` block")
        totals, per = self._procs.update()
        self.processes = [ProcessMetrics(**p) for p in per]
        return CPUMetrics(**totals)
