"""mode.py - Proton's mode objects (proton.mode), for start(mode=...).

A mode is given as a string ("periodic_flushing",
"periodic_flushing:format=hatchet_msgpack", "pcsampling" or
"pcsampling:interval=N") or as one of these objects, whose str() is the
string (Proton's own PCSampling objects, whose string is
"pc_sampling:interval=N", are taken as well). InstrumentationMode, Default and
MMA select Proton's instrumentation backend (code added to the kernels),
which kscope does not have: start() refuses them with a clear error.
"""
from dataclasses import dataclass, field
from enum import Enum
from typing import List

METRIC_TYPES = ("cycle",)
BUFFER_STRATEGIES = ("circular", "flush")
BUFFER_TYPES = ("shared", "global", "stack")
SAMPLING_STRATEGIES = ("none", "selective")
GRANULARITIES = ("cta", "warp", "warp_2", "warp_4", "warp_8", "warp_group", "warp_group_2",
                 "warp_group_4", "warp_group_8")


class Optimize(Enum):
    TIMESHIFT = "time_shift"
    SCHED_STORES = "sched_stores"
    SCHED_BARRIERS = "sched_barriers"
    CLOCK32 = "clock32"

    def __str__(self):
        return self.value


@dataclass(frozen=True)
class BaseMode:
    name: str


@dataclass(frozen=True)
class PCSampling(BaseMode):
    """PC sampling: every ``interval`` GPU cycles (32 to 2**31, rounded to a
    power of two) each SM's warps are sampled; samples land below each
    kernel per source line (``file:line@function``) with their stall
    reasons (``num_samples``, ``num_stalled_samples``, ``stalled_<reason>``)."""

    name: str = field(default="pcsampling", init=False)
    interval: int = 1024

    def __post_init__(self):
        if isinstance(self.interval, bool) or not isinstance(self.interval, int) or self.interval <= 0:
            raise ValueError("Interval must be a positive integer.")

    def __str__(self):
        return f"{self.name}:interval={self.interval}"


@dataclass(frozen=True)
class InstrumentationMode(BaseMode):
    """Proton's instrumentation backend's settings (kscope: refused at start)."""

    metric_type: str = "cycle"
    sampling_strategy: str = "none"
    sampling_options: str = ""
    granularity: str = "warp"
    buffer_strategy: str = "circular"
    buffer_type: str = "shared"
    buffer_size: int = 0
    optimizations: List[Optimize] = field(default_factory=list)

    def __post_init__(self):
        for name, allowed in (("metric_type", METRIC_TYPES),
                              ("sampling_strategy", SAMPLING_STRATEGIES),
                              ("granularity", GRANULARITIES),
                              ("buffer_strategy", BUFFER_STRATEGIES),
                              ("buffer_type", BUFFER_TYPES)):
            value = str(getattr(self, name))
            if value not in allowed:
                raise ValueError(f"Unknown {name}: {value}")
        opts = self.optimizations
        if isinstance(opts, str):
            opts = [o.strip() for o in opts.split(",") if o.strip()]
        values = [o.value for o in Optimize]
        for o in opts:
            if str(o) not in values:
                raise ValueError(f"Unknown optimization: {o}")
        object.__setattr__(self, "optimizations", [Optimize(str(o)) for o in opts])

    def __str__(self):
        opts = ",".join(str(o) for o in self.optimizations)
        return (f"{self.name}:metric_type={self.metric_type}"
                f":sampling_strategy={self.sampling_strategy}"
                f":sampling_options={self.sampling_options}:granularity={self.granularity}"
                f":buffer_strategy={self.buffer_strategy}:buffer_type={self.buffer_type}"
                f":buffer_size={self.buffer_size}:optimizations={opts}")


@dataclass(frozen=True)
class Default(InstrumentationMode):
    name: str = field(default="default", init=False)


@dataclass(frozen=True)
class MMA(InstrumentationMode):
    name: str = field(default="mma", init=False)


def _kernel_tool():
    """How messages name the default GPU backend's interface (the C
    registry's label of its first built backend, else its first)."""
    from . import _kscope
    found = _kscope.backends()
    built = [label for _name, label, _type, ok in found if ok]
    return (built or [label for _name, label, _type, _ok in found] or ["a GPU backend"])[0]


def mode_string(mode):
    """The mode string the C library takes for start(mode=...): None for
    no mode. Raises ValueError for a mode of no known kind and
    NotImplementedError for Proton's instrumentation modes."""
    if mode is None:
        return None
    if isinstance(mode, InstrumentationMode):
        text = str(mode)
    elif isinstance(mode, BaseMode):
        text = str(mode)
    elif isinstance(mode, str):
        text = mode.strip()
    elif hasattr(mode, "name"):  # Proton's own mode objects
        text = str(mode)
    else:
        raise TypeError(f"mode must be a str or a kscope.mode object, not {type(mode).__name__}")
    if not text:
        return None
    kind = text.split(":", 1)[0]
    if kind in ("default", "mma"):
        raise NotImplementedError(
            f"mode '{text}' is Proton's instrumentation backend (code added to the kernels), "
            f"which kscope does not have; kscope measures kernels with {_kernel_tool()}"
        )
    return text
