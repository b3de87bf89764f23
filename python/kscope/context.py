"""context.py - context="python": the Python stack as the calling context.

With context="python", each kernel is attributed to the Python frames that
launched it ("file:line@function", outermost first, kscope's own frames
left out). Frames are entered as scopes just around each launch that
Python can see:
  - Triton launches, through the launch hook (installed for python-context
    sessions even without hook="triton");
  - torch operations, through a TorchFunctionMode pushed on the thread that
    started the session, or, when torch is not imported yet (`kscope run
    -c python` starts the session before the program runs), on the thread
    that imports it, right after its import.
Kernels launched from C with no Python call around them stay under the
scopes open at the time, as with context="shadow". Frames of kscope and of
Triton's own package (its launcher and hook chain) are left out.
"""
import importlib.abc
import importlib.util
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
        _kscope._configure(frame_skip_prefixes())


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


def _push_torch_mode():
    global _torch_mode
    if _torch_mode is None and _sessions:
        _torch_mode = _make_torch_mode()
        _torch_mode.__enter__()


class _AfterTorchImport(importlib.abc.MetaPathFinder):
    """Waits for `import torch` (one shot): torch's own loader runs, then
    the mode is pushed. Any failure leaves the import as it was."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        _forget_torch_import()
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run_torch = spec.loader.exec_module

        def exec_module(module):
            run_torch(module)
            try:
                _push_torch_mode()
            except Exception:  # never break the program's import
                pass

        spec.loader.exec_module = exec_module
        return spec


_torch_import = None


def _wait_for_torch_import():
    global _torch_import
    if _torch_import is None:
        _torch_import = _AfterTorchImport()
        sys.meta_path.insert(0, _torch_import)


def _forget_torch_import():
    global _torch_import
    if _torch_import is not None:
        try:
            sys.meta_path.remove(_torch_import)
        except ValueError:
            pass
        _torch_import = None


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
    if "torch" in sys.modules:
        _push_torch_mode()
    else:
        _wait_for_torch_import()


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
    _forget_torch_import()
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
