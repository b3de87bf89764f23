#!/usr/bin/env python3
"""multi-torchrun-check.py WORK STEPS - check what multi-torchrun.sh wrote.

WORK/tree and WORK/trace each hold one `kscope run` of torchrun (2 ranks,
multi-torchrun.py): multi.rank<R>.hatchet / .chrome_trace and the
workload's facts.rank<R>.json; WORK/merged.hatchet and
WORK/merged.chrome_trace are `kscope merge` of the two rank files.

Per rank R (tree):
  - one file per rank, named by rank; facts say the rank ran on cuda:R;
  - every kernel and copy node has device_id R;
  - the scope "step" (an NVTX range) has calls == STEPS;
  - every NCCL kernel (name containing "nccl") sits under "step" or
    "warmup", and those under "step" count >= STEPS in all;
  - a non-NCCL kernel (the matmul) under "step" with count >= STEPS.
Merged tree:
  - "step" has time_rank_min/max/mean (ns) and time_imbalance equal to the
    min, max and mean over the rank files of step's inclusive GPU time,
    and imbalance = max / mean;
  - wall_time_rank_min/max/mean (ns) on "step", min <= mean <= max;
  - step's calls and its NCCL kernel count are the sums over the ranks.
Per rank R (trace):
  - NCCL kernel slices: all under "step" or "warmup" (args.call_stack),
    at least STEPS under "step", all on pid 1000000 + R.
Merged trace:
  - every process named "rank 0: ..." or "rank 1: ...", with "rank R:
    host" and "rank R: GPU R (CUDA)" for both ranks; no pid shared by two
    ranks;
  - each rank's NCCL slices (as many as in its file) on its GPU process;
  - as many slices as the rank files hold together; flow ids unique.

Each check prints PASS or FAIL with what it saw; exit status: the number of
failures (0: all passed). Testable without a GPU on hand-made outputs.
"""
import collections
import json
import os
import sys

from gpu_checks import check, finish, load, walk

GPU_PID_BASE = 1000000
RANKS = (0, 1)


def is_nccl(name):
    return "nccl" in name.lower()


def subtree_sum(node, key):
    return sum(n["metrics"].get(key, 0) for _, n in walk(node))


def step_of(root):
    steps = [c for c in root.get("children", []) if c["frame"]["name"] == "step"]
    return steps[0] if len(steps) == 1 else None


def nccl_count(node):
    return sum(n["metrics"].get("count", 0) for _, n in walk(node)
               if "device_type" in n["metrics"] and is_nccl(n["frame"]["name"]))


def guarded(name, fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # a missing or malformed file is a failure
        check(name, False, f"{type(exc).__name__}: {exc}")
        return None


def check_rank_tree(work, r, steps):
    d = os.path.join(work, "tree")
    facts = load(os.path.join(d, f"facts.rank{r}.json"))
    check(f"rank {r}: ran on cuda:{r}", facts.get("device") == r, json.dumps(facts))
    doc = load(os.path.join(d, f"multi.rank{r}.hatchet"))
    root = doc[0]
    gpu = [(p, n) for p, n in walk(root) if "device_type" in n["metrics"]]
    wrong = sorted({n["metrics"].get("device_id") for _, n in gpu} - {str(r)})
    check(f"rank {r} tree: every kernel and copy on device {r}", gpu and not wrong,
          f"{len(gpu)} GPU nodes, other device ids {wrong}")
    step = step_of(root)
    calls = step["metrics"].get("calls") if step else None
    check(f"rank {r} tree: step scope entered {steps}x", calls == steps, f"calls {calls}")
    nccl = [(p, n) for p, n in gpu if is_nccl(n["frame"]["name"])]
    stray = [("/".join(p), n["frame"]["name"]) for p, n in nccl
             if "step" not in p and "warmup" not in p]
    in_step = nccl_count(step) if step else 0
    names = sorted({n["frame"]["name"] for _, n in nccl})
    check(f"rank {r} tree: NCCL kernels under step (or warmup)",
          nccl and not stray and in_step >= steps,
          f"{in_step} under step (want >= {steps}), outside: {stray[:3]}, names {names[:3]}")
    gemm = [n for p, n in gpu if "step" in p and not is_nccl(n["frame"]["name"])
            and n["metrics"].get("count", 0) >= steps]
    check(f"rank {r} tree: matmul kernel under step", bool(gemm),
          ", ".join(f"{n['frame']['name'][:60]} x{n['metrics'].get('count')}" for n in gemm[:3])
          or "no non-NCCL kernel with count >= steps under step")
    return root


def check_merged_tree(work, roots, steps):
    merged = load(os.path.join(work, "merged.hatchet"))[0]
    step = step_of(merged)
    m = step["metrics"] if step else {}
    per_rank = [subtree_sum(step_of(root), "time (ns)") if step_of(root) else 0
                for root in roots]
    want = {"time_rank_min (ns)": min(per_rank), "time_rank_max (ns)": max(per_rank),
            "time_rank_mean (ns)": sum(per_rank) / len(per_rank)}
    if want["time_rank_mean (ns)"] > 0:
        want["time_imbalance"] = want["time_rank_max (ns)"] / want["time_rank_mean (ns)"]
    got = {k: m.get(k) for k in want}

    def close(a, b):
        return isinstance(a, (int, float)) and abs(a - b) <= 1e-6 * max(1.0, abs(b)) + 1e-6

    check("merged tree: step time per rank (min/max/mean/imbalance)",
          step is not None and per_rank and all(close(got[k], v) for k, v in want.items()),
          f"ranks' step time {per_rank}, got {got}")
    wall = [m.get(f"wall_time_rank_{s} (ns)") for s in ("min", "mean", "max")]
    check("merged tree: step wall time per rank",
          all(isinstance(v, (int, float)) for v in wall) and wall[0] <= wall[1] <= wall[2],
          f"min/mean/max {wall}")
    calls = m.get("calls")
    want_nccl = sum(nccl_count(step_of(root)) for root in roots if step_of(root))
    got_nccl = nccl_count(step) if step else 0
    check("merged tree: step calls and NCCL kernels summed over ranks",
          calls == steps * len(roots) and got_nccl == want_nccl and want_nccl > 0,
          f"calls {calls} (want {steps * len(roots)}), NCCL {got_nccl} (want {want_nccl})")


def slices(events):
    return [e for e in events if e.get("ph") == "X"]


def nccl_slices(events):
    """NCCL kernels (not host slices such as NCCL's own NVTX ranges)."""
    return [e for e in slices(events) if e.get("cat") == "kernel" and is_nccl(e.get("name", ""))]


def check_rank_trace(work, r, steps):
    events = load(os.path.join(work, "trace", f"multi.rank{r}.chrome_trace"))["traceEvents"]
    nccl = nccl_slices(events)
    stacks = [e.get("args", {}).get("call_stack", []) for e in nccl]
    in_step = sum(1 for s in stacks if "step" in s)
    stray = [s for s in stacks if "step" not in s and "warmup" not in s]
    pids = sorted({e.get("pid") for e in nccl})
    check(f"rank {r} trace: NCCL slices under step, on GPU {r}'s process",
          nccl and in_step >= steps and not stray and pids == [GPU_PID_BASE + r],
          f"{len(nccl)} slices, {in_step} under step (want >= {steps}), outside {stray[:2]}, "
          f"pids {pids}")
    return events


def check_merged_trace(work, rank_events):
    events = load(os.path.join(work, "merged.chrome_trace"))["traceEvents"]
    names = {e["pid"]: e.get("args", {}).get("name", "") for e in events
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    rank_of = {}
    for pid, name in names.items():
        for r in RANKS:
            if name.startswith(f"rank {r}: ") or name.startswith(f"rank {r} ("):
                rank_of[pid] = r
    unranked = sorted(n for p, n in names.items() if p not in rank_of)
    want = {f"rank {r}: {what}" for r in RANKS for what in ("host", f"GPU {r} (CUDA)")}
    check("merged trace: a process per rank (host and GPU)",
          want <= set(names.values()) and not unranked,
          f"process names {sorted(names.values())}")
    per_rank_pids = collections.defaultdict(set)
    for e in events:
        if "pid" in e and e.get("ph") != "M":
            per_rank_pids[rank_of.get(e["pid"], -1)].add(e["pid"])
    shared = per_rank_pids[0] & per_rank_pids[1]
    check("merged trace: no pid shared by two ranks, every event's pid named",
          not shared and -1 not in per_rank_pids,
          f"shared {sorted(shared)}, unnamed pids {sorted(per_rank_pids.get(-1, []))}")
    gpu_pid = {r: [p for p, n in names.items() if n == f"rank {r}: GPU {r} (CUDA)"]
               for r in RANKS}
    for r in RANKS:
        got = sum(1 for e in nccl_slices(events) if e["pid"] in gpu_pid[r])
        want_n = len(nccl_slices(rank_events[r]))
        check(f"merged trace: rank {r}'s NCCL slices on its GPU process",
              got == want_n and want_n > 0, f"{got} (rank file: {want_n})")
    total = len(slices(events))
    want_total = sum(len(slices(rank_events[r])) for r in RANKS)
    flow = [e.get("id") for e in events if e.get("ph") == "s"]
    want_flow = sum(len({e.get("id") for e in rank_events[r] if e.get("ph") == "s"})
                    for r in RANKS)
    check("merged trace: every slice kept, flow ids unique across ranks",
          total == want_total and len(set(flow)) == want_flow,
          f"{total} slices (ranks: {want_total}), {len(set(flow))} flow ids (ranks: {want_flow})")


def main():
    work, steps = sys.argv[1], int(sys.argv[2])
    for kind, ext in (("tree", "hatchet"), ("trace", "chrome_trace")):
        d = os.path.join(work, kind)
        files = sorted(f for f in os.listdir(d) if f.endswith("." + ext)) \
            if os.path.isdir(d) else []
        want = [f"multi.rank{r}.{ext}" for r in RANKS]
        check(f"{kind} run: one file per rank", all(f in files for f in want),
              f"files {files}")
    roots = [guarded(f"rank {r} tree readable", check_rank_tree, work, r, steps) for r in RANKS]
    if all(roots):
        guarded("merged.hatchet readable", check_merged_tree, work, roots, steps)
    rank_events = [guarded(f"rank {r} trace readable", check_rank_trace, work, r, steps)
                   for r in RANKS]
    if all(e is not None for e in rank_events):
        guarded("merged.chrome_trace readable", check_merged_trace, work, rank_events)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
