"""MAX's max.profiler as its source has it (modular/modular,
max/python/max/profiler/): one test per call whose behaviour MAX's code
decides, written from that code. Where kscope differs on purpose,
docs/max-api.md says why and the test says what kscope does instead."""
import io
import os
import socket

import pytest

import kscope
from kscope import cpu as kcpu, gpu as kgpu, oneshot


# ------------------------------------------------------------------ oneshot

@pytest.mark.parametrize("args,want", [
    # --trace and --trace-file added
    (["--model", "m"], ["--model", "m", "--trace", "--trace-file", "p.json"]),
    # a --trace already there is kept, not doubled
    (["--trace", "--n", "3"], ["--trace", "--n", "3", "--trace-file", "p.json"]),
    # every user --trace-file (both spellings) goes, the canonical one is last
    (["--trace-file", "old", "--x", "--trace-file=older", "--trace"],
     ["--x", "--trace", "--trace-file", "p.json"]),
    ([], ["--trace", "--trace-file", "p.json"]),
])
def test_inject_trace_flags(args, want):
    before = list(args)
    assert kscope.oneshot.inject_trace_flags(args, "p.json") == want
    assert args == before  # a new list


def test_render_nsys_kernel_summary_of_a_profile(tmp_path):
    tree = [{"frame": {"name": "ROOT"}, "metrics": {}, "children": [
        {"frame": {"name": "gemm"}, "children": [],
         "metrics": {"time (ns)": 3000, "count": 3, "device_type": "CUDA"}},
        {"frame": {"name": "add"}, "children": [],
         "metrics": {"time (ns)": 1000, "count": 1, "device_type": "CUDA"}}]}]
    path = tmp_path / "p.hatchet"
    path.write_text(__import__("json").dumps(tree))
    out = io.StringIO()
    assert oneshot.render_nsys_kernel_summary(str(path), 1, out) is True
    text = out.getvalue()
    assert "Top 1 GPU kernels (75.0% of GPU time" in text and "gemm" in text
    assert "add" not in text


def test_render_nsys_kernel_summary_without_kernels_prints_nothing(tmp_path):
    empty = tmp_path / "e.hatchet"
    empty.write_text('[{"frame": {"name": "ROOT"}, "metrics": {}, "children": []}]')
    for path in (str(empty), str(tmp_path / "missing.nsys-rep")):
        out = io.StringIO()
        assert oneshot.render_nsys_kernel_summary(path, 15, out) is False
        assert out.getvalue() == ""


def test_oneshot_top_n_zero_is_allowed():
    out = io.StringIO()
    cap = kscope.OneShotCapture(top_n=0, out=out, python=True)
    cap.start()
    cap.end_and_finalize()
    assert "Top 0 " in out.getvalue() or "none captured" in out.getvalue()
    with pytest.raises(ValueError, match="top_n"):  # kscope: docs/max-api.md
        kscope.OneShotCapture(top_n=-1)


def test_oneshot_end_before_start_ends_for_good_silently():
    out = io.StringIO()
    cap = kscope.OneShotCapture(out=out)
    cap.end_and_finalize()
    cap.start()
    cap.end_and_finalize()
    assert out.getvalue() == ""
    assert cap.session is None  # nothing was recorded either


# ------------------------------------------------------------------- Tracer

def test_tracer_trace_stack_holds_a_trace_or_none_per_level():
    kscope.set_gpu_profiling_state("on")
    try:
        t = kscope.Tracer("outer", "red")
        t.push()  # no message: None
        t.push("inner")
        stack = t.trace_stack
        assert [type(e).__name__ if e is not None else None for e in stack] == [
            "Trace", None, "Trace"]
        assert [stack[0].message, stack[2].message] == ["outer", "inner"]
        assert stack[0].color == kscope.color("red")
        assert stack[2].color == kscope.color("modular_purple")
        t.cleanup()
        assert t.trace_stack == []
    finally:
        kscope.set_gpu_profiling_state("on")


def test_tracer_trace_stack_is_none_while_profiling_is_off():
    kscope.set_gpu_profiling_state("off")
    try:
        t = kscope.Tracer("quiet")
        assert t.trace_stack == [None]
    finally:
        kscope.set_gpu_profiling_state("on")


def test_tracer_pop_on_an_empty_stack_raises_index_error():
    t = kscope.Tracer()  # MAX pushes None for no message
    t.pop()
    with pytest.raises(IndexError):
        t.pop()
    t = kscope.Tracer("x")
    t.cleanup()
    with pytest.raises(IndexError):
        t.pop()


def test_tracer_mark_on_an_empty_stack_asserts():
    t = kscope.Tracer()
    t.pop()
    with pytest.raises(AssertionError, match="stack underflow"):
        t.mark()


# ----------------------------------------------------------------------- CPU

def test_cpu_collector_attributes_before_and_after():
    pid = os.getpid()
    c = kcpu.CPUMetricsCollector([pid])
    assert c.pids == [pid]
    assert c.clock_start is None and c.clock_end is None
    assert c.cpu_times_start == {} and c.cpu_times_end == {}
    with c:
        sum(range(200000))
    assert c.clock_start < c.clock_end
    start, end = c.cpu_times_start[pid], c.cpu_times_end[pid]
    assert end.user >= start.user and end.system >= start.system
    stats = c.get_stats()
    assert stats.elapsed == pytest.approx(c.clock_end - c.clock_start)


def test_cpu_collector_skips_a_missing_pid_and_keeps_the_elapsed_time():
    missing = 999999
    while os.path.exists(f"/proc/{missing}"):
        missing += 1
    c = kcpu.CPUMetricsCollector([missing])
    with c:
        sum(range(200000))
    assert c.cpu_times_start == {missing: None} and c.cpu_times_end == {missing: None}
    stats = c.get_stats()
    assert stats.user == 0 and stats.system == 0
    assert stats.elapsed > 0 and stats.elapsed == pytest.approx(c.clock_end - c.clock_start)


def test_cpu_collector_get_stats_before_the_block_raises():
    with pytest.raises(RuntimeError, match="context manager"):
        kcpu.CPUMetricsCollector([os.getpid()]).get_stats()


@pytest.mark.parametrize("port", [0, 70000, -1])
def test_collect_pids_for_port_no_listener_possible_is_empty(port):
    assert kcpu.collect_pids_for_port(port) == []


def test_collect_pids_for_port_of_a_listener():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert os.getpid() in kcpu.collect_pids_for_port(s.getsockname()[1])
    with pytest.raises(TypeError, match="int"):  # kscope: docs/max-api.md
        kcpu.collect_pids_for_port("8000")


# ----------------------------------------------------------------------- GPU

def test_background_recorder_interval_zero_is_allowed():
    rec = kgpu.BackgroundRecorder(interval=0)
    with rec:
        pass
    assert isinstance(rec.stats, list)
    with pytest.raises(ValueError, match="non-negative"):
        kgpu.BackgroundRecorder(interval=-1)


def test_background_recorder_exception_in_block_leaves_no_stats():
    rec = kgpu.BackgroundRecorder(interval=0.01)
    with pytest.raises(KeyError):
        with rec:
            raise KeyError("boom")
    with pytest.raises(RuntimeError):
        rec.stats
    with rec:  # as MAX's: a block that raised kept nothing, so it runs again
        pass
    assert isinstance(rec.stats, list)


def test_background_recorder_misuse():
    rec = kgpu.BackgroundRecorder(interval=0.01)
    with pytest.raises(RuntimeError, match="not finished"):
        rec.stats
    with rec:
        with pytest.raises(RuntimeError, match="already running"):
            rec.__enter__()
    with pytest.raises(RuntimeError, match="used once"):
        with rec:
            pass


def test_gpu_diag_context_exit_without_enter_asserts():
    with pytest.raises(AssertionError):
        kgpu.GPUDiagContext().__exit__(None, None, None)


def test_gpu_diag_context_enter_twice_asserts_and_stats_outside_are_empty():
    ctx = kgpu.GPUDiagContext()
    assert ctx.get_stats() == {}
    with ctx:
        with pytest.raises(AssertionError, match="already-entered"):
            ctx.__enter__()
    assert ctx.get_stats() == {}
