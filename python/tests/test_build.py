"""The setuptools-free build (python/kscope_setup.py run as a script), as
used on machines whose Python has no setuptools."""
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def source_copy(tmp_path, parts=("src", "include", "cmake")):
    """python/ copied into tmp_path, the named folders of the repository
    linked beside it; the copy's python/ folder."""
    if not os.path.exists(os.path.join(REPO, "src", "core")):
        pytest.skip("needs the repository's C sources")
    pkg = tmp_path / "python"
    shutil.copytree(os.path.join(REPO, "python"), pkg,
                    ignore=shutil.ignore_patterns("build", "*.so", "__pycache__", "*.egg-info"))
    for part in parts:
        os.symlink(os.path.join(REPO, part), tmp_path / part)
    return pkg


def test_build_without_setuptools(tmp_path):
    pkg = source_copy(tmp_path)
    r = subprocess.run([sys.executable, "kscope_setup.py"], cwd=pkg, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "built" in r.stdout
    r = subprocess.run(
        [sys.executable, "-c", "import kscope, sys; sys.stdout.write(kscope._kscope.__file__)"],
        cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(pkg)), capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(pkg))


def test_build_refuses_a_tree_without_its_vendor_files(tmp_path):
    """A copy of the sources without cmake/ (where the GPU vendors are
    described) is refused in one line, not built without a GPU backend."""
    pkg = source_copy(tmp_path, ("src", "include"))
    r = subprocess.run([sys.executable, "kscope_setup.py"], cwd=pkg, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert lines and "holds no vendor file (cmake/*.cmake)" in lines[-1], r.stderr


def test_extension_links_and_exports_only_its_own():
    """The extension links no JSON or MessagePack library and no libstdc++
    (the demangler is looked up at run time), and exports PyInit__kscope and
    the kscope_* API only."""
    import kscope._kscope

    so = kscope._kscope.__file__
    if not shutil.which("ldd") or not shutil.which("nm"):
        pytest.skip("needs ldd and nm")
    ldd = subprocess.run(["ldd", so], capture_output=True, text=True, check=True).stdout
    # a sanitized build's runtime (libasan, libubsan) brings libstdc++ along:
    # then only what the extension itself names counts
    own = ldd
    if "libasan" in ldd and shutil.which("objdump"):
        own = subprocess.run(["objdump", "-p", so], capture_output=True, text=True,
                             check=True).stdout
        own = "\n".join(line for line in own.splitlines() if "NEEDED" in line)
    for lib in ("yajl", "msgpack", "libstdc++"):
        assert lib not in own, f"{so} links {lib}:\n{own}"
    nm = subprocess.run(["nm", "-D", "--defined-only", so], capture_output=True, text=True,
                        check=True).stdout
    symbols = [line.split()[-1] for line in nm.splitlines() if line.strip()]
    assert "PyInit__kscope" in symbols
    # besides the module's entry and the C API: NVTX's injection entry
    # (kscope.start points NVTX_INJECTION64_PATH at this file)
    entries = ("PyInit__kscope", "InitializeInjectionNvtx2")
    assert "InitializeInjectionNvtx2" in symbols
    extra = [s for s in symbols if s not in entries and not s.startswith("kscope_")]
    assert not extra, f"{so} exports {extra}"


def test_source_build_without_compiler_says_what_to_install():
    """A source build on a machine without the build dependencies stops
    with one line naming the packages to install."""
    code = ("import sys; sys.path.insert(0, %r); import kscope_setup; kscope_setup.check_build_deps()"
            % os.path.join(REPO, "python"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, CC="no-such-compiler-here"))
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt-get install gcc python3-dev" in lines[0], r.stderr


def test_kscope_command_of_the_package():
    """The `kscope` console script runs the bundled binary (binary wheel) or,
    in a source install, says in one line how to get one."""
    from kscope import cli

    script = os.path.join(os.path.dirname(sys.executable), "kscope")
    if not os.path.exists(script):
        pytest.skip("the package's scripts are not beside this Python")
    r = subprocess.run([script, "version"], capture_output=True, text=True)
    if cli.bundled_binary() is None:
        assert r.returncode == 2 and r.stderr == cli.NO_BINARY
    else:
        assert r.returncode == 0 and r.stdout.startswith("kscope "), r.stderr
