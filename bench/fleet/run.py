#!/usr/bin/env python3
"""run.py - the kscope fleet benchmark: RANKS generated rank trees of about
NODES nodes each (gen_ranks.py: a straggler and an imbalance planted),
then, each in its own process, timed and its peak memory measured:
  - kscope fleet export (the Parquet dataset; one worker per core);
  - kscope fleet summary --json, REPEAT times (DuckDB);
  - kscope fleet report --html (the fleet page);
  - the pandas way (pandas_way.py: every rank's JSON into one DataFrame,
    grouped by path), unless --no-pandas.
Peak memory is the largest sum of the resident sets of the command and
all its child processes, sampled every 20 ms from /proc (shared pages
count once per process: an upper bound). Prints a table, and with --json
FILE writes the figures.

The targets (issue 31): 1,024 ranks x 10k nodes (10M rows): export <= 60 s,
each summary <= 5 s, peak memory <= 2 GB on a 2-core machine. CI runs a
small size only (python/tests/test_fleet_bench.py).

usage: run.py [--ranks N] [--nodes N] [--work DIR] [--repeat N] [--no-pandas]
              [--json FILE] [--python PY] [--reuse]

Wall times depend on what else runs: the table gives the CPU time (user +
system, with the worker processes) and the load average beside them.
"""
import argparse
import datetime
import json
import multiprocessing
import os
import platform
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_ranks  # noqa: E402


def _tree_rss(root):
    """Sum of VmRSS (bytes) of root and its descendants."""
    children, rss = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            with open(f"/proc/{pid}/statm") as f:
                rss[int(pid)] = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            children.setdefault(ppid, []).append(int(pid))
        except (OSError, ValueError, IndexError):
            continue
    total, todo = 0, [root]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo += children.get(p, [])
    return total


def measure(cmd, env=None):
    """(seconds, peak bytes, stdout, CPU seconds) of a command: the CPU time
    (user + system, of the command and the workers it waited for) tells
    what the wall time would be on an idle machine when others load it."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    peak, out, done = [0], {}, threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            done.wait(0.02)

    def read(name, stream):
        out[name] = stream.read()
    threads = [threading.Thread(target=sample, daemon=True),
               threading.Thread(target=read, args=("out", proc.stdout), daemon=True),
               threading.Thread(target=read, args=("err", proc.stderr), daemon=True)]
    for th in threads:
        th.start()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    for th in threads:
        th.join()
    if proc.returncode != 0:
        raise SystemExit(f"run.py: {' '.join(cmd)} failed ({proc.returncode}): {out['err'].strip()}")
    return wall, peak[0], out["out"], usage.ru_utime + usage.ru_stime


def _gen(args):
    out, lo, hi, ranks, nodes = args
    for r in range(lo, hi):
        path = os.path.join(out, f"train.rank{r}.hatchet")
        with open(path, "w") as f:
            json.dump(gen_ranks.tree(r, ranks, nodes, 137 % ranks, 1.5, True, 0), f, separators=(",", ":"))


def generate(out, ranks, nodes, jobs):
    os.makedirs(out, exist_ok=True)
    step = (ranks + jobs - 1) // jobs
    parts = [(out, lo, min(ranks, lo + step), ranks, nodes) for lo in range(0, ranks, step)]
    with multiprocessing.Pool(jobs) as pool:
        pool.map(_gen, parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--nodes", type=int, default=10000)
    ap.add_argument("--work", default="/tmp/kscope-fleet-bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-pandas", action="store_true")
    ap.add_argument("--json", default=None, metavar="FILE")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--reuse", action="store_true",
                    help="keep WORK/prof when it holds RANKS files (skip generating them)")
    a = ap.parse_args()
    py = a.python
    prof, ds = os.path.join(a.work, "prof"), os.path.join(a.work, "ds")
    reuse = a.reuse and os.path.isdir(prof) and len(os.listdir(prof)) == a.ranks
    if reuse:
        shutil.rmtree(ds, ignore_errors=True)
    else:
        shutil.rmtree(a.work, ignore_errors=True)
    t0 = time.perf_counter()
    if not reuse:
        generate(prof, a.ranks, a.nodes, os.cpu_count() or 1)
    gen_s = time.perf_counter() - t0
    size = sum(os.path.getsize(os.path.join(prof, f)) for f in os.listdir(prof))
    res = {"date": datetime.date.today().isoformat(), "machine": machine(), "ranks": a.ranks,
           "nodes_per_rank": a.nodes, "input_bytes": size, "generate_s": round(gen_s, 1)}
    fleet = [py, "-m", "kscope.fleet"]
    res["load_before"] = os.getloadavg()[0]
    wall, peak, out, cpu = measure(fleet + ["export", "-o", ds, prof])
    res["export"] = {"s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_mb": round(peak / 2**20),
                     "out": out.splitlines()[0]}
    res["dataset_bytes"] = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(ds) for f in fs)
    rows = json.loads(measure(fleet + ["sql", ds, "SELECT COUNT(*) AS n FROM nodes", "--json"])[2])[0]["n"]
    res["rows"] = rows
    res["summary"] = []
    for _ in range(a.repeat):
        wall, peak, out, cpu = measure(fleet + ["summary", ds, "--json"])
        s = json.loads(out)
        res["summary"].append({"s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_mb": round(peak / 2**20)})
    res["found"] = {"straggler": s["stragglers"][0]["rank"] if s["stragglers"] else None,
                    "imbalance": s["imbalance"][0]["scope"] if s["imbalance"] else None}
    wall, peak, _, cpu = measure(fleet + ["report", "--html", os.path.join(a.work, "fleet.html"), ds])
    res["report"] = {"s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_mb": round(peak / 2**20)}
    if not a.no_pandas:
        wall, peak, out, cpu = measure([py, os.path.join(HERE, "pandas_way.py"), prof])
        res["pandas"] = {"s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_mb": round(peak / 2**20),
                         **json.loads(out)}
    res["load_after"] = os.getloadavg()[0]
    print_table(res)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // 2**20
    return f"{os.cpu_count()} cores ({cpu}), {mem} GiB"


def print_table(r):
    print(f"kscope fleet benchmark, {r['date']}, {r['machine']}; load average "
          f"{r['load_before']:.1f} before, {r['load_after']:.1f} after")
    print(f"{r['ranks']} ranks x ~{r['nodes_per_rank']} nodes = {r['rows']} rows; "
          f"{r['input_bytes'] / 2**20:.0f} MiB of .hatchet JSON -> {r['dataset_bytes'] / 2**20:.0f} MiB "
          f"of Parquet")
    print(f"{'step':<34} {'wall':>9} {'CPU':>9} {'peak memory':>12}")

    def row(name, m, extra=""):
        print(f"{name:<34} {m['s']:>7} s {m['cpu_s']:>7} s {m['peak_mb']:>9} MB{extra}")
    row("kscope fleet export", r["export"])
    for i, s in enumerate(r["summary"]):
        row(f"kscope fleet summary (run {i + 1})", s)
    row("kscope fleet report --html", r["report"])
    if "pandas" in r:
        p = r["pandas"]
        row("pandas: load all JSON + group by", p, f"   (load {p['load_s']} s, group by {p['query_s']} s)")
    print(f"summary named: straggler rank {r['found']['straggler']}, imbalance {r['found']['imbalance']}")


if __name__ == "__main__":
    main()
