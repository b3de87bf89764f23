"""scope.py - Proton's scope functions and states over the C extension.

`scope` and `cpu_timed_scope` are the C types themselves (context managers
and decorators); this file adds the function forms and `state`.
"""
import threading

from . import _kscope
from ._wrap import wrap

scope = _kscope.scope
cpu_timed_scope = _kscope.cpu_timed_scope

enter_scope = _kscope.enter_scope
exit_scope = _kscope.exit_scope


class state:
    """A state (context manager and decorator): shown as the frame directly
    above the kernels, copies and marks recorded under it."""

    __slots__ = ("name", "_entered")

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"state name must be a str, not {type(name).__name__}")
        self.name = name
        self._entered = []

    def __enter__(self):
        self._entered.append(_kscope.state_enter(self.name))
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._entered.pop():
            _kscope.state_exit()
        return False

    def __call__(self, func):
        import functools
        import inspect

        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*args, **kwargs):
                with state(self.name):
                    return await func(*args, **kwargs)

            return async_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with state(self.name):
                return func(*args, **kwargs)

        return wrapper


def metadata_state():
    """The state for work done to compute metrics (Proton's
    metadata_state): `with kscope.metadata_state(): total = x.sum()` shows
    that kernel under "__proton_launch_metadata", where the Triton hook puts
    the work of launch_metadata, not among the program's own kernels. A
    context manager and decorator, as `state`."""
    from .hooks.launch import COMPUTE_METADATA_SCOPE_NAME

    return state(COMPUTE_METADATA_SCOPE_NAME)


_state_local = threading.local()


def enter_state(name):
    """Set this thread's state (innermost wins)."""
    stack = getattr(_state_local, "entered", None)
    if stack is None:
        stack = _state_local.entered = []
    stack.append(_kscope.state_enter(name))


def exit_state():
    """Leave the state set by the last enter_state."""
    stack = getattr(_state_local, "entered", None)
    if not stack:
        raise ValueError("exit_state() but no state is set on this thread")
    if stack.pop():
        _kscope.state_exit()


def scoped(func=None, *, name=None, metrics=None, cpu_timed=False):
    """Decorator: run func inside a scope named `name` (default: the
    function's qualified name)."""
    def deco(f):
        return wrap(f, name or f.__qualname__, metrics, None,
                    _kscope.CPU_TIMED if cpu_timed else 0)

    return deco if func is None else deco(func)
