"""Normalize kscope output for golden comparison: times, pids and thread
ids vary from run to run, so they become 0, and a trace's metadata (the
run's facts) keeps its keys with their values replaced by their names;
everything else must match.

usage: normalize.py FILE   (.hatchet, .hatchet_msgpack or .chrome_trace)
Prints canonical JSON (sorted keys, one document) to stdout.
"""
import json
import sys

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


def trace(doc):
    for e in doc["traceEvents"]:
        for k in ("ts", "dur", "pid", "tid"):
            if k in e:
                e[k] = 0
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            e["args"]["name"] = "thread"
    doc["traceEvents"].sort(key=lambda e: json.dumps(e, sort_keys=True))
    if "metadata" in doc:
        doc["metadata"] = {k: k for k in doc["metadata"]}


def main():
    doc = load(sys.argv[1])
    if isinstance(doc, list):
        tree(doc[0])
    else:
        trace(doc)
    print(json.dumps(doc, indent=1, sort_keys=True))


main()
