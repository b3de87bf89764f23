"""Shared helpers of the kscope fleet tests (test_fleet*.py): the rank
generator of bench/fleet, running the command, and whether its engines are
installed (a test that needs one is skipped with the reason, or fails where
KSCOPE_REQUIRE_FLEET / KSCOPE_REQUIRE_SPARK say CI installed it)."""
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "fleet"))
import gen_ranks  # noqa: E402

FLEET_MODULES = ("duckdb", "pyarrow", "numpy")
PROTON_DIR = REPO.parent / "shared" / "fixtures" / "proton"


def missing(modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def need(modules, require_var, hint):
    """Skip (or fail, where require_var is 1) when a module is missing."""
    gone = missing(modules)
    if not gone:
        return
    why = f"{', '.join(gone)} not installed ({hint})"
    if os.environ.get(require_var) == "1":
        pytest.fail(f"{require_var}=1 but {why}")
    pytest.skip(why)


def need_fleet():
    need(FLEET_MODULES, "KSCOPE_REQUIRE_FLEET", "pip install 'kscope[fleet]'; tools/test.sh installs it")


def need_spark():
    """pyspark and a Java runtime; not under the ASan preload of the
    sanitized pass (the JVM is not built to run with it)."""
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("Spark's JVM does not run under the sanitized pass's ASan preload")
    need(FLEET_MODULES + ("pyspark",), "KSCOPE_REQUIRE_SPARK",
         "pip install 'kscope[spark]'; tools/test.sh installs it where java is")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        if os.environ.get("KSCOPE_REQUIRE_SPARK") == "1":
            pytest.fail("KSCOPE_REQUIRE_SPARK=1 but no java (apt-get install openjdk-17-jre-headless)")
        pytest.skip("no java for Spark (apt-get install openjdk-17-jre-headless)")


def child_env(env=None):
    """The environment of a command under test. Under the sanitized pass's
    ASan preload, libstdc++ is preloaded after it: DuckDB reports a bad
    query by a C++ exception, which ASan's interceptor can throw only when
    the C++ runtime was there when ASan started (Python is no C++ program)."""
    e = dict(os.environ, **(env or {}))
    pre = e.get("LD_PRELOAD", "")
    if "libasan" in pre and "libstdc++" not in pre:
        e["LD_PRELOAD"] = pre + " libstdc++.so.6"
    return e


def fleet(*args, env=None, cwd=None):
    """Run `python -m kscope.fleet ARGS` with this interpreter."""
    e = child_env(env)
    return subprocess.run([sys.executable, "-m", "kscope.fleet", *map(str, args)], capture_output=True,
                          text=True, env=e, cwd=cwd)


def ok(r):
    assert r.returncode == 0, r.stderr
    return r


def one_line_error(r):
    """The command failed with exit status 2 and one line on stderr."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


def summary(ds, *extra):
    return json.loads(ok(fleet("summary", ds, "--json", *extra)).stdout)


def export(out, *inputs, extra=()):
    return ok(fleet("export", "-o", out, *extra, *inputs))


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)
    return str(path)


def node(name, metrics=None, children=()):
    return {"frame": {"name": name, "type": "function"}, "metrics": metrics or {},
            "children": list(children)}


def kernel(name, ns, device=0, **more):
    return node(name, {"time (ns)": ns, "count": 1, "device_id": str(device), "device_type": "CUDA",
                       **more})
