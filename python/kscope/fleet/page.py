"""page.py - the fleet page: one self-contained HTML file with the rank x
scope heat map, the stragglers, the imbalance, the top kernels and the
communication per rank, drawn from the summary's queries (analyses.py)
and the heat map's (sql/heatmap.sql).

The page is page/fleet.html with its markers filled: the HTML report's
stylesheet (src/report/page/report.css, copied into the package when it is
built, so both pages look alike), the data as JSON in a <script
type="application/json"> element (<, >, &, U+2028 and U+2029 escaped, as
the C report does, so no name can end the element), and page/fleet.js.
"""
import json
import os
from importlib import resources

from . import analyses

HEAT_SCOPES = 40  # rows of the heat map: the scopes with the most mean time
HEAT_BINS = 512  # columns: past this many ranks, ranks share a column


def _asset(name):
    """A page file of the package; report.css, which the build copies from
    src/report/page/, is read from there in a source checkout."""
    f = resources.files(__package__).joinpath("page", name)
    if f.is_file():
        return f.read_text(encoding="utf-8")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "..", "src", "report", "page", name), encoding="utf-8") as src:
        return src.read()


def script_json(obj):
    text = json.dumps(obj, separators=(",", ":"))
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                    ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


def compact_heat(rows):
    """Heat map rows (scope, bin, rank, time_ns, mean_ns) as {"scopes":
    [{"name", "mean_ns"}], "cells": [[[bin, rank, time_ns], ...] per
    scope]}: each scope's name once."""
    scopes, cells, index = [], [], {}
    for r in rows:
        i = index.get(r["scope"])
        if i is None:
            i = index[r["scope"]] = len(scopes)
            scopes.append({"name": r["scope"], "mean_ns": r["mean_ns"]})
            cells.append([])
        cells[i].append([r["bin"], r["rank"], r["time_ns"]])
    return {"scopes": scopes, "cells": cells}


def render(summary, heat):
    """The page's text for a summary and its heat map rows."""
    binned = summary["ranks"]["count"] > HEAT_BINS
    data = {"summary": summary, "heatmap": compact_heat(heat), "heatmap_binned": binned}
    page = _asset("fleet.html")
    parts = {"<!--KSCOPE:CSS-->": _asset("report.css"),
             "<!--KSCOPE:DATA-->": '<script type="application/json" id="fleet-data">'
                                   + script_json(data) + "</script>",
             "<!--KSCOPE:JS-->": _asset("fleet.js")}
    for marker, text in parts.items():
        page = page.replace(marker, text, 1)
    return page


def write(engine, root, out, run=None, metric=None, limit=20):
    """Write the page of one run of the dataset at root to `out`."""
    s = analyses.summary(engine, root, run=run, metric=metric, limit=limit)
    heat = analyses.heatmap(engine, HEAT_SCOPES, HEAT_BINS)
    text = render(s, heat)
    tmp = out + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, out)
    except OSError:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
