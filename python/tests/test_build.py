"""The setuptools-free build (python/kscope_setup.py run as a script), as
used on machines whose Python has no setuptools."""
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_build_without_setuptools(tmp_path):
    if not os.path.exists(os.path.join(REPO, "src", "core")):
        pytest.skip("needs the repository's C sources")
    pkg = tmp_path / "python"
    shutil.copytree(os.path.join(REPO, "python"), pkg,
                    ignore=shutil.ignore_patterns("build", "*.so", "__pycache__", "*.egg-info"))
    os.symlink(os.path.join(REPO, "src"), tmp_path / "src")
    os.symlink(os.path.join(REPO, "include"), tmp_path / "include")
    r = subprocess.run([sys.executable, "kscope_setup.py"], cwd=pkg, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "built" in r.stdout
    r = subprocess.run(
        [sys.executable, "-c", "import kscope, sys; sys.stdout.write(kscope._kscope.__file__)"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(pkg)), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(pkg))


def test_extension_links_and_exports_only_its_own():
    """The extension links no JSON or MessagePack library and no libstdc++
    (the demangler is looked up at run time), and exports PyInit__kscope and
    the kscope_* API only."""
    import kscope._kscope

    so = kscope._kscope.__file__
    if not shutil.which("ldd") or not shutil.which("nm"):
        pytest.skip("needs ldd and nm")
    ldd = subprocess.run(["ldd", so], capture_output=True, text=True, check=True).stdout
    for lib in ("yajl", "msgpack", "libstdc++"):
        assert lib not in ldd, f"{so} links {lib}:\n{ldd}"
    nm = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True,
                        check=True).stdout
    symbols = [line.split()[-1] for line in nm.splitlines() if line.strip()]
    assert "PyInit__kscope" in symbols
    extra = [s for s in symbols if s != "PyInit__kscope" and not s.startswith("kscope_")]
    assert not extra, f"{so} exports {extra}"
