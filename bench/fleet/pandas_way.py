#!/usr/bin/env python3
"""pandas_way.py - what a user would write instead of kscope fleet: load
every rank's .hatchet JSON into one pandas DataFrame (a row per node, with
its path and metrics) and group by path, for the same questions the
summary answers: per scope the median, mean and max over the ranks and
the slowest rank (stragglers, imbalance), and the top kernels.

usage: pandas_way.py DIR   (the NAME.rank<R>.hatchet files of one run)
Prints one JSON line: {"rows", "load_s", "query_s", "straggler", "imbalance"}.
"""
import glob
import json
import os
import re
import sys
import time

import pandas as pd


def rows_of(path, rank):
    with open(path) as f:
        root = json.load(f)[0]
    out = []
    stack = [(root, "")]
    while stack:
        node, parent = stack.pop()
        name = node["frame"]["name"]
        p = name if not parent else parent + " > " + name
        m = node.get("metrics", {})
        out.append({"rank": rank, "path": p, "name": name, "kernel": "device_id" in m,
                    "time": m.get("time (ns)"), "wall": m.get("wall_time (ns)")})
        for c in node.get("children", []):
            stack.append((c, "" if node is root else p))
    return out


def main():
    t0 = time.perf_counter()
    frames = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.rank*.hatchet"))):
        rank = int(re.search(r"\.rank(\d+)\.", os.path.basename(path)).group(1))
        frames.append(pd.DataFrame(rows_of(path, rank)))
    df = pd.concat(frames, ignore_index=True)
    del frames
    t1 = time.perf_counter()
    # GPU time under each scope: the kernels' time summed per path prefix
    # needs the tree; as users do, take each scope's host wall time.
    scopes = df[~df["kernel"] & df["wall"].notna()]
    g = scopes.groupby("path")["wall"]
    stats = g.agg(["median", "mean", "max", "count"])
    slowest = scopes.loc[g.idxmax(), ["path", "rank"]].set_index("path")["rank"]
    stats["ratio"] = stats["max"] / stats["median"]
    stats["imbalance"] = stats["max"] / stats["mean"]
    worst = stats["ratio"].idxmax()
    kernels = df[df["kernel"]].groupby("name")["time"].sum().sort_values(ascending=False).head(20)
    t2 = time.perf_counter()
    print(json.dumps({"rows": len(df), "load_s": round(t1 - t0, 2), "query_s": round(t2 - t1, 2),
                      "straggler": {"scope": worst, "rank": int(slowest[worst]),
                                    "ratio": round(float(stats.loc[worst, "ratio"]), 3)},
                      "imbalance": stats["imbalance"].idxmax(), "top_kernel": kernels.index[0]}))


if __name__ == "__main__":
    main()
