"""pcsampling_check.py FILE HOT MATH LAUNCHES - check a .hatchet written by
`kscope run --pc-sampling` over pcsampling.cu: the kernel's hottest line
is HOT (the dependent load chain) with the long scoreboard as its main
stall, and line MATH (arithmetic) has samples, mostly for another reason.
Prints PASS/FAIL lines and the figures; exits 1 on a failure."""
import json
import re
import sys

path, hot, math, launches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
failed = False


def check(ok, what):
    global failed
    print(("PASS" if ok else "FAIL") + "  pcsampling: " + what)
    failed |= not ok


root = json.load(open(path))[0]
kernels, stack = [], [root]
while stack:
    n = stack.pop()
    if n["frame"]["name"].startswith("chase_and_compute"):
        kernels.append(n)
    stack.extend(n.get("children", []))
check(len(kernels) >= 1, f"the kernel's node is there ({len(kernels)} found)")
lines = {}
for k in kernels:
    for c in k.get("children", []):
        m = re.search(r"pcsampling\.cu:(\d+)@chase_and_compute", c["frame"]["name"])
        if m and c["metrics"].get("num_samples", 0) > 0:
            acc = lines.setdefault(int(m.group(1)), {})
            for key, v in c["metrics"].items():
                acc[key] = acc.get(key, 0) + v
total = sum(v["num_samples"] for v in lines.values())
count = sum(k["metrics"].get("count", 0) for k in kernels)
print(f"      samples {total} over {count} launches ({total / max(count, 1):.0f} per launch); "
      f"lines {sorted(lines)}; dropped {root['metrics'].get('dropped_samples', 0)}")
check(count == launches, f"{launches} launches recorded ({count})")
check(total > 1000, f"the kernel's lines have samples ({total})")


def top_stall(m):
    stalls = {k: v for k, v in m.items() if k.startswith("stalled_")}
    return max(stalls, key=stalls.get) if stalls else None


if lines:
    hottest = max(lines, key=lambda ln: lines[ln]["num_samples"])
    share = lines[hottest]["num_samples"] / total
    check(hottest == hot, f"the hottest line is the load chain, line {hot} "
          f"(line {hottest}, {share:.0%} of samples)")
    hs = lines.get(hot, {})
    stall = top_stall(hs)
    check(stall == "stalled_long_scoreboard",
          f"its main stall is the long scoreboard ({stall}: "
          f"{hs.get(stall, 0) / max(hs.get('num_samples', 1), 1):.0%})")
    ms = lines.get(math, {})
    check(ms.get("num_samples", 0) > 0, f"the arithmetic line {math} has samples "
          f"({ms.get('num_samples', 0)}, main stall {top_stall(ms)})")
    check(top_stall(ms) != "stalled_long_scoreboard", "the arithmetic line waits for another reason")
sys.exit(1 if failed else 0)
