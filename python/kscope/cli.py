"""cli.py - the `kscope` command that `pip install` puts on PATH: it runs
the kscope binary a binary wheel carries in the package (kscope/bin/kscope,
with kscope/lib/libkscope.so beside it for `kscope run`), telling it this
interpreter ($KSCOPE_PYTHON) for the commands that are the package's
(`kscope fleet`, the fleet page of `kscope report`). `kscope fleet` itself
runs here, with or without a binary. A source install builds the Python
package only, so there the other commands say how to get one."""
import os
import sys

NO_BINARY = ("kscope: this install of the kscope package carries no kscope binary (a source "
             "install builds the Python package only): install the binary wheel "
             "(tools/wheel.sh) or build it with CMake (see README.md)\n")


def bundled_binary():
    """The path of the bundled kscope binary, or None."""
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "kscope")
    return exe if os.access(exe, os.X_OK) else None


def main():
    if sys.argv[1:2] == ["fleet"]:
        from .fleet.cli import main as fleet_main

        return fleet_main(sys.argv[2:])
    exe = bundled_binary()
    if exe is None:
        sys.stderr.write(NO_BINARY)
        return 2
    os.environ.setdefault("KSCOPE_PYTHON", sys.executable)
    # Named so the binary's hints say plain `kscope` when this launcher is
    # what PATH runs (the binary removes the variable at once).
    os.environ["KSCOPE_LAUNCHER"] = os.path.abspath(sys.argv[0])
    os.execv(exe, [exe] + sys.argv[1:])
    return 2  # not reached: execv replaces this process or raises
