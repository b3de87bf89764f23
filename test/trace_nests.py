"""trace_nests.py TRACE... - whether every host thread track of kscope's
Chrome traces nests: on one (pid, tid) track, a slice ("X" event) that
begins inside another ends no later than it. GPU tracks (processes named
"GPU ...") are left out: kernels of different launches may overlap there.
Prints one line per trace (the first few violations with their names and
times) and exits 1 when one does not nest. Standard library only; used by
the CPU tests on the pretend GPU and the GPU tests."""
import json
import sys


def ns(us):
    """Chrome trace microseconds (ns precision) to whole ns."""
    return int(round(float(us) * 1000))


def tracks(events):
    """{(pid, tid): [(begin, end, name)]} of the host slices."""
    gpu_pids = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") ==
                "process_name" and str(e.get("args", {}).get("name", "")).startswith("GPU ")}
    out = {}
    for e in events:
        if e.get("ph") != "X" or e.get("pid") in gpu_pids:
            continue
        begin = ns(e["ts"])
        out.setdefault((e["pid"], e["tid"]), []).append((begin, begin + ns(e.get("dur", 0)),
                                                         e.get("name", "")))
    return out


def violations(slices):
    """The (parent, child) pairs of one track where the child begins inside
    the parent and ends after it."""
    bad = []
    stack = []
    for s in sorted(slices, key=lambda s: (s[0], -s[1])):
        while stack and stack[-1][1] <= s[0]:
            stack.pop()
        if stack and s[1] > stack[-1][1]:
            bad.append((stack[-1], s))
            continue  # not pushed: the rest is checked against its parent
        stack.append(s)
    return bad


def check(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    found = {k: violations(v) for k, v in tracks(events).items()}
    bad = {k: v for k, v in found.items() if v}
    nslices = sum(len(v) for v in tracks(events).values())
    if not bad:
        print(f"PASS  {path}: {len(found)} host tracks, {nslices} slices, every one nests")
        return True
    total = sum(len(v) for v in bad.values())
    print(f"FAIL  {path}: {total} slices end after the slice they begin in, on {len(bad)} tracks")
    for (pid, tid), pairs in list(bad.items())[:3]:
        for parent, child in pairs[:3]:
            print(f"      track {pid}/{tid}: '{child[2]}' [{child[0]}, {child[1]}] ns begins in "
                  f"'{parent[2]}' [{parent[0]}, {parent[1]}] and ends {child[1] - parent[1]} ns "
                  f"after it")
    return False


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: trace_nests.py TRACE...")
    ok = [check(p) for p in sys.argv[1:]]
    sys.exit(0 if all(ok) else 1)
