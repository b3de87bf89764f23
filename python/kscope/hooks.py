"""hooks.py - the Triton launch hook (start(hook="triton")).

Triton calls `knobs.runtime.launch_enter_hook(metadata)` before each kernel
launch and `launch_exit_hook(metadata)` after it, where `metadata` is a
LazyDict: `metadata.data` holds the kernel's name cheaply and
`metadata.get()` evaluates the kernel's `launch_metadata` function (name,
flops8/16/32/64, bytes, custom numbers). The enter hook hands those to
kscope_launch_metadata, so they land on the node of the kernel launched
next on this thread. Include/exclude regular expressions on the kernel
name (LaunchHook.configure) skip kernels before launch_metadata is
evaluated (launch_metadata_dict in C turns the dict into
kscope_launch_metadata's arguments). With context="python" the hook also
enters one scope per frame
of the launching Python stack and leaves them after the launch.

In the common case (no filter, no python context) the hook Triton calls is
_kscope.triton_enter, in C, and no exit hook is installed: a Python hook
costs a few hundred ns more per launch. The installed hooks are swapped
whenever the filter or the python context changes.

Errors inside a hook are not raised into Triton's launcher (which would
abort the user's launch): the first one is kept and raised by the next
kscope call that can raise (kscope.check_errors(), deactivate, finalize).
"""
import re
import threading

from . import _kscope

_pending_error = None


def _keep_error(exc):
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


class LaunchHook:
    """The process-wide Triton launch hook (one instance, as in Proton)."""

    _instance = None
    fast = True  # may the C hook stand in for enter()? (tests turn it off)

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
            cls._instance._local = threading.local()
            cls._instance._python_frames = False
            cls._instance.configure()
        return cls._instance

    @property
    def python_frames(self):
        """Enter the launching Python frames as scopes (context="python")."""
        return self._python_frames

    @python_frames.setter
    def python_frames(self, on):
        self._python_frames = bool(on)
        HookManager.refresh()

    def configure(self, *, include=None, exclude=None):
        """Only kernels whose name matches `include` and does not match
        `exclude` (re.match, like Proton) get their launch metadata."""
        self._include = re.compile(include) if include else None
        self._exclude = re.compile(exclude) if exclude else None
        self._filtered = bool(include or exclude)
        HookManager.refresh()

    def hooks(self):
        """The (enter, exit) callables Triton should call now; exit None
        when nothing is to be done after a launch."""
        if self.fast and not self._filtered and not self._python_frames:
            return _kscope.triton_enter, None
        return self.enter, (self.exit if self._python_frames else None)

    def matches(self, kernel_name):
        if kernel_name is None:
            return True
        if self._include is not None and self._include.match(kernel_name) is None:
            return False
        if self._exclude is not None and self._exclude.match(kernel_name) is not None:
            return False
        return True

    def enter(self, metadata):
        try:
            if self._filtered and not self.matches(metadata.data.get("name")):
                frames = 0
            else:
                meta = metadata.get()
                if self._filtered and not self.matches(meta.get("name")):
                    frames = 0
                else:
                    frames = _kscope.enter_frames() if self.python_frames else 0
                    try:
                        _kscope.launch_metadata_dict(meta)
                    except BaseException:
                        if frames:
                            _kscope.exit_frames(frames)
                        raise
        except Exception as exc:  # never raise into Triton's launcher
            _keep_error(exc)
            frames = 0
        if self.python_frames:
            stack = getattr(self._local, "frames", None)
            if stack is None:
                stack = self._local.frames = []
            stack.append(frames)

    def exit(self, metadata):
        if not self.python_frames:
            return
        stack = getattr(self._local, "frames", None)
        if not stack:
            return
        n = stack.pop()
        if n > 0:
            try:
                _kscope.exit_frames(n)
            except Exception as exc:
                _keep_error(exc)


def runtime_knobs():
    """triton.knobs.runtime, or None without Triton."""
    try:
        from triton import knobs  # triton >= 3.3
    except ImportError:
        return None
    return knobs.runtime


class HookManager:
    """Installs the launch hook in Triton while some session wants it."""

    sessions = {}  # session id -> active
    installed = None  # (enter chain, exit chain) as found, or None
    hooks = (None, None)  # the (enter, exit) callables added to them

    @classmethod
    def register(cls, session):
        cls.sessions[session] = True
        try:
            cls._sync()
        except Exception:
            del cls.sessions[session]
            raise

    @classmethod
    def activate(cls, session=None):
        for s in cls.sessions:
            if session is None or s == session:
                cls.sessions[s] = True
        cls._sync()

    @classmethod
    def deactivate(cls, session=None):
        for s in cls.sessions:
            if session is None or s == session:
                cls.sessions[s] = False
        cls._sync()

    @classmethod
    def unregister(cls, session=None):
        if session is None:
            cls.sessions.clear()
        else:
            cls.sessions.pop(session, None)
        cls._sync()

    @classmethod
    def _sync(cls):
        want = any(cls.sessions.values())
        if want and cls.installed is None:
            cls._install()
        elif not want and cls.installed is not None:
            cls._uninstall()

    @classmethod
    def refresh(cls):
        """Swap the installed hooks for the ones LaunchHook wants now."""
        if cls.installed is not None and LaunchHook().hooks() != cls.hooks:
            cls._uninstall()
            cls._install()

    @classmethod
    def _install(cls):
        runtime = runtime_knobs()
        if runtime is None:
            raise RuntimeError("hook='triton' needs triton (import triton failed)")
        enter, exit_ = LaunchHook().hooks()
        enter_chain, exit_chain = runtime.launch_enter_hook, runtime.launch_exit_hook
        if hasattr(enter_chain, "add"):  # triton's HookChain
            enter_chain.add(enter)
            if exit_ is not None:
                exit_chain.add(exit_)
        else:
            runtime.launch_enter_hook = _chain(enter_chain, enter)
            runtime.launch_exit_hook = _chain(exit_, exit_chain)
        cls.installed = (enter_chain, exit_chain)
        cls.hooks = (enter, exit_)

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
