"""Run Triton's proton-viewer and LLNL Hatchet over profiles, in the
environment tools/peer-venv.sh makes (triton, llnl-hatchet): the peers
kscope's files must open in. One process runs every job, so the viewer and
pandas are imported once.

usage: python peer_viewer.py < jobs.json > results.json

A job is {"viewer": [ARGS...]}: proton-viewer's own main() with those
arguments (the command line `proton-viewer ARGS...` runs), giving
{"rc": 0, "out": STDOUT} or {"rc": 1, "error": "TypeError: ..."}; or
{"literal": PATH}: the file through proton-viewer's preprocessing
(remove_frames, the device-info part taken off) into
hatchet.GraphFrame.from_literal, with inclusive columns computed, giving
{"rc": 0, "columns": [...], "nodes": N, "values": {column: [values in
node order]}} or the error.
"""
import contextlib
import io
import json
import math
import sys
import traceback
import warnings


def error_of(exc):
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def run_viewer(viewer, args):
    out = io.StringIO()
    sys.argv = ["proton-viewer"] + args
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            viewer.main()
    except BaseException as e:  # the viewer's asserts and SystemExit too
        return {"rc": 1, "error": error_of(e), "out": out.getvalue()}
    return {"rc": 0, "out": out.getvalue()}


def plain(v):
    """A dataframe cell as JSON: NaN becomes None, numpy scalars numbers."""
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def run_literal(viewer, ht, path):
    try:
        with open(path) as f:
            database = viewer.remove_frames(json.load(f))
        database.pop(1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gf = ht.GraphFrame.from_literal(database)
            gf.update_inclusive_columns()
        order = [n for n in gf.graph.traverse()]
        values = {}
        for col in gf.dataframe.columns:
            if col == "node":
                continue
            values[col] = [plain(gf.dataframe.loc[n, col]) for n in order]
        return {"rc": 0, "columns": sorted(values), "nodes": len(order), "values": values}
    except BaseException as e:
        return {"rc": 1, "error": error_of(e)}


def main():
    from triton.profiler import viewer
    import hatchet as ht
    jobs = json.load(sys.stdin)
    results = []
    for job in jobs:
        if "viewer" in job:
            results.append(run_viewer(viewer, job["viewer"]))
        else:
            results.append(run_literal(viewer, ht, job["literal"]))
    json.dump(results, sys.stdout)


main()
