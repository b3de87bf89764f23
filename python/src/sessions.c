/*
 * sessions.c - the module functions of sessions and of scopes opened by
 * hand: start/activate/deactivate/finalize, a session's data, output path
 * and dropped records, enter/exit, Proton's enter_scope/exit_scope,
 * metrics, states, marks, the profiling switch, colours, the table of
 * output formats, and the run's facts the launcher writes.
 */
#include "module.h"

#include "format/format.h"
#include "kscope-internal.h"

#include <stdlib.h>

/* ----------------------------------------------------------------- metrics */

#define VEC_STACK 32

/* Add a list of numbers as an int vector (all ints) or a double one. */
static int add_vector_metric(const char *name, PyObject *list)
{
    Py_ssize_t n = PyList_Size(list);
    int all_int = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GetItem(list, i);
        if (PyFloat_Check(item))
            all_int = 0;
        else if (!PyLong_Check(item)) {
            PyErr_Format(PyExc_TypeError, "metric '%s': vector element %zd is %.100s, not a number",
                         name, i, type_name(item));
            return -1;
        }
    }
    int64_t ibuf[VEC_STACK];
    double dbuf[VEC_STACK];
    void *buf = all_int ? (void *)ibuf : (void *)dbuf;
    if (n > VEC_STACK && !(buf = PyMem_Malloc((size_t)n * 8))) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; i < n && rc == 0; i++) {
        PyObject *item = PyList_GetItem(list, i);
        if (all_int) {
            ((int64_t *)buf)[i] = PyLong_AsLongLong(item);
        } else {
            ((double *)buf)[i] = PyFloat_AsDouble(item);
        }
        if (PyErr_Occurred())
            rc = -1;
    }
    if (rc == 0) {
        int r = all_int ? kscope_metric_int_vec(name, buf, (size_t)n)
                        : kscope_metric_double_vec(name, buf, (size_t)n);
        rc = check_rc(r);
    }
    if (buf != ibuf && buf != dbuf)
        PyMem_Free(buf);
    return rc;
}

static int add_metric(PyObject *key, PyObject *value);

/* A tensor (or numpy value): kept for the graph when captured (graphs.c),
 * else its value now: .item() for one element, .tolist() for several. */
static int add_tensor_metric(PyObject *key, const char *name, PyObject *value)
{
    int capturing = tensor_in_capture(value);
    if (capturing)
        return capturing < 0 ? -1 : capture_tensor(name, value, NULL);
    PyObject *size =
        PyObject_HasAttrString(value, "numel") ? PyObject_CallMethod(value, "numel", NULL) : NULL;
    if (PyErr_Occurred())
        return -1;
    long n = size ? PyLong_AsLong(size) : 1;
    Py_XDECREF(size);
    if (n == -1 && PyErr_Occurred())
        return -1;
    PyObject *v;
    if (n == 1) {
        v = PyObject_CallMethod(value, "item", NULL);
    } else { /* several elements: flat, as a vector */
        PyObject *flat = PyObject_CallMethod(value, "reshape", "(i)", -1);
        v = flat ? PyObject_CallMethod(flat, "tolist", NULL) : NULL;
        Py_XDECREF(flat);
    }
    if (!v)
        return -1;
    int rc = (PyLong_Check(v) || PyFloat_Check(v) || PyList_Check(v))
                 ? add_metric(key, v)
                 : (PyErr_Format(PyExc_TypeError, "metric '%s': the tensor gave %.100s", name,
                                 type_name(v)),
                    -1);
    Py_DECREF(v);
    return rc;
}

/* Add one metric to the innermost scope. Accepts int, bool, float, list or
 * tuple of numbers, str (for (pty) and (exc) metrics), and anything with
 * .item() (tensors, numpy scalars). */
static int add_metric_named(PyObject *key, const char *name, PyObject *value);

static int add_metric(PyObject *key, PyObject *value)
{
    PyObject *keep;
    const char *name = utf8_of(key, "metric name", &keep);
    if (!name)
        return -1;
    int rc = add_metric_named(key, name, value);
    Py_XDECREF(keep);
    return rc;
}

/* add_metric once the name's UTF-8 is known. */
static int add_metric_named(PyObject *key, const char *name, PyObject *value)
{
    int r;
    if (PyLong_Check(value)) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_OverflowError, "metric '%s' does not fit in 64 bits", name);
            return -1;
        }
        r = kscope_metric_int(name, v);
    } else if (PyFloat_Check(value)) {
        r = kscope_metric_double(name, PyFloat_AsDouble(value));
    } else if (PyUnicode_Check(value)) {
        PyObject *keep;
        const char *text = utf8_of(value, "metric value", &keep);
        if (!text)
            return -1;
        r = kscope_metric_str(name, text);
        Py_XDECREF(keep);
    } else if (PyList_Check(value) || PyTuple_Check(value)) {
        PyObject *list = PySequence_List(value);
        if (!list)
            return -1;
        int rc = add_vector_metric(name, list);
        Py_DECREF(list);
        return rc;
    } else if (PyObject_HasAttrString(value, "item")) {
        return add_tensor_metric(key, name, value);
    } else {
        PyErr_Format(PyExc_TypeError,
                     "metric '%s' is %.100s; expected int, float, str, a list of numbers or "
                     "a tensor",
                     name, type_name(value));
        return -1;
    }
    return check_rc(r);
}

int add_metrics_dict(PyObject *metrics)
{
    if (!PyDict_Check(metrics)) {
        PyErr_Format(PyExc_TypeError, "metrics must be a dict, not %.100s", type_name(metrics));
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(metrics, &pos, &k, &v))
        if (add_metric(k, v) < 0)
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- sessions */

static PyObject *fn_start(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"name",   "context",       "data",         "backend",  "mode",
                             "sample", "device_scopes", "trace_buffer", "compress", NULL};
    kscope_session_opts o = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zzzzzzzzp:start", kwlist, &o.name, &o.context,
                                     &o.data, &o.backend, &o.mode, &o.sample, &o.device_scopes,
                                     &o.trace_buffer, &o.compress))
        return NULL;
    return int_or_raise(kscope_start(&o));
}

static int session_arg(PyObject *o, int *out)
{
    if (o == NULL || o == Py_None) {
        *out = KSCOPE_ALL;
        return 0;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "session id out of range");
        return -1;
    }
    *out = (int)v;
    return 0;
}

static PyObject *fn_activate(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *s = NULL;
    int session;
    if (!PyArg_ParseTuple(args, "|O:activate", &s) || session_arg(s, &session) < 0)
        return NULL;
    return none_or_raise(kscope_activate(session));
}

static PyObject *fn_deactivate(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"session", "flushing", NULL};
    PyObject *s = NULL;
    int flushing = 0, session;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op:deactivate", kwlist, &s, &flushing) ||
        session_arg(s, &session) < 0)
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = kscope_deactivate(session, flushing);
    Py_END_ALLOW_THREADS return none_or_raise(rc);
}

static PyObject *fn_finalize(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"session", "output_format", NULL};
    PyObject *s = NULL;
    const char *format = NULL;
    int session;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Oz:finalize", kwlist, &s, &format) ||
        session_arg(s, &session) < 0)
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = kscope_finalize(session, format);
    Py_END_ALLOW_THREADS return none_or_raise(rc);
}

static PyObject *fn_output_path(PyObject *m, PyObject *args)
{
    (void)m;
    int session;
    const char *format = NULL;
    if (!PyArg_ParseTuple(args, "i|z:output_path", &session, &format))
        return NULL;
    char buf[4096];
    int rc = kscope_output_path(session, format, buf, sizeof buf);
    if (check_rc(rc) < 0)
        return NULL;
    return PyUnicode_DecodeFSDefault(buf);
}

/* data(session, format=None, phase=None): the current phase, or `phase`. */
static PyObject *fn_data(PyObject *m, PyObject *args)
{
    (void)m;
    int session;
    const char *format = NULL;
    PyObject *phase_obj = Py_None;
    if (!PyArg_ParseTuple(args, "i|zO:data", &session, &format, &phase_obj))
        return NULL;
    int phase = -1;
    if (phase_obj != Py_None) {
        long v = PyLong_AsLong(phase_obj);
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v < 0 || v > INT32_MAX) {
            PyErr_Format(PyExc_ValueError, "phase %ld is not a phase number (0 and up)", v);
            return NULL;
        }
        phase = (int)v;
    }
    char *out = NULL;
    size_t len = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = phase < 0 ? kscope_data(session, format, &out, &len)
                                          : kscope_data_phase(session, phase, format, &out, &len);
    Py_END_ALLOW_THREADS if (check_rc(rc) < 0) return NULL;
    PyObject *res = PyBytes_FromStringAndSize(out, (Py_ssize_t)len);
    kscope_free(out);
    return res;
}

/* The run's facts of a session, for the launcher: taken before finalize,
 * saved beside the profile after it (src/core/facts.c). */
static PyObject *fn_run_facts(PyObject *m, PyObject *arg)
{
    (void)m;
    int session = PyLong_AsLong(arg);
    if (session == -1 && PyErr_Occurred())
        return NULL;
    char *out = NULL;
    size_t len = 0;
    int rc = kscope__run_facts_text(session, &out, &len);
    if (check_rc(rc) < 0)
        return NULL;
    PyObject *res = PyUnicode_DecodeUTF8(out, (Py_ssize_t)len, "replace");
    free(out);
    return res;
}

static PyObject *fn_save_run_facts(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *path;
    const char *text;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "O&s#:save_run_facts", PyUnicode_FSConverter, &path, &text, &len))
        return NULL;
    int rc = kscope__run_facts_save(PyBytes_AsString(path), text, (size_t)len);
    Py_DECREF(path);
    if (check_rc(rc) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* advance_phase(session) -> the new phase's number. */
static PyObject *fn_advance_phase(PyObject *m, PyObject *arg)
{
    (void)m;
    int session = PyLong_AsLong(arg);
    if (session == -1 && PyErr_Occurred())
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = kscope_advance_phase(session);
    Py_END_ALLOW_THREADS return int_or_raise(rc);
}

/* phase_complete(session, phase) -> bool. */
static PyObject *fn_phase_complete(PyObject *m, PyObject *args)
{
    (void)m;
    int session, phase;
    if (!PyArg_ParseTuple(args, "ii:phase_complete", &session, &phase))
        return NULL;
    int rc = kscope_phase_complete(session, phase);
    if (check_rc(rc) < 0)
        return NULL;
    return PyBool_FromLong(rc);
}

/* clear_phase(session, phase, up_to). */
static PyObject *fn_clear_phase(PyObject *m, PyObject *args)
{
    (void)m;
    int session, phase, up_to;
    if (!PyArg_ParseTuple(args, "iip:clear_phase", &session, &phase, &up_to))
        return NULL;
    return none_or_raise(kscope_clear_phase(session, phase, up_to));
}

static PyObject *fn_dropped(PyObject *m, PyObject *arg)
{
    (void)m;
    int session = PyLong_AsLong(arg);
    if (session == -1 && PyErr_Occurred())
        return NULL;
    return int_or_raise(kscope_dropped(session));
}

/* enter(name, color=None, flags=0) -> True when a scope was pushed. */
static PyObject *fn_enter(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"name", "color", "flags", "metrics", NULL};
    PyObject *name, *color = NULL, *metrics = NULL;
    unsigned int flags = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OIO:enter", kwlist, &name, &color, &flags,
                                     &metrics))
        return NULL;
    PyObject *keep;
    const char *utf8 = utf8_of(name, "scope name", &keep);
    uint32_t c;
    if (!utf8 || color_of(color, &c) < 0) {
        Py_XDECREF(keep);
        return NULL;
    }
    if (metrics == Py_None)
        metrics = NULL;
    int r = scope_push(utf8, c, flags, metrics);
    Py_XDECREF(keep);
    if (r < 0)
        return NULL;
    return PyBool_FromLong(r);
}

/* exit(name=None): leave the innermost scope (checking its name if given). */
static PyObject *fn_exit(PyObject *m, PyObject *args)
{
    (void)m;
    PyObject *name = NULL;
    if (!PyArg_ParseTuple(args, "|O:exit", &name))
        return NULL;
    const char *utf8 = NULL;
    PyObject *keep = NULL;
    if (name && name != Py_None && !(utf8 = utf8_of(name, "scope name", &keep)))
        return NULL;
    int rc = kscope_exit(utf8);
    Py_XDECREF(keep);
    if (check_rc(rc) < 0)
        return NULL;
    return PyBool_FromLong(rc == 0);
}

/* Scopes opened by enter_scope on this thread, innermost last: their ids
 * (0 when nothing was recorded, so exit_scope must not pop). */
#define MANUAL_MAX 1024
static _Thread_local struct {
    int n;
    int64_t id[MANUAL_MAX];
} manual;
static int64_t manual_next_id; /* guarded by the GIL */

/* Keyword arguments of enter_scope/exit_scope: only these names. */
static int manual_kwargs(PyObject *kwargs, PyObject **triton_op, PyObject **metrics)
{
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(kwargs, &pos, &k, &v)) {
        if (PyUnicode_CompareWithASCIIString(k, "triton_op") == 0)
            *triton_op = v;
        else if (metrics && PyUnicode_CompareWithASCIIString(k, "metrics") == 0)
            *metrics = v;
        else {
            PyErr_Format(PyExc_TypeError, "unexpected keyword argument '%U'", k);
            return -1;
        }
    }
    return 0;
}

/* enter_scope(name, *, triton_op=False, metrics=None) -> id (-1: not
 * recorded). triton_op is accepted for Proton compatibility. */
static PyObject *fn_enter_scope(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    PyObject *triton_op = NULL, *metrics = NULL;
    Py_ssize_t nargs = PyTuple_Size(args);
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "enter_scope() takes 1 positional argument (%zd given)",
                     nargs);
        return NULL;
    }
    if (kwargs && manual_kwargs(kwargs, &triton_op, &metrics) < 0)
        return NULL;
    if (manual.n >= MANUAL_MAX) {
        PyErr_Format(PyExc_RecursionError, "more than %d scopes opened by enter_scope", MANUAL_MAX);
        return NULL;
    }
    PyObject *keep;
    const char *name = utf8_of(PyTuple_GetItem(args, 0), "scope name", &keep);
    if (!name)
        return NULL;
    int pushed = scope_push(name, 0, 0, metrics == Py_None ? NULL : metrics);
    Py_XDECREF(keep);
    if (pushed < 0)
        return NULL;
    int64_t id = pushed ? ++manual_next_id : 0;
    manual.id[manual.n++] = id;
    return PyLong_FromLongLong(pushed ? id : -1);
}

/* exit_scope(name=None, *, triton_op=False, metrics=None) -> the id
 * enter_scope gave. A name that is not the innermost scope's raises
 * ValueError naming both and leaves the scope open; metrics land on the
 * scope left (added just before it is left, once its name is checked).
 * The name's UTF-8 copy (3.9) is left in *keep for the caller to release. */
static PyObject *exit_scope_kept(PyObject *args, PyObject *kwargs, PyObject **keep)
{
    PyObject *triton_op = NULL, *metrics = NULL;
    Py_ssize_t nargs = PyTuple_Size(args);
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError,
                     "exit_scope() takes at most 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    if (kwargs && manual_kwargs(kwargs, &triton_op, &metrics) < 0)
        return NULL;
    if (metrics == Py_None)
        metrics = NULL;
    const char *name = NULL;
    PyObject *arg = nargs == 1 ? PyTuple_GetItem(args, 0) : Py_None;
    if (arg != Py_None && !(name = utf8_of(arg, "scope name", keep)))
        return NULL;
    if (manual.n == 0) {
        PyErr_Format(PyExc_ValueError,
                     "exit_scope(%s%s%s) but no scope opened by enter_scope is open on this thread",
                     name ? "'" : "", name ? name : "", name ? "'" : "");
        return NULL;
    }
    int64_t id = manual.id[manual.n - 1];
    if (id && metrics) {
        /* the recorder's innermost (kscope run's libkscope.so's, when this
         * copy hands its calls over), checked before metrics land on it */
        const char *top = kscope_innermost();
        if (name && !top) {
            PyErr_Format(PyExc_ValueError, "exit of scope '%s' but no scope is open on this thread",
                         name);
            return NULL;
        }
        if (name && strcmp(top, name) != 0) {
            PyErr_Format(PyExc_ValueError,
                         "exit of scope '%s' does not match the innermost scope '%s'", name, top);
            return NULL;
        }
        if (add_metrics_dict(metrics) < 0)
            return NULL;
    }
    if (id && check_rc(kscope_exit(name)) < 0)
        return NULL;
    manual.n--;
    return PyLong_FromLongLong(id ? id : -1);
}

static PyObject *fn_exit_scope(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    PyObject *keep = NULL;
    PyObject *res = exit_scope_kept(args, kwargs, &keep);
    Py_XDECREF(keep);
    return res;
}

static PyObject *fn_depth(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return PyLong_FromLong(kscope_depth());
}

static PyObject *fn_add_metrics(PyObject *m, PyObject *metrics)
{
    (void)m;
    if (add_metrics_dict(metrics) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *fn_state_enter(PyObject *m, PyObject *name)
{
    (void)m;
    PyObject *keep;
    const char *utf8 = utf8_of(name, "state name", &keep);
    if (!utf8)
        return NULL;
    int rc = kscope_state_enter(utf8);
    Py_XDECREF(keep);
    if (check_rc(rc) < 0)
        return NULL;
    return PyBool_FromLong(rc == 0);
}

static PyObject *fn_state_exit(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return none_or_raise(kscope_state_exit());
}

static PyObject *fn_mark(PyObject *m, PyObject *name)
{
    (void)m;
    PyObject *keep;
    const char *utf8 = utf8_of(name, "mark name", &keep);
    if (!utf8)
        return NULL;
    int rc = kscope_mark(utf8);
    Py_XDECREF(keep);
    return none_or_raise(rc);
}

static PyObject *fn_step(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return none_or_raise(kscope_step());
}

static PyObject *fn_profiling(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return PyLong_FromLong(kscope_profiling());
}

/* max_spans() / set_max_spans(on): MAX's switch (see module.h). */
static PyObject *fn_max_spans(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return PyBool_FromLong(max_spans_on);
}

/* max_spans_lost(reset=False) -> MAX-style spans no session recorded
 * (module.h); reset sets the count back to 0 (a forked child's own). */
static PyObject *fn_max_spans_lost(PyObject *m, PyObject *args)
{
    (void)m;
    int reset = 0;
    if (!PyArg_ParseTuple(args, "|p:max_spans_lost", &reset))
        return NULL;
    unsigned long n = max_spans_lost;
    if (reset)
        max_spans_lost = 0;
    return PyLong_FromUnsignedLong(n);
}

static PyObject *fn_set_max_spans(PyObject *m, PyObject *on)
{
    (void)m;
    int v = PyObject_IsTrue(on);
    if (v < 0)
        return NULL;
    max_spans_on = v;
    Py_RETURN_NONE;
}

/* set_profiling(level): 0/1/2, a bool, or "off|on|detailed". */
static PyObject *fn_set_profiling(PyObject *m, PyObject *level)
{
    (void)m;
    long v;
    if (PyUnicode_Check(level)) {
        PyObject *keep;
        const char *s = utf8_of(level, "profiling level", &keep);
        if (!s)
            return NULL;
        v = kscope_parse_profiling(s);
        if (v < 0)
            PyErr_Format(PyExc_ValueError, "profiling level '%s' is not one of off, on, detailed",
                         s);
        Py_XDECREF(keep);
        if (v < 0)
            return NULL;
    } else {
        v = PyLong_AsLong(level);
        if (v == -1 && PyErr_Occurred())
            return NULL;
    }
    if (v < 0 || v > 2) {
        PyErr_Format(PyExc_ValueError, "profiling level %ld is not 0 (off), 1 (on) or 2 (detailed)",
                     v);
        return NULL;
    }
    return none_or_raise(kscope_set_profiling((int)v));
}

static PyObject *fn_color(PyObject *m, PyObject *name)
{
    (void)m;
    uint32_t c;
    if (color_of(name, &c) < 0)
        return NULL;
    return PyLong_FromUnsignedLong(c);
}

/* formats() -> [(name, kind, extensions), ...]: the format table of
 * format/format.h, in its order; kind is "tree" or "trace", extensions a
 * tuple of str (with their dots), the one written first. */
static PyObject *fn_formats(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    PyObject *list = PyList_New(0);
    const kscope__format *f;
    for (int id = 1; list && (f = kscope__format_get((kscope__format_id)id)) != NULL; id++) {
        PyObject *exts = PyUnicode_FromString(f->exts ? f->exts : "");
        PyObject *split = exts ? PyUnicode_Split(exts, NULL, -1) : NULL;
        PyObject *tuple = split ? PyList_AsTuple(split) : NULL;
        const char *kind = f->kind == KSCOPE__KIND_TRACE ? "trace" : "tree";
        append_new(&list, tuple ? Py_BuildValue("(ssO)", f->name, kind, tuple) : NULL);
        Py_XDECREF(tuple);
        Py_XDECREF(split);
        Py_XDECREF(exts);
    }
    return list;
}

PyMethodDef session_functions[] = {
    {"start", (PyCFunction)(void (*)(void))fn_start, METH_VARARGS | METH_KEYWORDS,
     "start(name=None, context=None, data=None, backend=None, mode=None, sample=None, "
     "device_scopes=None, trace_buffer=None, compress=False) -> session id"},
    {"activate", fn_activate, METH_VARARGS, "activate(session=None)"},
    {"deactivate", (PyCFunction)(void (*)(void))fn_deactivate, METH_VARARGS | METH_KEYWORDS,
     "deactivate(session=None, flushing=False)"},
    {"finalize", (PyCFunction)(void (*)(void))fn_finalize, METH_VARARGS | METH_KEYWORDS,
     "finalize(session=None, output_format=None)"},
    {"output_path", fn_output_path, METH_VARARGS, "output_path(session, format=None) -> str"},
    {"data", fn_data, METH_VARARGS, "data(session, format=None, phase=None) -> bytes"},
    {"advance_phase", fn_advance_phase, METH_O, "advance_phase(session) -> the new phase"},
    {"phase_complete", fn_phase_complete, METH_VARARGS, "phase_complete(session, phase) -> bool"},
    {"clear_phase", fn_clear_phase, METH_VARARGS, "clear_phase(session, phase, up_to)"},
    {"dropped", fn_dropped, METH_O, "dropped(session) -> GPU records lost"},
    {"run_facts", fn_run_facts, METH_O, "run_facts(session) -> the run's facts as JSON text"},
    {"save_run_facts", fn_save_run_facts, METH_VARARGS,
     "save_run_facts(profile, text): write them to PROFILE.meta.json (tree profiles)"},
    {"enter", (PyCFunction)(void (*)(void))fn_enter, METH_VARARGS | METH_KEYWORDS,
     "enter(name, color=None, flags=0, metrics=None) -> True if recorded"},
    {"exit", fn_exit, METH_VARARGS, "exit(name=None) -> True if a scope was left"},
    {"depth", fn_depth, METH_NOARGS, "depth() -> scopes open on this thread"},
    {"enter_scope", (PyCFunction)(void (*)(void))fn_enter_scope, METH_VARARGS | METH_KEYWORDS,
     "enter_scope(name, *, triton_op=False, metrics=None) -> id (-1: not recorded)"},
    {"exit_scope", (PyCFunction)(void (*)(void))fn_exit_scope, METH_VARARGS | METH_KEYWORDS,
     "exit_scope(name=None, *, triton_op=False, metrics=None) -> id of the scope left"},
    {"add_metrics", fn_add_metrics, METH_O, "add_metrics(dict): on the innermost scope"},
    {"state_enter", fn_state_enter, METH_O, "state_enter(name)"},
    {"state_exit", fn_state_exit, METH_NOARGS, "state_exit()"},
    {"mark", fn_mark, METH_O, "mark(name): an instant event"},
    {"step", fn_step, METH_NOARGS, "step(): the program's next step begins (sampled sessions)"},
    {"profiling", fn_profiling, METH_NOARGS, "profiling() -> 0 off, 1 on, 2 detailed"},
    {"set_profiling", fn_set_profiling, METH_O, "set_profiling(level)"},
    {"max_spans", fn_max_spans, METH_NOARGS, "max_spans() -> MAX's switch (Trace, traced, Tracer)"},
    {"set_max_spans", fn_set_max_spans, METH_O, "set_max_spans(on)"},
    {"max_spans_lost", fn_max_spans_lost, METH_VARARGS,
     "max_spans_lost(reset=False) -> MAX-style spans entered that no session recorded"},
    {"color", fn_color, METH_O, "color(name) -> 0xRRGGBB"},
    {"formats", fn_formats, METH_NOARGS,
     "formats() -> [(name, kind, extensions), ...]: the formats sessions write and kscope reads"},
    {NULL, NULL, 0, NULL},
};
