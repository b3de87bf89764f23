"""tracing.py - MAX's max.profiler API: Trace, traced, Tracer and the
profiling switch.

`Trace` and `Tracer` are C types; `traced` wraps plain functions with a
C-level ScopedFunction and async functions step by step (see _wrap.py).
The switch is process-wide: KSCOPE_PROFILING (or MODULAR_ENABLE_PROFILING)
= off|on|detailed at start-up, set_gpu_profiling_state() at run time;
"detailed" also emits each span as an NVTX range for Nsight Systems.

As in MAX, the MAX-style calls (Trace, traced, Tracer) are no-ops and
is_profiling_enabled() is False until one of those variables is set,
set_gpu_profiling_state() turns profiling on, or the program runs under
`kscope run` or `python -m kscope`. Proton-style scopes and sessions record
whenever a session is started, whatever this switch says.
"""
import atexit
import os
import sys

from . import _kscope
from ._wrap import wrap

Trace = _kscope.Trace
Tracer = _kscope.Tracer

_LEVELS = {0: "off", 1: "on", 2: "detailed"}


def _max_spans_at_start():
    if os.environ.get("KSCOPE_RUN") == "1":
        return _kscope.profiling() != 0
    if any(os.environ.get(v) for v in ("KSCOPE_PROFILING", "MODULAR_ENABLE_PROFILING")):
        return _kscope.profiling() != 0
    return False


_kscope.set_max_spans(_max_spans_at_start())


def lost_spans_line(n):
    """What the exit says of n MAX-style spans no session recorded."""
    why = next((f"{v}={os.environ[v]}" for v in ("MODULAR_ENABLE_PROFILING", "KSCOPE_PROFILING")
                if os.environ.get(v)), "set_gpu_profiling_state()")
    spans = "1 MAX-style span" if n == 1 else f"{n} MAX-style spans"
    sinks = " or ".join(_kscope.range_sinks())
    return (f"kscope: {spans} (Trace, traced, Tracer) went nowhere"
            f"{', not even to ' + sinks if sinks else ''}: {why} "
            "turned them on, but no kscope session was running; run the program under "
            "`kscope run` to record them\n")


def _say_where_spans_went():
    """At exit, once: the MAX-style spans profiling was on for but no
    session recorded (MAX sends them to its tracer; kscope records them
    only inside a session)."""
    n = _kscope.max_spans_lost()
    if n and not os.environ.get("KSCOPE_QUIET"):
        sys.stderr.write(lost_spans_line(n))


atexit.register(_say_where_spans_went)
if hasattr(os, "register_at_fork"):  # a forked child tells of its own spans only
    os.register_at_fork(after_in_child=lambda: _kscope.max_spans_lost(True))


def is_profiling_enabled():
    """True when MAX-style spans record: a profiling variable is set (and
    not "off"), set_gpu_profiling_state() turned profiling on, or a kscope
    launcher runs the program."""
    return _kscope.max_spans() and _kscope.profiling() != 0


def profiling_level():
    """"off", "on" or "detailed"."""
    return _LEVELS[_kscope.profiling()]


def set_gpu_profiling_state(mode, /):
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
    _kscope.set_max_spans(_kscope.profiling() != 0)


def traced(func=None, *, message=None, color="modular_purple"):
    """Decorator: a span around each call of func (plain or async), named
    `message` or the function's name. Keeps the function's name and
    docstring."""
    if func is None:
        return lambda f: traced(f, message=message, color=color)
    return wrap(func, message if message is not None else func.__name__, None,
                _kscope.color(color) if isinstance(color, str) else color, 0, max_span=True)
