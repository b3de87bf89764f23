"""kscope_setup.py - how both setup.py files (the repository root's and
python/'s) build the `kscope` package.

The extension `kscope._kscope` is compiled together with libkscope's own C
sources, mirroring CMakeLists.txt's globs (src/core, src/profile,
src/export, src/read, src/diag, and src/gpu when the CUDA headers are
found, else src/gpu-none.c; not src/run, see LIB_DIRS), so one
`pip install` builds everything.
CFLAGS, LDFLAGS, C_INCLUDE_PATH and LIBRARY_PATH from the environment are
honoured (the compiler reads the last two itself); each LIBRARY_PATH entry
is also put in the extension's run-time search path, so libraries unpacked
into a private prefix are found when the module loads.
"""
import glob
import os
import platform
import shlex
import subprocess
import sys
import sysconfig

# Everything of libkscope but src/run (kscope run's launcher): its preload
# constructor and _exit stand-in belong to the preloaded libkscope.so alone.
# Under `kscope run` the extension's calls to the public API resolve to that
# preloaded library, so the process keeps one kscope state.
LIB_DIRS = ("core", "profile", "export", "read", "diag")
CUDA_HINTS = ("CUDA_HOME", "CUDA_PATH")


def _cuda_include():
    """The CUDA include folder holding cupti.h, cuda.h and nvtx3, or None."""
    candidates = [os.path.join(os.environ[v], "include") for v in CUDA_HINTS if os.environ.get(v)]
    candidates += ["/usr/local/cuda/include", "/usr/local/cuda/extras/CUPTI/include"]
    for inc in candidates:
        if all(os.path.exists(os.path.join(inc, f)) for f in ("cupti.h", "cuda.h", "nvtx3/nvToolsExt.h")):
            return inc
    return None


def _sources(repo):
    files = []
    for d in LIB_DIRS:
        files += sorted(glob.glob(os.path.join(repo, "src", d, "*.c")))
    cuda = None if os.environ.get("KSCOPE_CUDA", "1") == "0" else _cuda_include()
    gpu = sorted(glob.glob(os.path.join(repo, "src", "gpu", "*.c")))
    if cuda and gpu:
        files += gpu
    else:
        cuda = None
        files += [os.path.join(repo, "src", "gpu-none.c")]
    return [f for f in files if os.path.exists(f)], cuda


# The extension is loaded with dlopen, so its thread-locals use the dynamic
# TLS model; TLS descriptors (gnu2) keep an access a few instructions.
_TLS_FLAGS = ["-mtls-dialect=gnu2"] if platform.machine() in ("x86_64", "AMD64") else []


def _env_paths(var):
    return [p for p in os.environ.get(var, "").split(os.pathsep) if p]


def _runtime_dirs():
    """LIBRARY_PATH entries holding the libraries we link (never a CUDA
    stubs folder: its libcuda would shadow the driver at run time)."""
    keep = []
    for d in _env_paths("LIBRARY_PATH"):
        if "stubs" in d.split(os.sep):
            continue
        if glob.glob(os.path.join(d, "libyajl.so*")) or glob.glob(os.path.join(d, "libmsgpackc.so*")):
            keep.append(d)
    return keep


def _ext_config(repo, package_root):
    """(sources, include_dirs, macros, libraries, compile_args) of the extension."""
    sources, cuda = _sources(repo)
    sources.append(os.path.join(package_root, "src", "_kscope.c"))
    include_dirs = [os.path.join(repo, "include"), os.path.join(repo, "src")]
    macros = []
    libraries = ["yajl", "msgpackc", "pthread", "dl", "m"]
    if cuda:
        include_dirs.append(cuda)
        macros.append(("KSCOPE_HAVE_CUDA", "1"))
        libraries.append("stdc++")  # __cxa_demangle for kernel names
    return sources, include_dirs, macros, libraries, COMPILE_ARGS + _TLS_FLAGS


COMPILE_ARGS = ["-std=gnu11", "-O2", "-fvisibility=hidden", "-Wall", "-Wextra",
                "-Wno-missing-field-initializers"]


def build_inplace(repo, package_root):
    """Compile kscope/_kscope with the C compiler alone (no setuptools), for
    Pythons that lack it: `python3 kscope_setup.py` from python/."""
    sources, include_dirs, macros, libraries, args = _ext_config(repo, package_root)
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    out = os.path.join(package_root, "kscope", "_kscope" + sysconfig.get_config_var("EXT_SUFFIX"))
    cmd = cc + ["-shared", "-fPIC", "-o", out] + args
    cmd += shlex.split(os.environ.get("CFLAGS", "")) + shlex.split(os.environ.get("LDFLAGS", ""))
    cmd += ["-I" + sysconfig.get_paths()["include"]] + ["-I" + d for d in include_dirs]
    cmd += ["-D%s=%s" % m for m in macros] + sources
    cmd += ["-L" + d for d in _env_paths("LIBRARY_PATH")]
    cmd += ["-Wl,-rpath," + d for d in _runtime_dirs()] + ["-l" + lib for lib in libraries]
    print(" ".join(shlex.quote(c) for c in cmd))
    subprocess.run(cmd, check=True)
    return out


def setup_kscope(repo, package_root, build_base="build"):
    """Call setuptools.setup for the package under package_root/kscope,
    compiling the library found at `repo` (both relative to setup.py), with
    intermediate files under build_base."""
    from setuptools import Extension, setup

    sources, include_dirs, macros, libraries, args = _ext_config(repo, package_root)
    ext = Extension(
        "kscope._kscope",
        sources=sources,
        include_dirs=include_dirs,
        define_macros=macros,
        libraries=libraries,
        library_dirs=_env_paths("LIBRARY_PATH"),
        runtime_library_dirs=_runtime_dirs(),
        extra_compile_args=args,
    )
    setup(
        name="kscope",
        version="0.1.0",
        description="Profiler for GPU programs: Proton- and MAX-compatible Python API",
        python_requires=">=3.11",
        packages=["kscope"],
        package_dir={"": package_root},
        ext_modules=[ext],
        entry_points={"console_scripts": ["kscope-py = kscope.launcher:main"]},
        options={"build": {"build_base": build_base}},
    )


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    os.chdir(here)
    print("built", build_inplace(repo="..", package_root="."))
    sys.exit(0)
