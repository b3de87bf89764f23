"""tracing.py - MAX's max.profiler API: Trace, traced, Tracer and the
profiling switch.

`Trace` and `Tracer` are C types; `traced` wraps plain functions with a
C-level ScopedFunction and async functions step by step (see _wrap.py).
The switch is process-wide: KSCOPE_PROFILING (or MODULAR_ENABLE_PROFILING)
= off|on|detailed at start-up, set_gpu_profiling_state() at run time;
"detailed" also emits each span as an NVTX range for Nsight Systems.
"""
from . import _kscope
from ._wrap import wrap

Trace = _kscope.Trace
Tracer = _kscope.Tracer

_LEVELS = {0: "off", 1: "on", 2: "detailed"}


def is_profiling_enabled():
    """True unless profiling is off."""
    return _kscope.profiling() != 0


def profiling_level():
    """"off", "on" or "detailed"."""
    return _LEVELS[_kscope.profiling()]


def set_gpu_profiling_state(mode):
    """Set the switch: "off", "on", "detailed" (also 0/1/2, True/False, or
    an object whose .value or .name is one of those, like MAX's enum)."""
    if isinstance(mode, bool):
        mode = int(mode)
    elif not isinstance(mode, (int, str)):
        value = getattr(mode, "value", None)
        mode = value if isinstance(value, (int, str)) else getattr(mode, "name", mode)
    if isinstance(mode, str):
        mode = mode.lower()
    _kscope.set_profiling(mode)


def traced(func=None, *, message=None, color="modular_purple"):
    """Decorator: a span around each call of func (plain or async), named
    `message` or the function's name. Keeps the function's name and
    docstring."""
    if func is None:
        return lambda f: traced(f, message=message, color=color)
    return wrap(func, message if message is not None else func.__name__, None,
                _kscope.color(color) if isinstance(color, str) else color, 0)
