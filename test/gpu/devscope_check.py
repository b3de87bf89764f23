"""devscope_check.py CHECK FILE... - checks of test/gpu/devscope.sh on the
profiles kscope run wrote; prints PASS/FAIL lines, exits 1 on a failure."""
import json
import sys

status = 0


def result(ok, what):
    global status
    print(("PASS" if ok else "FAIL") + "  devscope: " + what)
    status |= 0 if ok else 1


def tree(path):
    return json.load(open(path))[0]


def find(node, name):
    """The first node below `node` named `name`; a kernel matches by its
    name without the demangled argument list ("phases" for "phases(int*)")."""
    for c in node.get("children", []):
        if c["frame"]["name"].split("(")[0] == name:
            return c
        f = find(c, name)
        if f:
            return f
    return None


def scopes(path, kernel):
    k = find(tree(path), kernel)
    return {c["frame"]["name"]: c["metrics"] for c in (k or {}).get("children", [])}


check, files = sys.argv[1], sys.argv[2:]
if check == "phases":
    for f, unit in zip(files, ["device_avg_time (ns)", "device_avg_cycles"]):
        s = scopes(f, "phases")
        if not all(k in s for k in ("x1", "x2", "x4")):
            result(False, f"{f}: scopes x1 x2 x4 under phases: got {sorted(s)}")
            continue
        a1, a2, a4 = (s[k][unit] for k in ("x1", "x2", "x4"))
        r2, r4 = a2 / a1, a4 / a1
        result(abs(r2 - 2) <= 0.1 and abs(r4 - 4) <= 0.2,
               f"{f}: x2/x1 = {r2:.3f} (2 +-5%), x4/x1 = {r4:.3f} (4 +-5%) [{unit}]")
        n = s["x1"]["device_count"]
        result(n == 5 * 132 * 8, f"{f}: one record per warp and launch: {n} (want {5 * 132 * 8})")
elif check == "warps":
    s = scopes(files[0], "warps")["uneven"]
    lo, hi = s["device_min_time (ns)"], s["device_max_time (ns)"]
    result(1.8 <= hi / lo <= 2.3, f"warps doing 1x and 2x the work: max/min = {hi / lo:.3f}")
    s = scopes(files[1], "warps")["uneven"]
    n = s["device_count"]
    result(n == 132, f"granularity=cta: one record per CTA: {n} (want 132)")
elif check == "small":
    root = tree(files[0])
    s = scopes(files[0], "small")["tiny"]
    lost = root["metrics"].get("device_scopes_lost", 0)
    kept = s["device_count"]
    # 1k records over 132 SMs: 8 per SM, each SM here making 80 or more claims
    # (the reader may free slots while the kernel runs: then more are kept)
    result(kept + lost == 5120 and 0 < kept and 0 < lost,
           f"keep-first, 1k buffer: kept {kept}, lost {lost} (sum 5120)")
    root = tree(files[1])
    s = scopes(files[1], "small")["tiny"]
    lost = root["metrics"].get("device_scopes_lost", 0)
    result(s["device_count"] + lost == 5120 and s["device_count"] <= 132 * 8,
           f"keep-newest, 1k buffer: kept {s['device_count']}, lost {lost} (sum 5120)")
    s = scopes(files[2], "small")["tiny"]
    result(s["device_count"] == 5120 // 4, f"sample=4: {s['device_count']} records (1280)")
elif check == "graph":
    root = tree(files[0])
    total = 0
    def walk(n):
        global total
        if n["frame"]["name"] == "in_graph":
            total += n["metrics"]["device_count"]
        for c in n.get("children", []):
            walk(c)
    walk(root)
    result(total == 5 * 16 * 8, f"graph (3 launches) and two streams: {total} records (want 640)")
elif check == "long":
    # FILE LAUNCHES LOST: LOST is 0 (none may be lost) or "any" (kept and
    # lost add up to every record made)
    root = tree(files[0])
    launches, want_lost = int(files[1]), files[2]
    made = 4 * 1056 * 8 * launches
    k = find(root, "four_scopes")
    counts = {}

    def walk(n, path):
        for c in n.get("children", []):
            p = path + "/" + c["frame"]["name"]
            counts[p] = counts.get(p, 0) + c["metrics"].get("device_count", 0)
            walk(c, p)
    walk(k or {}, "")
    kept = sum(counts.values())
    lost = root["metrics"].get("device_scopes_lost", 0)
    print(f"NOTE  devscope: {files[0]}: records made {made}, kept {kept}, lost {lost}; "
          f"by path {counts}")
    result(kept + lost == made, f"{files[0]}: kept {kept} + lost {lost} = {kept + lost} "
           f"(made {made})")
    if want_lost == "0":
        per = 1056 * 8 * launches
        result(lost == 0, f"{files[0]}: device_scopes_lost {lost} (want 0)")
        result(counts == {"/outer": per, "/outer/inner": per, "/a": per, "/b": per},
               f"{files[0]}: one record per warp and launch for each scope, inner under "
               f"outer ({per} each)")
elif check == "plain":
    t = [find(tree(f), "plain")["metrics"] for f in files]
    base, with_ds = t[0]["min_time (ns)"], t[1]["min_time (ns)"]
    result(not find(tree(files[1]), "plain").get("children"),
           "a kernel without scopes has no scope children")
    result(with_ds <= base * 1.05,
           f"a kernel without scopes: min {with_ds} ns with device scopes, {base} ns without")
sys.exit(status)
