"""analyses.py - summary, diff and heat map of a dataset: the SQL files of
sql/ run by an engine (engines.py), with their results as plain Python
values (what --json prints), and the text tables the commands print.
"""
import math
from decimal import Decimal

from .engines import sql_text
from .profiles import InputError, shown

# The analyses' thresholds (docs/fleet.md, "Summary").
LIMIT = 20  # rows per list
MIN_SHARE = 0.01  # scopes under 1% of a rank's mean total are not compared
MIN_EXCESS = 0.05  # a straggler is more than 5% above the median...
MAD_K = 3.0  # ...and more than 3 robust standard deviations above it
NO_KERNEL_TIME = "CAST(NULL AS DOUBLE)"


def clean(v):
    """A result value as JSON takes it: Decimal to float, NaN to None,
    floats rounded to 6 decimals (engines sum in different orders)."""
    if isinstance(v, Decimal):
        v = float(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return None
        return round(v, 6)
    return v


def as_dicts(result):
    cols, rows = result
    return [{c: clean(v) for c, v in zip(cols, r)} for r in rows]


def time_columns(columns):
    return [c for c in columns if c.endswith("_ns") or c.endswith("_ns_inc")]


def pick_metric(columns, metric, where):
    """The time metric scopes are compared by: `metric` when given (a time
    column of nodes), else time_ns_inc (GPU time under a scope), else
    wall_time_ns (host time)."""
    times = time_columns(columns)
    if metric:
        if metric not in times:
            raise InputError(f"--metric {shown(metric)} is not a time column of {where}'s nodes "
                             f"(time columns: {', '.join(times) or 'none'})")
        return metric
    for m in ("time_ns_inc", "wall_time_ns"):
        if m in times:
            return m
    raise InputError(f"{where}: its nodes hold no time (time_ns_inc or wall_time_ns); "
                     f"choose a column with --metric (time columns: {', '.join(times) or 'none'})")


def open_run(engine, root, prefix="", run=None):
    """Views over one run of the dataset at root; returns its name. A
    dataset holding several runs needs `run`."""
    engine.open(root, prefix)
    runs = [r[0] for r in engine.query(f"SELECT DISTINCT run FROM {prefix}runs ORDER BY run")[1]]
    if not runs:
        raise InputError(f"{shown(root)}: the dataset holds no rank")
    if run is None:
        if len(runs) > 1:
            raise InputError(f"{shown(root)}: the dataset holds {len(runs)} runs ({', '.join(runs[:8])}"
                             f"{', ...' if len(runs) > 8 else ''}): choose one with --run")
        run = runs[0]
    elif run not in runs:
        raise InputError(f"{shown(root)}: no run '{shown(run)}' (runs: {', '.join(runs[:8])})")
    engine.open(root, prefix, run)
    return run


def define_scopes(engine, metric, min_share=MIN_SHARE):
    engine.define("scope_times", sql_text("scope_times", metric=metric))
    engine.define("scope_stats", sql_text("scope_stats", metric=metric, min_share=float(min_share)))


def rank_info(ranks):
    if not ranks:
        return {"count": 0, "min": None, "max": None, "missing": []}
    have = set(ranks)
    missing = []
    for r in range(ranks[0], ranks[-1] + 1):
        if r not in have:
            missing.append(r)
            if len(missing) == 100:
                break
    return {"count": len(ranks), "min": ranks[0], "max": ranks[-1], "missing": missing}


def summary(engine, root, run=None, metric=None, limit=LIMIT, min_share=MIN_SHARE,
            min_excess=MIN_EXCESS, mad_k=MAD_K):
    """The summary of one run of a dataset (see docs/fleet.md for the keys)."""
    run = open_run(engine, root, "", run)
    columns = engine.columns("nodes")
    metric = pick_metric(columns, metric, shown(root))
    define_scopes(engine, metric, min_share)
    p = {"metric": metric, "limit": int(limit), "min_excess": float(min_excess), "mad_k": float(mad_k)}
    ranks = [r[0] for r in engine.query(sql_text("ranks"))[1]]
    kernels = "time_ns" in columns
    return {
        "dataset": root, "run": run, "engine": engine.name, "metric": metric,
        "ranks": rank_info(ranks),
        "stragglers": as_dicts(engine.query(sql_text("stragglers", **p))),
        "imbalance": as_dicts(engine.query(sql_text("imbalance", **p))),
        "top_kernels": as_dicts(engine.query(sql_text("top_kernels", **p))) if kernels else [],
        "comm_compute": as_dicts(engine.query(sql_text("comm_compute", **p))) if kernels else [],
    }


def heatmap(engine, scopes=40, bins=512):
    """Rows (scope, bin, rank, time_ns, mean_ns) of the page's heat map;
    needs summary's scope tables (same engine, right after it)."""
    return as_dicts(engine.query(sql_text("heatmap", scopes=int(scopes), bins=int(bins))))


def diff(engine, root_a, root_b, run_a=None, run_b=None, metric=None, limit=LIMIT):
    """Two runs side by side, per scope and per kernel (largest change first)."""
    run_a = open_run(engine, root_a, "a_", run_a)
    run_b = open_run(engine, root_b, "b_", run_b)
    cols_a, cols_b = engine.columns("a_nodes"), engine.columns("b_nodes")
    both = [c for c in cols_a if c in set(cols_b)]
    metric = pick_metric(both, metric, f"{shown(root_a)} and {shown(root_b)}")
    kernel_time = "time_ns" if "time_ns" in both else NO_KERNEL_TIME
    rows = as_dicts(engine.query(sql_text("diff", metric=metric, kernel_time=kernel_time,
                                          limit=int(limit))))
    return {"a": {"dataset": root_a, "run": run_a}, "b": {"dataset": root_b, "run": run_b},
            "engine": engine.name, "metric": metric, "changes": rows}


def sql(engine, root, query, run=None):
    """(columns, rows) of the user's query over nodes, kernels and runs."""
    if run is not None:
        open_run(engine, root, "", run)
    else:
        engine.open(root)
    cols, rows = engine.query(query)
    return cols, [tuple(clean(v) for v in r) for r in rows]


# --------------------------------------------------------------- text


def fmt_ns(ns):
    if ns is None:
        return "-"
    a = abs(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if a >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.0f} ns"


def table(headers, rows, out):
    """Print rows under headers; the last column is left-aligned text."""
    cells = [[shown(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    line = lambda r: "  ".join(c.rjust(w) if i < len(r) - 1 else c  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    print("  " + line(headers), file=out)
    for r in cells:
        print("  " + line(r), file=out)


def print_summary(s, out, rows=10):
    rk = s["ranks"]
    span = f"{rk['min']}-{rk['max']}" if rk["count"] else "none"
    print(f"{shown(s['dataset'])}: run {shown(s['run'])}, {rk['count']} ranks ({span}"
          f"{', ' + str(len(rk['missing'])) + ' missing' if rk['missing'] else ''}); "
          f"scopes compared by {s['metric']} ({s['engine']})", file=out)
    print("\nstragglers (a rank's time in a scope against the ranks' median):", file=out)
    if s["stragglers"]:
        table(["rank", "time", "median", "ratio", "scope"],
              [[r["rank"], fmt_ns(r["time_ns"]), fmt_ns(r["median_ns"]), f"{r['ratio']:.2f}x", r["scope"]]
               for r in s["stragglers"][:rows]], out)
    else:
        print("  none", file=out)
    print("\nimbalance (per scope: the slowest rank's time over the mean):", file=out)
    if s["imbalance"]:
        table(["max/mean", "slowest", "fastest", "mean", "scope"],
              [[f"{r['max_over_mean']:.2f}", r["max_rank"], r["min_rank"], fmt_ns(r["mean_ns"]), r["scope"]]
               for r in s["imbalance"][:rows]], out)
    else:
        print("  none", file=out)
    if s["top_kernels"]:
        print("\ntop kernels (GPU time over all ranks):", file=out)
        table(["time", "launches", "ranks", "mean/rank", "max/mean", "slowest", "kernel"],
              [[fmt_ns(r["time_ns"]), f"{r['count']:.0f}" if r["count"] is not None else "-", r["ranks"],
                fmt_ns(r["mean_ns"]), f"{r['spread']:.2f}" if r["spread"] is not None else "-",
                r["max_rank"], r["kernel"]] for r in s["top_kernels"][:rows]], out)
    cc = [r for r in s["comm_compute"] if r["comm_ns"]]
    if cc:
        cc.sort(key=lambda r: (-(r["comm_share"] or 0), r["rank"]))
        print(f"\ncommunication vs computation (NCCL/RCCL kernels; the {min(rows, len(cc))} ranks "
              "with the largest share of communication):", file=out)
        table(["comm", "compute", "share", "overlap", "rank"],
              [[fmt_ns(r["comm_ns"]), fmt_ns(r["compute_ns"]), f"{100 * (r['comm_share'] or 0):.1f}%",
                fmt_ns(r["overlap_ns"]), r["rank"]] for r in cc[:rows]], out)


def print_diff(d, out, rows=20):
    a, b = d["a"], d["b"]
    print(f"A: {shown(a['dataset'])} (run {shown(a['run'])})  B: {shown(b['dataset'])} "
          f"(run {shown(b['run'])}); mean per rank, scopes by {d['metric']}, kernels by time_ns", file=out)
    if not d["changes"]:
        print("  no change", file=out)
        return
    table(["A", "B", "B-A", "B/A", "what", "name"],
          [[fmt_ns(r["a_ns"]), fmt_ns(r["b_ns"]), fmt_ns(r["delta_ns"]),
            f"{r['ratio']:.2f}x" if r["ratio"] is not None else "new", r["what"], r["name"]]
           for r in d["changes"][:rows]], out)
