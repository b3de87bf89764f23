"""MAX's max.profiler surface as MAX's source has it: one test per
difference kscope once had."""
import dataclasses
import inspect
import io
import os
import stat
import subprocess
import sys
import textwrap
import typing

import pytest

import kscope
from kscope import _kscope, cpu as kcpu, gpu as kgpu

from conftest import child, kscope_run, tree


def run_py(code, env_extra=None, cwd=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ("KSCOPE_PROFILING", "MODULAR_ENABLE_PROFILING", "KSCOPE_RUN")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


OFF_BY_DEFAULT = """
    import json, kscope
    s = kscope.start(%r)
    @kscope.traced
    def fn(): pass
    fn()
    with kscope.Trace("trace_span") as t:
        t.mark()
    tr = kscope.Tracer("tracer_span"); tr.push("pushed"); tr.mark(); tr.cleanup()
    with kscope.scope("proton_scope"):
        pass
    root = kscope.data.get(s)[0]
    print(json.dumps([kscope.is_profiling_enabled(), [c["frame"]["name"] for c in root["children"]]]))
    kscope.finalize()
"""


def test_max_calls_are_off_without_the_variable(tmp_path):
    r = run_py(OFF_BY_DEFAULT % str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == '[false, ["proton_scope"]]'


def test_max_calls_record_with_the_variable(tmp_path):
    r = run_py(OFF_BY_DEFAULT % str(tmp_path / "p"), {"MODULAR_ENABLE_PROFILING": "1"})
    assert r.returncode == 0, r.stderr
    enabled, names = eval(r.stdout.strip().replace("true", "True").replace("false", "False"))
    assert enabled and names == ["fn", "trace_span", "tracer_span", "proton_scope"]


SPANS_NO_SESSION = """
    import asyncio, os, kscope
    with kscope.Trace("a"):
        pass
    @kscope.traced
    def f(): pass
    f()
    @kscope.traced
    async def g(): pass
    asyncio.run(g())
    t = kscope.Tracer("x"); t.push("y"); t.cleanup()
"""


def kscope_lines(stderr):
    return [line for line in stderr.splitlines() if "MAX-style" in line]


def test_spans_no_session_recorded_are_told_at_exit_once():
    """MODULAR_ENABLE_PROFILING=1 with no session: one line at exit says
    the spans went nowhere and how to record them."""
    r = run_py(SPANS_NO_SESSION, {"MODULAR_ENABLE_PROFILING": "1"})
    assert r.returncode == 0, r.stderr
    (line,) = kscope_lines(r.stderr)
    assert line.startswith("kscope: 5 MAX-style spans (Trace, traced, Tracer) went nowhere")
    assert "MODULAR_ENABLE_PROFILING=1" in line and "`kscope run`" in line
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("env,prefix", [
    ({}, ""),  # the switch off: MAX's calls do nothing, nothing to tell
    ({"MODULAR_ENABLE_PROFILING": "1", "KSCOPE_QUIET": "1"}, ""),
    ({"MODULAR_ENABLE_PROFILING": "1"}, "\n    import kscope; kscope.start(%r)"),  # recorded
])
def test_spans_exit_line_only_when_spans_were_lost(tmp_path, env, prefix):
    code = (prefix % str(tmp_path / "p") if prefix else "") + SPANS_NO_SESSION
    r = run_py(code + ("    kscope.finalize()\n" if prefix else ""), env)
    assert r.returncode == 0, r.stderr
    assert kscope_lines(r.stderr) == []


def test_spans_exit_line_of_a_forked_child_counts_its_own():
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    r = run_py(SPANS_NO_SESSION + """
    if os.fork() == 0:
        with kscope.Trace("in_child"):
            pass
    else:
        os.wait()
    """, {"MODULAR_ENABLE_PROFILING": "1"})
    assert r.returncode == 0, r.stderr
    lines = kscope_lines(r.stderr)
    assert len(lines) == 2, r.stderr
    assert sorted(line.split(" went")[0] for line in lines) == [
        "kscope: 1 MAX-style span (Trace, traced, Tracer)",
        "kscope: 5 MAX-style spans (Trace, traced, Tracer)"]


def test_set_gpu_profiling_state_turns_max_calls_on_and_off(session):
    sid, _ = session
    kscope.set_gpu_profiling_state("off")
    assert not kscope.is_profiling_enabled()
    with kscope.Trace("while_off"):
        pass
    kscope.set_gpu_profiling_state("on")
    assert kscope.is_profiling_enabled()
    with kscope.Trace("while_on"):
        pass
    assert [c["frame"]["name"] for c in tree(sid)["children"]] == ["while_on"]


def test_set_gpu_profiling_state_is_positional_only():
    params = inspect.signature(kscope.set_gpu_profiling_state).parameters
    assert [p.kind for p in params.values()] == [inspect.Parameter.POSITIONAL_ONLY]
    with pytest.raises(TypeError):
        kscope.set_gpu_profiling_state(mode="on")


def test_cpu_metrics_fields_match_max():
    fields = dataclasses.fields(kcpu.CPUMetrics)
    required = [f.name for f in fields if f.default is dataclasses.MISSING]
    assert required == ["user", "user_percent", "system", "system_percent", "elapsed"]
    m = kcpu.CPUMetrics(user=1.0, user_percent=50.0, system=0.5, system_percent=25.0, elapsed=2.0)
    m.user = 2.0  # a plain (mutable) dataclass, as MAX's
    assert m.rss_bytes == 0 and m.exited == 0


def test_cpu_collector_measures_up_to_exit():
    t0 = _kscope.now_ns()
    with kcpu.CPUMetricsCollector([os.getpid()]) as c:
        t1 = _kscope.now_ns()
        end = t1 + 50_000_000
        while _kscope.now_ns() < end:
            pass
        t2 = _kscope.now_ns()
    t3 = _kscope.now_ns()
    first = c.get_stats()
    end = _kscope.now_ns() + 100_000_000
    while _kscope.now_ns() < end:
        pass
    assert c.get_stats() == first  # nothing after __exit__ counts
    # the block's time on kscope's clock, bracketed by readings taken just
    # inside and just outside it (how long anything takes is not asserted)
    assert (t2 - t1) / 1e9 - 1e-9 <= first.elapsed <= (t3 - t0) / 1e9 + 1e-9


def test_cpu_collector_skips_unknown_pid():
    with kcpu.CPUMetricsCollector([999999]) as c:
        pass
    stats = c.get_stats()
    assert stats.user == 0 and stats.system == 0


def test_gpu_diag_get_stats_outside_with_is_empty():
    assert kgpu.GPUDiagContext().get_stats() == {}


def test_throttle_reason_and_recorder_protocol():
    assert "gpu_idle" in typing.get_args(kgpu.ThrottleReason)
    assert kgpu.HARDWARE_THROTTLE_REASONS <= set(typing.get_args(kgpu.ThrottleReason))
    assert hasattr(kgpu, "GpuStatsRecorder")


def test_oneshot_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        kscope.OneShotCapture(5)
    with pytest.raises(TypeError):
        with kscope.profiled_region(5):
            pass


def test_profiled_region_yields_none_and_takes_backend():
    out = io.StringIO()
    with kscope.profiled_region(top_n=3, backend=kscope.detect_backend(), out=out) as value:
        pass
    assert value is None
    assert "Python/CPU functions" in out.getvalue()


def test_profiled_region_leaves_out_kscope_frames():
    out = io.StringIO()
    with kscope.profiled_region(top_n=50, out=out):
        sum(i for i in range(1000))
    text = out.getvalue()
    # the package's own folder, not a substring a checkout path may hold
    package_dir = os.path.dirname(os.path.abspath(kscope.__file__)) + os.sep
    assert package_dir not in text and "_lsprof" not in text, text


def test_profile_backend_and_can_capture_gpu():
    b = kscope.detect_backend()
    assert b.can_capture_gpu == b.can_capture_kernels
    assert b.nvidia_gpu_present == b.gpu
    pb = kscope.ProfileBackend(nsys_available=True, nvidia_gpu_present=True, cudart_loadable=False)
    assert not pb.can_capture_gpu
    assert kscope.ProfileBackend(True, True, True).can_capture_gpu


def test_default_profile_output(monkeypatch, tmp_path):
    monkeypatch.delenv("BUILD_WORKSPACE_DIRECTORY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert kscope.default_profile_output() == str(tmp_path / "max-profile.hatchet")
    monkeypatch.setenv("BUILD_WORKSPACE_DIRECTORY", "/ws")
    assert kscope.default_profile_output() == "/ws/max-profile.hatchet"


def test_maybe_reexec_without_capture_returns_with_a_note():
    out = io.StringIO()
    kscope.maybe_reexec_under_nsys(backend=kscope.ProfileBackend(False, False, False), out=out)
    assert "only the Python/CPU profile" in out.getvalue()


def test_maybe_reexec_runs_under_kscope_run(tmp_path):
    fake = tmp_path / "fake-kscope"
    fake.write_text("#!/bin/sh\necho \"$@\" > \"%s\"\nexit 3\n" % (tmp_path / "args"))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    r = run_py("""
        import kscope
        kscope.maybe_reexec_under_nsys(%r, backend=kscope.ProfileBackend(True, True, True))
        print("not reached")
    """ % str(tmp_path / "out.hatchet"), {"KSCOPE_CLI": str(fake)})
    assert r.returncode == 3 and "not reached" not in r.stdout, r.stderr
    args = (tmp_path / "args").read_text().split()
    assert args[:5] == ["run", "-o", str(tmp_path), "-n", "out"]
    assert args[args.index("--") + 1] == sys.executable
    r = run_py("""
        import kscope
        kscope.maybe_reexec_under_nsys(backend=kscope.ProfileBackend(True, True, True))
        print("returned")
    """, {"KSCOPE_CLI": str(fake), "KSCOPE_RUN": "1"})
    assert r.stdout.strip() == "returned", r.stderr


def test_cuda_profiler_region_needs_cudart():
    if kscope.detect_backend().cudart_loadable:
        with kscope.cuda_profiler_region():
            pass
    else:
        with pytest.raises(RuntimeError, match="libcudart"):
            with kscope.cuda_profiler_region():
                pass


# ------------------------------------------------------ new-user bugs (#13)

PROFILE_UNDER_LAUNCHER = """
import kscope as proton

@proton.profile(name="ignored")
def decorated():
    with proton.scope("inside_profile"):
        pass

decorated()
with proton.scope("after_profile"):
    pass
"""


def test_profile_decorator_keeps_launcher_recording(tmp_path):
    (tmp_path / "s.py").write_text(PROFILE_UNDER_LAUNCHER)
    r = subprocess.run([sys.executable, "-m", "kscope", "-n", "prof", "s.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    import json

    root = json.loads((tmp_path / "prof.hatchet").read_text())[0]
    assert [c["frame"]["name"] for c in root["children"]] == ["inside_profile", "after_profile"]


def test_profile_decorator_under_kscope_run(tmp_path):
    r = kscope_run(tmp_path, "s.py", PROFILE_UNDER_LAUNCHER, "-n", "prof")
    assert r.returncode == 0, r.stdout + r.stderr
    import json

    outputs = [f for f in os.listdir(tmp_path) if f.endswith(".hatchet")]
    root = json.loads((tmp_path / outputs[0]).read_text())[0]
    assert "after_profile" in [c["frame"]["name"] for c in root["children"]]


# ------------------------------------------------------------ Proton gaps

def test_cpu_timed_scope_rejects_cpu_time_metric():
    with pytest.raises(ValueError, match="The metric name 'cpu_time' is reserved."):
        kscope.cpu_timed_scope("s", {"cpu_time": 1})
    kscope.cpu_timed_scope("s", {"other": 1})  # any other name is fine
