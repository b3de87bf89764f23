#!/usr/bin/env python3
"""run-torch.py - `kscope run -- python` against torch.profiler on one loop.

    run-torch.py work [--torch-profiler OUT.json]
        The workload: a warm-up outside any range, then STEPS iterations of
        x.add_(1), a 64x64 matmul and a relu, each inside an NVTX range
        "step" (torch.cuda.nvtx). With --torch-profiler, the STEPS loop runs
        under torch.profiler and its kernels (name -> count) go to OUT.json.
    run-torch.py check PROFILE.hatchet TORCH.json SUMMARY.txt
        Compares: the kernels kscope recorded under "step" against
        torch.profiler's (same names, same counts); the exit summary's GPU
        time against the file's total; each summary row's calls against the
        file. Prints PASS/FAIL lines, exits 1 on a failure.
"""
import collections
import json
import re
import sys

def group_end(s, i):
    """Index just past the bracket group opening at s[i] ('<' or '('), or
    None: what `kscope top` and the run summary fold (src/read/top.c)."""
    open_, close = s[i], ">" if s[i] == "<" else ")"
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_:
            depth += 1
        elif s[j] == close and not (close == ">" and j > i and s[j - 1] == "-"):
            depth -= 1
            if depth == 0:
                return j + 1
    return None


def fold_name(s, limit=100):
    """A long kernel name as the summary shows it: each outermost <...> and
    (...) group folded."""
    if len(s) <= limit:
        return s
    out, i = [], 0
    while i < len(s):
        end = group_end(s, i) if s[i] in "<(" else None
        if end and end - i > 2:
            out.append(s[i] + "..." + s[end - 1])
            i = end
            continue
        out.append(s[i])
        i += 1
    return "".join(out)


STEPS = 200


def copy_name(name):
    return name.startswith("Memcpy") or name.startswith("Memset")


def work(argv):
    import torch

    x = torch.zeros(1, device="cuda")
    a = torch.randn(64, 64, device="cuda")

    def body():
        x.add_(1)
        b = a @ a
        torch.relu(b)

    for _ in range(3):  # warm-up: cuBLAS handles, lazy module loads
        body()
    torch.cuda.synchronize()

    def loop():
        for _ in range(STEPS):
            torch.cuda.nvtx.range_push("step")
            body()
            torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()

    if argv and argv[0] == "--torch-profiler":
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            loop()
        counts = collections.Counter(
            e.name for e in prof.events() if e.device_type == DeviceType.CUDA and not copy_name(e.name)
        )
        json.dump(counts, open(argv[1], "w"), indent=1)
    else:
        loop()
    print("work done")


def device_nodes(node):
    """Yield (node, under_step) for every kernel/copy node."""
    stack = [(node, False)]
    while stack:
        n, step = stack.pop()
        if "device_id" in n.get("metrics", {}):
            yield n, step
        name = n["frame"]["name"]
        stack.extend((c, step or name == "step") for c in n.get("children", []))


def to_ns(text):
    value, unit = text.split()
    return float(value) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]


def check(argv):
    profile, torch_json, summary = argv
    root = json.load(open(profile))[0]
    want = json.load(open(torch_json))
    ok = True

    def result(good, what):
        nonlocal ok
        print(("PASS  " if good else "FAIL  ") + "run-torch: " + what)
        ok = ok and good

    got = collections.Counter()
    total_ns, calls = 0, collections.Counter()
    outside = collections.Counter()
    for n, step in device_nodes(root):
        m = n["metrics"]
        name = n["frame"]["name"]
        total_ns += m.get("time (ns)", 0)
        calls[name] += m.get("count", 0)
        if copy_name(name):
            continue
        if step:
            got[name] += m.get("count", 0)
        else:
            outside[name] += m.get("count", 0)
    result(len(want) > 0, f"torch.profiler saw {len(want)} kernel names")
    missing = {k: v for k, v in want.items() if got.get(k) != v}
    extra = {k: v for k, v in got.items() if k not in want}
    result(not missing and not extra,
           f"kernels under 'step' match torch.profiler ({sum(got.values())} launches, "
           f"{len(got)} names); differing: {missing} extra: {extra}")
    result(all(v % STEPS == 0 for v in got.values()),
           f"each kernel under 'step' ran a multiple of {STEPS} times")
    result(sum(outside.values()) > 0, f"warm-up kernels recorded outside 'step': {dict(outside)}")

    text = open(summary).read()
    m = re.search(r"GPU time (\S+ \S+) in (\S+ \S+) wall", text)
    result(m is not None, "summary has the GPU time line")
    if m:
        s_ns = to_ns(m.group(1))
        result(abs(s_ns - total_ns) <= max(1e-3 * total_ns, 1.0),
               f"summary GPU time {m.group(1)} matches the file's {total_ns} ns")
    rows = re.findall(r"^\s*[\d.]+%\s+\S+ \S+\s+(\d+)\s+\S+ \S+\s+\S+ \S+\s+\S+ \S+  (.*)$", text, re.M)
    result(len(rows) > 0, f"summary lists {len(rows)} kernels")
    # The summary folds long names (foo<...>(...)), so several kernels may
    # share a row's text: compare the multisets of (shown name, calls).
    shown = collections.Counter((fold_name(n), c) for n, c in calls.items())
    listed = collections.Counter((name, int(c)) for c, name in rows)
    bad = [(name, c) for (name, c), k in listed.items() if shown[(name, c)] < k]
    result(not bad, f"summary calls match the file's counts; differing: {bad}")
    result(re.search(r"view it with: \S*kscope view ", text) is not None, "summary names the view command")
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "work":
        work(sys.argv[2:])
    else:
        sys.exit(check(sys.argv[2:]))
