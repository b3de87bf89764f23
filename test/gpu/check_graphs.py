#!/usr/bin/env python3
"""check_graphs.py OUTDIR - check what test/gpu/graphs.cu recorded.

Reads before.hatchet, captured.hatchet, periodic.part_0.hatchet and the
program's stderr (stderr.txt). Each check prints PASS or FAIL with what it
compared; the exit status is the number of failures (0: all passed).
"""
import os
import sys

import gpu_checks
from gpu_checks import check, child, load, names

OUT = sys.argv[1]


def tree(name):
    return load(os.path.join(OUT, name))[0]


def path(node, *names):
    for n in names:
        node = child(node, n)
    return node


def metric(node, key):
    return (node or {}).get("metrics", {}).get(key)


err = open(os.path.join(OUT, "stderr.txt")).read()
check("before: said once", err.count("Cannot find graph for graphExecId:") == 1, repr(err[:300]))
check("before: says what to do", "start profiling before the graph is created" in err)
root = tree("before.hatchet")
for r in ("replay0", "replay1"):
    kids = sorted(c["frame"]["name"] for c in (child(root, r) or {}).get("children", []))
    check(f"before: {r} holds the graph's kernels", kids == ["k_add(int*)", "k_ones(int*)"], kids)

root = tree("captured.hatchet")
check("captured: work before the capture", metric(path(root, "warm", "k_warm(int*)"), "count") == 1)
for launch, n in (("test0", 1), ("test1", 2)):
    node = child(root, launch)
    kids = [c["frame"]["name"] for c in (node or {}).get("children", [])]
    check(f"{launch}: only <captured_at> under the launch", kids == ["<captured_at>"], kids)
    at = child(node, "<captured_at>")
    for i in range(3):
        it = child(at, f"iter_{i}")
        where = f"{launch}/<captured_at>/iter_{i}"
        check(f"{where}: scope_a's kernel x{n}",
              metric(path(it, "scope_a", "k_a(int*)"), "count") == n)
        check(f"{where}: nothing of scope_b (deactivated at capture)", child(it, "scope_b") is None)
        check(f"{where}: scope_c's metric x{n}", metric(child(it, "scope_c"), "bytes") == 16 * n,
              metric(child(it, "scope_c"), "bytes"))
        check(f"{where}: scope_c's kernel x{n}",
              metric(path(it, "scope_c", "k_c(int*)"), "count") == n)
        named = child(it, "named")
        check(f"{where}: launch metadata of the capture",
              metric(named, "count") == n and metric(named, "flops32") == 100 * n,
              (named or {}).get("metrics"))
everything = names(root)
check("captured: k_b nowhere", "k_b(int*)" not in everything)
check("captured: no copy of kscope's", not any("Memcpy" in n for n in everything), everything)
check("captured: no kernel at capture time", child(child(root, "iter_0"), "scope_a") is None or
      child(path(root, "iter_0", "scope_a"), "k_a(int*)") is None)

part = tree("periodic.part_0.hatchet")
check("periodic: the part asked for during the capture was written after it",
      metric(path(part, "warm", "k_warm(int*)"), "count") == 1)
sys.exit(gpu_checks.failures)
