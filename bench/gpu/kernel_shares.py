"""kernel_shares.py - each kernel's share of a .hatchet profile's GPU time,
the measure by which a sampled profile is held against a full one of the
same training loop (bench/gpu/run_bench.sh's train section and
test/gpu/sample-run.sh import it). Standard library only.
"""
import json


def shares(path):
    """GPU time per kernel name (all contexts; copies and memsets left
    out: they are mostly the model's upload before the first step, which
    is step 0 and so inside the first window), as a percentage of the
    total, and the profile's sampled_fraction (None in a full profile)."""
    root = json.load(open(path))[0]
    per, stack = {}, [root]
    while stack:
        node = stack.pop()
        m = node.get("metrics", {})
        name = node["frame"]["name"]
        if "device_id" in m and m.get("time (ns)") and not name.startswith(("Memcpy", "Memset")):
            per[name] = per.get(name, 0) + m["time (ns)"]
        stack.extend(node.get("children", []))
    total = sum(per.values()) or 1
    return {k: v / total * 100 for k, v in per.items()}, root["metrics"].get("sampled_fraction")
