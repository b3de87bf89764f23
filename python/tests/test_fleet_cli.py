"""`kscope fleet` and `kscope report --html OUT DIR` through the C command
(src/cli/cmd-fleet.c): it runs the package in $KSCOPE_PYTHON or python3,
and says in one line how to install what is missing; the wheel's `kscope`
(kscope/cli.py) runs the fleet command in-process."""
import json
import os
import subprocess
import sys

import pytest

from fleet_util import REPO, child_env, export, gen_ranks, need_fleet, one_line_error, summary

CLI = os.environ.get("KSCOPE_CLI") or str(REPO / "build" / "kscope")


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    need_fleet()
    root = tmp_path_factory.mktemp("cli")
    gen_ranks.write_ranks(root / "prof", 16, 100, straggler=5, slow=2.0)
    export(root / "ds", root / "prof")
    return root / "ds"


def kscope(*args, env=None, cwd=None):
    if not os.access(CLI, os.X_OK):
        pytest.skip(f"{CLI}: no kscope binary (KSCOPE_CLI names it)")
    e = child_env(dict({"KSCOPE_PYTHON": sys.executable}, **(env or {})))
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, env=e, cwd=cwd)


def test_c_command_runs_the_package(ds, tmp_path):
    r = kscope("fleet", "summary", ds, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == summary(ds)
    assert json.loads(r.stdout)["stragglers"][0]["rank"] == 5
    # a folder named kscope in the current folder is not taken for the package
    (tmp_path / "kscope").mkdir()
    (tmp_path / "kscope" / "__init__.py").write_text("raise SystemExit('wrong kscope')\n")
    r = kscope("fleet", "sql", ds, "SELECT COUNT(*) AS n FROM runs", "--csv", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, "n\n16\n"), r.stderr


def test_c_command_says_what_is_missing(ds, tmp_path):
    line = one_line_error(kscope("fleet", "summary", ds, env={"KSCOPE_PYTHON": "/nonexistent/python"}))
    assert line.startswith("kscope fleet: cannot run /nonexistent/python: No such file or directory")
    assert "pip install 'kscope[fleet]'" in line
    # an interpreter without the package (a kscope package without fleet)
    (tmp_path / "kscope").mkdir()
    (tmp_path / "kscope" / "__init__.py").write_text("")
    line = one_line_error(kscope("fleet", "summary", ds, env={"PYTHONPATH": str(tmp_path)}))
    assert "kscope fleet: the kscope Python package is not installed for" in line
    assert line.endswith('pip install "kscope[fleet]"')
    # the package without its engine
    (tmp_path / "kscope").rename(tmp_path / "k")
    (tmp_path / "duckdb.py").write_text("raise ImportError('none', name='duckdb')\n")
    line = one_line_error(kscope("fleet", "summary", ds, env={"PYTHONPATH": str(tmp_path)}))
    assert line == "kscope fleet: the duckdb engine is not installed: pip install 'kscope[fleet]'"
    line = one_line_error(kscope("fleet", "summary", tmp_path))
    assert "not a kscope fleet dataset" in line


def test_report_html_on_a_dataset(ds, tmp_path):
    r = kscope("report", "--html", tmp_path / "f.html", "-n", "3", ds)
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"kscope report: wrote {tmp_path / 'f.html'}\n"
    page = (tmp_path / "f.html").read_text()
    data = json.loads(page.split('id="fleet-data">')[1].split("</script>")[0])
    assert data["summary"]["stragglers"][0]["rank"] == 5 and len(data["summary"]["imbalance"]) <= 3
    assert "kscope fleet report" in page and "#tabs button" in page  # the report's stylesheet
    line = one_line_error(kscope("report", ds))
    assert "is a folder" in line and "kscope fleet summary" in line
    line = one_line_error(kscope("report", "--html", tmp_path / "g.html", tmp_path))
    assert line.startswith("kscope report: ") and "not a kscope fleet dataset" in line


def test_help_names_every_subcommand():
    r = kscope("help", "fleet")
    assert r.returncode == 0
    for sub in ("export -o DIR", "summary DIR", "diff DIR_A DIR_B", "sql DIR", "report --html OUT DIR",
                "--engine", "kscope[fleet]", "docs/fleet.md"):
        assert sub in r.stdout
    assert "fleet" in kscope("help").stdout


def test_wheel_command_runs_fleet_in_process(ds):
    from kscope import cli

    r = subprocess.run([sys.executable, "-c", "import sys; from kscope.cli import main; sys.exit(main())",
                        "fleet", "summary", ds, "--json"], capture_output=True, text=True, env=child_env())
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ranks"]["count"] == 16
    assert cli.main is not None


def test_spark_submit_file():
    from kscope.fleet import submit

    assert submit.spark_argv(["summary", "hdfs:///d", "--json"]) == ["summary", "--engine", "spark",
                                                                     "hdfs:///d", "--json"]
    assert submit.spark_argv(["sql", "d", "SELECT 1", "--engine", "duckdb"]) == ["sql", "d", "SELECT 1",
                                                                               "--engine", "duckdb"]
    assert submit.spark_argv(["export", "-o", "d", "p"]) == ["export", "-o", "d", "p"]
    r = subprocess.run([sys.executable, "-m", "kscope.fleet.submit", "--path"], capture_output=True, text=True)
    path = r.stdout.strip()
    assert r.returncode == 0 and path == submit.__file__
    # spark-submit runs it as a file, outside the package: it must import by name
    r = subprocess.run([sys.executable, path, "summary", "/nonexistent"], capture_output=True, text=True)
    assert (r.returncode, r.stderr) == (2, "kscope fleet: /nonexistent: no such folder\n")
