"""Build the kscope Python package from the repository root (pip install .)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "python"))
from kscope_setup import setup_kscope  # noqa: E402

# build-python/: the CMake build keeps build/ for itself.
setup_kscope(repo=".", package_root="python", build_base="build-python")
