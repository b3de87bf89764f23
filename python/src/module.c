/*
 * module.c - the kscope._kscope module itself: its state, its setup and
 * tear-down (multi-phase init, heap types), what the running Python's
 * stable ABI adds to 3.9's limited API (see module.h), the mapping of
 * kscope error codes to Python exceptions, and the few functions that
 * belong to no API area (version, clock, last error, _configure).
 *
 * The extension exposes libkscope's C API to Python with as little in
 * between as possible: `scope`, `cpu_timed_scope` and `Trace` are heap
 * types whose __enter__/__exit__ call kscope_enter_ex/kscope_exit directly
 * with the UTF-8 buffer cached inside the str object (so the core's
 * per-thread pointer cache hits), and `ScopedFunction` wraps a callable
 * with the same calls (scopes.c). Everything else
 * (sessions, metrics, states, marks, launch metadata, the tracer, the
 * profiling switch, Python frames as scopes, diagnostics) is a thin
 * function. C errors become Python exceptions carrying kscope_last_error(),
 * all through check_rc (a code of 0 or more is never raised):
 * a mismatched exit is a ValueError naming both scopes, a metric type
 * mismatch a MetricTypeError (a TypeError and a RuntimeError), and so on.
 * See module.h for the files' areas.
 */
#include "module.h"

#include "kscope-internal.h"

#include <dlfcn.h>
#include <stdio.h>

/* ------------------------------------------------------------------ errors */

/* kscope.SessionError (ValueError, RuntimeError) and kscope.MetricTypeError
 * (TypeError, RuntimeError): kscope's own classes for a session that does
 * not exist and a metric given another type than before, with Proton's
 * class (RuntimeError, from its C++ runtime_error) as a second base, so
 * that a handler written for either library catches them. Process-wide,
 * like the sessions they report on; made once, by the first module exec. */
static PyObject *session_error, *metric_type_error;

static int errors_exec(PyObject *m)
{
    if (!session_error) {
        PyObject *bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_RuntimeError);
        session_error =
            bases ? PyErr_NewExceptionWithDoc(
                        "kscope.SessionError",
                        "No session with this id (never started, or finalized).", bases, NULL)
                  : NULL;
        Py_XDECREF(bases);
        bases = PyTuple_Pack(2, PyExc_TypeError, PyExc_RuntimeError);
        metric_type_error =
            bases
                ? PyErr_NewExceptionWithDoc("kscope.MetricTypeError",
                                            "A metric given another type than before in a session.",
                                            bases, NULL)
                : NULL;
        Py_XDECREF(bases);
        if (!session_error || !metric_type_error)
            return -1;
    }
    if (add_object_ref(m, "SessionError", session_error) < 0 ||
        add_object_ref(m, "MetricTypeError", metric_type_error) < 0)
        return -1;
    return 0;
}

/* The Python exception class for a kscope error code. */
static PyObject *exception_for(int rc)
{
    switch (rc) {
    case KSCOPE_ENOMEM:
        return PyExc_MemoryError;
    case KSCOPE_ENOSESSION:
        return session_error;
    case KSCOPE_EMETRICTYPE:
        return metric_type_error;
    case KSCOPE_EDEPTH:
        return PyExc_RecursionError;
    case KSCOPE_EIO:
    case KSCOPE_ENOSPC:
    case KSCOPE_EACCES:
        return PyExc_OSError;
    case KSCOPE_ENOTSUP:
        return PyExc_NotImplementedError;
    case KSCOPE_ENOPROC:
        return PyExc_ProcessLookupError;
    case KSCOPE_ETOOMANY:
    case KSCOPE_EBACKEND:
    case KSCOPE_ENOGPU:
    case KSCOPE_ENOGPUTOOL:
    case KSCOPE_EBUSY:
    case KSCOPE_ESTATE:
        return PyExc_RuntimeError;
    default: /* EINVAL, EFORMAT, EDATA, EMISMATCH, EEMPTY, ... */
        return PyExc_ValueError;
    }
}

int check_rc(int64_t rc)
{
    if (rc >= 0)
        return 0;
    int code = rc < INT32_MIN ? KSCOPE_EINVAL : (int)rc;
    const char *msg = kscope_last_error();
    if (!msg || !*msg)
        msg = kscope_strerror(code);
    PyErr_Format(exception_for(code), "%s", msg);
    return -1;
}

/* --------------------------------------------------------------- functions */

static PyObject *fn_now_ns(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return PyLong_FromUnsignedLongLong(kscope_now_ns());
}

static PyObject *fn_version(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return PyUnicode_FromString(kscope_version());
}

static PyObject *fn_last_error(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return PyUnicode_FromString(kscope_last_error());
}

static PyObject *fn_strerror(PyObject *m, PyObject *arg)
{
    (void)m;
    int rc = PyLong_AsLong(arg);
    if (rc == -1 && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(ss)", kscope_err_name(rc), kscope_strerror(rc));
}

/* vendor_ranges(on) -> None, or the one-line reason a range source's
 * ranges (the registry's: NVTX's) cannot reach kscope (another tool's
 * injection). Every source is switched; the first reason is returned. */
static PyObject *fn_vendor_ranges(PyObject *m, PyObject *arg)
{
    (void)m;
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
    PyObject *why = NULL;
    const kscope__range_source *src;
    for (size_t i = 0; (src = kscope__range_source_at(i)); i++)
        if (src->enable(on) != 0 && !why && !(why = PyUnicode_FromString(kscope_last_error())))
            return NULL;
    if (why)
        return why;
    Py_RETURN_NONE;
}

/* range_sinks() -> [name, ...]: the registry's range sinks, the vendors'
 * timeline APIs `detailed` scopes are emitted to. */
static PyObject *fn_range_sinks(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    PyObject *list = PyList_New(0);
    const kscope__range_sink *k;
    for (size_t i = 0; list && (k = kscope__range_sink_at(i)); i++)
        append_new(&list, PyUnicode_FromString(k->name));
    return list;
}

/* backends() -> [(name, label, device_type, built), ...]: the registry's
 * GPU backends, in its order (the first built one is the default). */
static PyObject *fn_backends(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    PyObject *list = PyList_New(0);
    const kscope__backend *b;
    for (size_t i = 0; list && (b = kscope__backend_at(i)); i++)
        append_new(&list, Py_BuildValue("(sssO)", b->name, b->label ? b->label : b->name,
                                        b->device_type ? b->device_type : "GPU",
                                        b->start ? Py_True : Py_False));
    return list;
}

/* _configure(frame_skip): what the package sets at import. */
static PyObject *fn_configure(PyObject *m, PyObject *args)
{
    module_state *st = PyModule_GetState(m);
    PyObject *skip;
    if (!PyArg_ParseTuple(args, "O!:_configure", &PyTuple_Type, &skip))
        return NULL;
    Py_XDECREF(st->frame_skip);
    st->frame_skip = Py_NewRef(skip);
    PyDict_Clear(st->frame_names); /* it holds which files were skipped */
    Py_RETURN_NONE;
}

static PyMethodDef module_functions[] = {
    {"now_ns", fn_now_ns, METH_NOARGS, "now_ns() -> kscope's clock"},
    {"version", fn_version, METH_NOARGS, "version() -> library version"},
    {"last_error", fn_last_error, METH_NOARGS, "last_error() -> this thread's last message"},
    {"strerror", fn_strerror, METH_O, "strerror(code) -> (name, message)"},
    {"vendor_ranges", fn_vendor_ranges, METH_O,
     "vendor_ranges(on) -> None, or why the range sources' ranges cannot reach kscope"},
    {"range_sinks", fn_range_sinks, METH_NOARGS,
     "range_sinks() -> [name, ...] of the APIs detailed scopes are emitted to"},
    {"backends", fn_backends, METH_NOARGS,
     "backends() -> [(name, label, device_type, built), ...] of the GPU backend registry"},
    {"_configure", fn_configure, METH_VARARGS, "_configure(frame_skip)"},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------ module setup */

PyTypeObject *add_type(PyObject *m, PyType_Spec *spec, const char *name)
{
    PyTypeObject *tp = (PyTypeObject *)PyType_FromSpec(spec);
    if (!tp)
        return NULL;
    if (add_object_ref(m, name, (PyObject *)tp) < 0) {
        Py_DECREF(tp);
        return NULL;
    }
    return tp;
}

/* ------------------------------------------------------- the limited API */

const char *type_name(PyObject *o)
{
    static _Thread_local char buf[128];
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb); /* called while building an exception */
    PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
    PyObject *bytes = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8String(name) : NULL;
    const char *s = bytes ? PyBytes_AsString(bytes) : NULL;
    snprintf(buf, sizeof buf, "%s", s ? s : "?");
    Py_XDECREF(bytes);
    Py_XDECREF(name);
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
    return buf;
}

str_utf8_fn str_utf8;
int has_vectorcall;

/* What the running Python's stable ABI adds to 3.9's: PyUnicode_AsUTF8AndSize
 * from 3.10 (found in the interpreter's own symbols, where the extension's
 * other calls resolve), vectorcall from 3.12. */
static void find_later_abi(void)
{
    PyObject *v = PySys_GetObject("hexversion"); /* borrowed */
    long hex = v ? PyLong_AsLong(v) : 0;
    if (hex == -1)
        PyErr_Clear();
    if (hex >= 0x030A0000)
        str_utf8 = (str_utf8_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "PyUnicode_AsUTF8AndSize");
    has_vectorcall = hex >= 0x030C0000;
}

static int module_exec(PyObject *m)
{
    module_state *st = PyModule_GetState(m);
    find_later_abi();
    if (errors_exec(m) < 0 || scopes_exec(m, st) < 0 || tracer_exec(m, st) < 0 ||
        async_exec(m, st) < 0 || diag_exec(m, st) < 0)
        return -1;
    if (PyModule_AddFunctions(m, session_functions) < 0 ||
        PyModule_AddFunctions(m, hook_functions) < 0 ||
        PyModule_AddFunctions(m, diag_functions) < 0 ||
        PyModule_AddFunctions(m, graph_functions) < 0)
        return -1;
    if (!(st->frame_names = PyDict_New()) || !(st->str_get = PyUnicode_InternFromString("get")))
        return -1;
    static const char *const frame_attrs[FRAME_ATTRS] = {"f_code", "f_lineno", "f_back",
                                                         "co_filename", "co_name"};
    for (int i = 0; i < FRAME_ATTRS; i++)
        if (!(st->frame_attr[i] = PyUnicode_InternFromString(frame_attrs[i])))
            return -1;
    if (PyModule_AddIntConstant(m, "CPU_TIMED", KSCOPE_CPU_TIMED) < 0 ||
        PyModule_AddIntConstant(m, "ALL", KSCOPE_ALL) < 0 ||
        PyModule_AddIntConstant(m, "MAX_SESSIONS", KSCOPE_MAX_SESSIONS) < 0 ||
        PyModule_AddIntConstant(m, "TRACER_MAX", KSCOPE_TRACER_MAX) < 0 ||
        PyModule_AddStringConstant(m, "__version__", KSCOPE_VERSION_STRING) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *m, visitproc visit, void *arg)
{
    module_state *st = PyModule_GetState(m);
    int rc = scope_cache_traverse(st, visit, arg);
    if (rc)
        return rc;
#define VISIT_REF(field) Py_VISIT(st->field);
    MODULE_STATE_REFS(VISIT_REF)
#undef VISIT_REF
    for (int i = 0; i < FRAME_ATTRS; i++)
        Py_VISIT(st->frame_attr[i]);
    return 0;
}

static int module_clear(PyObject *m)
{
    module_state *st = PyModule_GetState(m);
    scope_cache_clear(st); /* before the types it compares with */
#define CLEAR_REF(field) Py_CLEAR(st->field);
    MODULE_STATE_REFS(CLEAR_REF)
#undef CLEAR_REF
    for (int i = 0; i < FRAME_ATTRS; i++)
        Py_CLEAR(st->frame_attr[i]);
    return 0;
}

static void module_free(void *m)
{
    module_clear((PyObject *)m);
    scope_freelist_clear();
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef kscope_module = {
    PyModuleDef_HEAD_INIT, "kscope._kscope", "libkscope's C API for the kscope package.",
    sizeof(module_state),  module_functions, module_slots,
    module_traverse,       module_clear,     module_free,
};

PyMODINIT_FUNC PyInit__kscope(void)
{
    return PyModuleDef_Init(&kscope_module);
}
