"""report.py - kscope.report_html: the HTML report from Python.

Runs the `kscope` command line (`kscope report --html`), which holds the
readers and the page; the extension carries only the recorder. The
command is $KSCOPE_CLI when set, else `kscope` on PATH."""
import os
import shutil
import subprocess


def _cli():
    cli = os.environ.get("KSCOPE_CLI") or shutil.which("kscope")
    if not cli:
        raise FileNotFoundError("kscope command line not found: put `kscope` on PATH or set KSCOPE_CLI")
    return cli


def report_html(profile, out, other=None):
    """Write one self-contained HTML page for `profile` (flame graph,
    timeline for traces, top kernels) to `out`; with `other`, a diff of
    profile -> other too. Raises ValueError with kscope's one-line message
    when a file cannot be read. Returns `out`."""
    args = [_cli(), "report", "--html", os.fspath(out), os.fspath(profile)]
    if other is not None:
        args.append(os.fspath(other))
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(r.stderr.strip() or f"kscope report failed ({r.returncode})")
    return out
