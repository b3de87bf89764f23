"""launcher.py - `python -m kscope [options] script.py|pytest ARGS`, and
the same under Proton's module path, `python -m kscope.proton` (proton.py).

Like Proton's `proton` command: starts one session, runs the script as
__main__ (or pytest with its arguments), then finalizes the session and
writes the run's facts beside a tree profile (PROFILE.meta.json). The
script's own start() returns the launcher's session and its finalize() is
ignored. --python-cpu [N] also profiles the Python side with cProfile and
ends with the top N Python functions by exclusive time.

Under `kscope run` (KSCOPE_RUN=1, libkscope preloaded) the session is the
one `kscope run` started, which writes the profile when the program ends;
the options it was given arrive as KSCOPE_RUN_* variables.
"""
import argparse
import os
import runpy
import sys

from . import _kscope
from .flags import flags
from .oneshot import profiler_rows, render_python
from .sessions import backends

PROG = "python -m kscope"
USAGE = """{prog} [options] script.py [script args]
       {prog} [options] pytest [pytest args]"""
BACKENDS = backends() + ["none"]
# Proton's -b names: its other backends (AMD's roctracer, its own
# instrumentation) parse as in Proton and are refused by start() in one line.
PROTON_BACKENDS = backends() + [b for b in ("roctracer", "instrumentation") if b not in BACKENDS] + [
    "none"]


def format_names():
    """The names of the formats a session writes, from the C format table
    (src/format/format.h), in its order."""
    return [name for name, _kind, _extensions in _kscope.formats()]


def parse_args(argv, prog=PROG, backends=BACKENDS):
    p = argparse.ArgumentParser(prog=prog, usage=USAGE.format(prog=prog),
                                description="Profile a Python program or a pytest run with kscope.")
    p.add_argument("-n", "--name", default=None, help="output path without extension (default: kscope)")
    p.add_argument("-b", "--backend", default=None, choices=backends, help="GPU backend (default: auto)")
    p.add_argument("-c", "--context", default="shadow", choices=["shadow", "python"], help="calling context")
    p.add_argument("-d", "--data", default="tree", choices=["tree", "trace"], help="what to record")
    p.add_argument("-m", "--mode", default=None, help="periodic_flushing, or pcsampling[:interval=N] (PC samples per source line)")
    p.add_argument("-k", "--hook", default=None, choices=["triton"], help="install the Triton launch hook")
    p.add_argument("--sample", default=None, metavar="SPEC",
                   help="GPU capture in windows only: time:on=50ms,every=1s or step:on=1,every=10 "
                        "(default: $KSCOPE_SAMPLE)")
    p.add_argument("-f", "--format", default=None, choices=format_names(),
                   help="output format (default: by --data)")
    p.add_argument("--include", default=None, help="regex: kernels whose launch metadata the hook takes")
    p.add_argument("--exclude", default=None, help="regex: kernels the hook leaves alone")
    p.add_argument("--python-cpu", nargs="?", type=int, const=15, default=None, metavar="N",
                   help="end with the top N (default 15) Python functions by exclusive time")
    p.add_argument("target", nargs=argparse.REMAINDER, help="script.py or pytest, and its arguments")
    args = p.parse_args(argv)
    if not args.target:
        p.error(f"no script given: {prog} [options] script.py [args]")
    if args.python_cpu is not None and args.python_cpu < 1:
        p.error(f"--python-cpu takes a count of at least 1, not {args.python_cpu}")
    return args


def run_target(target):
    """Run script.py as __main__ or pytest; returns the exit status."""
    script, rest = target[0], target[1:]
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    try:
        if os.path.basename(script) == "pytest":
            import pytest

            return int(pytest.main(rest))
        if not os.path.isfile(script):
            print(f"kscope: {script}: no such file", file=sys.stderr)
            return 2
        sys.argv = [script] + rest
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            code = e.code
            if code is None:
                return 0
            if isinstance(code, int):
                return code
            print(code, file=sys.stderr)
            return 1
        return 0
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


# What `kscope run -c python|-k HOOK -- python X` passes down (it runs
# `python -m kscope X` with libkscope preloaded and its session started).
RUN_ENV = {"context": "KSCOPE_RUN_CONTEXT", "hook": "KSCOPE_RUN_HOOK", "data": "KSCOPE_RUN_DATA",
           "backend": "KSCOPE_RUN_BACKEND", "mode": "KSCOPE_RUN_MODE"}


def under_kscope_run():
    return os.environ.get("KSCOPE_RUN") == "1"


def apply_run_env(args, argv):
    """Options `kscope run` set in the environment, where the command line
    gave none."""
    given = {a.split("=")[0] for a in argv if a.startswith("-")}
    flags_for = {"context": ("-c", "--context"), "hook": ("-k", "--hook"),
                 "data": ("-d", "--data"), "backend": ("-b", "--backend"),
                 "mode": ("-m", "--mode")}
    for field, var in RUN_ENV.items():
        value = os.environ.get(var)
        if value and not given & set(flags_for[field]):
            setattr(args, field, value)
    if args.name is None and os.environ.get("KSCOPE_RUN_NAME"):
        args.name = os.path.join(os.environ.get("KSCOPE_RUN_DIR", "."), os.environ["KSCOPE_RUN_NAME"])


def save_facts(path, facts):
    """The run's facts (command, host, start time, ...) beside a tree
    profile, as PATH.meta.json; a trace holds them in its metadata. A
    failure is said, not raised: the profile is written."""
    try:
        _kscope.save_run_facts(path, facts)
    except (OSError, MemoryError, RuntimeError, ValueError) as e:
        print(f"kscope: cannot write the run's facts beside {path}: {e}", file=sys.stderr)


def main(argv=None, prog=PROG, backends=BACKENDS):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv, prog, backends)
    driven = under_kscope_run()
    if driven:
        apply_run_env(args, argv[:len(argv) - len(args.target)])
    from . import sessions as _sessions
    from .hooks import LaunchHook

    if args.include or args.exclude:
        LaunchHook().configure(include=args.include, exclude=args.exclude)
    try:
        session = _sessions.start(args.name, context=args.context, data=args.data,
                                 backend=args.backend, mode=args.mode, hook=args.hook,
                                 sample=args.sample)
    except (ValueError, RuntimeError, NotImplementedError) as e:  # refused: one line, as argparse's
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    flags.command_line, flags.command_line_session = True, session
    _kscope.set_max_spans(_kscope.profiling() != 0)  # MAX-style spans record too
    prof = None
    if args.python_cpu is not None:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()
    status = 1
    try:
        status = run_target(args.target)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        if prof is not None:
            prof.disable()
        flags.command_line, flags.command_line_session = False, None
        path = _kscope.output_path(session, args.format)
        facts = None if driven else _kscope.run_facts(session)
        _sessions._finalize_now(None, args.format)
        if not driven:  # else kscope run writes the profile and says where
            save_facts(path, facts)
            print(f"kscope: wrote {path}", file=sys.stderr)
        if prof is not None:
            render_python(profiler_rows(prof), args.python_cpu, sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
