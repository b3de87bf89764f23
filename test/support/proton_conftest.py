"""proton_conftest.py - the conftest.py beside Proton's own tests (copied
there by proton_tests in test/python-lib.sh): Triton's `device` and
`fresh_knobs` fixtures, and a placeholder torch for
triton._internal_testing's import where torch is not installed (the
host-only run of test/peer-proton-api.sh; the GPU tests have torch)."""
import importlib
import sys
import types

import pytest

try:
    import torch  # noqa: F401
except ImportError:
    class _NoTorch(types.ModuleType):
        def __getattr__(self, name):
            raise RuntimeError(f"torch.{name}: torch is not installed in this host-only run")

    placeholder = _NoTorch("torch")
    placeholder.Tensor = type("Tensor", (), {})  # used in annotations at import
    sys.modules["torch"] = placeholder
    importlib.import_module("triton._internal_testing")
    del sys.modules["torch"]


@pytest.fixture
def device():
    return "cuda"


@pytest.fixture
def fresh_knobs():
    from triton._internal_testing import _fresh_knobs_impl

    fresh_function, reset_function = _fresh_knobs_impl()
    try:
        yield fresh_function()
    finally:
        reset_function()
