/*
 * hooks.c - what the launch hooks call: launch metadata for the next
 * kernel (keywords or Triton's launch_metadata dict), the Triton hook's
 * common case in C (triton_enter, which never raises into Triton), and
 * Python frames entered as scopes (context="python").
 */
#include "module.h"

#include "kscope-internal.h"

#include <stdatomic.h>

/* --------------------------------------------------------- launch metadata */

#define MAX_CUSTOM 64

/* The state around launch_metadata's evaluation (Proton's
 * COMPUTE_METADATA_SCOPE_NAME): GPU work done there is shown under it. */
#define METADATA_STATE "__proton_launch_metadata"

/* METADATA_STATE's interned name, interned once (0 if that failed). */
static uint32_t metadata_state_id(void)
{
    static _Atomic uint32_t state_id;
    uint32_t id = atomic_load_explicit(&state_id, memory_order_relaxed);
    if (!id && (id = kscope__intern(METADATA_STATE)) != 0)
        atomic_store_explicit(&state_id, id, memory_order_relaxed);
    return id;
}

/* Values of a launch being captured that only its launches compute (CUDA
 * tensors): kept for the graph, each launch adding them to the kernel named
 * `kernel` (the metadata's name; without one the kernel cannot be found,
 * and they are left out). Done before the metadata is handed over, so that
 * the copies capture_tensor launches do not take it. 0, or -1 with an
 * exception. */
static int capture_later(const char *const *names, PyObject *const *values, int n,
                         const char *kernel)
{
    if (n && !kernel) {
        kscope__warn_once("tensor-capture-name",
                          "tensor launch metadata recorded during a %s graph capture is left "
                          "out: it needs a \"name\" to find its kernel",
                          kscope__gpu_device_type());
        return 0;
    }
    /* A value lands where its kernel launches: under the scopes open now,
     * not under the metadata state the hook evaluates it in. */
    uint32_t state = n ? kscope__state_top() : 0;
    int hidden = state && state == metadata_state_id() && kscope_state_exit() == 0;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = capture_tensor(names[i], values[i], kernel);
    if (hidden)
        kscope__state_enter_id(state);
    return rc;
}

/* One number argument of launch_metadata into *out, or into the values
 * kept for a capture (a CUDA tensor while this thread captures). 0, or -1
 * with an exception. */
static int meta_number(PyObject *v, double *out);

static int number_arg(const char *name, PyObject *v, double *out, const char **later_names,
                      PyObject **later, int *nlater)
{
    int r = meta_number(v, out);
    if (r < 0)
        return -1;
    if (r == 2) {
        later_names[*nlater] = name;
        later[(*nlater)++] = v;
    } else if (r == 0) {
        PyErr_Format(PyExc_TypeError, "launch metric '%s' is not a number", name);
        return -1;
    }
    return 0;
}

/* launch_metadata(name=None, flops8=0, flops16=0, flops32=0, flops64=0,
 * bytes=0, custom=None): metrics for the next kernel this thread launches. */
static PyObject *fn_launch_metadata(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"name",    "flops8", "flops16", "flops32",
                             "flops64", "bytes",  "custom",  NULL};
    static const char *const fields[5] = {"flops8", "flops16", "flops32", "flops64", "bytes"};
    kscope_launch_meta meta = {0};
    PyObject *num[5] = {NULL}, *custom = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zOOOOOO:launch_metadata", kwlist, &meta.name,
                                     &num[0], &num[1], &num[2], &num[3], &num[4], &custom))
        return NULL;
    double *dst[5] = {&meta.flops8, &meta.flops16, &meta.flops32, &meta.flops64, &meta.bytes};
    const char *later_names[MAX_CUSTOM + 5];
    PyObject *later[MAX_CUSTOM + 5];
    int nlater = 0;
    for (int i = 0; i < 5; i++)
        if (num[i] && number_arg(fields[i], num[i], dst[i], later_names, later, &nlater) < 0)
            return NULL;
    const char *names[MAX_CUSTOM];
    double values[MAX_CUSTOM];
    PyObject *keeps = NULL; /* the names' UTF-8 copies (3.9) */
    if (custom && custom != Py_None) {
        if (!PyDict_Check(custom)) {
            PyErr_SetString(PyExc_TypeError, "custom must be a dict of name -> number");
            return NULL;
        }
        if (PyDict_Size(custom) > MAX_CUSTOM) {
            PyErr_Format(PyExc_ValueError, "at most %d custom launch metrics", MAX_CUSTOM);
            return NULL;
        }
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(custom, &pos, &k, &v)) {
            const char *kn = utf8_kept(k, "custom metric name", &keeps);
            int had = nlater;
            values[meta.n_custom] = 0;
            if (!kn || number_arg(kn, v, &values[meta.n_custom], later_names, later, &nlater) < 0) {
                Py_XDECREF(keeps);
                return NULL;
            }
            if (nlater == had)
                names[meta.n_custom++] = kn;
        }
        meta.custom_names = names;
        meta.custom_values = values;
    }
    PyObject *res = capture_later(later_names, later, nlater, meta.name) < 0
                        ? NULL
                        : none_or_raise(kscope_launch_metadata(&meta));
    Py_XDECREF(keeps);
    return res;
}

/* A launch_metadata value as a double: bool, int, float or anything with
 * .item() (0-d tensors). Returns 1 with *out set, 0 for a value that is
 * not a number, 2 for a CUDA tensor while a graph is captured (its value
 * is not there yet: see capture_tensor), -1 with an exception. */
static int meta_number(PyObject *v, double *out)
{
    if (PyFloat_Check(v)) {
        *out = PyFloat_AsDouble(v);
        return 1;
    }
    if (PyLong_Check(v)) {
        *out = PyLong_AsDouble(v);
        return *out == -1.0 && PyErr_Occurred() ? -1 : 1;
    }
    if (v == Py_None || PyUnicode_Check(v) || !PyObject_HasAttrString(v, "item"))
        return 0;
    int capturing = tensor_in_capture(v);
    if (capturing)
        return capturing < 0 ? -1 : 2;
    PyObject *item = PyObject_CallMethod(v, "item", NULL);
    if (!item)
        return -1;
    int rc = PyFloat_Check(item) || PyLong_Check(item) ? meta_number(item, out) : 0;
    Py_DECREF(item);
    return rc;
}

/* Launch ids (Proton's hooks.launch.id): one per launch whose metadata was
 * handed on, counting up over the process; each thread keeps its last. */
static _Atomic int64_t launch_ids;
static _Thread_local int64_t last_launch_id;

/* What Triton's launch_metadata function returned, as
 * kscope_launch_metadata: "name", flops8/16/32/64, "bytes", and every other
 * number as a custom metric ("function" and "stream" are Triton's, not
 * metrics; values that are not numbers are left out). The names' UTF-8
 * copies (3.9) go to the list *keeps. 0, or -1 with an exception. */
static int metadata_read(PyObject *meta_dict, PyObject **keeps)
{
    static const char *const flops[4] = {"flops8", "flops16", "flops32", "flops64"};
    if (!PyDict_Check(meta_dict)) {
        PyErr_Format(PyExc_TypeError, "launch metadata must be a dict, not %.100s",
                     type_name(meta_dict));
        return -1;
    }
    kscope_launch_meta meta = {0};
    double *fl[4] = {&meta.flops8, &meta.flops16, &meta.flops32, &meta.flops64};
    const char *names[MAX_CUSTOM];
    double values[MAX_CUSTOM];
    const char *later_names[MAX_CUSTOM]; /* tensors a captured launch computes */
    PyObject *later[MAX_CUSTOM];
    int nlater = 0;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(meta_dict, &pos, &k, &v)) {
        const char *key = PyUnicode_Check(k) ? utf8_kept(k, "metadata key", keeps) : NULL;
        if (!key) {
            PyErr_Clear();
            continue;
        }
        if (strcmp(key, "name") == 0) {
            if (PyUnicode_Check(v) && !(meta.name = utf8_kept(v, "kernel name", keeps)))
                return -1;
            continue;
        }
        if (strcmp(key, "function") == 0 || strcmp(key, "stream") == 0)
            continue;
        double d;
        int r = meta_number(v, &d);
        if (r < 0)
            return -1;
        if (r == 0)
            continue;
        if (r == 2) {
            if (nlater < MAX_CUSTOM) {
                later_names[nlater] = key;
                later[nlater++] = v;
            }
            continue;
        }
        int i = 0;
        while (i < 4 && strcmp(key, flops[i]) != 0)
            i++;
        if (i < 4)
            *fl[i] = d;
        else if (strcmp(key, "bytes") == 0)
            meta.bytes = d;
        else if (meta.n_custom < MAX_CUSTOM) {
            names[meta.n_custom] = key;
            values[meta.n_custom++] = d;
        }
    }
    if (capture_later(later_names, later, nlater, meta.name) < 0)
        return -1;
    meta.custom_names = names;
    meta.custom_values = values;
    int rc = kscope_launch_metadata(&meta);
    if (check_rc(rc) < 0)
        return -1;
    last_launch_id = atomic_fetch_add_explicit(&launch_ids, 1, memory_order_relaxed) + 1;
    return 0;
}

/* metadata_read, its UTF-8 copies released after. */
static int metadata_from_dict(PyObject *meta_dict)
{
    PyObject *keeps = NULL;
    int rc = metadata_read(meta_dict, &keeps);
    Py_XDECREF(keeps);
    return rc;
}

/* The raised exception as one object, cleared (NULL if none). */
static PyObject *take_exception(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (!type)
        return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

/* launch_metadata_dict(meta): metadata_from_dict, raising. */
static PyObject *fn_launch_metadata_dict(PyObject *m, PyObject *meta_dict)
{
    (void)m;
    return metadata_from_dict(meta_dict) < 0 ? NULL : Py_NewRef(Py_None);
}

/* launch_id() -> the id of this thread's last launch with metadata, or None. */
static PyObject *fn_launch_id(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    if (last_launch_id == 0)
        Py_RETURN_NONE;
    return PyLong_FromLongLong(last_launch_id);
}

/* triton_enter(lazy_dict): the Triton launch hook's common case in C (no
 * include/exclude filter, no python context): evaluate the kernel's
 * launch_metadata (lazy_dict.get()) and read its values, inside the
 * metadata state, and hand them to the next launch. It never raises into Triton's launcher: the
 * first exception is kept for take_hook_error(), and the launch goes on without metadata. */
static PyObject *fn_triton_enter(PyObject *m, PyObject *lazy_dict)
{
    module_state *st = PyModule_GetState(m);
    uint32_t id = metadata_state_id();
    int in_state = id && kscope__state_enter_id(id) == 0;
    PyObject *meta = PyObject_CallMethodObjArgs(lazy_dict, st->str_get, NULL);
    /* still in the state: reading a tensor's value (.item()) copies it
     * from the GPU, work of the metadata's, not of the scope's */
    int rc = meta ? metadata_from_dict(meta) : -1;
    if (in_state)
        kscope_state_exit();
    Py_XDECREF(meta);
    if (rc < 0) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            return NULL; /* KeyboardInterrupt, SystemExit: not ours to keep */
        PyObject *exc = take_exception();
        if (!st->hook_error)
            st->hook_error = exc;
        else
            Py_XDECREF(exc);
    }
    Py_RETURN_NONE;
}

/* take_hook_error(): the exception triton_enter kept (None if none), and
 * forget it. */
static PyObject *fn_take_hook_error(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    module_state *st = PyModule_GetState(m);
    PyObject *exc = st->hook_error;
    st->hook_error = NULL;
    return exc ? exc : Py_NewRef(Py_None);
}

/* ------------------------------------------------------ Python frames */

#define MAX_FRAMES 256

/* A frame's attribute (f_code, f_back, co_name, ...), looked up by the
 * interned name st->attr[i]; NULL with an exception. The limited API
 * reads frames and code objects as Python code does. */
static PyObject *attr(module_state *st, PyObject *o, int i)
{
    return PyObject_GetAttr(o, st->frame_attr[i]);
}

/* The scope name of `code` at `line`: "file:line@function", or None for a
 * file under the skipped prefixes. Cached per (code, line); a borrowed
 * reference (the cache keeps it, and its UTF-8), NULL with an exception. */
static int skipped_file(module_state *st, PyObject *filename);

static PyObject *frame_name(module_state *st, PyObject *code, PyObject *line)
{
    PyObject *key = PyTuple_Pack(2, code, line);
    if (!key)
        return NULL;
    PyObject *name = PyDict_GetItemWithError(st->frame_names, key);
    if (name || PyErr_Occurred()) {
        Py_DECREF(key);
        return name;
    }
    PyObject *file = attr(st, code, FRAME_CO_FILENAME);
    PyObject *func = file ? attr(st, code, FRAME_CO_NAME) : NULL;
    int skip = file && PyUnicode_Check(file) ? skipped_file(st, file) : -1;
    if (skip == 0 && func)
        name = PyUnicode_FromFormat("%S:%S@%S", file, line, func);
    else if (skip == 1)
        name = Py_NewRef(Py_None);
    else if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "a frame's code has no file name");
    if (name && PyDict_SetItem(st->frame_names, key, name) < 0)
        Py_CLEAR(name);
    Py_XDECREF(file);
    Py_XDECREF(func);
    Py_DECREF(key);
    Py_XDECREF(name);
    return name; /* the dict holds it */
}

static int skipped_file(module_state *st, PyObject *filename)
{
    Py_ssize_t n = st->frame_skip ? PyTuple_Size(st->frame_skip) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t r = PyUnicode_Tailmatch(filename, PyTuple_GetItem(st->frame_skip, i), 0,
                                           PY_SSIZE_T_MAX, -1);
        if (r != 0)
            return (int)r; /* 1 match, -1 error */
    }
    return 0;
}

/* The names of the calling Python stack's frames (borrowed), innermost
 * first, leaving out files under the skipped prefixes; at most MAX_FRAMES.
 * The count, or -1 with an exception. */
static int frame_names(module_state *st, PyObject **names)
{
    int n = 0;
    PyObject *f = Py_XNewRef((PyObject *)PyEval_GetFrame());
    while (f && n < MAX_FRAMES) {
        PyObject *code = attr(st, f, FRAME_F_CODE);
        PyObject *line = code ? attr(st, f, FRAME_F_LINENO) : NULL;
        PyObject *name = line ? frame_name(st, code, line) : NULL;
        PyObject *back = name ? attr(st, f, FRAME_F_BACK) : NULL;
        Py_XDECREF(code);
        Py_XDECREF(line);
        Py_DECREF(f);
        if (!back)
            return -1;
        if (name != Py_None)
            names[n++] = name;
        f = back == Py_None ? NULL : back;
        if (!f)
            Py_DECREF(back);
    }
    Py_XDECREF(f);
    return n;
}

/* enter_frames() -> n: enter one scope per frame of the calling Python
 * stack, outermost first, leaving out files under the skipped prefixes;
 * exit_frames(n) leaves them. What context="python" records at launches. */
static PyObject *fn_enter_frames(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    module_state *st = PyModule_GetState(m);
    PyObject *names[MAX_FRAMES];
    int n = frame_names(st, names);
    if (n < 0)
        return NULL;
    int entered = 0;
    for (int i = n - 1; i >= 0; i--) {
        PyObject *keep;
        const char *utf8 = utf8_of(names[i], "frame name", &keep);
        int rc = utf8 ? kscope_enter(utf8) : KSCOPE_EINVAL;
        Py_XDECREF(keep);
        if (rc < 0) {
            while (entered-- > 0)
                kscope_exit(NULL);
            if (utf8)
                check_rc(rc);
            return NULL;
        }
        if (rc > 0)
            break; /* not recording */
        entered++;
    }
    return PyLong_FromLong(entered);
}

static PyObject *fn_exit_frames(PyObject *m, PyObject *arg)
{
    (void)m;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    for (long i = 0; i < n; i++) {
        int rc = kscope_exit(NULL);
        if (check_rc(rc) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

PyMethodDef hook_functions[] = {
    {"launch_metadata", (PyCFunction)(void (*)(void))fn_launch_metadata,
     METH_VARARGS | METH_KEYWORDS, "launch_metadata(name=None, flops8=0, ..., custom=None)"},
    {"launch_metadata_dict", fn_launch_metadata_dict, METH_O,
     "launch_metadata_dict(meta): a Triton launch_metadata dict for the next kernel"},
    {"triton_enter", fn_triton_enter, METH_O,
     "triton_enter(lazy_dict): the Triton launch hook without filters (never raises)"},
    {"launch_id", fn_launch_id, METH_NOARGS,
     "launch_id() -> this thread's last launch id (hooks.launch.id), or None"},
    {"take_hook_error", fn_take_hook_error, METH_NOARGS,
     "take_hook_error(): the first exception triton_enter kept, or None; forgets it"},
    {"enter_frames", fn_enter_frames, METH_NOARGS, "enter_frames() -> scopes entered"},
    {"exit_frames", fn_exit_frames, METH_O, "exit_frames(n)"},
    {NULL, NULL, 0, NULL},
};
