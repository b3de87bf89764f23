"""NVTX ranges as scopes of a session started in-process (no kscope run),
as Proton does for torch.cuda.nvtx: start() points NVTX_INJECTION64_PATH
at the extension already loaded, so an NVTX instance that initializes
afterwards reports to kscope; Triton's knobs.proton.enable_nvtx
(TRITON_ENABLE_NVTX) off leaves ranges alone; another tool's injection
gets a warning and keeps its ranges. Each case runs in a fresh process:
NVTX initializes once per process."""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
NVTX_HEADER = os.path.join(CUDA, "include", "nvtx3", "nvToolsExt.h")

LIB = r"""
#include <nvtx3/nvToolsExt.h>
void push(const char *name) { nvtxRangePushA(name); }
void pop(void) { nvtxRangePop(); }
"""

SCRIPT = r"""
import ctypes, sys
import kscope
s = kscope.start(sys.argv[2])
lib = ctypes.CDLL(sys.argv[1])  # a library using NVTX, first called after start()
with kscope.scope("program"):
    lib.push(b"outer")
    lib.push(b"inner")
    lib.pop()
    lib.pop()
kscope.finalize()
print("done")
"""


@pytest.fixture(scope="module")
def nvtx_lib(tmp_path_factory):
    if not os.path.exists(NVTX_HEADER) or not shutil.which("cc"):
        pytest.skip(f"needs a C compiler and the nvtx3 headers ({NVTX_HEADER})")
    d = tmp_path_factory.mktemp("nvtx")
    (d / "lib.c").write_text(LIB)
    so = d / "libnvtxuser.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(d / "lib.c"),
                    "-I" + os.path.join(CUDA, "include"), "-ldl"], check=True)
    return str(so)


def run(tmp_path, lib, **env):
    e = {k: v for k, v in os.environ.items()
         if k not in ("NVTX_INJECTION64_PATH", "TRITON_ENABLE_NVTX", "KSCOPE_RUN")}
    e.update(env)
    (tmp_path / "script.py").write_text(textwrap.dedent(SCRIPT))
    r = subprocess.run([sys.executable, str(tmp_path / "script.py"), lib, str(tmp_path / "p")],
                       capture_output=True, text=True, env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "done\n"  # nothing of kscope's on the program's stdout
    tree = json.loads((tmp_path / "p.hatchet").read_text())[0]
    return tree, r.stderr


def names_under(tree, name):
    """The chain of single children below the node called `name`."""
    stack, node = [tree], None
    while stack:
        n = stack.pop()
        if n["frame"]["name"] == name:
            node = n
            break
        stack.extend(n.get("children", []))
    chain = []
    while node is not None and node.get("children"):
        node = node["children"][0]
        chain.append(node["frame"]["name"])
    return chain


def test_ranges_become_scopes(tmp_path, nvtx_lib):
    tree, _ = run(tmp_path, nvtx_lib)
    assert names_under(tree, "program") == ["outer", "inner"]


def test_enable_nvtx_off(tmp_path, nvtx_lib):
    tree, _ = run(tmp_path, nvtx_lib, TRITON_ENABLE_NVTX="0")
    assert names_under(tree, "program") == []


def test_another_tools_injection_is_kept(tmp_path, nvtx_lib):
    other = tmp_path / "other-tool.so"
    tree, err = run(tmp_path, nvtx_lib, NVTX_INJECTION64_PATH=str(other))
    assert "NVTX_INJECTION64_PATH names another tool" in err
    assert names_under(tree, "program") == []
