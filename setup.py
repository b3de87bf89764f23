"""Build the kscope Python package from the repository root (pip install .)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from kscope_setup import setup_kscope  # noqa: E402

# build-python/: the CMake build keeps build/ for itself. A build with other
# flags (tools/test.sh's sanitized one) names its own folder, so that no
# object file of the other is reused.
setup_kscope(repo=".", package_root="python",
             build_base=os.environ.get("KSCOPE_PY_BUILD_BASE") or "build-python")
