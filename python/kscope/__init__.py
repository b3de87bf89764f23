"""kscope - a profiler for GPU programs.

One package, two familiar APIs over libkscope's C core:

  Proton (triton.profiler): start, activate, deactivate, finalize,
  profile, scope, cpu_timed_scope, enter_scope, exit_scope, state,
  enter_state, exit_state, data, hook="triton", context="python";
  `import kscope as proton` runs a Proton script unchanged.

  MAX (max.profiler): Trace, traced, Tracer, is_profiling_enabled,
  set_gpu_profiling_state, profiled_region, OneShotCapture,
  detect_backend, and the resource diagnostics kscope.gpu
  (GPUDiagContext, BackgroundRecorder) and kscope.cpu
  (CPUMetricsCollector, collect_pids_for_port).
"""
from . import _kscope
from . import _wrap, context
from ._kscope import __version__
from .hooks import LaunchHook, raise_pending as check_errors
from .oneshot import (
    Backend,
    OneShotCapture,
    ProfileBackend,
    cuda_profiler_region,
    default_profile_output,
    detect_backend,
    inject_trace_flags,
    maybe_reexec_under_nsys,
    profiled_region,
    render_nsys_kernel_summary,
)
from .sessions import DEFAULT_PROFILE_NAME, activate, deactivate, finalize, profile, start, step
from .scope import (
    cpu_timed_scope,
    enter_scope,
    enter_state,
    exit_scope,
    exit_state,
    metadata_state,
    scope,
    scoped,
    state,
)
from .tracing import (
    Trace,
    Tracer,
    is_profiling_enabled,
    profiling_level,
    set_gpu_profiling_state,
    traced,
)
from . import cpu, data, gpu, hooks, mode  # noqa: E402
from .report import report_html  # noqa: E402

_kscope._configure(context.frame_skip_prefixes())

ScopedFunction = _kscope.ScopedFunction
add_metrics = _kscope.add_metrics
mark = _kscope.mark
launch_metadata = _kscope.launch_metadata
color = _kscope.color
now_ns = _kscope.now_ns
last_error = _kscope.last_error
SessionError = _kscope.SessionError
MetricTypeError = _kscope.MetricTypeError

__all__ = [
    "DEFAULT_PROFILE_NAME", "Backend", "LaunchHook", "MetricTypeError", "OneShotCapture",
    "ScopedFunction", "SessionError", "Trace",
    "Tracer", "__version__", "activate", "add_metrics", "check_errors", "color", "context",
    "cpu", "cpu_timed_scope", "data", "gpu", "deactivate", "detect_backend", "hooks", "mode",
    "ProfileBackend", "cuda_profiler_region", "default_profile_output", "maybe_reexec_under_nsys", "enter_scope", "enter_state",
    "exit_scope", "exit_state", "report_html", "finalize", "inject_trace_flags",
    "is_profiling_enabled", "last_error", "render_nsys_kernel_summary",
    "launch_metadata", "mark", "metadata_state", "now_ns", "profile", "profiled_region",
    "profiling_level", "scope", "scoped", "set_gpu_profiling_state", "start", "state", "step",
    "traced",
]
