"""`python -m kscope`: the Proton-style launcher and --python-cpu."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import kscope_cli, kscope_run

SCRIPT = textwrap.dedent("""
    import sys
    import kscope as proton

    def hot_loop():
        return sum(i * i for i in range(50000))

    session = proton.start("ignored_by_launcher")
    with proton.scope("script_scope", {"argc": len(sys.argv)}):
        hot_loop()
    proton.finalize()
    print("argv=" + ",".join(sys.argv[1:]))
    print("name=" + __name__)
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0)
""")


def run(args, cwd):
    return subprocess.run([sys.executable, "-m", "kscope", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "prog.py"
    p.write_text(SCRIPT)
    return p


def test_runs_script_with_its_arguments(tmp_path, script):
    r = run(["-n", "out", str(script), "a", "b"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "argv=a,b" in r.stdout and "name=__main__" in r.stdout
    assert "kscope: wrote " in r.stderr
    # the script's start is ignored; the run's facts lie beside the profile
    assert sorted(os.listdir(tmp_path)) == ["out.hatchet", "out.hatchet.meta.json", "prog.py"]
    root = json.loads((tmp_path / "out.hatchet").read_text())[0]
    (node,) = [c for c in root["children"] if c["frame"]["name"] == "script_scope"]
    assert node["metrics"]["argc"] == 3


def test_exit_status_is_the_scripts(tmp_path, script):
    r = run(["-n", "out", str(script), "3"], tmp_path)
    assert r.returncode == 3
    assert (tmp_path / "out.hatchet").exists()


def test_trace_and_format_options(tmp_path, script):
    r = run(["-n", "tl", "-d", "trace", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "tl.chrome_trace").read_text())
    assert any(e["name"] == "script_scope" for e in doc["traceEvents"])
    r = run(["-n", "mp", "-f", "hatchet_msgpack", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "mp.hatchet_msgpack").read_bytes()[0] == 0x92


def test_run_facts_beside_a_tree_and_in_a_trace(tmp_path, script):
    """The command (as typed, shell-quoted), host, pid, start time and
    version: PROFILE.meta.json beside a tree profile, a trace's metadata."""
    import calendar
    import shlex
    import socket
    import time

    import kscope

    r = run(["-n", "out", str(script), "it's", "a b"], tmp_path)
    assert r.returncode == 0, r.stderr
    facts = json.loads((tmp_path / "out.hatchet.meta.json").read_text())
    assert shlex.split(facts["command"])[-5:] == ["-n", "out", str(script), "it's", "a b"]
    assert "process" not in facts  # the command is this process's own
    assert facts["host"] == socket.gethostname() and facts["kscope_version"] == kscope.__version__
    assert isinstance(facts["pid"], int) and facts["pid"] > 0
    started = calendar.timegm(time.strptime(facts["start_time"][:19], "%Y-%m-%dT%H:%M:%S"))
    assert facts["start_time"].endswith("Z") and abs(time.time() - started) < 120
    assert not [f for f in os.listdir(tmp_path) if ".tmp." in f]  # written through a rename
    r = run(["-n", "mp", "-f", "hatchet_msgpack", str(script)], tmp_path)
    assert json.loads((tmp_path / "mp.hatchet_msgpack.meta.json").read_text())["pid"] > 0
    r = run(["-n", "tl", "-d", "trace", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    meta = json.loads((tmp_path / "tl.chrome_trace").read_text())["metadata"]
    assert shlex.split(meta["command"])[-3:] == ["-d", "trace", str(script)]
    assert not (tmp_path / "tl.chrome_trace.meta.json").exists()


def test_run_facts_that_cannot_be_written_are_said(tmp_path, script):
    (tmp_path / "out.hatchet.meta.json").mkdir()  # in the way
    r = run(["-n", "out", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "cannot write the run's facts beside out.hatchet" in r.stderr
    assert json.loads((tmp_path / "out.hatchet").read_text())[0]["frame"]["name"] == "ROOT"


def test_python_cpu_table(tmp_path, script):
    r = run(["-n", "out", "--python-cpu", "5", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    i = next(k for k, l in enumerate(lines) if "Top 5 Python/CPU functions" in l)
    assert lines[i + 1].split() == ["%", "total", "calls", "function"]
    rows = lines[i + 2:i + 7]
    assert len(rows) == 5
    assert any("prog.py:" in row for row in rows)  # the generator inside hot_loop
    pct = [float(row.split()[0].rstrip("%")) for row in rows]
    assert pct == sorted(pct, reverse=True)


def test_pytest_target(tmp_path):
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        import kscope
        def test_it():
            with kscope.scope("in_pytest"):
                pass
    """))
    r = run(["-n", "pt", "pytest", "-q", "-p", "no:cacheprovider", "test_inner.py"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    root = json.loads((tmp_path / "pt.hatchet").read_text())[0]
    assert any(c["frame"]["name"] == "in_pytest" for c in root["children"])


def test_missing_script_and_usage(tmp_path):
    r = run(["-n", "x", "nope.py"], tmp_path)
    assert r.returncode == 2 and "nope.py: no such file" in r.stderr
    r = run([], tmp_path)
    assert r.returncode == 2 and "no script given" in r.stderr
    r = run(["--python-cpu", "0", "x.py"], tmp_path)
    assert r.returncode == 2 and "at least 1" in r.stderr
    r = run(["-c", "bogus", "x.py"], tmp_path)
    assert r.returncode == 2 and "invalid choice" in r.stderr


def run_proton(args, cwd):
    return subprocess.run([sys.executable, "-m", "kscope.proton", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_proton_module_path_runs_a_script_with_protons_options(tmp_path, script):
    """`python -m triton.profiler.proton -n NAME -c shadow -d tree -k triton
    script.py ARGS` with the module path replaced."""
    r = run_proton(["-n", "pr", "-b", "cupti", "-c", "shadow", "-d", "tree", str(script), "a"],
                   tmp_path)
    assert r.returncode == 0, r.stderr
    assert "argv=a" in r.stdout and "name=__main__" in r.stdout
    root = json.loads((tmp_path / "pr.hatchet").read_text())[0]
    assert [c["frame"]["name"] for c in root["children"]] == ["script_scope"]
    r = run_proton(["-n", "prt", "-d", "trace", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "prt.chrome_trace").exists()


def test_proton_module_path_usage_and_refusals(tmp_path, script):
    r = run_proton(["--help"], tmp_path)
    assert r.returncode == 0 and "usage: python -m kscope.proton [options] script.py" in r.stdout
    r = run_proton([], tmp_path)
    assert r.returncode == 2 and "python -m kscope.proton [options] script.py" in r.stderr
    # Proton's other backends parse as in Proton, then one line says why not
    for backend in ("roctracer", "instrumentation"):
        r = run_proton(["-n", "x", "-b", backend, str(script)], tmp_path)
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and f"backend '{backend}'" in r.stderr, r.stderr
        assert r.stderr.startswith("python -m kscope.proton: ")
    assert not (tmp_path / "x.hatchet").exists()


def test_sample_option(tmp_path, script):
    r = run(["-n", "s", "--sample", "step:on=1,every=2", str(script)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "s.hatchet").exists()
    r = run(["-n", "s", "--sample", "bogus", str(script)], tmp_path)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "sample 'bogus'" in r.stderr, r.stderr


def test_script_exception_still_writes(tmp_path):
    p = tmp_path / "boom.py"
    p.write_text("import kscope\nwith kscope.scope('before_boom'):\n    pass\nraise KeyError('bad')\n")
    r = run(["-n", "b", str(p)], tmp_path)
    assert r.returncode == 1
    assert "KeyError" in r.stderr
    assert (tmp_path / "b.hatchet").exists()


def test_under_kscope_run(tmp_path):
    r = kscope_run(tmp_path, "s.py", textwrap.dedent("""
        import sys
        import kscope
        print("frames=%s argv=%s" % (kscope.LaunchHook().python_frames, ",".join(sys.argv[1:])))
        with kscope.scope("under_run"):
            pass
        print("session=%s" % kscope.start("ignored"))
        kscope.finalize()
    """), "-c", "python", "-n", "prof", args=["x"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "frames=True argv=x" in r.stdout
    outputs = [f for f in os.listdir(tmp_path) if f.endswith(".hatchet")]
    assert len(outputs) == 1 and outputs[0].startswith("prof"), os.listdir(tmp_path)
    assert not (tmp_path / "ignored.hatchet").exists()
    root = json.loads((tmp_path / outputs[0]).read_text())[0]
    assert [c["frame"]["name"] for c in root["children"]] == ["under_run"]
    # kscope run writes the facts: the command as typed; this process ran
    # it through `python -m kscope`
    facts = json.loads((tmp_path / (outputs[0] + ".meta.json")).read_text())
    assert facts["command"] == f"{sys.executable} s.py x"
    assert facts["process"] == f"{sys.executable} -m kscope s.py x"


MANUAL_SCOPES = textwrap.dedent("""
    import kscope
    kscope.start("ignored")
    kscope.enter_scope("outer")
    kscope.enter_scope("inner")
    kscope.exit_scope("inner", metrics={"tokens": 7})
    try:
        kscope.exit_scope("wrong", metrics={"b": 1})
    except ValueError as e:
        print("mismatch: %s" % e)
    kscope.exit_scope("outer", metrics={"flops": 3})
    print("depth=%d" % kscope._kscope.depth())
    kscope.finalize()
""")


def check_manual_scopes(r, hatchet):
    assert r.returncode == 0, r.stdout + r.stderr
    assert "success" not in r.stdout + r.stderr
    assert ("mismatch: exit of scope 'wrong' does not match the innermost scope 'outer'"
            in r.stdout), r.stdout
    assert "depth=0" in r.stdout
    root = json.loads(hatchet.read_text())[0]
    [outer] = [c for c in root["children"] if c["frame"]["name"] == "outer"]
    [inner] = [c for c in outer["children"] if c["frame"]["name"] == "inner"]
    assert outer["metrics"]["flops"] == 3 and "b" not in outer["metrics"]
    assert inner["metrics"]["tokens"] == 7


def test_exit_scope_with_metrics_under_kscope_run(tmp_path):
    """exit_scope(name, metrics=...) checks the name against kscope run's
    recorder (this copy hands its calls over): metrics land, a wrong name
    is refused naming both scopes, and Python and the recorder agree on
    what is open afterwards."""
    r = kscope_run(tmp_path, "m.py", MANUAL_SCOPES, "-n", "prof")
    outputs = [f for f in os.listdir(tmp_path) if f.endswith(".hatchet")]
    assert len(outputs) == 1, (os.listdir(tmp_path), r.stdout + r.stderr)
    check_manual_scopes(r, tmp_path / outputs[0])


def test_exit_scope_with_metrics_run_directly(tmp_path):
    (tmp_path / "m.py").write_text(MANUAL_SCOPES)
    r = subprocess.run([sys.executable, "m.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    check_manual_scopes(r, tmp_path / "ignored.hatchet")


def test_unannotated_script_writes_an_empty_profile_view_shows(tmp_path):
    """A script with no scopes still gets a file, and `kscope view` shows it
    as a bare ROOT (exit 0), the rule for every empty profile."""
    (tmp_path / "plain.py").write_text("x = 1\n")
    r = run(["-n", "plain", "plain.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "plain.hatchet").exists()
    v = subprocess.run([kscope_cli(), "view", "plain.hatchet"], cwd=tmp_path, capture_output=True, text=True)
    assert v.returncode == 0, v.stderr
    assert v.stdout.split() == ["name", "ROOT"]
