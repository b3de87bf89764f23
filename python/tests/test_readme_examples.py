"""test_readme_examples.py - the README's Python quick start is true: its
code blocks are examples/train.py and examples/serve.py as they are, and
running them (directly, and under `kscope run`) gives the output the README
shows, times aside (every decimal number is masked on both sides)."""
import os
import re
import subprocess
import sys

from conftest import kscope_cli

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "test"))
from docs_check import masked, shown  # noqa: E402


def readme():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        return f.read()


def blocks(lang):
    """The README's fenced blocks of one language, in order."""
    return re.findall(r"^```" + lang + r"\n(.*?)^```\n", readme(), re.S | re.M)


def readme_shows(cmd):
    """The output lines the README's console blocks show after `$ cmd`
    (test/docs_check.py's reading, which test/cli-docs.sh checks too)."""
    out = shown(readme(), cmd)
    assert out is not None, f"README.md shows no `$ {cmd}`"
    return out


def example(name):
    with open(os.path.join(REPO, "examples", name), encoding="utf-8") as f:
        return f.read()


def run(argv, cwd, cli):
    """Run a README command line: `kscope` is this build's, `python` this
    interpreter; an environment without KSCOPE_QUIET as a user's."""
    argv = [cli if a == "kscope" else sys.executable if a == "python" else a for a in argv]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KSCOPE_")}
    env["PATH"] = os.path.dirname(cli) + os.pathsep + env.get("PATH", "")
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_code_blocks_are_the_examples():
    python = blocks("python")
    assert example("train.py") in python, "README's Proton block differs from examples/train.py"
    assert example("serve.py") in python, "README's MAX block differs from examples/serve.py"


def test_train_py_run_directly(tmp_path):
    cli = kscope_cli()
    (tmp_path / "train.py").write_text(example("train.py"))
    cmd = "python train.py && kscope view -m wall_time/ms -m calls -m tokens train.hatchet"
    want = readme_shows(cmd)
    run(["python", "train.py"], tmp_path, cli)
    r = run(cmd.split(" && ")[1].split(), tmp_path, cli)
    assert masked(r.stdout.splitlines()) == masked(want)


def test_train_py_under_kscope_run(tmp_path):
    cli = kscope_cli()
    (tmp_path / "train.py").write_text(example("train.py"))
    r = run("kscope run -- python train.py".split(), tmp_path, cli)
    # the summary on stderr, as the README shows it (commands as typed)
    assert masked(r.stderr.splitlines()) == masked(readme_shows("kscope run -- python train.py"))
    assert not (tmp_path / "train.hatchet").exists()  # the script's own session is ignored
    r = run("kscope view kscope.hatchet".split(), tmp_path, cli)
    assert masked(r.stdout.splitlines()) == masked(readme_shows("kscope view kscope.hatchet"))
    cmd = "kscope report --html train.html kscope.hatchet"
    r = run(cmd.split(), tmp_path, cli)
    assert masked(r.stderr.splitlines()) == masked(readme_shows(cmd))
    assert (tmp_path / "train.html").stat().st_size > 0


def test_serve_py_under_kscope_run(tmp_path):
    cli = kscope_cli()
    (tmp_path / "serve.py").write_text(example("serve.py"))
    cmd = "kscope run -n serve --top 0 -- python serve.py"
    r = run(cmd.split(), tmp_path, cli)
    assert masked(r.stderr.splitlines()) == masked(readme_shows(cmd))
    cmd = "kscope view -m wall_time/ms -m calls serve.hatchet"
    r = run(cmd.split(), tmp_path, cli)
    assert masked(r.stdout.splitlines()) == masked(readme_shows(cmd))
