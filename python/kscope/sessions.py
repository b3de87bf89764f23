"""sessions.py - sessions with Proton's signatures.

start() returns a session id; activate/deactivate/finalize act on one
session or, with None, on all. Under the `python -m kscope` launcher the
program's own start() returns the launcher's session and its finalize()
is ignored, so a Proton-style script runs unchanged under the launcher.
"""
import functools
import inspect
import os
import sys
import warnings

from . import _kscope, context as _context
from .flags import flags
from .formats import with_formats
from .hooks import HookManager, LaunchHook, raise_pending, runtime_knobs
from .mode import mode_string

DEFAULT_PROFILE_NAME = "kscope"

_CONTEXTS = ("shadow", "python")
_DATA = ("tree", "trace")
_python_sessions = set()


def proton_disabled():
    """Triton's `knobs.proton.disable` (TRITON_PROTON_DISABLE): start()
    then starts nothing and returns None, as Proton's does. Read from
    Triton's knobs when Triton is loaded, else from the variable."""
    triton = sys.modules.get("triton")
    knobs = getattr(triton, "knobs", None)
    proton = getattr(knobs, "proton", None)
    if proton is not None and hasattr(proton, "disable"):
        return bool(proton.disable)
    return os.environ.get("TRITON_PROTON_DISABLE", "").strip().lower() in ("1", "true", "on", "yes")


def nvtx_wanted():
    """Triton's `knobs.proton.enable_nvtx` (TRITON_ENABLE_NVTX, default
    on): NVTX ranges (torch.cuda.nvtx, the nvtx package, C libraries)
    become scopes of the sessions started in this process."""
    triton = sys.modules.get("triton")
    knobs = getattr(getattr(triton, "knobs", None), "proton", None)
    if knobs is not None and hasattr(knobs, "enable_nvtx"):
        return knobs.enable_nvtx is None or bool(knobs.enable_nvtx)
    value = os.environ.get("TRITON_ENABLE_NVTX", "").strip().lower()
    return value not in ("0", "false", "off", "no")


def backends():
    """The names backend= takes besides "none": the C registry's GPU
    backends, in its order (also those this build left out, which start()
    then refuses in one line)."""
    return [name for name, _label, _device_type, _built in _kscope.backends()]


def _vendor_ranges():
    """The range sources' ranges (NVTX's) on or off as nvtx_wanted() says;
    a reason they cannot reach kscope (another tool is their injection) is
    a warning."""
    why = _kscope.vendor_ranges(nvtx_wanted())
    if why is not None:
        warnings.warn(why, RuntimeWarning, stacklevel=3)


def _launch_hook(hook):
    """The hook object start(hook=...) registers: None, or kscope's
    LaunchHook for "triton" or a LaunchHook object (kscope's or Triton's)."""
    if hook is None:
        return None
    if hook == "triton":
        return LaunchHook()
    if isinstance(hook, str):
        raise ValueError(f"hook '{hook}' is not None or 'triton'")
    return LaunchHook.adopt(hook)


def _device_scopes(value):
    """The device_scopes option as the C API takes it: None/False (off),
    True ("on"), a string of options, or a dict of them."""
    if value is None or value is False:
        return None
    if value is True:
        return "on"
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, str):
        return value
    raise TypeError(f"device_scopes must be None, a bool, a str or a dict, not "
                    f"{type(value).__name__}")


def start(name=None, *, context="shadow", data="tree", backend=None, mode=None, hook=None,
          sample=None, device_scopes=None, trace_buffer=None, compress=False):
    """Start a session writing to `name` (no extension; default "kscope")
    and return its id. context: "shadow" or "python"; data: "tree" or
    "trace"; backend: None (auto), a name of backends() or "none"; mode: None,
    "periodic_flushing[:format=<format>]", "pcsampling[:interval=N]" or a
    kscope.mode object (PCSampling(interval=N)); hook: None, "triton" or a
    LaunchHook object; sample: None ($KSCOPE_SAMPLE, else every launch),
    "time:on=50ms,every=1s" or "step:on=1,every=10" (GPU work captured in
    those windows only, steps marked by step()), "off"; device_scopes:
    None (off), True, or options of the device-side scopes of kernels
    built with kscope/device.h, as "clock=clock64,granularity=cta" or
    {"clock": "clock64", "sample": 4} (clock, granularity, sample,
    buffer, full; see docs/gpu.md); trace_buffer: the most memory a
    trace's events take, "64M" (None: $KSCOPE_TRACE_BUFFER, else 64
    MiB; the rest goes to disk as the program runs); compress: write the
    trace gzip-compressed (<name>.chrome_trace.gz). Returns None,
    starting nothing, when Triton's knobs.proton.disable is set."""
    launch_hook = _launch_hook(hook)
    if flags.command_line:
        # The launcher's session; a hook the program asks for still applies.
        if launch_hook is not None and runtime_knobs() is not None:
            HookManager.register(launch_hook, flags.command_line_session)
        return flags.command_line_session
    if proton_disabled():
        return None
    mode = mode_string(mode)
    context = "shadow" if context is None else context
    data = "tree" if data is None else data
    if context not in _CONTEXTS:
        raise ValueError(f"context '{context}' is not one of {', '.join(_CONTEXTS)}")
    if data not in _DATA:
        raise ValueError(f"data '{data}' is not one of {', '.join(_DATA)}")
    if launch_hook is not None and runtime_knobs() is None:
        raise RuntimeError("hook='triton' needs triton (import triton failed)")
    dscopes = _device_scopes(device_scopes)
    raise_pending()
    if trace_buffer is not None and not isinstance(trace_buffer, str):
        trace_buffer = str(int(trace_buffer))  # a number of bytes
    session = _kscope.start(
        name if name is not None else DEFAULT_PROFILE_NAME, context, data, backend, mode, sample,
        dscopes, trace_buffer, bool(compress)
    )
    try:
        _vendor_ranges()
        if launch_hook is not None:
            HookManager.register(launch_hook, session)
        if context == "python":
            _python_sessions.add(session)
            _context.enable(session)
    except Exception:
        _kscope.finalize(session)
        HookManager.unregister(session)
        raise
    return session


def _check_command_line(session):
    if flags.command_line and session is not None and session != flags.command_line_session:
        raise ValueError(
            f"session {session} is not the launcher's session {flags.command_line_session}"
        )


def activate(session=None):
    """Resume recording into `session` (None: every session)."""
    _check_command_line(session)
    HookManager.activate(session)
    _kscope.activate(session)


def deactivate(session=None, flushing=False):
    """Pause `session` (None: every session); `flushing` also waits for
    the GPU records of work launched so far."""
    _check_command_line(session)
    HookManager.deactivate(session)
    _kscope.deactivate(session, bool(flushing))
    raise_pending()


@with_formats
def finalize(session=None, output_format=None):
    """Write `session` (None: every session) and end it. output_format:
    the name of a format in _kscope.formats() ({formats}), or None for the
    default of the session's data (tree: {tree_default}, trace:
    {trace_default})."""
    if flags.command_line:
        _check_command_line(session)
        return
    _finalize_now(session, output_format)


def _finalize_now(session, output_format):
    HookManager.unregister(session)
    if session is None or session in _python_sessions:
        _context.disable(session)
        if session is None:
            _python_sessions.clear()
        else:
            _python_sessions.discard(session)
    _kscope.finalize(session, output_format)
    _kscope.graph_release()
    raise_pending()


def _driven():
    """True when a launcher (`python -m kscope`, `kscope run`) owns the
    session: the program's start() returns it and must not pause it."""
    return flags.command_line or os.environ.get("KSCOPE_RUN") == "1"


def _profiling(func, **start_args):
    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def async_wrapper(*args, **kwargs):
            session = start(**start_args)
            try:
                return await func(*args, **kwargs)
            finally:
                if not _driven():
                    deactivate(session)

        return async_wrapper

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        session = start(**start_args)
        try:
            return func(*args, **kwargs)
        finally:
            if not _driven():  # the launcher's session records to the end
                deactivate(session)

    return wrapper


def profile(func=None, *, name=None, context="shadow", data="tree", backend=None, mode=None,
            hook=None, sample=None):
    """Decorator: start a session around each call of the function (like
    Proton, the session is deactivated, not finalized, when it returns).
    Works bare (@profile) and with arguments (@profile(name=...))."""
    start_args = dict(name=name, context=context, data=data, backend=backend, mode=mode, hook=hook,
                      sample=sample)
    if func is None:
        return lambda f: _profiling(f, **start_args)
    return _profiling(func, **start_args)


def step():
    """The program's next step begins (a training step, a request):
    sessions sampled by steps ("step:on=1,every=10") switch GPU capture
    here. Otherwise it costs one call and does nothing."""
    _kscope.step()
