"""bench_scope.py - cost of one Python scope (enter + exit), side by side.

Runs in one script, alternating the candidates over several rounds and
keeping each one's median, so machine noise hits them alike. Proton's
candidates run in a child process of this script: a process holds one CUPTI
subscriber, and Proton brings its own libcupti, which cannot attach once
another copy has been used in the process. Candidates:
  - an empty loop and a no-op Python context manager (the floor),
  - kscope: scope with a session active, with profiling off,
    cpu_timed_scope, enter_scope/exit_scope, a @scope-decorated call,
    MAX's Trace,
  - Proton (triton.profiler) scope with and without a session,
  - torch.profiler.record_function (no profiler running).
Candidates whose package is missing print "skipped". Prints ns per
iteration and the ratio to kscope's active scope.

  python bench/python/bench_scope.py [--iters N] [--rounds R]
"""
import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time


def timeit(body, iters):
    t0 = time.perf_counter_ns()
    body(iters)
    return (time.perf_counter_ns() - t0) / iters


def make_loop(cm_factory, name="s"):
    def body(n):
        for _ in range(n):
            with cm_factory(name):
                pass

    return body


def empty_loop(n):
    for _ in range(n):
        pass


class NoopCM:
    __slots__ = ()

    def __init__(self, name):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--proton-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.proton_only:
        return proton_child(args)
    tmp = tempfile.mkdtemp(prefix="kscope-bench-")

    import kscope

    proton_results = run_proton_child(args)
    cases = []  # (label, setup, body, teardown)

    cases.append(("empty for loop", None, empty_loop, None))
    cases.append(("no-op Python context manager", None, make_loop(NoopCM), None))

    state = {}

    def ks_start():
        state["s"] = kscope.start(os.path.join(tmp, "ks"))

    def ks_stop():
        kscope.finalize(state.pop("s"))

    cases.append(("kscope scope, session active", ks_start, make_loop(kscope.scope), ks_stop))

    def off_start():
        ks_start()
        kscope.set_gpu_profiling_state("off")

    def off_stop():
        kscope.set_gpu_profiling_state("on")
        ks_stop()

    cases.append(("kscope scope, profiling off", off_start, make_loop(kscope.scope), off_stop))
    cases.append(("kscope scope, no session", None, make_loop(kscope.scope), None))
    cases.append(("kscope cpu_timed_scope, session active", ks_start,
                  make_loop(kscope.cpu_timed_scope), ks_stop))

    def enter_exit(n):
        enter, exit_ = kscope.enter_scope, kscope.exit_scope
        for _ in range(n):
            enter("s")
            exit_()

    cases.append(("kscope enter_scope/exit_scope, active", ks_start, enter_exit, ks_stop))

    @kscope.scope("s")
    def decorated():
        pass

    def call_decorated(n):
        for _ in range(n):
            decorated()

    cases.append(("kscope @scope call, active", ks_start, call_decorated, ks_stop))
    cases.append(("kscope Trace (MAX), active", ks_start, make_loop(kscope.Trace), ks_stop))

    try:
        import torch.profiler

        cases.append(("torch.profiler.record_function", None,
                      make_loop(torch.profiler.record_function), None))
    except Exception as e:
        print(f"torch: skipped ({type(e).__name__}: {e})")

    results = run_cases(cases, args)
    medians = {label: statistics.median(v) for label, v in results.items()}
    medians.update(proton_results)
    base = medians["kscope scope, session active"]
    print(f"{'candidate':44} {'ns/iter':>9} {'ratio':>7}")
    for label, med in medians.items():
        print(f"{label:44} {med:9.1f} {med / base:7.2f}")
    with contextlib.suppress(OSError):
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
        os.rmdir(tmp)


def run_cases(cases, args):
    """Alternate the candidates over rounds; ns per iteration of each."""
    results = {label: [] for label, *_ in cases}
    for _ in range(args.rounds):
        for label, setup, body, teardown in cases:
            if label not in results:
                continue
            try:
                if setup:
                    setup()
            except Exception as e:
                print(f"{label}: skipped ({type(e).__name__}: {e})")
                del results[label]
                continue
            try:
                body(1000)  # warm up
                results[label].append(timeit(body, args.iters))
            finally:
                if teardown:
                    teardown()
    return results


def proton_child(args):
    """In the child: Proton's candidates, one "label<TAB>median" line each."""
    try:
        import triton.profiler as proton
    except Exception as e:  # not installed, or no GPU for its backend
        print(f"skipped\t{type(e).__name__}: {e}")
        return 0
    tmp = tempfile.mkdtemp(prefix="kscope-bench-proton-")
    pstate = {}

    def p_start():
        pstate["s"] = proton.start(os.path.join(tmp, "proton"))

    def p_stop():
        proton.finalize(pstate.pop("s"))

    cases = [("proton scope, session active", p_start, make_loop(proton.scope), p_stop),
             ("proton scope, no session", None, make_loop(proton.scope), None),
             ("proton cpu_timed_scope, active", p_start, make_loop(proton.cpu_timed_scope),
              p_stop)]
    for label, v in run_cases(cases, args).items():
        print(f"{label}\t{statistics.median(v)}")
    return 0


def run_proton_child(args):
    import subprocess
    cmd = [sys.executable, os.path.abspath(__file__), "--proton-only",
           "--iters", str(args.iters), "--rounds", str(args.rounds)]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        label, _, value = line.partition("\t")
        if label == "skipped":
            print(f"proton: skipped ({value})")
        elif value:
            found[label] = float(value)
    return found


if __name__ == "__main__":
    sys.exit(main())
