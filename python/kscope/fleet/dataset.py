"""dataset.py - the layout of a fleet dataset on disk, its fixed columns,
and the checks that a folder is one.

    DIR/_kscope_fleet.json                 what makes DIR a dataset: the
                                           format's version and every
                                           metric column seen, with its
                                           metric's name and type
    DIR/nodes/run=NAME/rank=R/part-0.parquet
    DIR/kernels/run=NAME/rank=R/part-0.parquet   (ranks with a trace)
    DIR/runs/run=NAME/rank=R/part-0.parquet

Hive-style partitions (run, rank): adding a rank is adding its files, and
DuckDB and Spark both read run and rank from the folder names. The schema
is docs/fleet.md's.
"""
import glob
import json
import os
import re

from .profiles import InputError, shown

MARKER = "_kscope_fleet.json"
FORMAT = "kscope-fleet"
VERSION = 1
TABLES = ("nodes", "kernels", "runs")
PART = "part-0.parquet"

# Fixed columns of each table (without run and rank, which are the
# partitions), as (name, Arrow type name). Metric columns of nodes follow.
FIXED = {
    "nodes": [("node_id", "int64"), ("parent_id", "int64"), ("depth", "int32"),
              ("path", "string"), ("name", "string"), ("kind", "string"), ("comm", "bool")],
    "kernels": [("device", "int64"), ("stream", "int64"), ("name", "string"), ("kind", "string"),
                ("comm", "bool"), ("start_ns", "int64"), ("duration_ns", "int64"),
                ("correlation", "int64"), ("scope", "string"), ("bytes", "double")],
    "runs": [("tree_file", "string"), ("trace_file", "string"), ("format", "string"),
             ("pid", "int64"), ("command", "string"), ("process", "string"), ("host", "string"),
             ("start_time", "string"), ("kscope_version", "string"), ("devices", "string"),
             ("device_count", "int64"), ("nodes", "int64"), ("kernels", "int64")],
}


def run_name_checked(name):
    """A run's name as given by --run: it names a folder, so it keeps to
    letters, digits, '.', '_' and '-'."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name) or name in (".", ".."):
        raise InputError(f"--run '{shown(name)}': a run's name takes letters, digits, '.', '_' and '-'")
    return name


def is_remote(path):
    """A URL (s3a://, hdfs://, ...): only an engine can look there."""
    return "://" in path


def partition_dir(root, table, run, rank):
    return os.path.join(root, table, f"run={run}", f"rank={rank}")


def read_marker(root):
    """The dataset's marker, or an InputError naming what is wrong."""
    path = os.path.join(root, MARKER)
    if not os.path.isdir(root):
        raise InputError(f"{shown(root)}: no such folder")
    try:
        with open(path, encoding="utf-8") as f:
            marker = json.load(f)
    except FileNotFoundError:
        raise InputError(f"{shown(root)}: not a kscope fleet dataset (no {MARKER}; "
                         "make one with kscope fleet export)") from None
    except (OSError, ValueError) as e:
        raise InputError(f"{shown(path)}: unreadable: {shown(e)}") from None
    if not isinstance(marker, dict) or marker.get("format") != FORMAT:
        raise InputError(f"{shown(path)}: not a kscope fleet dataset marker")
    if marker.get("version") != VERSION:
        raise InputError(f"{shown(path)}: dataset version {shown(marker.get('version'))}; "
                         f"this kscope reads version {VERSION}")
    return marker


def check(root):
    """Check that root is a whole dataset: its marker and a folder per
    table. Returns the marker ({} for a remote dataset, left to the
    engine)."""
    if is_remote(root):
        return {}
    marker = read_marker(root)
    for t in TABLES:
        if not os.path.isdir(os.path.join(root, t)):
            raise InputError(f"{shown(root)}: table '{t}' is missing ({shown(os.path.join(root, t))})")
    return marker


def table_files(root, table):
    """The Parquet files of a table (local datasets)."""
    return sorted(glob.glob(os.path.join(glob.escape(root), table, "run=*", "rank=*", "*.parquet")))


def write_marker(root, columns):
    marker = {"format": FORMAT, "version": VERSION,
              "columns": {"nodes": {c: {"metric": m, "type": t, "inclusive": inc}
                                    for c, (m, t, inc) in sorted(columns.items())}}}
    tmp = os.path.join(root, "." + MARKER + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(marker, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(root, MARKER))


def marker_columns(marker):
    """{column: (metric, type, inclusive)} of the nodes table's metrics."""
    cols = (marker.get("columns") or {}).get("nodes") or {}
    return {c: (v.get("metric"), v.get("type"), bool(v.get("inclusive"))) for c, v in cols.items()}
