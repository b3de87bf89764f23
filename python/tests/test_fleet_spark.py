"""The same analyses (sql/*.sql) run by Spark (pyspark, local mode) give
DuckDB's results on the same dataset: summary, heat map, diff, sql, and
`--engine spark` on the command line. Needs pyspark and Java 17+: skipped
with the reason where they are missing, required in CI
(KSCOPE_REQUIRE_SPARK=1, .ci/run)."""
import json
import shutil

import pytest

from fleet_util import PROTON_DIR, export, fleet, gen_ranks, need_spark, ok, summary, write_json
from test_fleet import _trace


@pytest.fixture(scope="module")
def spark():
    need_spark()
    from kscope.fleet import engines

    eng = engines.make("spark")
    yield eng
    eng.spark.stop()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """64 ranks with a straggler and an imbalance, two of them with traces
    (for the kernels table and the overlap), and a second, slower run."""
    root = tmp_path_factory.mktemp("spark")
    gen_ranks.write_ranks(root / "a", 64, 120, straggler=9, slow=1.6)
    for r in (3, 4):
        write_json(root / "a" / f"train.rank{r}.chrome_trace", _trace(100 * r))
    if PROTON_DIR.is_dir():
        shutil.copy(PROTON_DIR / "rich_tree.hatchet", root / "a" / "train.rank64.hatchet")
    gen_ranks.write_ranks(root / "b", 32, 120, scale=1.25)
    export(root / "da", root / "a")
    export(root / "db", root / "b")
    return root


def both(fn):
    from kscope.fleet import engines

    duck = engines.make("duckdb")
    try:
        return fn(duck)
    finally:
        duck.close()


def same(a, b):
    """Equal, floats to 1e-9 (the engines sum in different orders)."""
    if isinstance(a, dict):
        assert set(a) == set(b)
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-9, abs=1e-6)
    else:
        assert a == b


def test_summary_and_heatmap_equal_duckdbs(spark, data):
    from kscope.fleet import analyses

    def run(eng):
        s = analyses.summary(eng, str(data / "da"))
        return s, analyses.heatmap(eng, 40, 16)
    s_duck, h_duck = both(run)
    s_spark, h_spark = run(spark)
    assert s_spark.pop("engine") == "spark" and s_duck.pop("engine") == "duckdb"
    same(s_spark, s_duck)
    same(h_spark, h_duck)
    assert s_spark["stragglers"][0]["rank"] == 9 and s_spark["imbalance"][0]["scope"] == "data_load"
    cc = {r["rank"]: r for r in s_spark["comm_compute"]}
    assert cc[3]["overlap_ns"] == 15000 and cc[0]["overlap_ns"] is None
    assert len({r["bin"] for r in h_spark}) == 16  # 65 ranks in 16 bins


def test_diff_and_sql_equal_duckdbs(spark, data):
    from kscope.fleet import analyses

    d_duck = both(lambda e: analyses.diff(e, str(data / "da"), str(data / "db")))
    d_spark = analyses.diff(spark, str(data / "da"), str(data / "db"))
    d_spark.pop("engine"), d_duck.pop("engine")
    same(d_spark, d_duck)
    q = ("SELECT n.rank, COUNT(*) AS nodes, SUM(n.time_ns) AS gpu, MAX(r.tree_file) AS f, "
         "SUM(CASE WHEN n.comm THEN 1 ELSE 0 END) AS comm "
         "FROM nodes n JOIN runs r ON n.rank = r.rank GROUP BY n.rank ORDER BY n.rank")
    same(analyses.sql(spark, str(data / "da"), q), both(lambda e: analyses.sql(e, str(data / "da"), q)))
    q = "SELECT rank, name, start_ns, duration_ns, stream, scope FROM kernels ORDER BY rank, start_ns, name"
    rows = analyses.sql(spark, str(data / "da"), q)
    assert len(rows[1]) == 10
    same(rows, both(lambda e: analyses.sql(e, str(data / "da"), q)))


def test_engine_spark_on_the_command_line(data):
    need_spark()
    r = ok(fleet("summary", data / "db", "--json", "--engine", "spark"))
    s = json.loads(r.stdout)
    assert s.pop("engine") == "spark"
    d = summary(data / "db")
    d.pop("engine")
    same(s, d)
