"""mode.py - session modes with Proton's names: ``PCSampling(interval=N)``.

``start(mode=...)`` takes a mode object or its string: "periodic_flushing",
"pcsampling" or "pcsampling:interval=N" (Proton's own PCSampling objects,
whose string is "pc_sampling:interval=N", are taken as well).
"""
from dataclasses import dataclass, field

__all__ = ["PCSampling"]


@dataclass(frozen=True)
class PCSampling:
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
