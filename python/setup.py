"""Build the kscope Python package from python/ (pip install ./python)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kscope_setup import setup_kscope  # noqa: E402

setup_kscope(repo="..", package_root=".")
