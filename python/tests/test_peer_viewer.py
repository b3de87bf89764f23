"""Every file kscope writes opens in the real proton-viewer (Triton 3.6,
with LLNL Hatchet from PyPI), for every metric it holds, and in Hatchet's
GraphFrame.from_literal after proton-viewer's own preprocessing; and what
proton-viewer prints agrees with `kscope view`, on those files and on the
golden outputs of `kscope view` (test/golden/read).

The peers live in the environment tools/peer-venv.sh makes (build-peer/venv,
or $KSCOPE_PEER_VENV); without it the tests are skipped, saying so, or fail
where KSCOPE_REQUIRE_PEERS=1 (.ci/run makes it and sets that). The viewer
runs in that environment's Python, in one process per CPU
(test/support/peer_viewer.py).

The golden tree of the writers (test/golden/example.hatchet.json) is one
of the files. One file of each kind: scopes with inc/exc/pty metrics (int,
float, vectors), cpu-timed scopes, a state above kernels, launch metadata,
PC samples on source lines, an empty session, periodic parts (the last one
empty), Python context, ROOT's own metrics, merged ranks, converted traces
and trees, string metrics, in both encodings (proton-viewer reads JSON
only: a .hatchet_msgpack is decoded to the same JSON first).
proton-viewer's tree shows numbers only (`-m device_id` fails on Proton's
own files too), so strings and vectors are checked through from_literal,
and every numeric metric through `proton-viewer -m METRIC --print-sorted`.
"""
import ctypes
import json
import math
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import msgpack
import pytest

import kscope as proton

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "test" / "data"
GOLDEN = REPO / "test" / "golden" / "read"
CHECKER = REPO / "test" / "support" / "peer_viewer.py"
PEER = Path(os.environ.get("KSCOPE_PEER_VENV") or REPO / "build-peer" / "venv")
PEER_PY = PEER / "bin" / "python"


def peer_ready():
    if not PEER_PY.exists():
        return False
    r = subprocess.run([str(PEER_PY), "-c", "import triton.profiler.viewer, hatchet"],
                       capture_output=True, timeout=120)
    return r.returncode == 0


if not peer_ready():
    why = f"no peer environment with triton and llnl-hatchet at {PEER} " \
        "(make it with tools/peer-venv.sh)"
    if os.environ.get("KSCOPE_REQUIRE_PEERS") == "1":  # CI makes it: never skip there
        raise RuntimeError(why)
    pytest.skip(why, allow_module_level=True)


def built(*names):
    """A program of a CMake build of this checkout: next to $KSCOPE_CLI, or
    in build-debug/ or build/."""
    cli = os.environ.get("KSCOPE_CLI")
    roots = ([Path(cli).parent] if cli else []) + [REPO / "build-debug", REPO / "build"]
    for root in roots:
        path = root.joinpath(*names)
        if os.access(path, os.X_OK):
            return str(path)
    pytest.skip(f"no {'/'.join(names)} built (build-debug/, build/ or next to KSCOPE_CLI)")


def ks(*args, cwd=None):
    r = subprocess.run([built("kscope")] + [str(a) for a in args], capture_output=True,
                       text=True, cwd=cwd, timeout=120)
    assert r.returncode == 0, f"kscope {args}: {r.stderr}"
    # a writer's one line on success is all it says
    said, cmd = r.stderr, str(args[0]) if args else ""
    if cmd in ("merge", "convert", "report") and said.startswith(f"kscope {cmd}: wrote "):
        said = said.split("\n", 1)[1]
    assert said == "", f"kscope {args} printed on stderr: {r.stderr}"
    return r.stdout


def peer(jobs):
    """The jobs' results, run by one peer process per CPU (a run of the
    viewer takes a fifth of a second, most of it in Hatchet's sums)."""
    n = max(1, min(len(jobs), os.cpu_count() or 1, 8))
    chunks = [jobs[i::n] for i in range(n)]
    procs = [subprocess.Popen([str(PEER_PY), str(CHECKER)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in chunks]
    outs = [p.communicate(json.dumps(c), timeout=600) for p, c in zip(procs, chunks)]
    results = [None] * len(jobs)
    for i, (p, (out, err)) in enumerate(zip(procs, outs)):
        assert p.returncode == 0, err
        results[i::n] = json.loads(out)
    return results


# ------------------------------------------------------------ the files


def busy():
    return sum(i * i for i in range(20000))


def python_files(d):
    """Files the Python package writes (Proton's API)."""
    s = proton.start(str(d / "py_scopes"))
    for step in range(3):
        with proton.scope("step", metrics={"tokens": 4096, "step_idx (pty)": step,
                                           "wait (ns)(exc)": 5 + step, "loss": 0.5 / (step + 1)}):
            with proton.cpu_timed_scope("host_prep"):
                busy()
            with proton.state("fwd"):
                with proton.scope("inner", metrics={"samples": [1.0, 2.0 * step],
                                                    "hist (exc)": [1, 2, step]}):
                    busy()
            proton.enter_scope("manual")
            proton.exit_scope("manual")
    proton.finalize(s)
    s = proton.start(str(d / "py_scopes"))
    with proton.scope("a", metrics={"samples": [1.0, 2.0], "tok": 3}):
        busy()
    proton.finalize(s, "hatchet_msgpack")
    # Python context: the frames a launch hook enters around each launch
    # (_kscope.enter_frames, what the Triton hook and the torch mode call),
    # in a process of its own so the stack is the script's alone
    script = d / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        import kscope as proton
        from kscope import _kscope

        def launch():
            n = _kscope.enter_frames()
            _kscope.exit_frames(n)

        def model_step():
            with proton.scope("step"):
                launch()
            launch()

        s = proton.start(sys.argv[1], context="python")
        for _ in range(2):
            model_step()
        proton.finalize(s)
    """))
    r = subprocess.run([sys.executable, str(script), str(d / "py_context")], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, KSCOPE_QUIET="1"))
    assert r.returncode == 0 and r.stderr == "", r.stderr
    s = proton.start(str(d / "py_empty"))
    proton.finalize(s)
    s = proton.start(str(d / "py_periodic"), mode="periodic_flushing")
    with proton.scope("phase0"):
        busy()
    proton.deactivate(s, flushing=True)
    proton.activate(s)
    with proton.scope("phase1"):
        busy()
    proton.deactivate(s, flushing=True)
    proton.activate(s)
    proton.finalize(s)  # nothing since the last flush: an empty last part
    s = proton.start(str(d / "py_trace"), data="trace")
    with proton.scope("t1"):
        with proton.scope("t2"):
            busy()
    proton.finalize(s)


def cli_files(d):
    """Files `kscope merge` and `kscope convert` write."""
    p = DATA / "proton"
    ks("merge", "-o", d / "merged_ranks.hatchet", d / "rich.hatchet", d / "rich.hatchet_msgpack",
       p / "rich_tree.hatchet")
    ks("merge", "-o", d / "merged_ranks.hatchet_msgpack", d / "py_scopes.hatchet",
       d / "py_scopes.hatchet")
    ks("convert", d / "rich.chrome_trace", d / "conv_trace.hatchet")
    ks("convert", d / "py_trace.chrome_trace", d / "conv_py_trace.hatchet")
    ks("convert", p / "rich_trace.chrome_trace", d / "conv_proton_trace.hatchet_msgpack")
    ks("convert", d / "rich.hatchet", d / "conv_rich.hatchet_msgpack")
    ks("convert", p / "proton_run.hatchet", d / "conv_proton_run.hatchet")
    # string metrics, ROOT's among them (a file of another tool, read and
    # written again by kscope)
    doc = [{"frame": {"name": "ROOT", "type": "function"},
            "metrics": {"count": 0, "time (ns)": 0, "host": "node07"},
            "children": [{"frame": {"name": "k", "type": "function"}, "children": [],
                          "metrics": {"count": 2, "time (ns)": 40, "device_id": "0",
                                      "device_type": "CUDA", "tag": "warm"}}]}, {}]
    (d / "strings_in.json").write_text(json.dumps(doc))
    ks("convert", d / "strings_in.json", d / "strings.hatchet")
    # the writers' golden (test/cli-golden-core.sh): proton-viewer reads it too
    (d / "golden_example.hatchet").write_text(
        (REPO / "test" / "golden" / "example.hatchet.json").read_text())


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("viewer")
    r = subprocess.run([built("test", "viewer-files"), str(d)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    python_files(d)
    cli_files(d)
    made = sorted(p for p in d.iterdir() if p.suffix in (".hatchet", ".hatchet_msgpack"))
    # every kind is there: a name missing here is a file kind not made
    names = {p.name for p in made}
    for want in ("rich.hatchet", "rich.hatchet_msgpack", "cpu_only.hatchet", "root.hatchet",
                 "empty.hatchet", "periodic.part_2.hatchet", "py_context.hatchet",
                 "py_periodic.part_2.hatchet", "merged_ranks.hatchet", "strings.hatchet",
                 "conv_trace.hatchet", "conv_proton_trace.hatchet_msgpack",
                 "pcsampling.hatchet"):
        assert want in names, sorted(names)
    return made


def as_json(path):
    """The path proton-viewer reads: a .hatchet_msgpack decoded to JSON."""
    if path.suffix != ".hatchet_msgpack":
        return path
    doc = msgpack.unpackb(path.read_bytes(), raw=False, strict_map_key=False)
    out = path.with_suffix(".msgpack.json")
    out.write_text(json.dumps(doc))
    return out


def numeric_metrics(doc):
    """Metric names holding a number somewhere: in ROOT's metrics, or on a
    node (where no node holds a vector or string under that name)."""
    nums, other = set(), set()
    stack = [doc[0]]
    while stack:
        n = stack.pop()
        for k, v in n["metrics"].items():
            (nums if isinstance(v, (int, float)) else other).add(k)
        stack.extend(n["children"])
    return sorted(nums - other), sorted(other)


def integer_metric(doc, m):
    """Whether every node holds metric m as an integer (ROOT's 0 placeholder
    too, written in the metric's own type as Proton does): an integer
    column, which proton-viewer's --print-sorted cannot format (when it
    lists a row: a tree of more than ROOT)."""
    stack, nodes = [doc[0]], 0
    while stack:
        n = stack.pop()
        v = n["metrics"].get(m)
        if not isinstance(v, int) or isinstance(v, bool):
            return False
        nodes += 1
        stack.extend(n["children"])
    return nodes > 1


INTEGER_SORTED = "Precision not allowed in integer format specifier"


def spec_of(metric):
    """How a user names a metric on proton-viewer's command line."""
    return metric.split("(")[0].strip().lower()


# ------------------------------------------------------------- parsing


def parse_viewer_tree(text, ncol):
    """proton-viewer's tree: [(depth, name, [values])] and the sorted list."""
    rows, sorted_rows = [], None
    for line in text.splitlines():
        if sorted_rows is not None:
            if line.strip():
                name, value = line.rstrip().rsplit(None, 1)
                sorted_rows.append((name.strip(), value))
            continue
        if line.startswith("Sorted kernels by metric"):
            sorted_rows = []
            continue
        if not line.strip():
            continue
        m = re.match(r"((?:│  |   |├─ |└─ )*)(.*)$", line)
        depth = len(m.group(1)) // 3
        parts = m.group(2).rstrip().split(" ", ncol)
        name = parts[ncol]
        # --diff-profile marks a frame only one file holds: ◀ FILE, ▶ OTHER
        only = name[-1] if name.endswith((" ◀", " ▶")) else None
        rows.append((depth, name[:-2] if only else name, parts[:ncol], only))
    return rows, sorted_rows


def parse_kscope_view(text):
    """`kscope view`'s table: titles, [(depth, name, [values])]."""
    lines = [l for l in text.splitlines() if l and not l.startswith("exit ")]
    header = lines[0]
    at = header.rindex("name")
    titles = re.split(r"\s{2,}", header[:at].strip()) if header[:at].strip() else []
    rows = []
    for line in lines[1:]:
        values, rest = line[:at].split(), line[at:]
        m = re.match(r"((?:│  |   |├─ |└─ )*)(.*)$", rest)
        rows.append((len(m.group(1)) // 3, m.group(2), values, None))
    return titles, rows


_cxa = None


def demangle(name):
    global _cxa
    if not name.startswith("_Z"):
        return name
    if _cxa is None:
        lib = ctypes.CDLL("libstdc++.so.6")
        _cxa = lib.__cxa_demangle
        _cxa.restype = ctypes.c_void_p
        _cxa.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_int)]
    status = ctypes.c_int(-1)
    p = _cxa(name.encode(), None, None, ctypes.byref(status))
    if not p or status.value != 0:
        return name
    text = ctypes.string_at(p).decode()
    ctypes.CDLL(None).free(ctypes.c_void_p(p))
    return text


def same_name(mine, theirs):
    """kscope shows mangled names demangled and may fold long ones; with
    -f file_function proton-viewer turns a name that is no Python frame
    into NAME@NAME, kscope keeps it."""
    mine, theirs = demangle(mine), demangle(theirs)
    if mine == theirs or theirs == f"{mine}@{mine}":
        return True
    pat = re.escape(mine).replace(re.escape("<...>"), "<.*>").replace(re.escape("(...)"),
                                                                       r"\(.*\)")
    return re.fullmatch(pat, theirs) is not None


def same_value(mine, theirs):
    """kscope prints '-' (no value) or a number; proton-viewer 'nan' or
    a number with 3 decimals. No value and 0 are one: an inclusive column
    with nothing below is nan for proton-viewer and 0 for kscope, and the
    placeholders of an empty profile are 0 for proton-viewer."""
    if mine == "-" or theirs == "nan":
        return mine in ("-", "0") or theirs in ("nan", "0.000") or \
            (mine != "-" and float(mine) == 0) or (theirs != "nan" and float(theirs) == 0)
    a, b = float(mine), float(theirs)
    return math.isclose(a, b, rel_tol=5e-4, abs_tol=1.5e-3)


def nest(rows):
    """Rows [(depth, name, values, only)] as nodes {"name", "values",
    "only", "children"}."""
    top = {"name": None, "values": [], "children": []}
    stack = [top]
    for depth, name, values, only in rows:
        node = {"name": name, "values": values, "only": only, "children": []}
        del stack[depth + 1:]
        stack[-1]["children"].append(node)
        stack.append(node)
    return top["children"]


def tree_mismatch(mine, theirs, titles, path=""):
    """Where two nested trees differ (None: they agree). Siblings are
    matched by name whatever their order: Hatchet prints them sorted."""
    if len(mine) != len(theirs):
        return f"{path or 'top'}: {[n['name'] for n in mine]} vs {[n['name'] for n in theirs]}"
    left = list(theirs)
    for a in mine:
        cands = [b for b in left if same_name(a["name"], b["name"])]
        exact = [b for b in cands if all(map(same_value, a["values"], b["values"]))]
        if not cands:
            return f"{path}/{a['name']}: not printed by proton-viewer"
        b = (exact or cands)[0]
        left.remove(b)
        for t, x, y in zip(titles, a["values"], b["values"]):
            # a frame only --diff-profile's OTHER holds: proton-viewer gives
            # it no value, kscope FILE minus OTHER with FILE's side 0
            if b["only"] == "▶" and y == "nan":
                continue
            if not same_value(x, y):
                return f"{path}/{a['name']}: {t}: kscope {x}, proton-viewer {y}"
        why = tree_mismatch(a["children"], b["children"], titles, f"{path}/{a['name']}")
        if why:
            return why
    return None


def assert_same_tree(view_text, viewer_text, what):
    titles, mine = parse_kscope_view(view_text)
    theirs, _ = parse_viewer_tree(viewer_text, len(titles))
    why = tree_mismatch(nest(mine), nest(theirs), titles)
    assert why is None, f"{what}: {why}\n{view_text}\n{viewer_text}"


# ---------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def checked(files):
    """All proton-viewer runs over all files, in one peer process."""
    jobs, index = [], {}
    for path in files:
        viewed = as_json(path)
        doc = json.loads(viewed.read_text())
        nums, others = numeric_metrics(doc)
        index[path.name] = {"path": path, "viewed": viewed, "doc": doc, "nums": nums,
                            "others": others, "list": len(jobs), "metrics": {}}
        jobs.append({"viewer": ["-l", str(viewed)]})
        index[path.name]["literal"] = len(jobs)
        jobs.append({"literal": str(viewed)})
        index[path.name]["integer"] = {m for m in nums if integer_metric(doc, m)}
        for m in nums:  # --print-sorted prints the tree, then the sorted list
            index[path.name]["metrics"][m] = len(jobs)
            jobs.append({"viewer": ["-m", spec_of(m), "--print-sorted", str(viewed)]})
            if m in index[path.name]["integer"]:  # the tree alone
                index[path.name].setdefault("trees", {})[m] = len(jobs)
                jobs.append({"viewer": ["-m", spec_of(m), str(viewed)]})
    # Proton's own file: its integer columns fail --print-sorted the same way
    index["proton"] = len(jobs)
    jobs.append({"viewer": ["-m", "count", "--print-sorted", str(DATA / "proton" / "proton_run.hatchet")]})
    results = peer(jobs)
    return index, results


def files_of(index):
    return {name: f for name, f in index.items() if name != "proton"}


def test_every_file_opens_for_every_metric(checked):
    """Every metric opens, with --print-sorted, but for a metric whose every
    value is an integer: proton-viewer's --print-sorted cannot format an
    integer column, on Proton's own files as on kscope's, which write
    ROOT's placeholders in the metric's type as Proton does; its tree
    opens."""
    index, results = checked
    proton_run = results[index["proton"]]
    assert proton_run["rc"] and INTEGER_SORTED in proton_run["error"], proton_run
    failures = []
    for name, f in files_of(index).items():
        r = results[f["list"]]
        if r["rc"]:
            failures.append(f"{name}: proton-viewer -l: {r['error']}")
        for m, j in f["metrics"].items():
            r = results[j]
            if m in f["integer"]:
                if not r["rc"] or INTEGER_SORTED not in r["error"]:
                    failures.append(f"{name}: -m {spec_of(m)} --print-sorted on an integer column: {r}")
                r = results[f["trees"][m]]
            if r["rc"]:
                failures.append(f"{name}: proton-viewer -m {spec_of(m)}: {r['error']}")
    assert not failures, "\n".join(failures)


def test_from_literal_holds_every_value(checked):
    """Hatchet's frame after proton-viewer's preprocessing holds each
    metric of each node, vectors and strings included."""
    index, results = checked
    for name, f in files_of(index).items():
        r = results[f["literal"]]
        assert r["rc"] == 0, f"{name}: from_literal: {r['error']}"
        for m in f["nums"] + f["others"]:
            assert m in r["columns"], f"{name}: no column {m!r}: {r['columns']}"
        for m in f["others"]:  # vectors and strings arrive as written
            written = []
            stack = [f["doc"][0]]
            while stack:
                n = stack.pop()
                if m in n["metrics"] and n is not f["doc"][0]:
                    written.append(n["metrics"][m])
                stack.extend(n["children"])
            read = [v for v in r["values"][m] if v is not None]
            assert sorted(map(json.dumps, read)) == sorted(map(json.dumps, written)), (name, m)


def test_viewer_agrees_with_kscope_view(checked):
    """What proton-viewer prints for each metric equals `kscope view`'s
    column for it, node by node."""
    index, results = checked
    for name, f in files_of(index).items():
        for m, j in f["metrics"].items():
            spec = spec_of(m)
            view = ks("view", "--full-names", "-m", spec, f["path"])
            out = results[f["trees"][m] if m in f["integer"] else j]["out"]
            assert_same_tree(view, out, f"{name} -m {spec}")


def test_print_sorted_lists_every_frame(checked):
    """--print-sorted lists frames by the metric, skipping its first row,
    which proton-viewer takes for ROOT: for a metric ROOT lists (summed
    ones) that is ROOT, so every other frame is listed with its value.
    (For a per-node metric ROOT has no value and sorts last, so the
    viewer's skip drops the largest frame instead: proton-viewer does the
    same with Proton's own cpu_time.)"""
    index, results = checked
    for name, f in files_of(index).items():
        root_keys = set(f["doc"][0]["metrics"])
        for m, j in f["metrics"].items():
            if m not in root_keys or m in f["integer"]:
                continue
            tree, listed = parse_viewer_tree(results[j]["out"], 1)
            assert listed is not None, results[j]["out"]
            assert len(listed) == len(tree) - 1, (name, m, results[j]["out"])
            assert tree[0][1] == "ROOT" and all(n != "ROOT" for n, _ in listed), (name, m)


# ------------------------------------- golden outputs of `kscope view`

# The goldens test/cli-view.sh checks `kscope view` against, each with the
# proton-viewer command that shows the same (FILE relative to test/data).
# COLUMNS picks the golden's columns proton-viewer can compute (None: all):
# wall_time and avg_wall_time are kscope's own. SCALE converts
# proton-viewer's column to the golden's unit. After a filter (-i, -e, -t)
# proton-viewer sums raw metrics again over the frames left, but keeps
# derived ones (time/us) as they were before it, so its ROOT's time/us
# counts frames it left out while its count does not. kscope's -i and -e
# sum every metric again (checked against proton-viewer's raw metric), its
# -t hides frames and keeps the sums (checked against the derived one).
GOLDEN_VIEWS = [
    ("view-default", "proton/proton_run.hatchet", ["-m", "time/ms"], None),
    ("view-metrics", "proton/rich_tree.hatchet", ["-m", "time/us,count,util,avg_time/ns"], None),
    # flop/s without a plain "flops" metric: kscope sums the widths, proton-viewer has none
    ("view-rates", "proton/rich_tree.hatchet", ["-m", "tflop32/s,gbyte/s,time/%"], [0, 1, 3]),
    ("view-exclusive", "proton/rich_tree.hatchet",
     ["-m", "cpu_time/ms,cpu_wait,tokens,step_idx,cpu_time/%"], None),
    ("view-depth", "proton/rich_tree.hatchet", ["-m", "time/ms", "-d", "2"], None),
    ("view-depth0", "proton/rich_tree.hatchet", ["-m", "count", "-d", "0"], None),
    ("view-threshold", "proton/rich_tree.hatchet", ["-m", "time/us", "-t", "40"], None),
    ("view-include", "proton/rich_tree.hatchet", ["-m", "time", "-i", "inner|manual"], None,
     [1e-6]),
    ("view-exclude", "proton/rich_tree.hatchet", ["-m", "time,count", "-e", "matmul|manual"],
     None, [1e-3, 1]),
    ("view-kscope", "kscope/run_a.hatchet", ["-m", "time/us,calls,util,count"], [0, 1, 4, 5]),
    ("view-diff-profile", "kscope/run_b.hatchet",
     ["-m", "time/us,count", "--diff-profile", "kscope/run_a.hatchet"], None),
    ("view-pruned", "kscope/pruned.hatchet", ["-m", "time/ns,count,calls"], None),
    ("view-pruned-exclude", "kscope/pruned.hatchet", ["-m", "time,calls", "-e", "kernel"],
     None, [1, 1]),
] + [(f"view-format-{f}", "kscope/frames.hatchet", ["-m", "time/us", "-f", f], None)
     for f in ("full", "file_function_line", "function_line", "file_function")]


@pytest.fixture(scope="module")
def golden_runs(tmp_path_factory):
    # Newer Proton names its launch-metadata scope "__proton_launch_metadata:
    # <kernel>", which kscope leaves out as it does the plain name; Triton
    # 3.6's viewer knows the plain name only, so it reads pruned.hatchet as
    # 3.6 would have written it.
    d = tmp_path_factory.mktemp("golden")
    pruned = d / "pruned.hatchet"
    pruned.write_text((DATA / "kscope" / "pruned.hatchet").read_text().replace(
        '"__proton_launch_metadata:add"', '"__proton_launch_metadata"'))
    jobs = []
    for _, path, args, *_ in GOLDEN_VIEWS:
        args = [str(DATA / a) if a.startswith(("kscope/", "proton/")) else a for a in args]
        file = pruned if path == "kscope/pruned.hatchet" else DATA / path
        jobs.append({"viewer": args + [str(file)]})
    jobs.append({"viewer": ["-m", "time/ms", "--print-sorted", "-t", "0.04",
                            str(DATA / "proton" / "rich_tree.hatchet")]})
    for path in ("proton/rich_tree.hatchet", "kscope/run_a.hatchet"):
        jobs.append({"viewer": ["-l", str(DATA / path)]})
    return peer(jobs)


def test_view_goldens_agree_with_proton_viewer(golden_runs):
    for (golden, path, args, columns, *scale), r in zip(GOLDEN_VIEWS, golden_runs):
        assert r["rc"] == 0, f"{golden}: proton-viewer: {r['error']}"
        text = (GOLDEN / f"{golden}.txt").read_text()
        titles, rows = parse_kscope_view(text)
        if columns is not None:
            titles = [titles[i] for i in columns]
            rows = [(d, n, [v[i] for i in columns], o) for d, n, v, o in rows]
        theirs, _ = parse_viewer_tree(r["out"], len(titles))
        if scale:
            theirs = [(d, n, [v if v == "nan" else "%.6f" % (float(v) * f)
                              for v, f in zip(vals, scale[0])], o) for d, n, vals, o in theirs]
        why = tree_mismatch(nest(rows), nest(theirs), titles)
        assert why is None, f"{golden} vs proton-viewer {' '.join(args)} {path}: {why}\n" \
            f"{text}\n{r['out']}"


def test_sorted_golden_agrees_with_proton_viewer(golden_runs):
    """`view --print-sorted` prints what proton-viewer --print-sorted does:
    the tree, then its frames but ROOT sorted by the first metric."""
    r = golden_runs[len(GOLDEN_VIEWS)]
    assert r["rc"] == 0, r.get("error")
    tree, listed = parse_viewer_tree(r["out"], 1)
    text = (GOLDEN / "view-sort-threshold.txt").read_text()
    mine_tree, _, sorted_part = text.partition("\nSorted by time/ms, largest first:\n")
    assert sorted_part, text
    _, tree_rows = parse_kscope_view(mine_tree)
    assert [n for _, n, _, _ in tree_rows] == [n for _, n, _, _ in tree], (mine_tree, r["out"])
    _, rows = parse_kscope_view(sorted_part)
    mine = sorted((n, float(v[0])) for _, n, v, _ in rows)
    theirs = sorted((n, float(v)) for n, v in listed)
    assert len(mine) == len(theirs), (mine, theirs)
    for (n1, v1), (n2, v2) in zip(mine, theirs):
        assert same_name(n1, n2) and math.isclose(v1, v2, rel_tol=1e-3, abs_tol=1e-3), \
            (mine, theirs)


def test_list_goldens_agree_with_proton_viewer(golden_runs):
    """`view -l` lists what proton-viewer -l lists: the same inclusive
    metrics; its exclusive ones are proton-viewer's numeric columns."""
    for golden, r in zip(("view-list-proton", "view-list-kscope"),
                         golden_runs[len(GOLDEN_VIEWS) + 1:]):
        assert r["rc"] == 0, r.get("error")
        inc_pv, exc_pv = r["out"].split("Available exclusive metrics:")
        inc_pv = {l[2:] for l in inc_pv.splitlines() if l.startswith("- ")}
        exc_pv = {l[2:] for l in exc_pv.splitlines() if l.startswith("- ")}
        text = (GOLDEN / f"{golden}.txt").read_text()
        inc, rest = text.split("Exclusive metrics (on their node only):")
        exc = rest.split("Device info:")[0]
        inc = {spec_of(l[2:]) for l in inc.splitlines() if l.startswith("- ")}
        exc = {spec_of(l[2:]) for l in exc.splitlines() if l.startswith("- ")}
        assert inc == inc_pv, (golden, inc, inc_pv)
        assert exc <= exc_pv and exc_pv - exc <= {"name", "device_id", "device_type"}, \
            (golden, exc, exc_pv)


def test_data_get_opens_in_the_viewer(tmp_path):
    """Proton's test_get_data: proton.data.get(session) goes straight to
    Triton 3.6's viewer.get_raw_metrics (which json.load()s a file), and
    Hatchet's query on the GraphFrame finds the leaves. Runs in the peer
    environment with this package (same interpreter) on its path."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(proton.__file__)))
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {pkg!r})
        import msgpack
        import kscope as proton
        import triton.profiler.viewer as viewer
        s = proton.start({str(tmp_path / "get")!r}, context="shadow")
        with proton.scope("test"):
            for _ in range(2):
                with proton.scope("foo"):
                    pass
        proton.deactivate(s, flushing=True)
        database = proton.data.get(s)
        gf, _, _, _ = viewer.get_raw_metrics(database)
        foo = gf.filter("MATCH ('*', c) WHERE c.'name' =~ '.*foo.*' AND c IS LEAF").dataframe
        assert len(foo) == 1 and int(foo["calls"].values[0]) == 2, foo
        unpacked = msgpack.loads(proton.data.get_msgpack(s), raw=False, strict_map_key=False)
        assert database == unpacked
        proton.finalize()
        print("ok")
    """)
    r = subprocess.run([str(PEER_PY), "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, KSCOPE_QUIET="1"))
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]
