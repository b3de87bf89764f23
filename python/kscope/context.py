"""context.py - context="python": the Python stack as the calling context.

With context="python", each kernel is attributed to the Python frames that
launched it ("file:line@function", outermost first, kscope's own frames
left out). Frames are entered as scopes just around each launch that
Python can see:
  - Triton launches, through the launch hook (installed for python-context
    sessions even without hook="triton");
  - torch operations, through a TorchFunctionMode pushed on the thread that
    started the session (when torch is imported by then).
Kernels launched from C with no Python call around them stay under the
scopes open at the time, as with context="shadow". Frames of kscope and of
Triton's own package (its launcher and hook chain) are left out.
"""
import os
import sys

from . import _kscope

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

_torch_mode = None
_sessions = set()


_skip = [PACKAGE_DIR]


def frame_skip_prefixes():
    """Filename prefixes whose frames never become scopes."""
    return tuple(_skip)


def skip_frames_under(folder):
    """Leave frames of files under `folder` out of python contexts (the
    Triton hook does this for Triton's own package)."""
    prefix = os.path.join(os.path.abspath(folder), "")
    if prefix not in _skip:
        _skip.append(prefix)
        from . import _wrap

        _kscope._configure(_wrap.decorate, frame_skip_prefixes())


def _make_torch_mode():
    import torch
    from torch.overrides import TorchFunctionMode

    class _PythonContextMode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            n = _kscope.enter_frames()
            try:
                return func(*args, **(kwargs or {}))
            finally:
                if n:
                    _kscope.exit_frames(n)

    del torch
    return _PythonContextMode()


def enable(session):
    """Called by start(context="python")."""
    global _torch_mode
    from .hooks import HookManager, LaunchHook

    _sessions.add(session)
    LaunchHook().python_frames = True
    try:
        HookManager.register(LaunchHook(), session)
    except RuntimeError:
        pass  # no triton: torch (below) and scopes still work
    triton = sys.modules.get("triton")
    if triton is not None and getattr(triton, "__file__", None):
        skip_frames_under(os.path.dirname(triton.__file__))
    if _torch_mode is None and "torch" in sys.modules:
        _torch_mode = _make_torch_mode()
        _torch_mode.__enter__()


def disable(session=None):
    """Called by finalize: the last python-context session removes the mode."""
    global _torch_mode
    from .hooks import LaunchHook

    if session is None:
        _sessions.clear()
    else:
        _sessions.discard(session)
    if _sessions:
        return
    LaunchHook().python_frames = False
    if _torch_mode is not None:
        mode, _torch_mode = _torch_mode, None
        try:
            mode.__exit__(None, None, None)
        except Exception:  # the mode stack was changed by someone else
            pass


def depth(session=0):
    """Scopes open on this thread (Proton's context.depth); None when
    nothing is being recorded (profiling off or no such session)."""
    if _kscope.profiling() == 0:
        return None
    try:
        _kscope.output_path(session, None)  # raises for a session that does not exist
    except ValueError:
        return None
    return _kscope.depth()
