"""hooks - Proton's hooks package: the Triton launch hook and the manager
that installs hooks in Triton while a session wants them.

  hooks.hook.Hook, hooks.hook.HookManager  (register(hook, session), ...)
  hooks.launch.LaunchHook                  (the singleton; configure(include=, exclude=))
  hooks.launch.COMPUTE_METADATA_SCOPE_NAME (the state around launch_metadata)
  hooks.launch.id                          (this thread's last launch id: .get())
"""
from .hook import Hook, HookManager, raise_pending, runtime_knobs
from .launch import COMPUTE_METADATA_SCOPE_NAME, LaunchHook

__all__ = ["COMPUTE_METADATA_SCOPE_NAME", "Hook", "HookManager", "LaunchHook", "raise_pending",
           "runtime_knobs"]
