#!/usr/bin/env python3
"""multi-devices.py OUTDIR - check what test/gpu/multi-devices.cu recorded.

For each run ("separate": a tree session then a trace session;
"together": both sessions at once over one workload):

tree (<run>_tree.hatchet)
  - ROOT/dev0 holds one work_kernel(int*) node: count a0+b0, device_id "0",
    device_type "CUDA", time > 0; ROOT/dev1 likewise with a1+b1 and "1";
  - ROOT/both holds two mix_kernel(int*) nodes, device_id "0" and "1",
    count `mix` each;
  - no kernel anywhere else (the warm-up before the sessions is absent);
  - device info: "CUDA" has "0" and "1", each equal to the attributes
    the program read with cudaDeviceGetAttribute (facts.json).
trace (<run>_trace.chrome_trace)
  - every kernel slice sits on pid 1000000 + args.device, and its device
    is the one its scope launched on (call_stack[1]);
  - device 0's work_kernel slices are on two tracks holding a0 and b0
    slices, device 1's on two tracks holding a1 and b1; mix_kernel on each
    device shares the track of stream A (the a0 / a1 track);
  - a process_name for pids 1000000 and 1000001 ("GPU d ...") and a
    thread_name for every GPU track;
  - one flow end ("f") per kernel, on the kernel's own track;
  - host slices for the scopes dev0, dev1 and both.

Each check prints PASS or FAIL with what it saw; exit status: the number of
failures (0: all passed). Testable without a GPU on hand-made outputs.
"""
import collections
import json
import os
import sys

from gpu_checks import check, finish, load, walk

GPU_PID_BASE = 1000000
WORK, MIX = "work_kernel(int*)", "mix_kernel(int*)"


def children(node, name):
    return [c for c in node.get("children", []) if c["frame"]["name"] == name]


def child(node, name):
    found = children(node, name)
    return found[0] if len(found) == 1 else None


def metrics(node):
    return json.dumps(node["metrics"], sort_keys=True) if node else "missing"


def check_tree(run, path, facts):
    doc = load(path)
    check(f"{run} tree: two elements", isinstance(doc, list) and len(doc) == 2,
          f"{type(doc).__name__} of {len(doc) if isinstance(doc, list) else '?'}")
    root, devices = doc[0], doc[1]
    n = facts["launches"]
    for scope, dev, want in (("dev0", "0", n["a0"] + n["b0"]), ("dev1", "1", n["a1"] + n["b1"])):
        s = child(root, scope)
        k = children(s, WORK) if s else []
        m = k[0]["metrics"] if len(k) == 1 else {}
        check(f"{run} tree: {scope} has one {WORK} on device {dev}",
              len(k) == 1 and m.get("count") == want and m.get("device_id") == dev
              and m.get("device_type") == "CUDA" and m.get("time (ns)", 0) > 0,
              f"{len(k)} node(s); want count {want}: " + "; ".join(metrics(x) for x in k))
    both = child(root, "both")
    mix = children(both, MIX) if both else []
    by_dev = {x["metrics"].get("device_id"): x["metrics"].get("count") for x in mix}
    check(f"{run} tree: both has {MIX} per device", len(mix) == 2
          and by_dev == {"0": n["mix"], "1": n["mix"]},
          f"{len(mix)} node(s), count by device_id {by_dev}, want {n['mix']} on each")
    stray = [("/".join(p), x["frame"]["name"]) for p, x in walk(root)
             if "device_type" in x["metrics"] and p[1:2] not in (("dev0",), ("dev1",), ("both",))]
    total = sum(x["metrics"].get("count", 0) for _, x in walk(root)
                if x["frame"]["name"] in (WORK, MIX))
    want_total = sum(n.values()) + n["mix"]
    check(f"{run} tree: no kernel outside the scopes, none from the warm-up",
          not stray and total == want_total, f"stray {stray}, {total} kernels, want {want_total}")
    cuda = devices.get("CUDA", {}) if isinstance(devices, dict) else {}
    for dev, want in sorted(facts["devices"].items()):
        got = cuda.get(dev, {})
        same = all(got.get(k) == v for k, v in want.items())
        check(f"{run} tree: device info for device {dev}", same,
              f"got {json.dumps(got, sort_keys=True)}, want {json.dumps(want, sort_keys=True)}")


def check_trace(run, path, facts):
    events = load(path)["traceEvents"]
    n = facts["launches"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("name") in (WORK, MIX)]
    want_total = sum(n.values()) + n["mix"]
    check(f"{run} trace: every kernel present", len(kernels) == want_total,
          f"{len(kernels)} kernel slices, want {want_total}")
    scope_dev = {"dev0": {0}, "dev1": {1}, "both": {0, 1}}
    bad_pid, bad_dev = [], []
    for e in kernels:
        args = e.get("args", {})
        dev = args.get("device")
        stack = args.get("call_stack", [])
        if e.get("pid") != GPU_PID_BASE + (dev if isinstance(dev, int) else -10 ** 9):
            bad_pid.append((e.get("pid"), dev))
        if len(stack) < 3 or dev not in scope_dev.get(stack[1], set()):
            bad_dev.append((stack, dev))
    check(f"{run} trace: kernel pid is {GPU_PID_BASE} + device", not bad_pid,
          f"{len(bad_pid)} off, e.g. (pid, device) {bad_pid[:3]}")
    check(f"{run} trace: kernels on their scope's device", not bad_dev,
          f"{len(bad_dev)} off, e.g. (call_stack, device) {bad_dev[:3]}")

    tracks = collections.Counter((e["pid"], e["tid"], e["name"]) for e in kernels)
    for dev, a, b in ((0, n["a0"], n["b0"]), (1, n["a1"], n["b1"])):
        pid = GPU_PID_BASE + dev
        work = {tid: c for (p, tid, name), c in tracks.items() if p == pid and name == WORK}
        mix = {tid: c for (p, tid, name), c in tracks.items() if p == pid and name == MIX}
        a_tids = [tid for tid, c in work.items() if c == a]
        check(f"{run} trace: device {dev} work on two stream tracks ({a} + {b})",
              sorted(work.values()) == sorted([a, b]) and len(a_tids) == 1,
              f"slices per tid {work}")
        check(f"{run} trace: device {dev} mix on stream A's track",
              len(a_tids) == 1 and mix == {a_tids[0]: n["mix"]},
              f"mix per tid {mix}, stream A tid {a_tids}")

    meta = [e for e in events if e.get("ph") == "M"]
    pnames = {e["pid"]: e.get("args", {}).get("name", "") for e in meta
              if e.get("name") == "process_name"}
    tnamed = {(e["pid"], e["tid"]) for e in meta if e.get("name") == "thread_name"}
    gpu_names = {d: pnames.get(GPU_PID_BASE + d, "") for d in (0, 1)}
    check(f"{run} trace: a process per device",
          all(gpu_names[d].startswith(f"GPU {d}") for d in (0, 1)), f"names {gpu_names}")
    unnamed = sorted({(e["pid"], e["tid"]) for e in kernels} - tnamed)
    check(f"{run} trace: every GPU track named", not unnamed, f"unnamed (pid, tid) {unnamed}")

    ends = collections.Counter((e.get("pid"), e.get("tid")) for e in events
                               if e.get("ph") == "f")
    per_track = collections.Counter((e["pid"], e["tid"]) for e in kernels)
    short = {k: (ends.get(k, 0), c) for k, c in per_track.items() if ends.get(k, 0) < c}
    check(f"{run} trace: a flow end per kernel on its track", not short,
          f"(flow ends, kernels) short on {short}")
    host = {e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "scope"}
    check(f"{run} trace: host scope slices", {"dev0", "dev1", "both"} <= host,
          f"host scopes {sorted(host)}")


def main():
    out = sys.argv[1]
    facts = load(os.path.join(out, "facts.json"))
    for run in ("separate", "together"):
        for kind, fn, ext in (("tree", check_tree, "hatchet"),
                              ("trace", check_trace, "chrome_trace")):
            path = os.path.join(out, f"{run}_{kind}.{ext}")
            try:
                fn(run, path, facts)
            except Exception as exc:  # a missing or malformed file is a failure
                check(f"{run} {kind}: {os.path.basename(path)} readable", False,
                      f"{type(exc).__name__}: {exc}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
