"""bench/fleet/run.py at a small size (64 ranks x 200 nodes, no pandas),
as CI runs it: the benchmark works end to end and its summary names the
planted straggler and imbalance. Times are not asserted (the full-size
figures are in docs/fleet.md)."""
import json
import subprocess
import sys

from fleet_util import REPO, child_env, need_fleet


def test_small_benchmark_runs(tmp_path):
    need_fleet()
    out = tmp_path / "bench.json"
    r = subprocess.run([sys.executable, str(REPO / "bench" / "fleet" / "run.py"), "--ranks", "64",
                        "--nodes", "200", "--repeat", "1", "--no-pandas", "--work", str(tmp_path / "w"),
                        "--json", str(out)], capture_output=True, text=True, env=child_env())
    assert r.returncode == 0, r.stderr
    res = json.loads(out.read_text())
    assert res["ranks"] == 64 and res["rows"] == 64 * 197
    assert res["found"] == {"straggler": 137 % 64, "imbalance": "data_load"}
    assert res["export"]["peak_mb"] > 0 and len(res["summary"]) == 1
    assert "kscope fleet export" in r.stdout and "kscope fleet summary (run 1)" in r.stdout
