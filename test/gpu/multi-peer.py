#!/usr/bin/env python3
"""multi-peer.py OUTDIR - check what test/gpu/multi-peer.cu recorded.

tree (peer_tree.hatchet), for the scopes peer01 (0 -> 1), peer10 (1 -> 0)
and uva01 (0 -> 1):
  - exactly one copy node under the scope, named "Memcpy... S->D", with
    src_device_id S, dst_device_id D (strings), device_type "CUDA", the
    copy count and the total bytes the program moved;
  for local0 (a copy within device 0): one copy node with its count and
  bytes and no src_device_id / dst_device_id.
trace (peer_trace.chrome_trace), for the same scopes (call_stack[1]):
  - one slice per copy, each with args bytes (the size of one copy),
    src_device S and dst_device D, on pid 1000000 + args.device, in a
    process named "GPU ..."; local0's slices have no src/dst_device.

Each check prints PASS or FAIL with what it saw; exit status: the number of
failures (0: all passed). Testable without a GPU on hand-made outputs.
"""
import json
import os
import sys

from gpu_checks import check, finish, load

GPU_PID_BASE = 1000000
PEER = {"peer01": (0, 1), "peer10": (1, 0), "uva01": (0, 1), "local0": None}


def copies_under(node):
    """Every copy node at any depth under `node`."""
    found = []
    for c in node.get("children", []):
        m = c["metrics"]
        if "device_type" in m and c["frame"]["name"].startswith("Memcpy"):
            found.append(c)
        found.extend(copies_under(c))
    return found


def check_tree(path, facts):
    root = load(path)[0]
    for scope, peer in PEER.items():
        count, size = facts["copies"][scope]
        scopes = [c for c in root.get("children", []) if c["frame"]["name"] == scope]
        nodes = copies_under(scopes[0]) if len(scopes) == 1 else []
        seen = "; ".join(f"{n['frame']['name']} {json.dumps(n['metrics'], sort_keys=True)}"
                         for n in nodes) or "no copy node"
        m = nodes[0]["metrics"] if len(nodes) == 1 else {}
        name = nodes[0]["frame"]["name"] if len(nodes) == 1 else ""
        totals = m.get("count") == count and m.get("bytes") == count * size
        if peer is None:
            check(f"tree: {scope} copy within device 0, no peer fields",
                  len(nodes) == 1 and totals and "src_device_id" not in m
                  and "dst_device_id" not in m, seen)
            continue
        src, dst = peer
        check(f"tree: {scope} one peer copy node {src}->{dst}, {count}x {size} bytes",
              len(nodes) == 1 and totals and m.get("device_type") == "CUDA"
              and m.get("src_device_id") == str(src) and m.get("dst_device_id") == str(dst)
              and name.endswith(f" {src}->{dst}"), seen)


def check_trace(path, facts):
    events = load(path)["traceEvents"]
    pnames = {e["pid"]: e.get("args", {}).get("name", "") for e in events
              if e.get("ph") == "M" and e.get("name") == "process_name"}
    for scope, peer in PEER.items():
        count, size = facts["copies"][scope]
        slices = [e for e in events if e.get("ph") == "X" and e.get("cat") == "memcpy"
                  and e.get("args", {}).get("call_stack", [None, None])[1:2] == [scope]]
        seen = [(e["name"], e["pid"], {k: e["args"].get(k) for k in
                                        ("device", "src_device", "dst_device", "bytes")})
                for e in slices]
        bad_track = [s for s in slices if not isinstance(s["args"].get("device"), int)
                     or s["pid"] != GPU_PID_BASE + s["args"]["device"]
                     or not pnames.get(s["pid"], "").startswith("GPU ")]
        sizes_ok = all(e["args"].get("bytes") == size for e in slices)
        if peer is None:
            ok = (len(slices) == count and sizes_ok and not bad_track
                  and all("src_device" not in e["args"] and "dst_device" not in e["args"]
                          for e in slices))
            check(f"trace: {scope} copy within device 0, no peer args", ok, f"{seen[:4]}")
            continue
        src, dst = peer
        ok = (len(slices) == count and sizes_ok and not bad_track
              and all(e["args"].get("src_device") == src and e["args"].get("dst_device") == dst
                      for e in slices))
        check(f"trace: {scope} {count} peer copy slices {src}->{dst} of {size} bytes", ok,
              f"{len(slices)} slices {seen[:4]}, {len(bad_track)} on a wrong or unnamed track")


def main():
    out = sys.argv[1]
    facts = load(os.path.join(out, "facts.json"))
    print(f"peer access: {facts['peer_access']}")
    for fn, name in ((check_tree, "peer_tree.hatchet"), (check_trace, "peer_trace.chrome_trace")):
        try:
            fn(os.path.join(out, name), facts)
        except Exception as exc:  # a missing or malformed file is a failure
            check(f"{name} readable", False, f"{type(exc).__name__}: {exc}")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
