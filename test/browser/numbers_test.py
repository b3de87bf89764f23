"""numbers_test.py - every number the HTML report shows equals what the
command line prints for the same file, in a real headless Chromium, over
every profile in test/data/ (kscope's, Proton's, traces; each also as
.hatchet_msgpack) and a merge:

- the flame graph: for every metric, each node's value (hovering shows
  it) equals `kscope view -m METRIC`; its share of the view equals
  `kscope view -m METRIC/%`; each box's width within its parent's is the
  share its subtree's total has there (for `outer { inner }` with host
  wall times 60 and 40 ms, inner is 2/3 of outer); the rates equal
  `kscope view -m flop/s` and `-m byte/s`;
- the header: host wall time is the metric's total (the total `view`'s
  shares divide by), and GPU time, kernels, launches and copies are what
  `kscope report` prints;
- the top-kernels table is `kscope top -n 0` cell for cell;
- the diff tab, for pairs of profiles, is `kscope diff -n 0` (its default
  metric, and every metric both share) row for row.

Exit 77 (skipped) when no Chromium is installed, except under CI."""
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

KS = os.environ["KSCOPE_CLI"]
SRC = os.environ["KSCOPE_SOURCE_DIR"]
BIN = os.environ["KSCOPE_BINARY_DIR"]
WORK = os.path.join(BIN, "report-numbers")
fails = []
checked = {"values": 0, "shares": 0, "widths": 0, "top": 0, "diff": 0, "header": 0}


def check(what, ok, detail=""):
    if not ok:
        print(f"FAIL: {what} ({detail})")
        fails.append(what)
    return ok


def ks(*args):
    r = subprocess.run([KS, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"kscope {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


# ------------------------------------------------------------- the CLI side

BRANCH = re.compile(r"^((?:│  |   )*)(?:├─ |└─ )")


def view(path, spec):
    """`kscope view -m SPEC` as {path tuple: number or None}."""
    lines = ks("view", "-m", spec, "-d", "100000", "--full-names", "--color", "never", path).splitlines()
    width = len(lines[0]) - len("  name")
    out, stack = {}, []
    for line in lines[1:]:
        if not line.strip():
            break  # the sampled note after the tree
        cell, rest = line[:width].strip(), line[width + 2:]
        m = BRANCH.match(rest)
        depth = (len(m.group(1)) // 3 + 1) if m else 0
        name = rest[m.end():] if m else rest
        del stack[depth:]
        stack.append(name)
        out[tuple(stack)] = None if cell == "-" else float(cell)
    return out


def view_tol(v):
    """Half a unit of the last digit `kscope view` prints for v: whole
    numbers exactly, else three decimals, past 1e15 three digits after the
    point of an exponent form."""
    if v is None or math.isinf(v):
        return 0
    return 5e-4 * abs(v) if abs(v) >= 1e15 else 0.5 if v == int(v) else 0.0005


DURATION = r"(?:-|-?inf|\S+ (?:ns|us|ms|s))"
TOP_ROW = re.compile(r"^\s*(\S+%)\s+({d})\s+(\S+)\s+({d})\s+({d})\s+({d})  (.*)$".format(d=DURATION))
DIFF_ROW = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\S+)\s+(only in [AB]|\S+)  (.*)$")


def top_rows(path):
    out = {}
    for line in ks("top", "-n", "0", "--full-names", "--color", "never", path).splitlines()[1:]:
        if line.startswith("(") or line.startswith("no GPU"):
            continue
        m = TOP_ROW.match(line)
        check(f"{path}: a row of kscope top reads back: {line}", m)
        if m:
            out[m.group(7)] = list(m.groups()[:6])
    return out


def diff_rows(a, b, spec=None):
    args = ["diff", "-n", "0"] + (["-m", spec] if spec else []) + [a, b]
    lines = ks(*args).splitlines()
    metric = lines[0].split("   ")[0][len("metric: "):]
    rows = {}
    for line in lines[2:]:
        if line.startswith("("):
            continue
        m = DIFF_ROW.match(line)
        check(f"{a}: a row of kscope diff reads back: {line}", m)
        if m:
            rows[m.group(5)] = m.groups()[:4]
    return metric, rows


# ------------------------------------------------------------ the page side

UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
SUFFIX = {"P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3}


def shown(text, name):
    """A number as the page shows it: (value, half a unit of its last digit)."""
    text = text.strip()
    if text in ("inf", "-inf"):
        return float(text), 0
    m = re.fullmatch(r"(-?[\d.]+(?:e[+-]\d+)?) (ns|us|ms|s)", text) if name.endswith("(ns)") else None
    if m:
        num, unit = m.group(1), UNITS[m.group(2)]
    else:
        m = re.fullmatch(r"(-?[\d.]+(?:e[+-]\d+)?)([PTGMk]?)", text)
        if not m:
            raise ValueError(f"{name}: cannot read '{text}'")
        num, unit = m.group(1), SUFFIX.get(m.group(2), 1)
    mant = num.split("e")[0]
    digits = len(mant.split(".")[1]) if "." in mant else 0
    exp = int(num.split("e")[1]) if "e" in num else 0
    return float(num) * unit, 0.5 * 10 ** (exp - digits) * unit


def close(a, b, tol):
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= tol + 1e-9 * max(abs(a), abs(b))


def page_paths(names, parent):
    paths = []
    for i, p in enumerate(parent):
        paths.append((names[0],) if p < 0 else paths[p] + (names[i],))
    return paths


def node_metric_text(tip, name):
    """The value hovering shows for metric `name` (None when it shows none)."""
    for line in tip[3:] if "% of the view" in (tip[2] if len(tip) > 2 else "") else tip[2:]:
        if line.startswith(name + ": "):
            return re.sub(r" \(own .*\)$", "", line[len(name) + 2:])
    return None


def subtree_totals(vals, parent, inc):
    """The rule the page's widths follow (read/rollup.c), on view's numbers."""
    n = len(parent)
    span = [0.0 if v is None else v for v in vals]
    if not inc:
        for i in range(n - 1, 0, -1):
            if vals[parent[i]] is None:
                span[parent[i]] += span[i]
    return span


def check_values(page, label, path, data, paths):
    """Each node's numbers, as the page holds them and as hovering shows
    them, against `kscope view -m METRIC` and `-m METRIC/%`."""
    n, parent = len(paths), data["parent"]
    index = {p: i for i, p in reversed(list(enumerate(paths)))}
    for m in data["metrics"]:
        name = m["name"]
        spec = name if not m["rate"] else name
        cli = view(path, spec)
        if not m["rate"]:
            pick(page, "flame-metric", name)
        tips = page.eval("(() => { const t = []; for (let i = 0; i < %d; i++) t.push(kscopeReport.tip(i)); "
                         "return t; })()" % n)
        # each node: the page's number and what hovering shows, against view
        for p, want in cli.items():
            i = index.get(p)
            if i is None:
                check(f"{label}: node {' > '.join(p)} is on the page", False)
                continue
            got = m["val"][i]
            check(f"{label}: {name} of {' > '.join(p)}: page {got}, view {want}", close(got, want, view_tol(want)),
                  (got, want))
            checked["values"] += 1
            text = node_metric_text(tips[i], name)
            if text is not None and text.startswith("total "):  # ROOT: a per-node metric's total
                check(f"{label}: {name}: ROOT shows its total where view shows none", want is None, tips[i])
                continue
            if want is None or text is None:
                # shown only where view shows it; a 0 may go unshown
                check(f"{label}: {name} of {' > '.join(p)}: shown only where view shows it",
                      text is None and (want is None or want == 0 or m["rate"]), tips[i])
                continue
            v, tol = shown(text, name)
            check(f"{label}: {name} of {' > '.join(p)} shows '{text}', view {want}",
                  close(v, want, tol + view_tol(want)), (v, want, tol))
        if m["rate"]:
            continue
        # shares of the total, as view's NAME/% (zoomed out: ROOT is the view)
        shares = view(path, name + "/%")
        for p, want in shares.items():
            i = index.get(p)
            line = next((t for t in tips[i] if t.endswith("% of the view")), None) if i is not None else None
            if want is None or line is None or i == 0 or m["total"] in (None, 0):
                continue
            v = float(line.split("%")[0])
            check(f"{label}: {name} share of {' > '.join(p)}: page {v}%, view {want}%", close(v, want, 0.0051),
                  tips[i])
            checked["shares"] += 1


def inclusive_metrics(path):
    """The metrics `kscope view -l` lists as summed into parents."""
    out, inc = set(), False
    for line in ks("view", "-l", path).splitlines():
        if line.endswith(":"):
            inc = line.startswith("Inclusive")
        elif line.startswith("- ") and inc:
            out.add(line[2:])
    return out


def structure(page):
    """The tree's shape as the page's data holds it: paths and parents."""
    d = page.eval("JSON.parse(document.getElementById('kscope-a').textContent).tree")
    n = len(d["name"])
    parent = [-1] + [i - d["up"][i] for i in range(1, n)]
    return page_paths([d["strings"][k] for k in d["name"]], parent), parent


def check_widths(page, label, path):
    """Each box's width within its parent's is its subtree's total's share
    there, from view's numbers (the page's own numbers aside)."""
    paths, parent = structure(page)
    n, inc = len(paths), inclusive_metrics(path)
    for name in page.eval("[...document.getElementById('flame-metric').options].map(o => o.value)"):
        try:
            cli = view(path, name)
        except RuntimeError as e:  # a width view cannot show at all
            check(f"{label}: the width {name} is a metric of the file", False, e)
            continue
        pick(page, "flame-metric", name)
        span = subtree_totals([cli.get(p) for p in paths], parent, name in inc)
        boxes = {b["i"]: b for b in page.eval("document.getElementById('flame-canvas').boxes")}
        for i, b in boxes.items():
            if i == 0 or parent[i] not in boxes or paths[i] not in cli:
                continue
            kids = [k for k in range(n) if parent[k] == parent[i]]
            base = max(span[parent[i]], sum(span[k] for k in kids))
            if base <= 0:
                continue
            want = span[i] / base
            got = b["w"] / boxes[parent[i]]["w"]
            check(f"{label}: {name} width of {' > '.join(paths[i])}: {got:.4f} of its parent's, "
                  f"view's numbers {want:.4f}", abs(got - want) < 2e-3, (got, want))
            checked["widths"] += 1


def check_example(page):
    """The example of the issue: outer { inner { 40 ms } 20 ms }."""
    outer = view(os.path.join(SRC, "test", "data", "kscope", "nested.hatchet"), "wall_time/ms")
    facts = dict(page.eval("[...document.querySelectorAll('#fact-list .fact')].map(f => "
                           "[f.children[0].textContent, f.children[1].textContent])"))
    want = f"{outer[('ROOT', 'outer')]:.3f} ms"
    check(f"nested.hatchet: host wall time is outer's {want}", facts.get("host wall time") == want,
          facts.get("host wall time"))
    pick(page, "flame-metric", "wall_time (ns)")
    paths, _ = structure(page)
    w = {paths[b["i"]][-1]: b["w"] for b in page.eval("document.getElementById('flame-canvas').boxes")}
    share = outer[("ROOT", "outer", "inner")] / outer[("ROOT", "outer")]
    check(f"nested.hatchet: inner is {share:.1%} of outer's width", abs(w.get("inner", 0) / w["outer"] - share)
          < 2e-3, w)


def check_header(page, label, path):
    facts = page.eval("[...document.querySelectorAll('#fact-list .fact')].map(f => "
                      "[f.children[0].textContent, f.children[1].textContent])")
    facts = dict(facts)
    if "host wall time" in facts:
        shares, values = view(path, "wall_time (ns)/%"), view(path, "wall_time (ns)")
        p = max((p for p in shares if shares[p] and values.get(p)), key=lambda p: shares[p])
        total = values[p] / (shares[p] / 100)
        v, tol = shown(facts["host wall time"], "wall_time (ns)")
        tol += total * 0.0005 / shares[p] + 0.5  # the share is printed to 3 decimals
        check(f"{label}: host wall time {facts['host wall time']} is the total view's shares divide by "
              f"({total:.0f} ns)", close(v, total, tol), (v, total))
        checked["header"] += 1
    report = ks("report", path)
    m = re.search(r"GPU time: (.*?) \(kernels (.*?) in (\d+) launches; copies and sets (.*?) in", report)
    if m:
        want = f"{m.group(1)} (kernels {m.group(2)} in {m.group(3)} launches, copies and sets {m.group(4)})"
        check(f"{label}: GPU time as `kscope report`: {want}", facts.get("GPU time") == want,
              facts.get("GPU time"))
        checked["header"] += 1


def check_top(page, label, path):
    want = top_rows(path)
    page.eval("kscopeReport.show('top')")
    got = page.eval("[...document.querySelectorAll('#top-table tbody tr')].map(r => "
                    "[...r.children].map(c => c.textContent))")
    rows = {r[6]: [r[0] + "%"] + r[1:6] for r in got}
    check(f"{label}: top kernels: the same kernels as `kscope top`", sorted(rows) == sorted(want),
          (sorted(rows)[:3], sorted(want)[:3]))
    for name, cells in want.items():
        check(f"{label}: top kernel {name[:60]}: page {rows.get(name)}, kscope top {cells}",
              rows.get(name) == cells)
        checked["top"] += 1
    page.eval("kscopeReport.show('flame')")


def pick(page, select, name):
    """Choose `name` in a <select> of the page, as a user does."""
    page.eval(f"(() => {{ const s = document.getElementById('{select}'); s.value = {json.dumps(name)}; "
              "s.dispatchEvent(new Event('change')); })()")


def check_diff(page, label, a, b, metric, spec):
    """The diff tab's table against `kscope diff -n 0 [-m spec]`, cell by
    cell: A, B, change (as numbers at the shown precision) and B/A."""
    title, want = diff_rows(a, b, spec)
    page.eval("kscopeReport.show('diff')")
    pick(page, "diff-metric", metric)
    cells = page.eval("[...document.querySelectorAll('#diff-table tbody tr')].map(r => "
                      "[...r.children].map(c => c.textContent))")
    got = {c[5].split("  [only in")[0]: c for c in cells}
    check(f"{label} ({title}): the rows of `kscope diff`", sorted(got) == sorted(want),
          sorted(set(got) ^ set(want))[:4])
    scale = 1e6 if title.endswith("/ms") else 1
    for p, (va, vb, ch, ratio) in want.items():
        if p not in got:
            continue
        row = got[p]
        for what, cli, text in (("A", va, row[0]), ("B", vb, row[1]), ("change", ch, row[2])):
            cli_v = None if cli == "-" else float(cli) * scale
            v, tol = (None, 0) if text == "-" else shown(text, metric)
            tol += (0.0005 if "." in cli else 0.5) * scale
            check(f"{label} ({title}) {p}: {what} shows '{text}', kscope diff {cli}", close(v, cli_v, tol))
        mine = row[4]
        if ratio.endswith("x"):
            check(f"{label} ({title}) {p}: B/A shows '{mine}', kscope diff {ratio}", mine == ratio)
        else:
            check(f"{label} ({title}) {p}: no B/A shown ('{mine}'), as kscope diff ({ratio})", mine == "-")
        checked["diff"] += 1
    page.eval("kscopeReport.show('flame')")


def inputs():
    data = os.path.join(SRC, "test", "data")
    files = sorted(os.path.join(data, d, f) for d in ("kscope", "proton") for f in os.listdir(os.path.join(data, d)))
    merged = os.path.join(WORK, "rich_tree_x2.hatchet")
    ks("merge", "-o", merged, os.path.join(data, "proton", "rich_tree.hatchet"),
       os.path.join(data, "proton", "rich_tree.hatchet"))
    files.append(merged)
    for f in list(files):  # the same trees in MessagePack
        if f.endswith(".hatchet"):
            mp = os.path.join(WORK, os.path.basename(f) + "_msgpack")
            ks("convert", f, mp)
            files.append(mp)
    return files


def main():
    exe = cdp.chromium_or_exit()
    os.makedirs(WORK, exist_ok=True)
    files = inputs()
    kd = os.path.join(SRC, "test", "data", "kscope")
    pd = os.path.join(SRC, "test", "data", "proton")
    pairs = [(os.path.join(kd, "nested.hatchet"), os.path.join(kd, "nested_twice.hatchet")),
             (os.path.join(kd, "run_a.hatchet"), os.path.join(kd, "run_b.hatchet")),
             (os.path.join(pd, "rich_tree.hatchet"), os.path.join(WORK, "rich_tree_x2.hatchet")),
             (os.path.join(pd, "pcsampling.hatchet"), os.path.join(kd, "pcsampling.hatchet")),
             (os.path.join(kd, "trace_host.json"), os.path.join(pd, "rich_trace.chrome_trace"))]
    browser = cdp.Browser(exe)
    try:
        page = browser.open_page()
        for f in files:
            label = os.path.relpath(f, SRC) if f.startswith(SRC) else os.path.basename(f)
            out = os.path.join(WORK, os.path.basename(f) + ".html")
            ks("report", "--html", out, f)
            page.goto("file://" + out)
            check(f"{label}: the page loads clean", not page.problems())
            check_header(page, label, f)
            check_top(page, label, f)
            check_widths(page, label, f)
            if f.endswith("kscope/nested.hatchet"):
                check_example(page)
            if check(f"{label}: the page gives its numbers and what hovering a node shows",
                     page.eval("typeof kscopeReport.numbers === 'function' && typeof kscopeReport.tip === "
                               "'function'")):
                data = page.eval("kscopeReport.numbers()")
                check_values(page, label, f, data, page_paths(data["names"], data["parent"]))
        for a, b in pairs:
            label = os.path.basename(a) + " -> " + os.path.basename(b)
            out = os.path.join(WORK, "diff-" + os.path.basename(a) + ".html")
            ks("report", "--html", out, a, b)
            page.goto("file://" + out)
            check(f"{label}: the page loads clean", not page.problems())
            selected = page.eval("document.getElementById('diff-metric').value")
            check_diff(page, label, a, b, selected, None)  # kscope diff's default metric
            for m in page.eval("[...document.getElementById('diff-metric').options].map(o => o.value)"):
                check_diff(page, label, a, b, m, m)
    finally:
        browser.close()
    print("compared:", ", ".join(f"{v} {k}" for k, v in checked.items()))
    if not all(checked.values()):
        check("every kind of number was compared", False, checked)
    print(f"{len(fails)} failures" if fails else "every number on the pages equals the command line's")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
