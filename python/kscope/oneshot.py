"""oneshot.py - MAX's one-shot capture without nsys, and detect_backend().

profiled_region(top_n=15) and OneShotCapture record only between their
start and end: a kscope session for the GPU side and cProfile for the
Python side. When the region ends they print the top-N GPU kernels (by
total time: %, total, count, average, name) and the top-N Python/CPU
functions by exclusive time (%, total, calls, file:line(function)),
kscope's own frames left out.

MAX's entry points keep their names: maybe_reexec_under_nsys re-runs the
program under `kscope run` (kscope's counterpart of nsys),
default_profile_output names its profile, render_nsys_kernel_summary
prints the kernel table of a profile (kscope's, or an nsys report through
`nsys stats`), inject_trace_flags rewrites a benchmark's arguments as
MAX's does, cuda_profiler_region brackets a region with
cudaProfilerStart/Stop (what `kscope run --capture-range=cudaProfilerApi`
listens to), and ProfileBackend is MAX's shape of what detect_backend()
finds. docs/max-api.md lists where kscope differs from MAX, and why.
"""
import contextlib
import cProfile
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from . import _kscope
from .formats import with_formats

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def format_ns(ns):
    """A duration in a 10-character column: '  12.34 ms'."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:7.2f} {unit:>2}"
    return f"{ns:7.0f} ns"


# ------------------------------------------------------------------ kernels

def kernel_rows(tree):
    """[(name, total_ns, count)] of every GPU activity in a .hatchet tree
    (nodes with a device_type), summed by name."""
    totals = {}
    stack = [tree[0]] if tree else []
    while stack:
        node = stack.pop()
        metrics = node.get("metrics", {})
        if "device_type" in metrics:
            name = node.get("frame", {}).get("name", "?")
            t, c = totals.get(name, (0, 0))
            totals[name] = (t + int(metrics.get("time (ns)", 0)), c + int(metrics.get("count", 0)))
        stack.extend(node.get("children", []))
    return [(n, t, c) for n, (t, c) in totals.items()]


def _render_top(out, rows, top_n, *, time, ns_per_unit, floor, what, of, none, header, cells):
    """The top_n of rows by time(row) as a table on out: a title saying
    what share of the time `of` they hold, the header line, then a line a
    row (its share, its time, cells(row)); `none` instead without rows.
    time(row) * ns_per_unit is in ns; floor keeps shares finite when all
    times are 0."""
    if not rows:
        out.write(f"\n=== {what}: {none} ===\n")
        return
    total = sum(time(r) for r in rows)
    rows = sorted(rows, key=time, reverse=True)[:top_n]
    shown = sum(time(r) for r in rows)
    out.write(f"\n=== Top {len(rows)} {what} ({shown / max(total, floor) * 100:.1f}% of "
              f"{of}, {format_ns(total * ns_per_unit).strip()} total) ===\n")
    out.write(f"{'%':>6}  {'total':>10}  {header}\n")
    for r in rows:
        out.write(f"{time(r) / max(total, floor) * 100:5.1f}%  {format_ns(time(r) * ns_per_unit)}  "
                  f"{cells(r)}\n")


def render_kernels(rows, top_n, out):
    """The top_n kernels of kernel_rows() by total time."""
    _render_top(out, rows, top_n, time=lambda r: r[1], ns_per_unit=1, floor=1,
                what="GPU kernels", of="GPU time", none="none captured",
                header=f"{'count':>8}  {'avg':>10}  kernel",
                cells=lambda r: f"{r[2]:>8}  {format_ns(r[1] / max(r[2], 1))}  {r[0]}")


# ----------------------------------------------------------- Python functions

def _short_path(filename):
    for marker in ("/site-packages/", "/dist-packages/"):
        i = filename.rfind(marker)
        if i >= 0:
            return filename[i + len(marker):]
    return filename


def _own_frame(filename, func):
    """kscope's frames, and the profiler switching itself off."""
    return filename.startswith(PACKAGE_DIR) or (filename == "~" and "_lsprof.Profiler" in func)


def python_rows(stats):
    """[(label, calls, exclusive_seconds)] from cProfile's stats dict,
    kscope's own frames left out."""
    rows = []
    for (filename, line, func), (cc, nc, tt, _ct, _callers) in stats.items():
        if _own_frame(filename, func):
            continue
        path = _short_path(filename)
        if func.startswith("<") and func.endswith(">"):
            label = f"{path}:{line}{func}"
        else:
            label = f"{path}:{line}({func})"
        rows.append((label, f"{cc}/{nc}" if cc != nc else str(nc), float(tt)))
    return rows


def render_python(rows, top_n, out):
    """The top_n functions of python_rows() by exclusive time."""
    _render_top(out, rows, top_n, time=lambda r: r[2], ns_per_unit=1e9, floor=1e-12,
                what="Python/CPU functions", of="CPU time", none="no samples captured",
                header=f"{'calls':>8}  function", cells=lambda r: f"{r[1]:>8}  {r[0]}")


def profiler_rows(prof):
    prof.create_stats()
    return python_rows(prof.stats)


# -------------------------------------------------------------- the capture

def _check_top_n(top_n):
    """MAX takes any count; a negative one would cut the table from its
    end (the smallest rows) under a "Top" title, so kscope refuses it."""
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 0:
        raise ValueError(f"top_n must be a count of rows (0 or more), not {top_n!r}")


class OneShotCapture:
    """Record between start() and end_and_finalize() (both idempotent),
    then print the top-N tables to `out` (default stderr). `output`
    (a path without extension) keeps the session's .hatchet; by default it
    is written to a temporary folder and removed. end_and_finalize()
    before start() ends the capture for good: nothing is recorded or
    printed, and a later start() does nothing (as MAX's prints nothing)."""

    def __init__(self, *, top_n=15, out=None, output=None, python=True):
        _check_top_n(top_n)
        self.top_n = top_n
        self.output = output
        self.out = out
        self.python = python
        self.session = None
        self.kernels = []
        self.functions = []
        self.path = None
        self._state = "new"
        self._tmp = None
        self._prof = None

    def start(self):
        if self._state != "new":
            return self
        name = self.output
        if name is None:
            self._tmp = tempfile.mkdtemp(prefix="kscope-oneshot-")
            name = os.path.join(self._tmp, "oneshot")
        self.session = _kscope.start(name, "shadow", "tree", None, None)
        if self.python:
            self._prof = cProfile.Profile()
            try:
                self._prof.enable()
            except ValueError:  # another profiler is active (e.g. --python-cpu)
                self._prof = None
        self._state = "running"
        return self

    def end_and_finalize(self):
        if self._state != "running":
            self._state = "done"  # ended before it started: for good, silently
            return self
        self._state = "done"
        if self._prof is not None:
            self._prof.disable()
            self.functions = profiler_rows(self._prof)
        try:
            _kscope.deactivate(self.session, True)
            tree = json.loads(_kscope.data(self.session, "hatchet"))
            self.kernels = kernel_rows(tree)
            if not self._tmp:
                self.path = _kscope.output_path(self.session, "hatchet")
            _kscope.finalize(self.session, "hatchet")
        finally:
            if self._tmp:
                shutil.rmtree(self._tmp, ignore_errors=True)
        out = self.out or sys.stderr
        render_kernels(self.kernels, self.top_n, out)
        if self.python:
            render_python(self.functions, self.top_n, out)
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.end_and_finalize()
        return False


@contextlib.contextmanager
def profiled_region(*, top_n=15, backend=None, out=None, output=None, python=True):
    """`with profiled_region():` records the block and prints the tables
    (yields None, as MAX's; `backend` is accepted for MAX's signature)."""
    capture = OneShotCapture(top_n=top_n, output=output, out=out, python=python)
    capture.start()
    try:
        yield
    finally:
        capture.end_and_finalize()


def inject_trace_flags(args, profile_output):
    """MAX's argument rewrite for `benchmark --profile`: args with every
    --trace-file (and its value, or --trace-file=...) taken out, --trace
    added unless present, then --trace-file profile_output at the end. A
    new list; args is left as it was."""
    out = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--trace-file":
            skip = True
        elif not arg.startswith("--trace-file="):
            out.append(arg)
    if "--trace" not in out:
        out.append("--trace")
    return out + ["--trace-file", profile_output]


def _nsys_kernel_rows(path):
    """[(name, total_ns, count)] of an Nsight Systems report through `nsys
    stats` (cuda_gpu_kern_sum as CSV); None when nsys cannot give them."""
    cmd = ["nsys", "stats", "--force-export=true", "--report", "cuda_gpu_kern_sum", "--format",
           "csv", path]
    try:
        text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("**")]
    header, rows = None, []
    for row in csv.reader(lines):
        if header is None:
            if any(c.strip().lower().startswith("total time") for c in row):
                header = [c.strip() for c in row]
            continue
        rec = dict(zip(header, row))
        name = (rec.get("Name") or rec.get("Kernel Name") or "").strip()
        total = rec.get("Total Time (ns)") or rec.get("Total Time") or ""
        try:
            rows.append((name, float(total.replace(",", "")),
                         int((rec.get("Instances") or "0").replace(",", ""))))
        except ValueError:
            continue
    return [r for r in rows if r[0]]


def _profile_kernel_rows(path):
    """[(name, total_ns, count)] of a profile kscope reads: a .hatchet
    directly, another format through `kscope convert`; None when it cannot
    be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return kernel_rows(json.load(f))
    except (OSError, ValueError, AttributeError, TypeError, IndexError):
        pass
    cli = _kscope_cli()
    if cli is None:
        return None
    with tempfile.TemporaryDirectory(prefix="kscope-summary-") as tmp:
        converted = os.path.join(tmp, "profile.hatchet")
        if subprocess.run([cli, "convert", path, converted], capture_output=True).returncode:
            return None
        with open(converted, encoding="utf-8") as f:
            return kernel_rows(json.load(f))


@with_formats
def render_nsys_kernel_summary(nsys_rep_path, top_n, out):
    """MAX's name: print the top-N GPU kernels of a profile to `out` (%,
    total, count, average, name) and return True, or return False, printing
    nothing, when it holds no kernel or cannot be read. The profile is one
    kscope reads ({exts}: what maybe_reexec_under_nsys writes) or, as in
    MAX, an Nsight Systems report (.nsys-rep), read through `nsys stats`
    where nsys is on PATH."""
    _check_top_n(top_n)
    path = os.fspath(nsys_rep_path)
    rows = _nsys_kernel_rows(path) if path.endswith(".nsys-rep") else _profile_kernel_rows(path)
    if not rows:
        return False
    render_kernels(rows, top_n, out)
    return True


def default_profile_output():
    """Where maybe_reexec_under_nsys writes by default: max-profile.hatchet
    in $BUILD_WORKSPACE_DIRECTORY or the current folder (MAX's name, with
    kscope's extension)."""
    workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    return os.path.join(workspace or os.path.abspath("."), "max-profile.hatchet")


def _kscope_cli():
    return os.environ.get("KSCOPE_CLI") or shutil.which("kscope")


def maybe_reexec_under_nsys(profile_output=None, *, top_n=15, backend=None, out=None):
    """Re-run this program under `kscope run` (kscope's counterpart of nsys)
    and exit with its status; return at once when already under it, or with
    a one-line note when GPU work cannot be captured here."""
    out = out or sys.stderr  # never the program's own stdout
    if os.environ.get("KSCOPE_RUN") == "1":
        return
    backend = backend or detect_backend()
    cli = _kscope_cli()
    if not backend.can_capture_gpu or cli is None:
        why = ("the kscope command line is not on PATH (set KSCOPE_CLI)" if cli is None
               else getattr(backend, "detail", "") or "no GPU capture on this machine")
        out.write(f"\nNote: {why}; only the Python/CPU profile will be captured.\n")
        return
    profile_output = profile_output or default_profile_output()
    base, ext = os.path.splitext(os.path.abspath(profile_output))
    # a name with a profile's extension keeps its base (kscope run adds the
    # extension of the run's format); anything else is part of the name
    known = {e for _name, _kind, exts in _kscope.formats() for e in exts}
    if ext not in known:
        base += ext
    cmd = [cli, "run", "-o", os.path.dirname(base), "-n", os.path.basename(base),
           "--top", str(top_n), "--", sys.executable] + sys.argv
    out.flush()
    rc = subprocess.call(cmd)
    sys.exit(rc)


@contextlib.contextmanager
def cuda_profiler_region():
    """The GPU runtime's profiler start on entry and stop on exit
    (cudaProfilerStart/Stop for the CUPTI backend), called through the
    extension: the range `kscope run --capture-range` records.
    RuntimeError when the runtime cannot be loaded."""
    _kscope.gpu_profiler(True)
    try:
        yield
    finally:
        _kscope.gpu_profiler(False)


# ------------------------------------------------------------ detect_backend

@dataclass(frozen=True)
class Backend:
    """What this machine can capture."""

    gpu: bool  # a CUDA driver with at least one device
    cupti: bool  # CUPTI can be loaded
    nvml: bool  # NVML can be loaded
    gpu_count: int
    detail: str  # one line: what is missing and why

    @property
    def can_capture_kernels(self):
        return self.gpu and self.cupti

    # MAX's ProfileBackend names.
    @property
    def can_capture_gpu(self):
        """Whether GPU kernels can be captured here (MAX's name)."""
        return self.can_capture_kernels

    @property
    def nvidia_gpu_present(self):
        return self.gpu

    @property
    def nsys_available(self):
        """kscope needs no nsys: whether the `kscope` command line is found."""
        return _kscope_cli() is not None

    @property
    def cudart_loadable(self):
        probe = _kscope.gpu_probe()
        return bool(probe and probe["runtime"])

    def __str__(self):
        return (f"gpu={'yes' if self.gpu else 'no'} ({self.gpu_count}) "
                f"cupti={'yes' if self.cupti else 'no'} nvml={'yes' if self.nvml else 'no'}"
                + (f": {self.detail}" if self.detail else ""))


@dataclass(frozen=True)
class ProfileBackend:
    """MAX's ProfileBackend; kscope's detect_backend() returns a Backend,
    which has these fields as properties too."""

    nsys_available: bool
    nvidia_gpu_present: bool
    cudart_loadable: bool

    @property
    def can_capture_gpu(self):
        return self.nsys_available and self.nvidia_gpu_present and self.cudart_loadable


def detect_backend():
    """What this machine offers the default GPU backend, as the C side
    finds it (the backend's own driver and library search, through the
    extension): its GPUs, its tool library, its GPUs' diagnostics library.
    Nothing is started for good."""
    probe = _kscope.gpu_probe()
    if probe is None:
        return Backend(gpu=False, cupti=False, nvml=False, gpu_count=0,
                       detail="this kscope has no GPU backend")
    count = probe["devices"]
    return Backend(gpu=count > 0, cupti=probe["tool"], nvml=probe["diag"], gpu_count=count,
                   detail=probe["why"])
