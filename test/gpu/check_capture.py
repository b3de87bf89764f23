#!/usr/bin/env python3
"""check_capture.py OUTDIR - check what test/gpu/capture.cu recorded.

Each check prints PASS or FAIL with the figures it compared; the exit
status is the number of failures (0: all passed).
"""
import json
import os
import sys

from gpu_checks import check, child, finish, load

OUT = sys.argv[1]
FACTS = load(os.path.join(OUT, "facts.json"))


def tree(name):
    return load(os.path.join(OUT, name + ".hatchet"))


def trace(name):
    return load(os.path.join(OUT, name + ".chrome_trace"))["traceEvents"]


def nodes(node, name, found=None):
    """Every node named `name` under (and including) `node`."""
    found = [] if found is None else found
    if node["frame"]["name"] == name:
        found.append(node)
    for c in node.get("children", []):
        nodes(c, name, found)
    return found


def metric(node, key, default=0):
    return node["metrics"].get(key, default) if node else default


def total(root, name, key="count"):
    return sum(metric(n, key) for n in nodes(root, name))


def run_checks():
    # 20,000 empty kernels in one scope; paused work is not recorded.
    root, devices = tree("empty")
    loops = nodes(root, "loop")
    k = child(loops[0], "empty_kernel()") if len(loops) == 1 else None
    check("empty: 20,000 kernels under the scope", metric(k, "count") == 20000,
          f"count {metric(k, 'count')}, in whole tree {total(root, 'empty_kernel()')}")
    check("empty: none elsewhere", total(root, "empty_kernel()") == 20000,
          f"{total(root, 'empty_kernel()')} in the tree")
    check("empty: kernel leaf fields",
          k is not None and k["metrics"].get("device_id") == "0"
          and k["metrics"].get("device_type") == "CUDA" and metric(k, "time (ns)") > 0,
          json.dumps(k["metrics"]) if k else "no kernel node")
    check("empty: deactivated work not recorded", total(root, "excluded_kernel()") == 0,
          f"{total(root, 'excluded_kernel()')} excluded kernels recorded")
    dev = devices.get("CUDA", {}).get("0", {}) if isinstance(devices, dict) else {}
    check("device info", dev.get("arch") == "90" and dev.get("num_sms", 0) > 0
          and dev.get("clock_rate", 0) > 0 and dev.get("memory_clock_rate", 0) > 0
          and dev.get("bus_width", 0) > 0, json.dumps(devices))

    # A busy kernel 10x: total within 2% of the CUDA events' elapsed time.
    root, _ = tree("busy")
    b = nodes(root, "busy")
    k = child(b[0], "busy_kernel(long long)") if b else None
    t, ev = metric(k, "time (ns)"), FACTS["busy_event_ns"]
    t -= metric(k, "max_time (ns)")  # the blocker (the longest) is outside the events
    check("busy: 10 launches (+ the blocker)", metric(k, "count") == 11,
          f"count {metric(k, 'count')}")
    check("busy: time within 2% of cudaEvent", ev > 0 and abs(t - ev) / ev <= 0.02,
          f"kscope {t} ns, events {ev:.0f} ns, diff {100 * (t - ev) / ev if ev else 0:+.3f}%")

    # Two streams: one track each, both under the scope in the tree.
    ev = trace("streams")
    a = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "X" and e["name"] == "stream_a(int*)"}
    b = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "X" and e["name"] == "stream_b(int*)"}
    na = sum(1 for e in ev if e.get("ph") == "X" and e["name"] == "stream_a(int*)")
    nb = sum(1 for e in ev if e.get("ph") == "X" and e["name"] == "stream_b(int*)")
    check("streams: 50 + 50 kernels in the trace", na == 50 and nb == 50, f"{na} + {nb}")
    check("streams: one track per stream", len(a) == 1 and len(b) == 1 and a != b,
          f"stream_a on {sorted(a)}, stream_b on {sorted(b)}")
    root, _ = tree("streams_tree")
    s = nodes(root, "streams")
    ca = metric(child(s[0], "stream_a(int*)"), "count") if s else 0
    cb = metric(child(s[0], "stream_b(int*)"), "count") if s else 0
    check("streams: tree counts under the scope", ca == 50 and cb == 50, f"{ca} + {cb}")

    # A graph built before the session, replayed 4x under a scope.
    root, _ = tree("graph")
    g = nodes(root, "graph")
    counts = {n: metric(child(g[0], n), "count") if g else 0
              for n in ("node_a(int*)", "node_b(int*)", "node_c(int*)")}
    check("graph: every node x4 under the scope", all(c == 4 for c in counts.values()),
          json.dumps(counts))
    check("graph: nothing from the replay before the session",
          total(root, "node_a(int*)") == 4, f"node_a total {total(root, 'node_a(int*)')}")

    # Copies and sets: bytes and counts.
    root, _ = tree("copies")
    c = nodes(root, "copies")
    h = child(c[0], "Memcpy HtoD") if c else None
    d = child(c[0], "Memcpy DtoH") if c else None
    m = child(c[0], "Memset") if c else None
    check("copies: HtoD 1 MiB once", metric(h, "bytes") == 1 << 20 and metric(h, "count") == 1,
          json.dumps(h["metrics"]) if h else "missing")
    check("copies: DtoH 1 MiB twice", metric(d, "bytes") == 2 << 20 and metric(d, "count") == 2,
          json.dumps(d["metrics"]) if d else "missing")
    check("copies: memset 4 KiB", metric(m, "bytes") == 4096,
          json.dumps(m["metrics"]) if m else "missing")

    # A state is the frame directly above its kernels.
    root, _ = tree("state")
    st = nodes(root, "step")
    f = child(st[0], "forward") if st else None
    k = child(f, "state_kernel(int*)") if f else None
    check("state: scope > state > kernel", metric(k, "count") == 3,
          f"count {metric(k, 'count')}; state node {'found' if f else 'missing'}")

    # Launch metadata: name, flops16 and a custom metric on the next kernel.
    root, _ = tree("meta")
    mt = nodes(root, "meta")
    k = child(mt[0], "gemm_meta") if mt else None
    plain = child(mt[0], "busy_kernel(long long)") if mt else None
    ev = FACTS["meta_event_ns"]
    t = metric(k, "time (ns)")
    flops = metric(k, "flops16")
    want = 1e12 / (ev * 1e-9) if ev else 0
    got = flops / (t * 1e-9) if t else 0
    check("meta: named node with flops16 and tokens",
          metric(k, "count") == 1 and flops == 1e12 and metric(k, "tokens") == 4096,
          json.dumps(k["metrics"]) if k else "missing")
    check("meta: derived FLOP/s within 2% of flops16 / event time",
          want > 0 and abs(got - want) / want <= 0.02,
          f"kscope {got / 1e12:.3f} TFLOP/s, events {want / 1e12:.3f} TFLOP/s")
    check("meta: the other launches keep their own name", metric(plain, "count") == 2,
          json.dumps(plain["metrics"]) if plain else "missing")

    # Flows: a kernel never starts before its launch.
    ev = trace("flows")
    starts = {e["id"]: e for e in ev if e.get("ph") == "s"}
    ends = {e["id"]: e for e in ev if e.get("ph") == "f"}
    kernels = [e for e in ev if e.get("ph") == "X" and e["name"] == "flow_kernel(int*)"]
    bad = [i for i, f in ends.items() if i in starts and f["ts"] < starts[i]["ts"]]
    check("flows: one arrow per kernel", len(kernels) == 200 and len(ends) >= 200
          and all(i in starts for i in ends), f"{len(kernels)} kernels, {len(ends)} arrows")
    check("flows: no kernel before its launch", not bad, f"{len(bad)} arrows go back in time")
    early = [k for k in kernels if k["args"].get("correlation") in starts
             and k["ts"] < starts[k["args"]["correlation"]]["ts"]]
    check("flows: kernel slices start after their launch", not early, f"{len(early)} early")
    step_tids = {e["tid"] for e in ev if e.get("ph") == "X" and e["name"] == "step"}
    launch_tids = {e["tid"] for e in ev if e.get("ph") == "s"}
    check("flows: arrows start on the launching thread's track",
          launch_tids and launch_tids <= step_tids,
          f"launch tids {sorted(launch_tids)}, scope tids {sorted(step_tids)}")


try:
    run_checks()
except Exception as exc:  # a missing file or malformed output is a failure too
    import traceback
    traceback.print_exc()
    check("outputs readable", False, repr(exc))
sys.exit(finish())
