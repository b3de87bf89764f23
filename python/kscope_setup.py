"""kscope_setup.py - how setup.py (at the repository root) builds the
`kscope` package, and the setuptools-free build (`python3 kscope_setup.py`).

The extension `kscope._kscope` is compiled together with the C sources of
the pieces it needs, read from src/sources.txt (the list CMakeLists.txt
reads too): `recorder`, plus each GPU vendor's pieces when its headers
are found (cmake/<vendor>.cmake's facts, which CMake reads too; see
vendors()). The extension uses only the public
API (include/kscope.h), so it never takes `inject` (kscope run's entry
points), `toolkit` (the readers) or `cli`, and links nothing beyond
libpthread, libdl and libm, so one `pip install` builds everything.
CFLAGS, LDFLAGS, C_INCLUDE_PATH and LIBRARY_PATH from the environment are
honoured (the compiler reads the last two itself).

The extension is built for CPython's stable ABI of 3.9 (Py_LIMITED_API,
set in python/src/module.h and here): one build, `_kscope.abi3.so`, loads
in every CPython from 3.9, and the wheel is tagged cp39-abi3.
"""
import glob
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

# The pieces of src/sources.txt the extension is made of: always RECORDER,
# then each GPU vendor's pieces when its headers are found (without them
# the backend registry lists the backend as not built). Any other piece
# (inject, toolkit, cli, inject-gpu, ...) is left out. Under `kscope run`
# the extension's calls to the public API resolve to the preloaded
# libkscope, so the process keeps one kscope state.
RECORDER = "recorder"
LIMITED_API = ("Py_LIMITED_API", "0x03090000")  # python/src/module.h says the same
ABI_TAG = "cp39"  # the oldest CPython the stable-ABI build serves
LIBRARIES = ["pthread", "dl", "m"]
_PIECE_LINE = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(.*)$")


def read_pieces(path):
    """{piece: [entry, ...]} of a sources.txt: `piece: entry entry ...`
    lines (a piece named on several lines gets all their entries); blank
    lines, comment lines and anything after a '#' are ignored."""
    pieces = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            m = _PIECE_LINE.match(line)
            if m:
                pieces.setdefault(m.group(1), []).extend(m.group(2).split())
    return pieces


def _expand(repo, pieces, entry):
    """An entry, or for "DIR/*" the folders directly in src/DIR that no
    line names, sorted."""
    if not entry.endswith("/*"):
        return [entry]
    named = {e for entries in pieces.values() for e in entries}
    parent = entry[:-2]
    found = sorted(os.listdir(os.path.join(repo, "src", parent)))
    return [parent + "/" + d for d in found
            if os.path.isdir(os.path.join(repo, "src", parent, d)) and parent + "/" + d not in named]


def piece_files(repo, pieces, piece):
    """The .c files of `piece` (none if it is not listed): each entry is a
    folder of src/ (every .c directly in it, sorted), one .c file, or
    "DIR/*" (every folder directly in src/DIR that no line names)."""
    files = []
    entries = [e for named in pieces.get(piece, []) for e in _expand(repo, pieces, named)]
    for entry in entries:
        path = os.path.join(repo, "src", entry)
        if os.path.isdir(path):
            files += sorted(glob.glob(os.path.join(path, "*.c")))
        elif entry.endswith(".c") and os.path.isfile(path):
            files.append(path)
        else:
            raise SystemExit(f"src/sources.txt: piece '{piece}' names '{entry}', which is neither "
                             f"a folder nor a .c file of src/")
    return files


def read_vendor(path):
    """{key: [word, ...], "include": [[folder variable, file, ...], ...]} of
    a cmake/<vendor>.cmake file's "#:" lines (cmake/cuda.cmake says what
    each key means); {} for a file without them."""
    facts = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#: "):
                continue
            key, *words = line[3:].split()
            if key == "include":
                facts.setdefault("include", []).append(words)
            else:
                facts.setdefault(key, []).extend(words)
    return facts


def _vendor_includes(facts):
    """The include folders of a vendor (one per `include` line, each holding
    all its files, searched under roots x subdirs), or None if one is
    missing."""
    roots = [os.environ.get(r[1:], "") if r.startswith("$") else r for r in facts.get("roots", [])]
    candidates = [os.path.join(r, sub) for r in roots if r for sub in facts.get("subdirs", [])]
    found = []
    for _var, *files in facts.get("include", []):
        inc = next((c for c in candidates
                    if all(os.path.exists(os.path.join(c, f)) for f in files)), None)
        if inc is None:
            return None
        found.append(inc)
    return list(dict.fromkeys(found))


def vendors(repo):
    """[(pieces, include folders, macro)] of the GPU vendors whose headers
    are found and whose option is not 0 in the environment."""
    out = []
    found = sorted(glob.glob(os.path.join(repo, "cmake", "*.cmake")))
    if not found:
        # Never a silent build without a GPU backend: the vendors' facts
        # are part of the source tree, like src/ and include/.
        raise SystemExit(f"kscope_setup: {os.path.join(repo, 'cmake')} holds no vendor file "
                         f"(cmake/*.cmake): the source tree is incomplete")
    for path in found:
        facts = read_vendor(path)
        if not facts or os.environ.get(facts["option"][0], "1") == "0":
            continue
        includes = _vendor_includes(facts)
        if includes is not None:
            out.append((facts.get("pieces", []), includes, facts["have"][0]))
    return out


def _sources(repo):
    """(C library sources, include folders, macros) of the extension's
    library part: the recorder and the found vendors' pieces."""
    pieces = read_pieces(os.path.join(repo, "src", "sources.txt"))
    files = piece_files(repo, pieces, RECORDER)
    includes, macros = [], []
    for vendor_pieces, vendor_includes, have in vendors(repo):
        gpu = [f for piece in vendor_pieces for f in piece_files(repo, pieces, piece)]
        if gpu:
            files += gpu
            includes += vendor_includes
            macros.append((have, "1"))
    return list(dict.fromkeys(files)), includes, macros  # each file once, in order


# The extension is loaded with dlopen, so its thread-locals use the dynamic
# TLS model; TLS descriptors (gnu2) keep an access a few instructions.
_TLS_FLAGS = ["-mtls-dialect=gnu2"] if platform.machine() in ("x86_64", "AMD64") else []


def _env_paths(var):
    return [p for p in os.environ.get(var, "").split(os.pathsep) if p]


def _ext_config(repo, package_root):
    """(sources, include_dirs, macros, libraries, compile_args) of the extension."""
    sources, vendor_includes, vendor_macros = _sources(repo)
    sources += sorted(glob.glob(os.path.join(package_root, "src", "*.c")))
    include_dirs = [os.path.join(repo, "include"), os.path.join(repo, "src")] + vendor_includes
    macros = [LIMITED_API] + vendor_macros
    libraries = list(LIBRARIES)
    return sources, include_dirs, macros, libraries, COMPILE_ARGS + _TLS_FLAGS


COMPILE_ARGS = ["-std=gnu11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra",
                "-Wno-missing-field-initializers"]


def build_inplace(repo, package_root):
    """Compile kscope/_kscope with the C compiler alone (no setuptools), for
    Pythons that lack it: `python3 python/kscope_setup.py`."""
    sources, include_dirs, macros, libraries, args = _ext_config(repo, package_root)
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    out = os.path.join(package_root, "kscope", "_kscope.abi3.so")
    cmd = cc + ["-shared", "-fPIC", "-o", out] + args
    cmd += shlex.split(os.environ.get("CFLAGS", "")) + shlex.split(os.environ.get("LDFLAGS", ""))
    cmd += ["-I" + sysconfig.get_paths()["include"]] + ["-I" + d for d in include_dirs]
    cmd += ["-D%s=%s" % m for m in macros] + sources
    cmd += ["-L" + d for d in _env_paths("LIBRARY_PATH")]
    cmd += ["-l" + lib for lib in libraries]
    print(" ".join(shlex.quote(c) for c in cmd))
    subprocess.run(cmd, check=True)
    return out


# What a source build needs, and the Debian packages that give it.
BUILD_DEPS_LINE = ("kscope: building from source needs a C compiler and the Python headers "
                   "(Python.h): install them (Debian: apt-get install gcc python3-dev) or install "
                   "the binary wheel")


def check_build_deps():
    """Stop with one line naming the packages to install when the C compiler
    or Python.h is missing, instead of a compiler's error deep in the log."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    header = os.path.join(sysconfig.get_paths()["include"], "Python.h")
    if not cc or not shutil.which(cc[0]) or not os.path.exists(header):
        raise SystemExit(BUILD_DEPS_LINE)


# The HTML report's stylesheet, which the fleet page (kscope.fleet.page)
# shares: copied from src/report/page/ into the package when it is built.
SHARED_PAGE_FILES = ("report.css",)

# What `kscope fleet` needs (pip install 'kscope[fleet]'), and with Spark
# as the engine ('kscope[spark]': pyspark runs on Java 17 or later).
FLEET_DEPS = ["duckdb>=1.1", "pyarrow>=14", "numpy>=1.24", "msgpack>=1.0"]
EXTRAS = {"fleet": FLEET_DEPS, "spark": FLEET_DEPS + ["pyspark>=3.5"]}


def _copy_shared_page(repo, build_lib):
    dst = os.path.join(build_lib, "kscope", "fleet", "page")
    os.makedirs(dst, exist_ok=True)
    for name in SHARED_PAGE_FILES:
        shutil.copyfile(os.path.join(repo, "src", "report", "page", name), os.path.join(dst, name))


def _bundle_command(build_py, repo):
    """build_py that puts the report's shared page files into the fleet
    package, and the CMake-built kscope binary and libkscope.so of
    $KSCOPE_BUNDLE_DIR (tools/wheel.sh) into the package:
    kscope/bin/kscope and kscope/lib/libkscope.so, where the binary looks
    for the library it preloads (../lib)."""

    class BundleBuildPy(build_py):
        def run(self):
            super().run()
            _copy_shared_page(repo, self.build_lib)
            src = os.environ.get("KSCOPE_BUNDLE_DIR")
            if not src:
                return
            pkg = os.path.join(self.build_lib, "kscope")
            for name, sub, mode in (("kscope", "bin", 0o755), ("libkscope.so", "lib", 0o644)):
                os.makedirs(os.path.join(pkg, sub), exist_ok=True)
                dst = os.path.join(pkg, sub, name)
                shutil.copyfile(os.path.realpath(os.path.join(src, name)), dst)
                os.chmod(dst, mode)

    return BundleBuildPy


def setup_kscope(repo, package_root, build_base="build"):
    """Call setuptools.setup for the package under package_root/kscope,
    compiling the library found at `repo` (both relative to setup.py), with
    intermediate files under build_base."""
    from setuptools import Extension, setup
    from setuptools.command.build_ext import build_ext
    from setuptools.command.build_py import build_py

    class CheckedBuildExt(build_ext):
        def run(self):
            check_build_deps()
            super().run()

    sources, include_dirs, macros, libraries, args = _ext_config(repo, package_root)
    ext = Extension(
        "kscope._kscope",
        sources=sources,
        include_dirs=include_dirs,
        define_macros=macros,
        libraries=libraries,
        library_dirs=_env_paths("LIBRARY_PATH"),
        extra_compile_args=args,
        py_limited_api=True,
    )
    setup(
        name="kscope",
        version="0.1.0",
        description="Profiler for GPU programs: Proton- and MAX-compatible Python API",
        python_requires=">=3.9",
        packages=["kscope", "kscope.hooks", "kscope.fleet"],
        package_dir={"": package_root},
        package_data={"kscope.fleet": ["sql/*.sql", "page/*.html", "page/*.js"]},
        extras_require=EXTRAS,
        ext_modules=[ext],
        entry_points={"console_scripts": ["kscope = kscope.cli:main"]},
        cmdclass={"build_ext": CheckedBuildExt, "build_py": _bundle_command(build_py, repo)},
        options={"build": {"build_base": build_base}, "bdist_wheel": {"py_limited_api": ABI_TAG}},
    )


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(here)
    print("built", build_inplace(repo="..", package_root="."))
    sys.exit(0)
