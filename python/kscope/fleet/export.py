"""export.py - `kscope fleet export`: profiles into a Parquet dataset.

Each input file is one job (read, flatten, write its Parquet files into a
temporary folder of the dataset), run in worker processes; when every job
has succeeded, the files are moved into their partitions at once and the
dataset's marker is updated. A failure leaves the dataset as it was.
A rank's partitions are replaced whole: exporting rank 3 again replaces
its nodes, kernels and runs files.
"""
import concurrent.futures
import fcntl
import json
import multiprocessing
import os
import shutil

from . import dataset
from .profiles import (InputError, flatten_tree, format_of, read_document, read_facts, read_trace,
                       shown, sniff_kind, split_name)


def expand(inputs):
    """The profile files of the inputs: a file as given, a folder's files
    whose extension is a profile format's (PROFILE.meta.json, the run's
    facts, is not one)."""
    files = []
    if not inputs:
        raise InputError("no PROFILE given (kscope fleet export -o DIR PROFILE...)")
    for p in inputs:
        if os.path.isdir(p):
            found = sorted(os.path.join(p, f) for f in os.listdir(p)
                           if not f.endswith(".meta.json") and format_of(f)
                           and os.path.isfile(os.path.join(p, f)))
            if not found:
                raise InputError(f"{shown(p)}: no profile in this folder (.hatchet, .hatchet_msgpack "
                                 "or Chrome trace files)")
            files += found
        elif os.path.exists(p):
            files.append(p)
        else:
            raise InputError(f"{shown(p)}: no such file or folder")
    return files


def _array(pa, values, t):
    """An Arrow array; NaN in a float column (no value) becomes null."""
    if getattr(values, "dtype", None) is not None and values.dtype.kind == "f":
        import numpy as np

        return pa.array(values, type=t, mask=np.isnan(values))
    return pa.array(values, type=t)


def _arrow_table(cols, info, fixed):
    import pyarrow as pa

    types = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(), "bool": pa.bool_(),
             "double": pa.float64(), "list": pa.list_(pa.float64())}
    fields, arrays = [], []
    for name, t in fixed:
        fields.append(pa.field(name, types[t]))
        arrays.append(_array(pa, cols[name], types[t]))
    for col in sorted(info):
        metric, t, _inc = info[col]
        fields.append(pa.field(col, types[t], metadata={"metric": metric}))
        arrays.append(_array(pa, cols[col], types[t]))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _write(table, path):
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def export_one(job):
    """Worker: read one profile and write its tables into job["tmp"].
    Returns what the commit needs (row counts, columns, facts)."""
    path, tmp, idx = job["path"], job["tmp"], job["index"]
    fmt = format_of(path)
    doc = read_document(path)
    kind = sniff_kind(doc)
    if kind is None:
        raise InputError(f"{shown(path)}: not a profile: neither a .hatchet tree nor a Chrome trace")
    out = {"path": path, "kind": kind, "format": fmt[0] if fmt else kind, "index": idx,
           "warning": None, "kernels": 0, "kernels_tmp": None}
    if kind == "trace":
        kcols, tree, facts = read_trace(path, doc)
        out["kernels"] = len(kcols["name"])
        out["kernels_tmp"] = os.path.join(tmp, f"{idx}.kernels.parquet")
        _write(_arrow_table(kcols, {}, dataset.FIXED["kernels"]), out["kernels_tmp"])
        doc = tree
    else:
        facts, out["warning"] = read_facts(path)
    cols, info, devices = flatten_tree(path, doc)
    out["nodes"] = len(cols["name"])
    out["nodes_tmp"] = os.path.join(tmp, f"{idx}.nodes.parquet")
    _write(_arrow_table(cols, info, dataset.FIXED["nodes"]), out["nodes_tmp"])
    out["info"] = info
    out["facts"] = facts
    out["devices"] = devices
    # the rank's runs row, as if this file were its only one (the commit
    # rewrites it for a rank that has a tree and a trace)
    out["runs_tmp"] = os.path.join(tmp, f"{idx}.runs.parquet")
    _write(_arrow_table(_runs_row({kind: out}, job["pid"]), {}, dataset.FIXED["runs"]), out["runs_tmp"])
    return out


def _run_jobs(jobs, workers):
    if workers <= 1 or len(jobs) == 1:
        return [export_one(j) for j in jobs]
    ctx = multiprocessing.get_context("spawn")  # no fork of a process with Arrow's threads
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
        return list(ex.map(export_one, jobs, chunksize=max(1, len(jobs) // (workers * 8))))


def _group(results, names):
    """{(run, rank): {"tree": result, "trace": result}}, refusing two trees
    or two traces for one rank."""
    groups = {}
    for r in results:
        run, rank, _pid = names[r["index"]]
        g = groups.setdefault((run, rank), {})
        if r["kind"] in g:
            raise InputError(f"{shown(g[r['kind']]['path'])} and {shown(r['path'])}: two {r['kind']} "
                             f"profiles for run {run} rank {rank} (merge them first: kscope merge)")
        g[r["kind"]] = r
    return groups


def _merge_columns(known, results):
    """The dataset's metric columns after these files, refusing a column
    whose metric or type differs from what the dataset holds."""
    cols = dict(known)
    for r in results:
        for col, (metric, t, inc) in r["info"].items():
            have = cols.get(col)
            if have is None:
                cols[col] = (metric, t, inc)
            elif have[1] != t:
                raise InputError(f"{shown(r['path'])}: metric '{shown(metric)}' (column {col}) holds "
                                 f"{t} values here, {have[1]} values in the dataset")
            elif have[0] != metric:
                raise InputError(f"{shown(r['path'])}: metrics '{shown(metric)}' and '{shown(have[0])}' "
                                 f"both make column {col}")
            elif inc and not have[2]:
                cols[col] = (metric, t, True)
    return cols


def _runs_row(run_files, pid):
    tree, trace = run_files.get("tree"), run_files.get("trace")
    main = tree or trace
    facts = (tree or {}).get("facts") or (trace or {}).get("facts") or {}
    devices = main["devices"] or {}
    count = sum(len(v) for v in devices.values() if isinstance(v, dict))
    fpid = facts.get("pid")
    return {"tree_file": [tree["path"] if tree else None],
            "trace_file": [trace["path"] if trace else None],
            "format": [main["format"]],
            "pid": [pid if pid is not None else fpid if isinstance(fpid, int) else None],
            **{k: [facts.get(k) if isinstance(facts.get(k), str) else None]
               for k in ("command", "process", "host", "start_time", "kscope_version")},
            "devices": [json.dumps(devices, sort_keys=True) if devices else None],
            "device_count": [count], "nodes": [main["nodes"]],
            "kernels": [trace["kernels"] if trace else 0]}


def _commit(root, groups, names_by_key, tmp):
    for (run, rank), files in sorted(groups.items()):
        parts = {t: dataset.partition_dir(root, t, run, rank) for t in dataset.TABLES}
        for d in parts.values():
            shutil.rmtree(d, ignore_errors=True)
        nodes_from = files.get("tree") or files["trace"]
        os.makedirs(parts["nodes"])
        os.replace(nodes_from["nodes_tmp"], os.path.join(parts["nodes"], dataset.PART))
        if "trace" in files:
            os.makedirs(parts["kernels"])
            os.replace(files["trace"]["kernels_tmp"], os.path.join(parts["kernels"], dataset.PART))
        os.makedirs(parts["runs"])
        runs_tmp = nodes_from["runs_tmp"]
        if len(files) > 1:
            runs_tmp = os.path.join(tmp, f"runs-{run}-{rank}.parquet")
            row = _runs_row(files, names_by_key[(run, rank)])
            _write(_arrow_table(row, {}, dataset.FIXED["runs"]), runs_tmp)
        os.replace(runs_tmp, os.path.join(parts["runs"], dataset.PART))


def export(inputs, out, run=None, workers=None, warn=None):
    """Export profiles (files or folders) into the dataset at `out` (made
    when missing). Returns {"files", "ranks", "runs", "nodes", "kernels"}."""
    import numpy  # noqa: F401  (what the workers need: missing, it is named before any file is made)
    import pyarrow  # noqa: F401

    files = expand(inputs)
    names = []
    for f in files:
        r, rank, pid = split_name(f)
        names.append((dataset.run_name_checked(run) if run else r, 0 if rank is None else rank, pid))
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"{shown(out)}: not a folder")
    if os.path.isdir(out) and os.listdir(out) and not os.path.exists(os.path.join(out, dataset.MARKER)):
        raise InputError(f"{shown(out)}: a folder that holds other files, not a kscope fleet dataset "
                         "(export into a new folder)")
    fresh = not os.path.exists(out)
    os.makedirs(out, exist_ok=True)
    for t in dataset.TABLES:
        os.makedirs(os.path.join(out, t), exist_ok=True)
    lock = open(os.path.join(out, ".kscope_fleet.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one export into a dataset at a time
    tmp = os.path.join(out, f".export-{os.getpid()}")
    try:
        known = {}
        if os.path.exists(os.path.join(out, dataset.MARKER)):
            known = dataset.marker_columns(dataset.read_marker(out))
        os.makedirs(tmp, exist_ok=True)
        jobs = [{"path": f, "tmp": tmp, "index": i, "pid": names[i][2]} for i, f in enumerate(files)]
        results = _run_jobs(jobs, workers or os.cpu_count() or 1)
        groups = _group(results, names)
        columns = _merge_columns(known, results)
        for r in results:
            if r["warning"] and warn:
                warn(r["warning"])
        pids = {(n[0], n[1]): n[2] for n in names}
        _commit(out, groups, pids, tmp)
        dataset.write_marker(out, columns)
        return {"files": len(files), "ranks": len({k[1] for k in groups}),
                "runs": sorted({k[0] for k in groups}),
                "nodes": sum((g.get("tree") or g.get("trace"))["nodes"] for g in groups.values()),
                "kernels": sum(g["trace"]["kernels"] for g in groups.values() if "trace" in g)}
    except BaseException:
        if fresh:  # a failed first export leaves no folder behind
            shutil.rmtree(out, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        lock.close()
