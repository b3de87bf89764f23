"""_wrap.py - how kscope's decorators wrap functions.

A plain function becomes a `ScopedFunction` (C, vectorcall): it enters the
scope, calls the function and leaves the scope without Python frames in
between. An async function becomes an async function whose coroutine runs
inside an async scope (_kscope.AsyncScope, kscope_async_* in C): one call
per await of the coroutine and its time from first resume to end, as for a
plain call. Each step (resume to suspension) is the thread's innermost
scope while it runs, so coroutines interleaved on one event loop never
leave scopes out of order on the thread's stack, and what a step does
lands under the coroutine's scope.
"""
import functools
import inspect

from . import _kscope


def _is_async(func):
    return inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__func__", None)
    )


class _StepScoped:
    """Awaitable that drives `coro` inside an async scope.

    The scope's call begins at the first resume and ends when the coroutine
    returns or raises; each step opens on resume and closes on suspension,
    unless the coroutine itself left scopes open across the suspension (a
    `with scope(...)` around an await): then the step stays open under them
    until a later suspension, or the end, finds them closed.
    """

    __slots__ = ("coro", "name", "color", "flags", "metrics", "max_span")

    def __init__(self, coro, name, color, flags, metrics, max_span=False):
        self.coro = coro
        self.name = name
        self.color = color
        self.flags = flags
        self.metrics = metrics
        self.max_span = max_span

    def __await__(self):
        coro = self.coro
        scope = _kscope.AsyncScope(self.name, self.color, self.flags, self.max_span)
        if not scope.begin(self.metrics):  # nothing recorded: just drive it
            return (yield from coro.__await__())
        resume, suspend = scope.resume, scope.suspend
        value, error = None, None
        while True:
            try:
                if error is None:
                    yielded = coro.send(value)
                else:
                    yielded = coro.throw(error)
            except BaseException as done:
                scope.end()
                if isinstance(done, StopIteration):
                    return done.value
                raise
            suspend()
            try:
                value, error = (yield yielded), None
            except BaseException as exc:  # forwarded into the coroutine
                value, error = None, exc
            resume()


def wrap(func, name, metrics=None, color=None, flags=0, max_span=False):
    """Return func wrapped in a scope named `name`, keeping its metadata.
    `max_span`: a MAX span (traced, Trace), recorded only while MAX's
    switch is on."""
    if _is_async(func):
        max_spans = _kscope.max_spans

        @functools.wraps(func)
        async def async_wrapper(*args, **kwargs):
            if max_span and not max_spans():
                return await func(*args, **kwargs)
            return await _StepScoped(func(*args, **kwargs), name, color, flags, metrics, max_span)

        return async_wrapper
    wrapper = _kscope.ScopedFunction(func, name, metrics, color, flags, max_span)
    functools.update_wrapper(wrapper, func)
    return wrapper


def decorate(scope_obj, func):
    """What `scope(...)(func)`, `cpu_timed_scope(...)(func)` and
    `Trace(...)(func)` return (called from the C types)."""
    if not callable(func):
        raise TypeError(f"{type(scope_obj).__name__} decorates a callable, not {type(func).__name__}")
    return wrap(func, scope_obj.name, scope_obj.metrics, scope_obj.color or None, scope_obj.flags,
                scope_obj.max_span)
