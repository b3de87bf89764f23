"""launch.py - the Triton launch hook (start(hook="triton")), Proton's
hooks.launch.

Triton calls `knobs.runtime.launch_enter_hook(metadata)` before each kernel
launch and `launch_exit_hook(metadata)` after it, where `metadata` is a
LazyDict: `metadata.data` holds the kernel's name cheaply and
`metadata.get()` evaluates the kernel's `launch_metadata` function (name,
flops8/16/32/64, bytes, custom numbers). The enter hook hands those to
kscope_launch_metadata, so they land on the node of the kernel launched
next on this thread. `metadata.get()` runs inside the state
COMPUTE_METADATA_SCOPE_NAME, so GPU work it does (a tensor's .item()) is
shown under that frame, not mistaken for the kernel's. Reading the values
(a GPU tensor's .item()) happens inside that state too. Include/exclude
regular expressions on the kernel name (LaunchHook.configure) skip kernels
before launch_metadata is evaluated. When Triton's own launch module is
loaded, its `id` context variable is set to kscope's launch id after each
launch, as Proton's hook does. With context="python" the hook also
enters one scope per frame of the launching Python stack and leaves them
after the launch.

In the common case (no filter, no python context, no Triton launch module
loaded) the hook Triton calls is
_kscope.triton_enter, in C, and no exit hook is installed: a Python hook
costs a few hundred ns more per launch. The installed hooks are swapped
whenever the filter or the python context changes.
"""
import re
import sys
import threading

from .. import _kscope
from .hook import Hook, HookManager, keep_error

COMPUTE_METADATA_SCOPE_NAME = "__proton_launch_metadata"


class _LaunchId:
    """The id of the launch this thread's hook handled last (Proton's
    `hooks.launch.id`): ids count up over the process, one per launch whose
    metadata the hook recorded; None before the first."""

    __slots__ = ()

    def get(self, default=None):
        value = _kscope.launch_id()
        return default if value is None else value


id = _LaunchId()  # noqa: A001 - Proton's name


def _tritons_id():
    """Triton's own `triton.profiler.hooks.launch.id` (a ContextVar) when
    that module is loaded (a program or test that imports Triton's hooks
    reads it after a launch), else None. kscope never imports it."""
    return getattr(sys.modules.get("triton.profiler.hooks.launch"), "id", None)


class LaunchHook(Hook):
    """The process-wide Triton launch hook (one instance, as in Proton)."""

    priority = 100  # first among hooks, as Proton's
    _instance = None
    fast = True  # may the C hook stand in for enter()? (tests turn it off)

    def __new__(cls, *args, **kwargs):
        if cls._instance is None:
            hook = super().__new__(cls)
            hook._local = threading.local()
            hook._python_frames = False
            hook._include_re = hook._exclude_re = None
            hook._include_pattern = hook._exclude_pattern = None
            hook._filtered = False
            cls._instance = hook
        return cls._instance

    def __init__(self):
        pass  # a singleton: constructing it again changes nothing

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
        include_re = re.compile(include) if include else None
        exclude_re = re.compile(exclude) if exclude else None
        self._include_pattern, self._exclude_pattern = include, exclude
        self._include_re, self._exclude_re = include_re, exclude_re
        self._filtered = bool(include or exclude)
        HookManager.refresh()

    def hooks(self):
        """The (enter, exit) callables Triton should call now; exit None
        when nothing is to be done after a launch. The C hook alone when
        there is nothing for Python to do: no filter, no python context,
        no Triton launch id to set."""
        if self.fast and not self._filtered and not self._python_frames and _tritons_id() is None:
            return _kscope.triton_enter, None
        return self.enter, (self.exit if self._python_frames else None)

    def matches(self, kernel_name):
        if kernel_name is None:
            return True
        if self._include_re is not None and self._include_re.match(kernel_name) is None:
            return False
        if self._exclude_re is not None and self._exclude_re.match(kernel_name) is not None:
            return False
        return True

    def enter(self, metadata):
        frames = 0
        try:
            if not self._filtered and not self._python_frames and self.fast:
                _kscope.triton_enter(metadata)  # the C hook (under Triton's dispatcher)
            elif not self._filtered or self.matches(metadata.data.get("name")):
                frames = self._record(metadata)
            tritons_id = _tritons_id()
            if tritons_id is not None:  # Proton's LaunchHook sets it per launch
                tritons_id.set(_kscope.launch_id())
        except Exception as exc:  # never raise into Triton's launcher
            keep_error(exc)
        if self._python_frames:
            stack = getattr(self._local, "frames", None)
            if stack is None:
                stack = self._local.frames = []
            stack.append(frames)

    def _record(self, metadata):
        """Evaluate launch_metadata and hand its values on, inside its state
        (reading a GPU tensor's value is GPU work of the metadata's), unless
        the name it gives is filtered out; then enter the Python frames.
        Returns the frames entered."""
        in_state = _kscope.state_enter(COMPUTE_METADATA_SCOPE_NAME)
        try:
            meta = metadata.get()
            if self._filtered and not self.matches(meta.get("name")):
                return 0
            _kscope.launch_metadata_dict(meta)
        finally:
            if in_state:
                _kscope.state_exit()
        return _kscope.enter_frames() if self._python_frames else 0

    def exit(self, metadata):
        if not self._python_frames:
            return
        stack = getattr(self._local, "frames", None)
        if not stack:
            return
        n = stack.pop()
        if n > 0:
            try:
                _kscope.exit_frames(n)
            except Exception as exc:
                keep_error(exc)

    @classmethod
    def adopt(cls, hook):
        """kscope's LaunchHook for a hook object given to start(hook=...):
        kscope's own, or Triton's LaunchHook, whose include/exclude
        patterns (Proton's configure) carry over."""
        mine = cls()
        if hook is mine:
            return mine
        if type(hook).__name__ != "LaunchHook":
            raise ValueError(f"hook {hook!r} is not None, 'triton' or a LaunchHook")
        include = getattr(hook, "_include_pattern", None)
        exclude = getattr(hook, "_exclude_pattern", None)
        if include or exclude or mine._filtered:
            mine.configure(include=include, exclude=exclude)
        return mine
