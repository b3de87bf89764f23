"""MAX's one-shot capture: profiled_region, OneShotCapture, detect_backend,
and the table renderers."""
import io
import os

import pytest

import kscope
from kscope import oneshot


def busy_function():
    total = 0
    for i in range(200000):  # own time, not a callee's
        total += i * i
    return total


def test_profiled_region_prints_both_tables():
    out = io.StringIO()
    with kscope.profiled_region(top_n=5, out=out):
        with kscope.scope("inside_region"):
            busy_function()
    text = out.getvalue()
    assert "GPU kernels: none captured" in text  # no GPU here
    assert "Python/CPU functions" in text
    header = [l for l in text.splitlines() if l.strip().startswith("%")]
    assert header and "calls" in header[-1] and "function" in header[-1]
    assert "busy_function" in text
    rows = [l for l in text.splitlines() if "(busy_function)" in l]
    assert rows and rows[0].split()[0].endswith("%")


def test_top_n_limits_rows():
    out = io.StringIO()
    with kscope.profiled_region(top_n=2, out=out):
        busy_function()
    lines = out.getvalue().splitlines()
    i = next(k for k, l in enumerate(lines) if "Top 2 Python/CPU functions" in l)
    assert len([l for l in lines[i + 2:] if l.strip()]) == 2


def test_oneshot_capture_idempotent_and_output(tmp_path):
    out = io.StringIO()
    cap = kscope.OneShotCapture(top_n=3, output=str(tmp_path / "keep"), out=out)
    assert cap.start() is cap
    cap.start()
    with kscope.scope("captured"):
        pass
    cap.end_and_finalize()
    cap.end_and_finalize()
    assert out.getvalue().count("GPU kernels") == 1
    assert cap.path == str(tmp_path / "keep") + ".hatchet"
    assert os.path.exists(cap.path)
    # end before start does nothing
    kscope.OneShotCapture(out=out).end_and_finalize()


def test_oneshot_records_only_inside(tmp_path):
    cap = kscope.OneShotCapture(output=str(tmp_path / "only"), out=io.StringIO(), python=False)
    with kscope.scope("before"):
        pass
    with cap:
        with kscope.scope("during"):
            pass
    with kscope.scope("after"):
        pass
    import json

    with open(cap.path) as f:
        root = json.load(f)[0]
    assert [c["frame"]["name"] for c in root["children"]] == ["during"]


def test_bad_top_n():
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="top_n"):
            kscope.OneShotCapture(top_n=bad)


def test_kernel_table_from_a_tree():
    tree = [{
        "frame": {"name": "ROOT"}, "metrics": {},
        "children": [
            {"frame": {"name": "step"}, "metrics": {}, "children": [
                {"frame": {"name": "gemm"}, "children": [],
                 "metrics": {"time (ns)": 3000, "count": 3, "device_type": "CUDA"}},
                {"frame": {"name": "add"}, "children": [],
                 "metrics": {"time (ns)": 1000, "count": 1, "device_type": "CUDA"}},
            ]},
            {"frame": {"name": "gemm"}, "children": [],
             "metrics": {"time (ns)": 1000, "count": 1, "device_type": "CUDA"}},
        ]}, {}]
    rows = sorted(oneshot.kernel_rows(tree))
    assert rows == [("add", 1000, 1), ("gemm", 4000, 4)]
    out = io.StringIO()
    oneshot.render_kernels(rows, 1, out)
    text = out.getvalue()
    assert "Top 1 GPU kernels (80.0% of GPU time, 5.00 us total)" in text
    assert " 80.0%     4.00 us         4     1.00 us  gemm" in text
    assert "add" not in text


def test_format_ns():
    assert oneshot.format_ns(12) == "     12 ns"
    assert oneshot.format_ns(1500) == "   1.50 us"
    assert oneshot.format_ns(2.5e6) == "   2.50 ms"
    assert oneshot.format_ns(3e9) == "   3.00  s"


def test_python_rows_labels():
    stats = {
        ("/x/site-packages/pkg/mod.py", 10, "fn"): (2, 2, 0.5, 0.6, {}),
        ("~", 0, "<built-in method len>"): (1, 3, 0.25, 0.25, {}),
    }
    rows = sorted(oneshot.python_rows(stats))
    assert rows == [("pkg/mod.py:10(fn)", "2", 0.5), ("~:0<built-in method len>", "1/3", 0.25)]


def test_detect_backend():
    b = kscope.detect_backend()
    assert isinstance(b.gpu, bool) and isinstance(b.cupti, bool) and isinstance(b.nvml, bool)
    assert b.can_capture_kernels == (b.gpu and b.cupti)
    text = str(b)
    assert "gpu=" in text and "cupti=" in text and "nvml=" in text
    if not b.gpu:
        assert b.gpu_count == 0 and b.detail
