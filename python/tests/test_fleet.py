"""kscope fleet with DuckDB: export into a Parquet dataset, summary (the
planted straggler and imbalance named first), sql, diff, the inputs it
takes (ours and Proton's trees, msgpack, traces, pid-named files, the run's
facts), and one-line errors for bad input."""
import json
import os
import shutil

import pytest

from fleet_util import (REPO, export, fleet, gen_ranks, kernel, need_fleet, node, ok, one_line_error,
                        summary, write_json)

PROTON = REPO.parent / "shared" / "fixtures" / "proton"
STRAGGLER = 137


@pytest.fixture(scope="module", autouse=True)
def engines_installed():
    need_fleet()


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """256 generated ranks: rank 137 a straggler (its step kernels 1.5x),
    data_load spread linearly over the ranks (an imbalance)."""
    root = tmp_path_factory.mktemp("planted")
    gen_ranks.write_ranks(root / "prof", 256, 200, straggler=STRAGGLER, slow=1.5)
    export(root / "ds", root / "prof")
    return root


def test_summary_names_the_planted_straggler_and_imbalance_first(planted):
    s = summary(planted / "ds")
    assert {"ranks", "stragglers", "imbalance", "top_kernels", "comm_compute"} <= set(s)
    assert s["ranks"] == {"count": 256, "min": 0, "max": 255, "missing": []}
    assert s["metric"] == "time_ns_inc" and s["engine"] == "duckdb" and s["run"] == "train"
    first = s["stragglers"][0]
    assert {"rank", "scope", "time_ns", "median_ns", "ratio"} <= set(first)
    assert first["rank"] == STRAGGLER and 1.4 < first["ratio"] < 1.6
    assert first["scope"].startswith("train > step")
    assert first["time_ns"] == pytest.approx(first["ratio"] * first["median_ns"], rel=1e-5)
    assert [r["rank"] for r in s["stragglers"]] == [STRAGGLER]  # a 2% jitter is no straggler
    top = s["imbalance"][0]
    assert {"scope", "max_over_mean", "max_rank", "min_rank"} <= set(top)
    assert top["scope"] == "data_load" and top["max_over_mean"] > 1.7
    assert top["max_rank"] >= 250 and top["min_rank"] <= 5
    kernels = {k["kernel"]: k for k in s["top_kernels"]}
    assert kernels["gelu_kernel"]["max_rank"] == STRAGGLER and kernels["gelu_kernel"]["ranks"] == 256
    assert "Memcpy HtoD" not in kernels  # a copy, not a kernel
    cc = {r["rank"]: r for r in s["comm_compute"]}
    assert len(cc) == 256 and cc[0]["overlap_ns"] is None  # no trace: no overlap known
    assert 0.3 < cc[0]["comm_share"] < 0.5


def test_summary_without_planting_names_nothing(tmp_path):
    gen_ranks.write_ranks(tmp_path / "prof", 64, 200, imbalance=False)
    export(tmp_path / "ds", tmp_path / "prof")
    s = summary(tmp_path / "ds")
    assert s["stragglers"] == []
    assert s["imbalance"][0]["max_over_mean"] < 1.05


def test_summary_text(planted):
    out = ok(fleet("summary", planted / "ds")).stdout
    assert "256 ranks (0-255)" in out
    lines = out.splitlines()
    at = lines.index("stragglers (a rank's time in a scope against the ranks' median):")
    assert lines[at + 2].split()[0] == str(STRAGGLER)
    at = lines.index("imbalance (per scope: the slowest rank's time over the mean):")
    assert lines[at + 2].endswith("data_load")


def test_layout_schema_and_rollup(planted):
    import pyarrow.parquet as pq

    ds = planted / "ds"
    for t in ("nodes", "runs"):
        files = sorted((ds / t / "run=train").glob("rank=*/part-0.parquet"))
        assert len(files) == 256
    assert not list((ds / "kernels").iterdir())  # trees only: no kernels
    marker = json.loads((ds / "_kscope_fleet.json").read_text())
    cols = marker["columns"]["nodes"]
    assert cols["time_ns"] == {"metric": "time (ns)", "type": "double", "inclusive": True}
    assert cols["time_ns_inc"]["inclusive"] and cols["count_inc"]["inclusive"]
    assert cols["wall_time_ns"] == {"metric": "wall_time (ns)", "type": "double", "inclusive": False}
    assert "wall_time_ns_inc" not in cols and cols["device_id"]["type"] == "string"
    t = pq.read_table(ds / "nodes" / "run=train" / "rank=3" / "part-0.parquet").to_pylist()
    doc = json.loads((planted / "prof" / "train.rank3.hatchet").read_text())

    def walk(n):
        yield n
        for c in n["children"]:
            yield from walk(c)
    gpu_total = sum(n["metrics"].get("time (ns)", 0) for n in walk(doc[0]))
    assert len(t) == sum(1 for _ in walk(doc[0]))
    root = t[0]
    assert root["kind"] == "root" and root["path"] == "" and root["parent_id"] is None
    assert root["time_ns"] is None  # ROOT's 0 is a placeholder, not a value
    assert root["time_ns_inc"] == gpu_total
    step = next(r for r in t if r["path"] == "train > step")
    kids = [r for r in t if r["path"].startswith("train > step > ") and r["kind"] == "kernel"]
    assert step["time_ns_inc"] == sum(r["time_ns"] for r in kids) and step["kind"] == "scope"
    assert step["wall_time_ns"] == doc[0]["children"][1]["children"][0]["metrics"]["wall_time (ns)"]
    by_id = {r["node_id"]: r for r in t}
    for r in t[1:]:
        p = by_id[r["parent_id"]]
        assert r["depth"] == p["depth"] + 1
        assert r["path"] == (p["path"] + " > " if p["path"] else "") + r["name"]
    nccl = next(r for r in t if r["name"].startswith("ncclDevKernel"))
    assert nccl["comm"] and nccl["kind"] == "kernel"
    assert next(r for r in t if r["name"] == "Memcpy HtoD")["kind"] == "copy"
    runs = pq.read_table(ds / "runs" / "run=train" / "rank=3" / "part-0.parquet").to_pylist()[0]
    assert runs["tree_file"].endswith("train.rank3.hatchet") and runs["nodes"] == len(t)
    assert runs["device_count"] == 1 and json.loads(runs["devices"])["CUDA"]["0"]["num_sms"] == 132


def test_adding_a_rank_is_adding_files(tmp_path):
    gen_ranks.write_ranks(tmp_path / "prof", 5, 60)
    files = sorted((tmp_path / "prof").iterdir())
    export(tmp_path / "ds", *[f for f in files if ".rank4." not in f.name])
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "ds").rglob("*.parquet")}
    assert len(before) == 8
    export(tmp_path / "ds", tmp_path / "prof" / "train.rank4.hatchet")
    after = {p: p.stat().st_mtime_ns for p in (tmp_path / "ds").rglob("*.parquet")}
    assert {p: after[p] for p in before} == before
    assert sorted(str(p.relative_to(tmp_path / "ds")) for p in set(after) - set(before)) == [
        "nodes/run=train/rank=4/part-0.parquet", "runs/run=train/rank=4/part-0.parquet"]
    assert summary(tmp_path / "ds")["ranks"]["count"] == 5


def test_rollup_follows_the_files_own_list(tmp_path):
    # ROOT lists what rolls up: bytes does, time (ns) does not (its 0 at
    # ROOT is then ROOT's own value, as kscope's readers take it)
    doc = [node("ROOT", {"time (ns)": 0, "kscope": None},
                [node("a", {"bytes": 5, "time (ns)": 7}, [node("b", {"bytes": 3, "time (ns)": 2})])]), {}]
    doc[0]["metrics"].pop("kscope")
    doc[0]["kscope"] = {"inclusive": ["bytes"]}
    write_json(tmp_path / "x.rank0.hatchet", doc)
    export(tmp_path / "ds", tmp_path / "x.rank0.hatchet")
    rows = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT path, bytes_inc, time_ns FROM nodes "
                                "ORDER BY node_id", "--json")).stdout)
    assert rows == [{"path": "", "bytes_inc": 8.0, "time_ns": 0.0},
                    {"path": "a", "bytes_inc": 8.0, "time_ns": 7.0},
                    {"path": "a > b", "bytes_inc": 3.0, "time_ns": 2.0}]
    cols = json.loads((tmp_path / "ds" / "_kscope_fleet.json").read_text())["columns"]["nodes"]
    assert "time_ns_inc" not in cols


def test_proton_rank_files_export(tmp_path):
    if not PROTON.is_dir():
        pytest.skip(f"{PROTON}: the shared fixtures are not beside the checkout")
    prof = tmp_path / "prof"
    prof.mkdir()
    shutil.copy(PROTON / "rich_tree.hatchet", prof / "proton.rank0.hatchet")
    shutil.copy(PROTON / "proton_run.hatchet", prof / "proton.rank1.hatchet")
    shutil.copy(PROTON / "rich_trace.chrome_trace", prof / "proton.rank0.chrome_trace")
    out = export(tmp_path / "ds", prof).stdout
    assert "3 profiles of 2 ranks (run proton)" in out
    rows = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT rank, COUNT(*) AS n, "
                                "SUM(CASE WHEN kind = 'kernel' THEN time_ns END) AS gpu, "
                                "MAX(CASE WHEN kind = 'root' THEN time_ns_inc END) AS total "
                                "FROM nodes GROUP BY rank ORDER BY rank", "--json")).stdout)
    # rank 0 takes its nodes from the tree (not the trace), rank 1 likewise
    assert rows == [{"rank": 0, "n": 12, "gpu": 236704.0, "total": 236704.0},
                    {"rank": 1, "n": 2, "gpu": 51704748.0, "total": 51704748.0}]
    cpu = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT path, cpu_wait_ns, tokens, tokens_inc "
                               "FROM nodes WHERE rank = 0 AND kind = 'scope' AND (cpu_wait_ns IS NOT NULL "
                               "OR tokens IS NOT NULL) ORDER BY path", "--json")).stdout)
    # tokens rolls up (a 0 at ROOT); cpu_wait (ns) stays on its node (no 0 there)
    assert cpu == [{"path": "train", "cpu_wait_ns": None, "tokens": 4096.0, "tokens_inc": 4096.0},
                   {"path": "train > step > inner", "cpu_wait_ns": 270.0, "tokens": None, "tokens_inc": 0.0}]
    k = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT scope, COUNT(*) AS n, SUM(duration_ns) AS t "
                             "FROM kernels GROUP BY scope ORDER BY scope", "--json")).stdout)
    assert k == [{"scope": "manual", "n": 1, "t": 13248},
                 {"scope": "train > step", "n": 6, "t": 111649},
                 {"scope": "train > step > inner", "n": 3, "t": 40288},
                 {"scope": "train > step > matmul", "n": 3, "t": 70559}]
    s = summary(tmp_path / "ds")
    assert s["ranks"]["count"] == 2 and s["top_kernels"][0]["kernel"].startswith("_ZN2at6native")


def test_msgpack_tree_exports_like_its_json(tmp_path):
    import msgpack

    gen_ranks.write_ranks(tmp_path / "j", 1, 100)
    doc = json.loads((tmp_path / "j" / "train.rank0.hatchet").read_text())
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "train.rank0.hatchet_msgpack").write_bytes(msgpack.packb(doc))
    export(tmp_path / "dj", tmp_path / "j")
    export(tmp_path / "dm", tmp_path / "m")
    q = "SELECT path, kind, time_ns, time_ns_inc, wall_time_ns, device_id FROM nodes ORDER BY node_id"
    a = ok(fleet("sql", tmp_path / "dj", q, "--csv")).stdout
    def count(n):
        return 1 + sum(count(c) for c in n["children"])
    assert a == ok(fleet("sql", tmp_path / "dm", q, "--csv")).stdout and a.count("\n") == 1 + count(doc[0])
    fmt = ok(fleet("sql", tmp_path / "dm", "SELECT format FROM runs", "--csv")).stdout
    assert fmt == "format\nhatchet_msgpack\n"


def _trace(rank_offset):
    """A kscope-style trace: compute kernels on stream 7, an NCCL kernel on
    stream 9 overlapping them for 30 us of its 50 us, a copy."""
    def gpu(name, ts, dur, stream, corr, cat="kernel"):
        return {"name": name, "ph": "X", "cat": cat, "pid": 20, "tid": stream, "ts": ts + rank_offset,
                "dur": dur, "args": {"call_stack": ["ROOT", "step", name], "device": 0, "stream": stream,
                                     "correlation": corr}}
    return {"displayTimeUnit": "us", "traceEvents": [
        {"name": "step", "ph": "X", "cat": "scope", "pid": 10, "tid": 1, "ts": 0, "dur": 200,
         "args": {"call_stack": ["ROOT", "step"]}},
        gpu("gemm", 10, 20, 7, 1), gpu("gemm", 40, 20, 7, 2), gpu("relu", 55, 10, 7, 3),
        gpu("ncclDevKernel_AllReduce", 50, 50, 9, 4),
        gpu("Memcpy HtoD", 0, 5, 8, 5, cat="memcpy")],
        "metadata": {"command": "python train.py", "host": "node7", "pid": 4242,
                     "start_time": "2026-01-01T00:00:00.000Z", "kscope_version": "0.1.0"}}


def test_traces_fill_kernels_and_the_overlap(tmp_path):
    prof = tmp_path / "prof"
    prof.mkdir()
    for r in (0, 1):
        write_json(prof / f"job.rank{r}.chrome_trace", _trace(1000 * r))
    out = export(tmp_path / "ds", prof).stdout
    assert "10 kernels" in out
    s = summary(tmp_path / "ds")
    cc = s["comm_compute"]
    # the NCCL kernel (50-100 us) overlaps gemm (50-60) and relu (55-65): 15 us
    assert cc == [{"rank": r, "comm_ns": 50000.0, "compute_ns": 50000.0, "comm_share": 0.5,
                   "overlap_ns": 15000} for r in (0, 1)]
    k = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT * FROM kernels WHERE rank = 1 "
                             "ORDER BY start_ns, name", "--json")).stdout)
    assert [(x["name"], x["kind"], x["stream"], x["correlation"], x["start_ns"], x["duration_ns"],
             x["scope"], x["comm"]) for x in k] == [
        ("Memcpy HtoD", "copy", 8, 5, 1000000, 5000, "step", False),
        ("gemm", "kernel", 7, 1, 1010000, 20000, "step", False),
        ("gemm", "kernel", 7, 2, 1040000, 20000, "step", False),
        ("ncclDevKernel_AllReduce", "kernel", 9, 4, 1050000, 50000, "step", True),
        ("relu", "kernel", 7, 3, 1055000, 10000, "step", False)]
    n = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT path, kind, time_ns, count, calls, "
                             "wall_time_ns FROM nodes WHERE rank = 0 ORDER BY node_id", "--json")).stdout)
    assert n[1] == {"path": "step", "kind": "scope", "time_ns": None, "count": None, "calls": 1.0,
                    "wall_time_ns": 200000.0}
    assert {"path": "step > gemm", "kind": "kernel", "time_ns": 40000.0, "count": 2.0, "calls": None,
            "wall_time_ns": None} in n
    runs = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT * FROM runs WHERE rank = 0",
                                "--json")).stdout)[0]
    assert (runs["command"], runs["host"], runs["pid"], runs["kernels"], runs["tree_file"]) == \
        ("python train.py", "node7", 4242, 5, None)


def test_run_facts_and_pid_names(tmp_path):
    gen_ranks.write_ranks(tmp_path / "g", 1, 50)
    prof = tmp_path / "prof"
    prof.mkdir()
    shutil.copy(tmp_path / "g" / "train.rank0.hatchet", prof / "serve.pid4711.hatchet")
    write_json(prof / "serve.pid4711.hatchet.meta.json",
               {"command": "python serve.py", "host": "gpu3", "pid": 4711, "start_time": "t0"})
    export(tmp_path / "ds", prof)
    rows = json.loads(ok(fleet("sql", tmp_path / "ds", "SELECT run, rank, pid, command, host, start_time "
                                "FROM runs", "--json")).stdout)
    assert rows == [{"run": "serve", "rank": 4711, "pid": 4711, "command": "python serve.py",
                     "host": "gpu3", "start_time": "t0"}]


def test_sql_outputs_and_errors(planted):
    ds = planted / "ds"
    out = ok(fleet("sql", ds, "SELECT COUNT(*) AS n, COUNT(DISTINCT rank) AS ranks FROM nodes")).stdout
    assert out.split() == ["n", "ranks", "50432", "256", "(1", "row)"]
    assert ok(fleet("sql", ds, "SELECT rank FROM runs ORDER BY rank LIMIT 2", "--csv")).stdout == "rank\n0\n1\n"
    line = one_line_error(fleet("sql", ds, "SELECT nope FROM nodes"))
    assert line.startswith("kscope fleet: ") and "nope" in line
    one_line_error(fleet("sql", ds, "SELEC 1"))


def test_diff_largest_change_first(tmp_path):
    gen_ranks.write_ranks(tmp_path / "a", 8, 100, imbalance=False)
    gen_ranks.write_ranks(tmp_path / "b", 16, 100, imbalance=False, scale=1.3)
    export(tmp_path / "da", tmp_path / "a")
    export(tmp_path / "db", tmp_path / "b")
    d = json.loads(ok(fleet("diff", tmp_path / "da", tmp_path / "db", "--json")).stdout)
    first = d["changes"][0]
    assert (first["what"], first["name"]) == ("scope", "train")
    assert 1.1 < first["ratio"] < 1.3  # its step's kernels, not the allreduce, are 1.3x
    assert first["delta_ns"] == pytest.approx(first["b_ns"] - first["a_ns"], rel=1e-6)
    deltas = [abs(c["delta_ns"]) for c in d["changes"]]
    assert deltas == sorted(deltas, reverse=True)
    kernels = {c["name"]: c for c in d["changes"] if c["what"] == "kernel"}
    assert kernels["gelu_kernel"]["ratio"] == pytest.approx(1.3, rel=0.02)
    assert all(c["name"] not in ("data_load", "decode_images_kernel") for c in d["changes"][:10])
    text = ok(fleet("diff", tmp_path / "da", tmp_path / "db")).stdout.splitlines()
    assert text[2].split()[-2:] == ["scope", "train"]


def test_runs_choose_and_metric(tmp_path):
    gen_ranks.write_ranks(tmp_path / "p", 3, 60, name="a")
    gen_ranks.write_ranks(tmp_path / "p", 2, 60, name="b")
    export(tmp_path / "ds", tmp_path / "p")
    line = one_line_error(fleet("summary", tmp_path / "ds"))
    assert "holds 2 runs (a, b): choose one with --run" in line
    assert summary(tmp_path / "ds", "--run", "b")["ranks"]["count"] == 2
    assert "no run 'c'" in one_line_error(fleet("summary", tmp_path / "ds", "--run", "c"))
    assert summary(tmp_path / "ds", "--run", "a", "--metric", "wall_time_ns")["metric"] == "wall_time_ns"
    line = one_line_error(fleet("summary", tmp_path / "ds", "--run", "a", "--metric", "bytes_inc"))
    assert "--metric bytes_inc is not a time column" in line and "wall_time_ns" in line
    # --run at export names the run
    export(tmp_path / "d2", tmp_path / "p" / "a.rank0.hatchet", extra=("--run", "exp-1"))
    assert summary(tmp_path / "d2")["run"] == "exp-1"
    assert "a run's name takes" in one_line_error(
        fleet("export", "-o", tmp_path / "d3", "--run", "a/b", tmp_path / "p" / "a.rank0.hatchet"))


def test_bad_input_gets_one_line(tmp_path):
    junk = tmp_path / "notes.hatchet"
    junk.write_text("hello\n")
    line = one_line_error(fleet("export", "-o", tmp_path / "ds", junk))
    assert line.startswith(f"kscope fleet: {junk}: not a profile")
    assert not (tmp_path / "ds").exists()  # nothing half written
    (tmp_path / "empty").mkdir()
    assert "no profile in this folder" in one_line_error(fleet("export", "-o", tmp_path / "ds",
                                                               tmp_path / "empty"))
    odd = tmp_path / "bad\nname.hatchet"
    odd.write_text("[1, 2]")
    line = one_line_error(fleet("export", "-o", tmp_path / "ds", odd))
    assert "bad\\nname.hatchet: not a profile" in line
    wrong = write_json(tmp_path / "w.rank0.hatchet", [node("ROOT", {}, [{"frame": {}, "children": []}])])
    assert "lacks a frame name" in one_line_error(fleet("export", "-o", tmp_path / "ds", wrong))
    gen_ranks.write_ranks(tmp_path / "g", 1, 50)
    shutil.copy(tmp_path / "g" / "train.rank0.hatchet", tmp_path / "g" / "train.rank0.hatchet_msgpack.hatchet")
    os.makedirs(tmp_path / "two")
    shutil.copy(tmp_path / "g" / "train.rank0.hatchet", tmp_path / "two" / "train.rank0.hatchet")
    line = one_line_error(fleet("export", "-o", tmp_path / "ds", tmp_path / "g" / "train.rank0.hatchet",
                                tmp_path / "two"))
    assert "two tree profiles for run train rank 0" in line
    assert "no such file" in one_line_error(fleet("export", "-o", tmp_path / "ds", tmp_path / "nope"))
    line = one_line_error(fleet("export", "-o", tmp_path / "two", tmp_path / "two"))
    assert "holds other files, not a kscope fleet dataset" in line
    assert os.listdir(tmp_path / "two") == ["train.rank0.hatchet"]
    # datasets: not one, one missing a table
    assert "not a kscope fleet dataset" in one_line_error(fleet("summary", tmp_path / "empty"))
    export(tmp_path / "ok", tmp_path / "two")
    shutil.rmtree(tmp_path / "ok" / "kernels")
    line = one_line_error(fleet("summary", tmp_path / "ok"))
    assert line == f"kscope fleet: {tmp_path / 'ok'}: table 'kernels' is missing ({tmp_path / 'ok' / 'kernels'})"
    assert "--engine" in one_line_error(fleet("summary", tmp_path / "ok", "--engine", "oracle"))
    assert "-n needs a number" in one_line_error(fleet("summary", tmp_path / "two", "-n", "0"))


def test_a_metric_of_two_kinds_is_refused(tmp_path):
    write_json(tmp_path / "r.rank0.hatchet", [node("ROOT", {}, [node("a", {"tag": 1})]), {}])
    write_json(tmp_path / "r.rank1.hatchet", [node("ROOT", {}, [node("a", {"tag": "x"})]), {}])
    line = one_line_error(fleet("export", "-o", tmp_path / "ds", tmp_path / "r.rank0.hatchet",
                                tmp_path / "r.rank1.hatchet"))
    assert "metric 'tag' (column tag) holds" in line
    assert not (tmp_path / "ds" / "_kscope_fleet.json").exists()


def test_missing_engine_says_how_to_install(tmp_path):
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "duckdb.py").write_text("raise ImportError('no duckdb here', name='duckdb')\n")
    gen_ranks.write_ranks(tmp_path / "g", 1, 50)
    export(tmp_path / "ds", tmp_path / "g")
    r = fleet("summary", tmp_path / "ds", env={"PYTHONPATH": str(shadow)})
    assert one_line_error(r) == ("kscope fleet: the duckdb engine is not installed: "
                                 "pip install 'kscope[fleet]'")
    (shadow / "pyarrow.py").write_text("raise ImportError('no pyarrow here', name='pyarrow')\n")
    r = fleet("export", "-o", tmp_path / "d2", "-j", "1", tmp_path / "g", env={"PYTHONPATH": str(shadow)})
    assert one_line_error(r) == "kscope fleet: the pyarrow package is not installed: pip install 'kscope[fleet]'"


def test_page_data_is_escaped(tmp_path):
    evil = "</script><script>alert(1)</script>"
    doc = [node("ROOT", {"time (ns)": 0}, [node(evil, {}, [kernel("k", 100 + 50 * r)]) for r in range(1)]), {}]
    for r in range(3):
        doc[0]["children"][0]["children"][0]["metrics"]["time (ns)"] = 100 + 50 * r
        write_json(tmp_path / f"e.rank{r}.hatchet", doc)
    export(tmp_path / "ds", *[tmp_path / f"e.rank{r}.hatchet" for r in range(3)])
    ok(fleet("report", "--html", tmp_path / "p.html", tmp_path / "ds"))
    page = (tmp_path / "p.html").read_text()
    assert page.count("<script") == 2 and evil not in page
    data = page.split('<script type="application/json" id="fleet-data">')[1].split("</script>")[0]
    d = json.loads(data)
    assert d["summary"]["imbalance"][0]["scope"] == evil
    assert d["heatmap"]["scopes"][0]["name"] == evil and len(d["heatmap"]["cells"][0]) == 3
