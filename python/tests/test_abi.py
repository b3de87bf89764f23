"""The extension is built for CPython's stable ABI of 3.9: one build
(`_kscope.abi3.so`, the cp39-abi3 wheel) for every CPython from 3.9, using
the later stable-ABI additions only where the running Python has them."""
import os
import shutil
import subprocess
import sys

import pytest

import kscope
from kscope import _kscope

HAVE_VECTORCALL = 1 << 11  # Py_TPFLAGS_HAVE_VECTORCALL


def test_extension_is_the_stable_abi_build():
    assert os.path.basename(_kscope.__file__) == "_kscope.abi3.so"


def test_extension_imports_no_private_cpython_symbol():
    """What the limited API compiles to: no _PyXxx symbol but those the
    stable ABI itself lists (the size_t argument parsers, _Py_Dealloc,
    the singletons). tools/wheel.sh checks every symbol with abi3audit."""
    if not shutil.which("nm"):
        pytest.skip("needs nm")
    out = subprocess.run(["nm", "-D", "--undefined-only", _kscope.__file__],
                         capture_output=True, text=True, check=True).stdout
    stable = {"_Py_Dealloc", "_Py_NoneStruct", "_Py_TrueStruct", "_Py_FalseStruct",
              "_Py_NotImplementedStruct", "_Py_EllipsisObject", "_Py_IncRef", "_Py_DecRef",
              "_PyArg_ParseTuple_SizeT", "_PyArg_ParseTupleAndKeywords_SizeT",
              "_PyArg_VaParse_SizeT", "_PyArg_VaParseTupleAndKeywords_SizeT",
              "_Py_BuildValue_SizeT", "_Py_VaBuildValue_SizeT", "_PyObject_CallFunction_SizeT",
              "_PyObject_CallMethod_SizeT", "_PyObject_New", "_PyObject_NewVar",
              "_PyObject_GC_New", "_PyObject_GC_NewVar"}
    private = [s.split()[-1] for s in out.splitlines()
               if s.split()[-1].startswith("_Py") and s.split()[-1] not in stable]
    assert private == []


@pytest.mark.parametrize("tp", [kscope.scope, kscope.cpu_timed_scope, kscope.Trace])
def test_scope_types_take_vectorcall_where_the_stable_abi_has_it(tp):
    """3.12's stable ABI has vectorcall: there `with` calls __enter__ and
    __exit__ without an arguments tuple; before, the types go by tp_call."""
    assert bool(tp.__flags__ & HAVE_VECTORCALL) == (sys.version_info >= (3, 12))


def test_scope_calls_dispatch_by_argument_count(session):
    """The one call both protocols share: () enters, (t, v, tb) exits, a
    function is decorated, anything else is refused."""
    s = kscope.scope("dispatched")
    assert s() is s
    assert _kscope.depth() == 1
    assert s(None, None, None) is False
    assert _kscope.depth() == 0
    assert callable(s(lambda: 1))
    with pytest.raises(TypeError, match="2 arguments"):
        s(1, 2)
    with pytest.raises(TypeError, match="keyword"):
        s(x=1)
    with pytest.raises(TypeError, match="__exit__"):
        type(s).__exit__(s)
    with pytest.raises(TypeError, match="cannot create"):
        type(type(s).__dict__["__enter__"])()
