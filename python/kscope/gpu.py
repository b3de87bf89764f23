"""gpu.py - MAX's max.profiler.gpu over kscope's GPU diagnostics.

GPUDiagContext().get_stats() gives {"nv0": GPUStats, ...} with MAX's field
names and GPU names (each vendor's prefix and index, from the extension);
BackgroundRecorder(interval=...) samples on a thread of kscope's own (no
subprocess) while its `with` block runs, and `stats` then holds the time
series. Each GPU vendor's library is loaded at run time: without one, or
without its GPUs, that vendor's part is empty and the reason is in
`GPUDiagContext.errors`, as (prefix, exception).
"""
from dataclasses import dataclass
from typing import Literal, Optional, Protocol

from . import _kscope

# Why a GPU's clock is below its boost ceiling (MAX's vocabulary). "gpu_idle" is reported whenever the GPU idles: intersect
# with HARDWARE_THROTTLE_REASONS to find real throttling.
ThrottleReason = Literal[
    "gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
    "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown",
    "display_clock_setting",
]

HARDWARE_THROTTLE_REASONS = frozenset({
    "sw_power_cap", "hw_slowdown", "sync_boost", "sw_thermal_slowdown",
    "hw_thermal_slowdown", "hw_power_brake_slowdown",
})


@dataclass(frozen=True)
class MemoryStats:
    total_bytes: int
    free_bytes: int
    used_bytes: int
    reserved_bytes: Optional[int]


@dataclass(frozen=True)
class UtilizationStats:
    gpu_usage_percent: int
    memory_activity_percent: Optional[int]


@dataclass(frozen=True)
class ClockStats:
    core_mhz: int
    core_max_mhz: int
    mem_mhz: Optional[int]
    mem_max_mhz: Optional[int]
    throttle_reasons: Optional[list]

    @property
    def hardware_throttled(self):
        """True when a reason set is a hardware cap (not idle, not a setting)."""
        return bool(set(self.throttle_reasons or ()) & HARDWARE_THROTTLE_REASONS)


@dataclass(frozen=True)
class GPUStats:
    memory: MemoryStats
    utilization: UtilizationStats
    clocks: Optional[ClockStats] = None
    power_mw: Optional[int] = None
    temperature_c: Optional[int] = None


def stats_from_dict(d):
    """GPUStats from the dict _kscope.gpu_stats returns (absent fields:
    None, or 0 where MAX's field is not optional)."""
    memory = MemoryStats(d.get("total_bytes", 0), d.get("free_bytes", 0), d.get("used_bytes", 0),
                         d.get("reserved_bytes"))
    util = UtilizationStats(d.get("gpu_usage_percent", 0), d.get("memory_activity_percent"))
    clocks = None
    if "core_mhz" in d:
        reasons = d.get("throttle_reasons")
        clocks = ClockStats(d["core_mhz"], d.get("core_max_mhz", 0), d.get("mem_mhz"),
                            d.get("mem_max_mhz"),
                            None if reasons is None else _kscope.throttle_names(reasons))
    return GPUStats(memory, util, clocks, d.get("power_mw"), d.get("temperature_c"))


class GPUDiagContext:
    """`with GPUDiagContext() as ctx: ctx.get_stats()` -> {"nv0": GPUStats}."""

    def __init__(self):
        self._count = None
        self.errors = []

    def __enter__(self):
        if self._count is not None:
            raise AssertionError("Can't enter an already-entered context")
        try:
            self._count = _kscope.gpu_init()
        except RuntimeError:
            self._count = -1
        self.errors += [(prefix, RuntimeError(f"no GPU metrics: {why}"))
                        for prefix, _library, why in _kscope.gpu_vendors() if why]
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._count is None:  # as MAX's assert (kept under python -O)
            raise AssertionError("GPUDiagContext exited without being entered")
        if self._count >= 0:
            _kscope.gpu_shutdown()
        self._count = None
        return False

    @property
    def gpu_count(self):
        return max(self._count or 0, 0)

    def names(self):
        return {_kscope.gpu_id(i): _kscope.gpu_name(i) for i in range(self.gpu_count)}

    def get_stats(self):
        if self._count is None:
            return {}  # outside the `with` block nothing is open (MAX: {})
        stats = (_kscope.gpu_stats(i) for i in range(self.gpu_count))
        return {g["id"]: stats_from_dict(g) for g in stats}

    def process_memory(self, pid, device=0):
        """GPU memory (bytes) process `pid` uses on `device`."""
        return _kscope.gpu_process_memory(device, pid)


class GpuStatsRecorder(Protocol):
    """What a background GPU sampler offers (BackgroundRecorder is one):
    sampling inside its `with` block, then `stats`, a list of
    {"nv0": GPUStats, ...}."""

    def __enter__(self): ...

    def __exit__(self, exc_type, exc, tb): ...

    @property
    def stats(self) -> list: ...


# The shortest interval the sampler keeps (its C floor): what interval=0,
# MAX's "back to back", and any shorter interval sample at.
MIN_INTERVAL = 0.001


class BackgroundRecorder:
    """Sample every GPU each `interval` seconds (0 and anything below 1 ms:
    every millisecond, kscope's fastest) while the `with` block runs;
    `stats` (a list of {"nv0": GPUStats, ...}) is valid after a block that
    ended normally. As in MAX, a block that raised keeps no stats: `stats`
    then raises."""

    def __init__(self, *, interval=1.0):
        if interval < 0:
            raise ValueError("Interval must be non-negative")
        self._interval = interval
        self._rec = None
        self._stats = None
        self._raised = False

    @property
    def stats(self):
        if self._raised:
            raise RuntimeError("Recorder stopped by an exception in its block: no stats kept")
        if self._stats is None:
            raise RuntimeError("Recorder has not finished yet")
        return self._stats

    def __enter__(self):
        if self._rec is not None:
            raise RuntimeError("Recorder already running")
        if self._stats is not None:
            raise RuntimeError("Recorder has already been used once")
        self._raised = False  # a block that raised kept nothing: it may run again, as MAX's
        self._rec = _kscope.Recorder(max(self._interval, MIN_INTERVAL) * 1000.0)
        return self

    def __exit__(self, exc_type, exc, tb):
        rec, self._rec = self._rec, None
        if rec is None:
            return False
        rec.stop()
        if exc is not None:
            self._raised = True
            return False
        self._stats = [
            {g["id"]: stats_from_dict(g) for g in s["gpus"]} for s in rec.samples()
        ]
        return False
