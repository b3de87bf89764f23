"""hook.py - Proton's Hook interface and HookManager, and how hook errors
reach the program.

HookManager keeps Proton's bookkeeping: `session_hooks` (session id ->
{hook: active}) and `active_hooks` (hooks some active session wants,
highest priority first), with register(hook, session), activate,
deactivate and unregister. While a hook is active it is installed in
Triton's `knobs.runtime.launch_enter_hook`/`launch_exit_hook`: kscope's
LaunchHook alone installs the callables it asks for (in the common case
one C function and no exit hook); other hooks go through
HookManager.enter/exit, which call every active hook in order.

When Triton's own profiler package is already loaded in the process
(`triton.profiler.hooks.hook` in sys.modules; kscope never imports it, so
that Proton's library is never loaded into a program for kscope's sake),
kscope registers its hooks with Triton's HookManager instead, so that
Proton's and kscope's hooks share one dispatcher and one bookkeeping.

Errors inside a hook are not raised into Triton's launcher (which would
abort the user's launch): the first one is kept and raised by the next
kscope call that can raise (kscope.check_errors(), deactivate, finalize).
"""
import sys
from collections import defaultdict

from .. import _kscope

_pending_error = None


def keep_error(exc):
    """Keep the first exception a hook met, for raise_pending()."""
    global _pending_error
    if _pending_error is None:
        _pending_error = exc


def raise_pending():
    """Raise (once) the first error a hook met since the last call."""
    global _pending_error
    exc, _pending_error = _pending_error, None
    kept = _kscope.take_hook_error()
    if exc is None:
        exc = kept
    if exc is not None:
        raise RuntimeError(f"kscope: the Triton launch hook failed: {exc}") from exc


def runtime_knobs():
    """triton.knobs.runtime, or None without Triton."""
    try:
        from triton import knobs  # triton >= 3.3
    except ImportError:
        return None
    return knobs.runtime


def peer_manager():
    """Triton's own HookManager when its profiler package is loaded, else None."""
    module = sys.modules.get("triton.profiler.hooks.hook")
    return getattr(module, "HookManager", None)


class Hook:
    """What HookManager drives (Proton's interface)."""

    priority = 0

    def init_handle(self, module, function, name, metadata_group, hash=None):
        pass

    def enter(self, metadata):
        raise NotImplementedError

    def exit(self, metadata):
        raise NotImplementedError

    def activate(self):
        pass

    def deactivate(self):
        pass


class HookManager:
    """Hooks per session, installed in Triton while an active session wants one."""

    active_hooks = []
    session_hooks = defaultdict(lambda: defaultdict(bool))
    peer = None  # Triton's HookManager while it dispatches kscope's hooks
    installed = None  # (enter chain, exit chain) as found, or None
    hooks = (None, None)  # the (enter, exit) callables added to them

    @staticmethod
    def enter(metadata):
        for hook in HookManager.active_hooks:
            hook.enter(metadata)

    @staticmethod
    def exit(metadata):
        for hook in reversed(HookManager.active_hooks):
            hook.exit(metadata)

    @staticmethod
    def init_handle(*args):
        for hook in HookManager.active_hooks:
            hook.init_handle(*args)

    @classmethod
    def register(cls, hook, session):
        """Session `session` wants `hook` (active)."""
        if cls.peer is None and not cls.session_hooks:
            cls.peer = peer_manager()
        if cls.peer is not None:
            cls.peer.register(hook, session)
        cls.session_hooks[session][hook] = True
        if cls._make_active(hook):
            cls.active_hooks.sort(key=lambda h: h.priority, reverse=True)
        try:
            cls._sync()
        except Exception:
            cls.unregister(session)
            raise

    @classmethod
    def activate(cls, session=None):
        if cls._peer_knows(session):
            cls.peer.activate(session)
        for hooks, hook in cls._hooks_of(session):
            cls._make_active(hook)
            hooks[hook] = True
        cls.active_hooks.sort(key=lambda h: h.priority, reverse=True)
        cls._sync()

    @classmethod
    def deactivate(cls, session=None):
        if cls._peer_knows(session):
            cls.peer.deactivate(session)
        for hooks, hook in cls._hooks_of(session):
            hooks[hook] = False
        cls._drop_unwanted()
        cls._sync()

    @classmethod
    def unregister(cls, session=None):
        if session is not None and session not in cls.session_hooks:
            return
        if cls.peer is not None:
            cls.peer.unregister(session)
        if session is None:
            cls.session_hooks.clear()
        else:
            cls.session_hooks.pop(session)
        cls._drop_unwanted()
        cls._sync()

    @classmethod
    def _peer_knows(cls, session):
        """Whether Triton's HookManager dispatches kscope's hooks and is to
        hear of `session` (every session when None)."""
        return cls.peer is not None and (session is None or session in cls.session_hooks)

    @classmethod
    def _hooks_of(cls, session):
        """(that session's {hook: wanted}, hook) for each hook `session`
        registered; for each of every session's when None."""
        if session is None:
            sessions = list(cls.session_hooks)
        else:
            sessions = [session] if session in cls.session_hooks else []
        return [(cls.session_hooks[s], hook) for s in sessions for hook in cls.session_hooks[s]]

    @classmethod
    def _make_active(cls, hook):
        """Activate `hook` and add it to active_hooks (unsorted) unless it is
        there; whether it was added."""
        if hook in cls.active_hooks:
            return False
        hook.activate()
        cls.active_hooks.append(hook)
        return True

    @classmethod
    def _drop_unwanted(cls):
        for hook in list(cls.active_hooks):
            if not any(hooks.get(hook) for hooks in cls.session_hooks.values()):
                hook.deactivate()
                cls.active_hooks.remove(hook)
        if not cls.session_hooks:
            cls.peer = None

    @classmethod
    def _want(cls):
        """The (enter, exit) callables to install now, or None for none."""
        if not cls.active_hooks or cls.peer is not None:
            return None
        from .launch import LaunchHook

        if cls.active_hooks == [LaunchHook()]:
            return LaunchHook().hooks()
        return cls.enter, cls.exit

    @classmethod
    def _sync(cls):
        want = cls._want()
        if cls.installed is not None and want != cls.hooks:
            cls._uninstall()
        if want is not None and cls.installed is None:
            cls._install(want)

    @classmethod
    def refresh(cls):
        """Swap the installed hooks for the ones wanted now (the launch
        hook's filter or python context changed)."""
        if cls.installed is not None:
            cls._sync()

    @classmethod
    def _install(cls, hooks):
        runtime = runtime_knobs()
        if runtime is None:
            raise RuntimeError("hook='triton' needs triton (import triton failed)")
        enter, exit_ = hooks
        enter_chain, exit_chain = runtime.launch_enter_hook, runtime.launch_exit_hook
        if hasattr(enter_chain, "add"):  # triton's HookChain
            enter_chain.add(enter)
            if exit_ is not None:
                exit_chain.add(exit_)
        else:
            runtime.launch_enter_hook = _chain(enter_chain, enter)
            runtime.launch_exit_hook = _chain(exit_, exit_chain)
        cls.installed = (enter_chain, exit_chain)
        cls.hooks = hooks

    @classmethod
    def _uninstall(cls):
        runtime = runtime_knobs()
        enter, exit_ = cls.hooks
        enter_chain, exit_chain = cls.installed
        if hasattr(enter_chain, "remove"):
            enter_chain.remove(enter)
            if exit_ is not None:
                exit_chain.remove(exit_)
        elif runtime is not None:
            runtime.launch_enter_hook, runtime.launch_exit_hook = enter_chain, exit_chain
        cls.installed = None
        cls.hooks = (None, None)


def _chain(first, second):
    """One callable calling first then second, either of which may be None."""
    if first is None:
        return second
    if second is None:
        return first

    def both(metadata):
        first(metadata)
        second(metadata)

    return both
