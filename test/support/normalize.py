"""Normalize kscope output for golden comparison: what varies from run to
run is replaced by what does not (a trace's metadata, the run's facts,
keeps its keys with their values replaced by their names), everything
else must match.

usage: normalize.py [--times order|exact] FILE
       (.hatchet, .hatchet_msgpack, or a Chrome trace: .chrome_trace, .json)
Prints canonical JSON (sorted keys, one document) to stdout.

Trees: host times (wall_time, cpu_time) become 0.

Traces keep their events in the file's order, and their times as:
  order  (default, for a live run) each time becomes its rank among every
         time the trace names (starts, and ends: ts + dur), so the golden
         holds the order of events, which slice lies inside which, and
         which ends before which starts - what a live run repeats - while
         the microseconds it does not repeat are left out. dur becomes the
         number of ranks a slice spans.
  exact  (for output made from fixed inputs) ts relative to the first
         event, dur as written.
Process and thread ids become their order of first appearance (a pid
inside a track name too).
"""
import argparse
import json
import re

VOLATILE_METRICS = {"wall_time (ns)", "cpu_time (ns)"}


def load(path):
    if path.endswith(".hatchet_msgpack"):
        import msgpack
        with open(path, "rb") as f:
            return msgpack.unpackb(f.read(), raw=False, strict_map_key=False)
    with open(path) as f:
        return json.load(f)


def tree(node):
    for k in list(node["metrics"]):
        if k in VOLATILE_METRICS:
            node["metrics"][k] = 0
    for c in node["children"]:
        tree(c)


def us(x):
    """A time as the writer's precision holds it (ns, in µs units)."""
    return round(x, 3)


def ids(events, key):
    seen = {}
    for e in events:
        if key in e:
            seen.setdefault(e[key], len(seen))
    return seen


def trace(doc, times):
    events = doc["traceEvents"]
    stamps = [e for e in events if "ts" in e]
    if times == "exact":
        t0 = min((us(e["ts"]) for e in stamps), default=0)
        for e in stamps:
            e["ts"] = us(us(e["ts"]) - t0)
    else:
        points = set()
        for e in stamps:
            points.add(us(e["ts"]))
            if "dur" in e:
                points.add(us(e["ts"] + e["dur"]))
        rank = {t: i for i, t in enumerate(sorted(points))}
        for e in stamps:
            start = rank[us(e["ts"])]
            if "dur" in e:
                e["dur"] = rank[us(e["ts"] + e["dur"])] - start
            e["ts"] = start
    pids, tids = ids(events, "pid"), ids(events, "tid")
    for e in events:
        pid = e.get("pid")
        if "pid" in e:
            e["pid"] = pids[pid]
        if "tid" in e:
            e["tid"] = tids[e["tid"]]
        name = e.get("args", {}).get("name") if e.get("ph") == "M" else None
        if isinstance(name, str) and pid is not None:
            e["args"]["name"] = re.sub(r"\b%s\b" % re.escape(str(pid)), "PID", name)
    if "metadata" in doc:
        doc["metadata"] = {k: k for k in doc["metadata"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--times", choices=("order", "exact"), default="order")
    ap.add_argument("file")
    a = ap.parse_args()
    doc = load(a.file)
    if isinstance(doc, list) and doc and isinstance(doc[0], dict) and "frame" in doc[0]:
        tree(doc[0])
    else:
        if isinstance(doc, list):  # the JSON Array Format: events only
            doc = {"traceEvents": doc}
        trace(doc, a.times)
    print(json.dumps(doc, indent=1, sort_keys=True))


main()
