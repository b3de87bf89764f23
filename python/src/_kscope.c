/*
 * _kscope.c - the CPython extension under the `kscope` package.
 *
 * It exposes libkscope's C API to Python with as little in between as
 * possible: `scope`, `cpu_timed_scope` and `Trace` are heap types whose
 * __enter__/__exit__ call kscope_enter_ex/kscope_exit directly with the
 * UTF-8 buffer cached inside the str object (so the core's per-thread
 * pointer cache hits), and `ScopedFunction` wraps a callable with the same
 * calls through vectorcall. Everything else (sessions, metrics, states,
 * marks, launch metadata, the tracer, the profiling switch, Python frames
 * as scopes) is a thin function. C errors become Python exceptions carrying
 * kscope_last_error(): a mismatched exit is a ValueError naming both
 * scopes, a metric type mismatch a TypeError, and so on.
 *
 * The module keeps its types in module state (multi-phase init), so it
 * holds no process-wide Python objects of its own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <structmember.h>

#include "kscope.h"

#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------ module state */

typedef struct {
    PyTypeObject *scope_type;     /* kscope.scope */
    PyTypeObject *cpu_timed_type; /* kscope.cpu_timed_scope */
    PyTypeObject *trace_type;     /* kscope.Trace (MAX) */
    PyTypeObject *scoped_fn_type; /* what the decorators return */
    PyTypeObject *tracer_type;    /* kscope.Tracer (MAX) */
    PyTypeObject *method_type;    /* __enter__/__exit__ of the scope types */
    PyTypeObject *cpu_procs_type; /* resource diagnostics */
    PyTypeObject *recorder_type;
    PyObject *decorate;    /* kscope._wrap.decorate(scope, func) */
    PyObject *frame_names; /* (code, line) -> "file:line@function" */
    PyObject *frame_skip;  /* tuple of filename prefixes left out */
    PyObject *hook_error;  /* the first exception triton_enter kept */
    PyObject *str_get;     /* "get", interned */
} module_state;

static module_state *state_of_type(PyTypeObject *tp)
{
    return (module_state *)PyType_GetModuleState(tp);
}

/* ------------------------------------------------------------------ errors */

/* The Python exception class for a kscope error code. */
static PyObject *exception_for(int rc)
{
    switch (rc) {
    case KSCOPE_ENOMEM:
        return PyExc_MemoryError;
    case KSCOPE_EMETRICTYPE:
        return PyExc_TypeError;
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
    case KSCOPE_ENOCUPTI:
    case KSCOPE_EBUSY:
    case KSCOPE_ESTATE:
        return PyExc_RuntimeError;
    default: /* EINVAL, ENOSESSION, EFORMAT, EDATA, EMISMATCH, EEMPTY, ... */
        return PyExc_ValueError;
    }
}

/* Raise the exception for rc with the thread's kscope message; NULL. */
static PyObject *raise_rc(int rc)
{
    const char *msg = kscope_last_error();
    if (!msg || !*msg)
        msg = kscope_strerror(rc);
    PyErr_Format(exception_for(rc), "%s", msg);
    return NULL;
}

/* Return None for rc >= 0 (1 means "nothing recorded"), raise otherwise. */
static PyObject *none_or_raise(int rc)
{
    if (rc < 0)
        return raise_rc(rc);
    Py_RETURN_NONE;
}

/* ----------------------------------------------------------------- helpers */

/* UTF-8 of a str argument, cached inside the str; NULL with TypeError. */
static const char *utf8_of(PyObject *o, const char *what)
{
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, Py_TYPE(o)->tp_name);
        return NULL;
    }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (s && (Py_ssize_t)strlen(s) != n) {
        PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
        return NULL;
    }
    return s;
}

/* A colour given as a name ("red") or as 0xRRGGBB. */
static int color_of(PyObject *o, uint32_t *out)
{
    if (o == NULL || o == Py_None) {
        *out = 0;
        return 0;
    }
    if (PyLong_Check(o)) {
        unsigned long v = PyLong_AsUnsignedLong(o);
        if (PyErr_Occurred() || v > 0xFFFFFFul) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "colour must be 0xRRGGBB (0 to 0xFFFFFF)");
            return -1;
        }
        *out = (uint32_t)v;
        return 0;
    }
    const char *name = utf8_of(o, "colour");
    if (!name)
        return -1;
    *out = kscope_color(name);
    return 0;
}

/* ----------------------------------------------------------------- metrics */

#define VEC_STACK 32

/* Add a list/tuple of numbers as an int vector (all ints) or a double one. */
static int add_vector_metric(const char *name, PyObject *seq)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    int all_int = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (PyFloat_Check(items[i]))
            all_int = 0;
        else if (!PyLong_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "metric '%s': vector element %zd is %.100s, not a number",
                         name, i, Py_TYPE(items[i])->tp_name);
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
        if (all_int) {
            ((int64_t *)buf)[i] = PyLong_AsLongLong(items[i]);
        } else {
            ((double *)buf)[i] = PyFloat_AsDouble(items[i]);
        }
        if (PyErr_Occurred())
            rc = -1;
    }
    if (rc == 0) {
        int r = all_int ? kscope_metric_int_vec(name, buf, (size_t)n)
                        : kscope_metric_double_vec(name, buf, (size_t)n);
        if (r < 0) {
            raise_rc(r);
            rc = -1;
        }
    }
    if (buf != ibuf && buf != dbuf)
        PyMem_Free(buf);
    return rc;
}

/* Add one metric to the innermost scope. Accepts int, bool, float, list or
 * tuple of numbers, and anything with .item() (0-d tensors, numpy scalars). */
static int add_metric(PyObject *key, PyObject *value)
{
    const char *name = utf8_of(key, "metric name");
    if (!name)
        return -1;
    int r;
    if (PyLong_Check(value)) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Format(PyExc_OverflowError, "metric '%s' does not fit in 64 bits", name);
            return -1;
        }
        r = kscope_metric_int(name, v);
    } else if (PyFloat_Check(value)) {
        r = kscope_metric_double(name, PyFloat_AS_DOUBLE(value));
    } else if (PyList_Check(value) || PyTuple_Check(value)) {
        PyObject *seq = PySequence_Fast(value, "metric vector");
        if (!seq)
            return -1;
        int rc = add_vector_metric(name, seq);
        Py_DECREF(seq);
        return rc;
    } else if (PyObject_HasAttrString(value, "item")) {
        PyObject *scalar = PyObject_CallMethod(value, "item", NULL);
        if (!scalar)
            return -1;
        int rc = (PyLong_Check(scalar) || PyFloat_Check(scalar))
                     ? add_metric(key, scalar)
                     : (PyErr_Format(PyExc_TypeError, "metric '%s': .item() gave %.100s", name,
                                     Py_TYPE(scalar)->tp_name),
                        -1);
        Py_DECREF(scalar);
        return rc;
    } else {
        PyErr_Format(PyExc_TypeError,
                     "metric '%s' is %.100s; expected int, float, a list of numbers or a "
                     "0-d tensor",
                     name, Py_TYPE(value)->tp_name);
        return -1;
    }
    if (r < 0) {
        raise_rc(r);
        return -1;
    }
    return 0;
}

static int add_metrics_dict(PyObject *metrics)
{
    if (!PyDict_Check(metrics)) {
        PyErr_Format(PyExc_TypeError, "metrics must be a dict, not %.100s",
                     Py_TYPE(metrics)->tp_name);
        return -1;
    }
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(metrics, &pos, &k, &v))
        if (add_metric(k, v) < 0)
            return -1;
    return 0;
}

/* -------------------------------------------------- scope, cpu_timed, Trace */

/* One object type serves the three context managers; they differ in the
 * flags and colour they pass and in how they are constructed. */
typedef struct {
    PyObject_HEAD PyObject *name; /* str */
    PyObject *metrics;            /* dict or NULL */
    kscope_loc loc;               /* name (UTF-8 inside `name`), colour, flags, interned id */
    int entered;                  /* scopes pushed and not yet popped by this object */
    int by_id;                    /* enter through loc (see scope_push_loc) */
    vectorcallfunc vectorcall;
} ScopeObject;

static PyObject *scope_instance_call(PyObject *obj, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames);

/* Memory of dead scope objects, kept for the next ones: `with scope(...)`
 * creates and drops one object per pass, and reusing its memory saves the
 * allocator a round trip. Guarded by the GIL; the memory is raw (no type,
 * no references), so any of the three scope types may take it. */
#define SCOPE_FREELIST 32
static void *scope_freelist[SCOPE_FREELIST];
static int scope_nfree;

static ScopeObject *scope_alloc(PyTypeObject *tp)
{
    if (scope_nfree > 0)
        return (ScopeObject *)PyObject_Init(scope_freelist[--scope_nfree], tp);
    return PyObject_New(ScopeObject, tp);
}

static void scope_freelist_clear(void)
{
    while (scope_nfree > 0)
        PyObject_Free(scope_freelist[--scope_nfree]);
}

/* Leave the scope pushed by scope_push_loc: by id once loc has one (the
 * entry went through loc while recording), else by name. */
static int scope_pop_loc(kscope_loc *loc)
{
    return loc->id ? kscope_exit_loc(loc) : kscope_exit(loc->name);
}

/* The rest of scope_push and scope_push_loc once kscope_enter* returned
 * rc: add the metrics to a pushed scope, leaving it again (by loc, or by
 * name when loc is NULL) if they fail: never open behind an exception. */
static int after_enter(int rc, PyObject *metrics, kscope_loc *loc, const char *name)
{
    if (rc < 0) {
        raise_rc(rc);
        return -1;
    }
    if (rc > 0)
        return 0;
    if (metrics && add_metrics_dict(metrics) < 0) {
        if (loc)
            scope_pop_loc(loc);
        else
            kscope_exit(name);
        return -1;
    }
    return 1;
}

/* Enter: returns 1 when a scope was pushed, 0 when nothing was recorded
 * (profiling off, no session), -1 with an exception. */
static int scope_push(const char *name, uint32_t color, uint32_t flags, PyObject *metrics)
{
    return after_enter(kscope_enter_ex(name, color, flags), metrics, NULL, name);
}

/* scope_push by call site, for objects that live on (cached scope objects,
 * ScopedFunction): the name's id is interned once, on the first entry while
 * recording, and kept in loc; the exit (scope_pop_loc) then compares ids
 * instead of strings. Interning takes a lock, so a short-lived object enters
 * by name instead (by_id 0), through the thread's name cache. An empty name
 * goes by name too, so that it fails as kscope_enter_ex fails it (even when
 * nothing is recorded). */
static int scope_push_loc(kscope_loc *loc, int by_id, PyObject *metrics)
{
    if (!by_id || !loc->name[0])
        return scope_push(loc->name, loc->color, loc->flags, metrics);
    return after_enter(kscope_enter_loc(loc), metrics, loc, NULL);
}

/* A loc for a scope named by `utf8` (kept alive by its owner). */
static void loc_init(kscope_loc *loc, const char *utf8, uint32_t color, uint32_t flags)
{
    memset(loc, 0, sizeof *loc);
    loc->name = utf8;
    loc->color = color;
    loc->flags = flags;
}

static PyObject *scope_new_common(PyTypeObject *tp, PyObject *name, PyObject *metrics,
                                  PyObject *color, uint32_t flags)
{
    const char *utf8 = utf8_of(name, "scope name");
    if (!utf8)
        return NULL;
    if (metrics == Py_None)
        metrics = NULL;
    if (metrics && !PyDict_Check(metrics)) {
        PyErr_Format(PyExc_TypeError, "metrics must be a dict, not %.100s",
                     Py_TYPE(metrics)->tp_name);
        return NULL;
    }
    uint32_t c = 0;
    if (color_of(color, &c) < 0)
        return NULL;
    ScopeObject *self = scope_alloc(tp);
    if (!self)
        return NULL;
    self->name = Py_NewRef(name);
    self->metrics = metrics && PyDict_GET_SIZE(metrics) ? Py_NewRef(metrics) : NULL;
    loc_init(&self->loc, utf8, c, flags);
    self->entered = 0;
    self->by_id = 0;
    self->vectorcall = scope_instance_call;
    return (PyObject *)self;
}

/* Pick (name, second) from vectorcall arguments; second's keyword is kw2. */
static int two_args(PyObject *const *args, size_t nargsf, PyObject *kwnames, const char *kw1,
                    const char *kw2, PyObject **a1, PyObject **a2)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs > 2) {
        PyErr_Format(PyExc_TypeError, "takes at most 2 positional arguments (%zd given)", nargs);
        return -1;
    }
    *a1 = nargs > 0 ? args[0] : NULL;
    *a2 = nargs > 1 ? args[1] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        PyObject **slot = PyUnicode_CompareWithASCIIString(k, kw1) == 0   ? a1
                          : PyUnicode_CompareWithASCIIString(k, kw2) == 0 ? a2
                                                                          : NULL;
        if (!slot) {
            PyErr_Format(PyExc_TypeError, "unexpected keyword argument '%U'", k);
            return -1;
        }
        if (*slot) {
            PyErr_Format(PyExc_TypeError, "argument '%U' given twice", k);
            return -1;
        }
        *slot = args[nargs + i];
    }
    if (!*a1) {
        PyErr_Format(PyExc_TypeError, "missing required argument '%s'", kw1);
        return -1;
    }
    return 0;
}

/*
 * Idle scope objects, kept for the next call with the same name object.
 * `with scope("s"):` in a loop passes the same str each time and drops the
 * scope object at the end of each pass; instead of allocating, parsing and
 * validating the name, and freeing again, scope("s") hands back the object
 * of the previous pass when nothing else holds it (reference count 1: the
 * cache's own). Such an object is indistinguishable from a new one: same
 * type, name, no metrics, default colour and flags of its type, nothing
 * entered (reset here: a scope object dropped while entered is forgotten,
 * as it would be when freed), no weak references or attributes; only its
 * id() may repeat, as it may with any freed memory. It also keeps its name's
 * interned id (loc.id), so a cached scope enters and exits by id (by_id).
 *
 * Only the one-argument form is cached: scope(name), cpu_timed_scope(name),
 * Trace(message); scopes with metrics, a colour or keywords are made anew
 * each time. What profiling is doing plays no part: construction is the
 * same whether profiling is off, no session exists or one is recording,
 * since a scope made in one state may be entered in another (it then
 * records, or not, by the state at __enter__). A direct-mapped table per
 * type, indexed by the name object's address; a miss replaces the slot's
 * object (freed if idle). Guarded by the GIL. The table is static; its
 * objects hold references to their types, which module_traverse reports and
 * module_clear drops, so the module and its types are still collected.
 */
enum { CACHE_SCOPE, CACHE_CPU_TIMED, CACHE_TRACE, CACHE_KINDS };
#define SCOPE_CACHE 64 /* slots per type, a power of two */
static ScopeObject *scope_cache[CACHE_KINDS][SCOPE_CACHE];
static uint32_t trace_default_color; /* kscope_color("modular_purple") */

static inline ScopeObject **cache_slot(int kind, PyObject *name)
{
    return &scope_cache[kind][((uintptr_t)name >> 4) & (SCOPE_CACHE - 1)];
}

/* The cached object for `name` if it is idle, as a new reference; NULL
 * (no exception) otherwise. */
static inline PyObject *cache_get(ScopeObject **slot, PyTypeObject *tp, PyObject *name)
{
    ScopeObject *o = *slot;
    if (o && o->name == name && Py_TYPE(o) == tp && Py_REFCNT(o) == 1) {
        o->entered = 0;
        return Py_NewRef((PyObject *)o);
    }
    return NULL;
}

/* Make scope(name) anew and put it in its slot. */
static PyObject *cache_miss(ScopeObject **slot, PyTypeObject *tp, PyObject *name, uint32_t color,
                            uint32_t flags)
{
    PyObject *obj = scope_new_common(tp, name, NULL, NULL, flags);
    if (!obj)
        return NULL;
    ScopeObject *self = (ScopeObject *)obj;
    self->loc.color = color;
    self->by_id = 1;
    ScopeObject *old = *slot;
    *slot = (ScopeObject *)Py_NewRef(obj);
    Py_XDECREF(old);
    return obj;
}

/* tp(name) through the cache of `kind`: the idle object, or a new one. */
static PyObject *cached_scope(int kind, PyTypeObject *tp, PyObject *name, uint32_t color,
                              uint32_t flags)
{
    ScopeObject **slot = cache_slot(kind, name);
    PyObject *obj = cache_get(slot, tp, name);
    return obj ? obj : cache_miss(slot, tp, name, color, flags);
}

/* Is cached object o (or NULL) of one of the types in `st`? */
static int cached_of(const module_state *st, ScopeObject *o)
{
    PyTypeObject *tp = o ? Py_TYPE(o) : NULL;
    return o && (tp == st->scope_type || tp == st->cpu_timed_type || tp == st->trace_type);
}

/* Drop the cached objects of the types in `st`. */
static void scope_cache_clear(module_state *st)
{
    for (int k = 0; k < CACHE_KINDS; k++)
        for (int i = 0; i < SCOPE_CACHE; i++) {
            ScopeObject *o = scope_cache[k][i];
            if (cached_of(st, o)) {
                scope_cache[k][i] = NULL;
                Py_DECREF(o);
            }
        }
}

/* Report the cached objects' references to the types in `st`. */
static int scope_cache_traverse(module_state *st, visitproc visit, void *arg)
{
    for (int k = 0; k < CACHE_KINDS; k++)
        for (int i = 0; i < SCOPE_CACHE; i++)
            if (cached_of(st, scope_cache[k][i]))
                Py_VISIT(Py_TYPE(scope_cache[k][i]));
    return 0;
}

/* The one-positional-argument call, the common one, skips argument parsing. */
#define ONE_ARG(nargsf, kwnames) ((kwnames) == NULL && PyVectorcall_NARGS(nargsf) == 1)

/* scope(name, metrics=None): the type's own vectorcall (no tuple, no dict). */
static PyObject *scope_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    if (ONE_ARG(nargsf, kwnames))
        return cached_scope(CACHE_SCOPE, tp, args[0], 0, 0);
    PyObject *name, *metrics;
    if (two_args(args, nargsf, kwnames, "name", "metrics", &name, &metrics) < 0)
        return NULL;
    return scope_new_common(tp, name, metrics, NULL, 0);
}

/* cpu_timed_scope(name, metrics=None) */
static PyObject *cpu_timed_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf,
                                      PyObject *kwnames)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    if (ONE_ARG(nargsf, kwnames))
        return cached_scope(CACHE_CPU_TIMED, tp, args[0], 0, KSCOPE_CPU_TIMED);
    PyObject *name, *metrics;
    if (two_args(args, nargsf, kwnames, "name", "metrics", &name, &metrics) < 0)
        return NULL;
    return scope_new_common(tp, name, metrics, NULL, KSCOPE_CPU_TIMED);
}

/* Trace(message, color="modular_purple") */
static PyObject *trace_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    if (ONE_ARG(nargsf, kwnames))
        return cached_scope(CACHE_TRACE, tp, args[0], trace_default_color, 0);
    PyObject *name, *color;
    if (two_args(args, nargsf, kwnames, "message", "color", &name, &color) < 0)
        return NULL;
    PyObject *obj = scope_new_common(tp, name, NULL, color, 0);
    if (obj && !color)
        ((ScopeObject *)obj)->loc.color = trace_default_color;
    return obj;
}

/* tp_new, for calls that do not go through the type's vectorcall
 * (scope.__new__(scope, "s"), copy and pickle protocols). */
static PyObject *scope_tp_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    PyObject *kwnames = NULL;
    Py_ssize_t npos = PyTuple_GET_SIZE(args);
    Py_ssize_t nkw = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
    PyObject *stack[4];
    if (npos + nkw > 4) {
        PyErr_SetString(PyExc_TypeError, "too many arguments");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < npos; i++)
        stack[i] = PyTuple_GET_ITEM(args, i);
    if (nkw) {
        kwnames = PyTuple_New(nkw);
        if (!kwnames)
            return NULL;
        Py_ssize_t pos = 0, i = 0;
        PyObject *k, *v;
        while (PyDict_Next(kwargs, &pos, &k, &v)) {
            PyTuple_SET_ITEM(kwnames, i, Py_NewRef(k));
            stack[npos + i++] = v;
        }
    }
    PyObject *res = tp->tp_vectorcall((PyObject *)tp, stack, (size_t)npos, kwnames);
    Py_XDECREF(kwnames);
    return res;
}

static void scope_dealloc(ScopeObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF(self->name);
    Py_XDECREF(self->metrics);
    if (scope_nfree < SCOPE_FREELIST)
        scope_freelist[scope_nfree++] = self;
    else
        tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *scope_enter(ScopeObject *self, PyObject *Py_UNUSED(ignored))
{
    int r = scope_push_loc(&self->loc, self->by_id, self->metrics);
    if (r < 0)
        return NULL;
    self->entered += r;
    return Py_NewRef(self);
}

static PyObject *scope_exit(ScopeObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    if (self->entered <= 0)
        Py_RETURN_FALSE;
    int rc = scope_pop_loc(&self->loc);
    if (rc < 0)
        return raise_rc(rc); /* still open: the stack is as it was */
    self->entered--;
    Py_RETURN_FALSE;
}

/* Decorator use: scope("s")(func). The wrapping (sync or async, name and
 * docstring kept) is done by kscope._wrap.decorate. */
static PyObject *scope_decorate(ScopeObject *self, PyObject *func)
{
    module_state *st = state_of_type(Py_TYPE(self));
    if (!st->decorate) {
        PyErr_SetString(PyExc_RuntimeError, "kscope._kscope used without the kscope package");
        return NULL;
    }
    return PyObject_CallFunctionObjArgs(st->decorate, (PyObject *)self, func, NULL);
}

/*
 * The `with` statement looks __enter__ and __exit__ up on the type and
 * binds them through their descriptor; binding a C method allocates a
 * method object each time, twice per `with`. Instead, __enter__ and
 * __exit__ are `scope_method` descriptors that bind to the scope object
 * itself, and calling a scope object dispatches on the argument count:
 *   ()                          -> __enter__
 *   (exc_type, exc, traceback)  -> __exit__
 *   (func)                      -> decorator
 * So `with scope("s"):` allocates only the scope object.
 */
static PyObject *scope_instance_call(PyObject *obj, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames)
{
    ScopeObject *self = (ScopeObject *)obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames && PyTuple_GET_SIZE(kwnames)) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    switch (nargs) {
    case 0:
        return scope_enter(self, NULL);
    case 3:
        return scope_exit(self, args, nargs);
    case 1:
        return scope_decorate(self, args[0]);
    default:
        PyErr_Format(PyExc_TypeError,
                     "a %s object is called with a function to decorate (1 argument), "
                     "not %zd arguments",
                     Py_TYPE(obj)->tp_name, nargs);
        return NULL;
    }
}

/* Trace.mark(): an instant event named like the span. */
static PyObject *scope_mark(ScopeObject *self, PyObject *Py_UNUSED(ignored))
{
    return none_or_raise(kscope_mark(self->loc.name));
}

static PyObject *scope_get_name(ScopeObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->name);
}

static PyObject *scope_get_metrics(ScopeObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->metrics ? self->metrics : Py_None);
}

static PyObject *scope_get_color(ScopeObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromUnsignedLong(self->loc.color);
}

static PyObject *scope_get_flags(ScopeObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromUnsignedLong(self->loc.flags);
}

static PyObject *scope_repr(ScopeObject *self)
{
    return PyUnicode_FromFormat("<%s %R>", Py_TYPE(self)->tp_name, self->name);
}

static PyMethodDef trace_methods[] = {
    {"mark", (PyCFunction)scope_mark, METH_NOARGS, "Record an instant event named like the span."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef scope_getset[] = {
    {"name", (getter)scope_get_name, NULL, "The scope's name.", NULL},
    {"message", (getter)scope_get_name, NULL, "The span's name (MAX spelling).", NULL},
    {"metrics", (getter)scope_get_metrics, NULL, "Metrics added on entry, or None.", NULL},
    {"color", (getter)scope_get_color, NULL, "Colour as 0xRRGGBB (0: default).", NULL},
    {"flags", (getter)scope_get_flags, NULL, "KSCOPE_CPU_TIMED or 0.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(scope_doc, "scope(name, metrics=None)\n--\n\n"
                        "A named region of the calling thread, as a context manager or a\n"
                        "decorator. `metrics` (a dict of int, float, list of numbers or\n"
                        "0-d tensor) is added to the scope's node when it is entered.");

PyDoc_STRVAR(cpu_timed_doc, "cpu_timed_scope(name, metrics=None)\n--\n\n"
                            "A scope that also records its exclusive 'cpu_time (ns)'.");

PyDoc_STRVAR(trace_doc, "Trace(message, color='modular_purple')\n--\n\n"
                        "A MAX-style span: a context manager over a coloured scope, with\n"
                        "mark() for an instant event inside it.");

static PyMemberDef scope_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(ScopeObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot scope_slots[] = {
    {Py_tp_new, scope_tp_new},       {Py_tp_dealloc, scope_dealloc},
    {Py_tp_members, scope_members},  {Py_tp_getset, scope_getset},
    {Py_tp_call, PyVectorcall_Call}, {Py_tp_repr, scope_repr},
    {Py_tp_doc, (void *)scope_doc},  {0, NULL},
};

static PyType_Slot cpu_timed_slots[] = {
    {Py_tp_new, scope_tp_new},          {Py_tp_dealloc, scope_dealloc},
    {Py_tp_members, scope_members},     {Py_tp_getset, scope_getset},
    {Py_tp_call, PyVectorcall_Call},    {Py_tp_repr, scope_repr},
    {Py_tp_doc, (void *)cpu_timed_doc}, {0, NULL},
};

static PyType_Slot trace_slots[] = {
    {Py_tp_new, scope_tp_new},      {Py_tp_dealloc, scope_dealloc}, {Py_tp_methods, trace_methods},
    {Py_tp_members, scope_members}, {Py_tp_getset, scope_getset},   {Py_tp_call, PyVectorcall_Call},
    {Py_tp_repr, scope_repr},       {Py_tp_doc, (void *)trace_doc}, {0, NULL},
};

#define SCOPE_TYPE_FLAGS                                                                           \
    (Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_HAVE_VECTORCALL)

static PyType_Spec scope_spec = {"kscope._kscope.scope", sizeof(ScopeObject), 0, SCOPE_TYPE_FLAGS,
                                 scope_slots};
static PyType_Spec cpu_timed_spec = {"kscope._kscope.cpu_timed_scope", sizeof(ScopeObject), 0,
                                     SCOPE_TYPE_FLAGS, cpu_timed_slots};
static PyType_Spec trace_spec = {"kscope._kscope.Trace", sizeof(ScopeObject), 0, SCOPE_TYPE_FLAGS,
                                 trace_slots};

/* ------------------------------------------------------------- scope_method */

/* __enter__ / __exit__ of the scope types (see scope_instance_call). */
typedef struct {
    PyObject_HEAD int nargs; /* 0: __enter__, 3: __exit__ */
    vectorcallfunc vectorcall;
} ScopeMethodObject;

static int is_scope(module_state *st, PyObject *o)
{
    PyTypeObject *tp = Py_TYPE(o);
    return tp == st->scope_type || tp == st->cpu_timed_type || tp == st->trace_type;
}

/* Bound: the scope object itself. Unbound (from the class): the slot. */
static PyObject *scope_method_get(PyObject *desc, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(desc);
    return Py_NewRef(obj);
}

/* Called from the class, as type(cm).__enter__(cm) or
 * type(cm).__exit__(cm, exc_type, exc, tb) (contextlib.ExitStack does). */
static PyObject *scope_method_call(PyObject *obj, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames)
{
    ScopeMethodObject *desc = (ScopeMethodObject *)obj;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    module_state *st = state_of_type(Py_TYPE(obj));
    if (nargs != desc->nargs + 1 || !is_scope(st, args[0]) ||
        (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_Format(PyExc_TypeError, "%s takes a kscope scope%s",
                     desc->nargs ? "__exit__" : "__enter__",
                     desc->nargs ? " and (exc_type, exc, traceback)" : "");
        return NULL;
    }
    return scope_instance_call(args[0], args + 1, (size_t)desc->nargs, NULL);
}

static void scope_method_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyObject *scope_method_repr(ScopeMethodObject *self)
{
    return PyUnicode_FromFormat("<slot '%s' of kscope scopes>",
                                self->nargs ? "__exit__" : "__enter__");
}

static PyMemberDef scope_method_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(ScopeMethodObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot scope_method_slots[] = {
    {Py_tp_dealloc, scope_method_dealloc}, {Py_tp_descr_get, scope_method_get},
    {Py_tp_call, PyVectorcall_Call},       {Py_tp_members, scope_method_members},
    {Py_tp_repr, scope_method_repr},       {0, NULL},
};

static PyType_Spec scope_method_spec = {"kscope._kscope.scope_method", sizeof(ScopeMethodObject), 0,
                                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE |
                                            Py_TPFLAGS_HAVE_VECTORCALL |
                                            Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                        scope_method_slots};

/* Put __enter__ and __exit__ into a scope type's dictionary. */
static int add_scope_methods(PyTypeObject *method_type, PyTypeObject *tp)
{
    static const char *const names[2] = {"__enter__", "__exit__"};
    for (int i = 0; i < 2; i++) {
        ScopeMethodObject *m = PyObject_New(ScopeMethodObject, method_type);
        if (!m)
            return -1;
        m->nargs = i ? 3 : 0;
        m->vectorcall = scope_method_call;
        int rc = PyDict_SetItemString(tp->tp_dict, names[i], (PyObject *)m);
        Py_DECREF(m);
        if (rc < 0)
            return -1;
    }
    PyType_Modified(tp);
    return 0;
}

/* ---------------------------------------------------------- ScopedFunction */

/* A callable that runs `func` inside a scope. It has a __dict__ so that
 * functools.update_wrapper can give it the function's name and docstring,
 * and binds like a function when it is a class attribute. */
typedef struct {
    PyObject_HEAD PyObject *func;
    PyObject *name;    /* str */
    PyObject *metrics; /* dict or NULL */
    kscope_loc loc;    /* as in ScopeObject */
    PyObject *dict;
    vectorcallfunc vectorcall;
} ScopedFnObject;

static PyObject *scoped_fn_vectorcall(PyObject *obj, PyObject *const *args, size_t nargsf,
                                      PyObject *kwnames)
{
    ScopedFnObject *self = (ScopedFnObject *)obj;
    int pushed = scope_push_loc(&self->loc, 1, self->metrics);
    if (pushed < 0)
        return NULL;
    PyObject *res = PyObject_Vectorcall(self->func, args, nargsf, kwnames);
    if (pushed) {
        int rc = scope_pop_loc(&self->loc);
        if (rc < 0 && res) {
            Py_DECREF(res);
            return raise_rc(rc);
        }
    }
    return res;
}

/* ScopedFunction(func, name, metrics=None, color=None, flags=0) */
static PyObject *scoped_fn_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"func", "name", "metrics", "color", "flags", NULL};
    PyObject *func, *name, *metrics = NULL, *color = NULL;
    unsigned int flags = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OU|OOI:ScopedFunction", kwlist, &func, &name,
                                     &metrics, &color, &flags))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "ScopedFunction wraps a callable, not %.100s",
                     Py_TYPE(func)->tp_name);
        return NULL;
    }
    const char *utf8 = utf8_of(name, "scope name");
    if (!utf8)
        return NULL;
    if (metrics == Py_None)
        metrics = NULL;
    if (metrics && !PyDict_Check(metrics)) {
        PyErr_Format(PyExc_TypeError, "metrics must be a dict, not %.100s",
                     Py_TYPE(metrics)->tp_name);
        return NULL;
    }
    uint32_t c;
    if (color_of(color, &c) < 0)
        return NULL;
    ScopedFnObject *self = (ScopedFnObject *)tp->tp_alloc(tp, 0);
    if (!self)
        return NULL;
    self->func = Py_NewRef(func);
    self->name = Py_NewRef(name);
    self->metrics = metrics && PyDict_GET_SIZE(metrics) ? Py_NewRef(metrics) : NULL;
    loc_init(&self->loc, utf8, c, flags);
    self->dict = NULL;
    self->vectorcall = scoped_fn_vectorcall;
    return (PyObject *)self;
}

static int scoped_fn_traverse(ScopedFnObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->func);
    Py_VISIT(self->metrics);
    Py_VISIT(self->dict);
    return 0;
}

static int scoped_fn_clear(ScopedFnObject *self)
{
    Py_CLEAR(self->func);
    Py_CLEAR(self->metrics);
    Py_CLEAR(self->dict);
    return 0;
}

static void scoped_fn_dealloc(ScopedFnObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    scoped_fn_clear(self);
    Py_CLEAR(self->name);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* Bind to an instance like a plain function does. */
static PyObject *scoped_fn_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *scoped_fn_repr(ScopedFnObject *self)
{
    return PyUnicode_FromFormat("<kscope scoped %R of %R>", self->name, self->func);
}

static PyMemberDef scoped_fn_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(ScopedFnObject, vectorcall), READONLY, NULL},
    {"__dictoffset__", T_PYSSIZET, offsetof(ScopedFnObject, dict), READONLY, NULL},
    {"scope_name", T_OBJECT, offsetof(ScopedFnObject, name), READONLY, "The scope's name."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef scoped_fn_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot scoped_fn_slots[] = {
    {Py_tp_new, scoped_fn_new},
    {Py_tp_dealloc, scoped_fn_dealloc},
    {Py_tp_traverse, scoped_fn_traverse},
    {Py_tp_clear, scoped_fn_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, scoped_fn_descr_get},
    {Py_tp_members, scoped_fn_members},
    {Py_tp_getset, scoped_fn_getset},
    {Py_tp_repr, scoped_fn_repr},
    {Py_tp_doc, "ScopedFunction(func, name, metrics=None, color=None, flags=0)\n--\n\n"
                "Calls func inside a scope (what the decorators return)."},
    {0, NULL},
};

static PyType_Spec scoped_fn_spec = {"kscope._kscope.ScopedFunction", sizeof(ScopedFnObject), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC |
                                         Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_IMMUTABLETYPE |
                                         Py_TPFLAGS_METHOD_DESCRIPTOR,
                                     scoped_fn_slots};

/* ------------------------------------------------------------------ Tracer */

/* MAX's Tracer over kscope_tracer: a stack of spans pushed and popped by
 * hand, closed when the object is cleaned up, exits a `with`, or dies. The
 * names are kept so mark() can name the instant after the top span. */
typedef struct {
    PyObject_HEAD kscope_tracer t;
    PyObject *names;      /* list: one entry (str or None) per level */
    unsigned long thread; /* the creating thread: its scope stack holds ours */
} TracerObject;

static int tracer_push_one(TracerObject *self, PyObject *message, PyObject *color)
{
    uint32_t c = 0;
    const char *name = NULL;
    if (message && message != Py_None && !(name = utf8_of(message, "message")))
        return -1;
    if (color_of(color, &c) < 0)
        return -1;
    if (!color || color == Py_None)
        c = trace_default_color;
    int rc;
    if (name) {
        rc = kscope_tracer_push(&self->t, name, c);
    } else if (self->t.depth < KSCOPE_TRACER_MAX) {
        /* No message: a placeholder level, as MAX pushes None. */
        self->t.real[self->t.depth++] = 0;
        rc = 0;
    } else {
        PyErr_Format(PyExc_RecursionError, "tracer holds %d spans already", KSCOPE_TRACER_MAX);
        return -1;
    }
    if (rc < 0) {
        raise_rc(rc);
        return -1;
    }
    return PyList_Append(self->names, message ? message : Py_None);
}

static int tracer_pop_one(TracerObject *self)
{
    int rc = kscope_tracer_pop(&self->t);
    if (rc < 0) {
        if (rc == KSCOPE_EEMPTY)
            PyErr_SetString(PyExc_IndexError, "pop from an empty Tracer");
        else
            raise_rc(rc);
        return -1;
    }
    Py_ssize_t n = PyList_GET_SIZE(self->names);
    return n > 0 ? PyList_SetSlice(self->names, n - 1, n, NULL) : 0;
}

static PyObject *tracer_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"message", "color", NULL};
    PyObject *message = NULL, *color = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:Tracer", kwlist, &message, &color))
        return NULL;
    TracerObject *self = (TracerObject *)tp->tp_alloc(tp, 0);
    if (!self)
        return NULL;
    kscope_tracer_init(&self->t);
    self->thread = PyThread_get_thread_ident();
    self->names = PyList_New(0);
    if (!self->names || tracer_push_one(self, message, color) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *tracer_push(TracerObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"message", "color", NULL};
    PyObject *message = NULL, *color = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:push", kwlist, &message, &color))
        return NULL;
    if (tracer_push_one(self, message, color) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *tracer_pop(TracerObject *self, PyObject *args)
{
    (void)args; /* MAX passes exc_type, exc_value, traceback; unused */
    if (tracer_pop_one(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *tracer_next(TracerObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"message", "color", NULL};
    PyObject *message, *color = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:next", kwlist, &message, &color))
        return NULL;
    if (tracer_pop_one(self) < 0 || tracer_push_one(self, message, color) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *tracer_cleanup(TracerObject *self, PyObject *Py_UNUSED(ignored))
{
    int rc = kscope_tracer_cleanup(&self->t);
    if (PyList_SetSlice(self->names, 0, PyList_GET_SIZE(self->names), NULL) < 0)
        return NULL;
    return none_or_raise(rc);
}

static PyObject *tracer_mark(TracerObject *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t n = PyList_GET_SIZE(self->names);
    if (n == 0 || self->t.depth == 0) {
        PyErr_SetString(PyExc_AssertionError, "stack underflow in Tracer.mark()");
        return NULL;
    }
    PyObject *top = PyList_GET_ITEM(self->names, n - 1);
    if (top == Py_None || !self->t.real[self->t.depth - 1])
        Py_RETURN_NONE; /* a placeholder: nothing to mark */
    const char *name = utf8_of(top, "message");
    if (!name)
        return NULL;
    int rc = kscope_tracer_mark(&self->t, name);
    if (rc == KSCOPE_EEMPTY) {
        PyErr_SetString(PyExc_AssertionError, "stack underflow in Tracer.mark()");
        return NULL;
    }
    return none_or_raise(rc);
}

static PyObject *tracer_enter(TracerObject *self, PyObject *Py_UNUSED(ignored))
{
    return Py_NewRef(self);
}

static PyObject *tracer_exit(TracerObject *self, PyObject *args)
{
    (void)args;
    PyObject *r = tracer_cleanup(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *tracer_get_depth(TracerObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(self->t.depth);
}

/* Closing what is still open when the tracer dies must not raise, and the
 * garbage collector may run this at any point of any thread: only the
 * creating thread closes spans, each by name, stopping at the first that
 * is not innermost (its own scopes opened since are left to it). */
static void tracer_finalize(TracerObject *self)
{
    if (self->t.depth <= 0 || !self->names || self->thread != PyThread_get_thread_ident())
        return;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    while (self->t.depth > 0 && PyList_GET_SIZE(self->names) >= self->t.depth) {
        int i = self->t.depth - 1;
        PyObject *name = PyList_GET_ITEM(self->names, i);
        if (self->t.real[i]) {
            const char *utf8 = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
            if (!utf8 || kscope_exit(utf8) < 0)
                break;
        }
        self->t.depth--;
    }
    PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}

static int tracer_traverse(TracerObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->names);
    return 0;
}

static int tracer_clear(TracerObject *self)
{
    Py_CLEAR(self->names);
    return 0;
}

static void tracer_dealloc(TracerObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0)
        return;
    PyObject_GC_UnTrack(self);
    tracer_clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMethodDef tracer_methods[] = {
    {"push", (PyCFunction)(void (*)(void))tracer_push, METH_VARARGS | METH_KEYWORDS,
     "push(message=None, color='modular_purple'): open a span (a placeholder when message is "
     "None or profiling is off)."},
    {"pop", (PyCFunction)tracer_pop, METH_VARARGS, "pop(): close the innermost span."},
    {"next", (PyCFunction)(void (*)(void))tracer_next, METH_VARARGS | METH_KEYWORDS,
     "next(message, color='modular_purple'): pop, then push."},
    {"cleanup", (PyCFunction)tracer_cleanup, METH_NOARGS, "Close every span."},
    {"mark", (PyCFunction)tracer_mark, METH_NOARGS,
     "Instant event in the innermost span; AssertionError when the stack is empty."},
    {"__enter__", (PyCFunction)tracer_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)tracer_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef tracer_getset[] = {
    {"depth", (getter)tracer_get_depth, NULL, "Spans (and placeholders) on the stack.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot tracer_slots[] = {
    {Py_tp_new, tracer_new},
    {Py_tp_dealloc, tracer_dealloc},
    {Py_tp_finalize, tracer_finalize},
    {Py_tp_traverse, tracer_traverse},
    {Py_tp_clear, tracer_clear},
    {Py_tp_methods, tracer_methods},
    {Py_tp_getset, tracer_getset},
    {Py_tp_doc, "Tracer(message=None, color='modular_purple')\n--\n\n"
                "A stack of spans managed by hand (MAX's Tracer)."},
    {0, NULL},
};

static PyType_Spec tracer_spec = {
    "kscope._kscope.Tracer", sizeof(TracerObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE, tracer_slots};

/* --------------------------------------------------------------- functions */

static PyObject *fn_start(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"name", "context", "data", "backend", "mode", NULL};
    kscope_session_opts o = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zzzzz:start", kwlist, &o.name, &o.context,
                                     &o.data, &o.backend, &o.mode))
        return NULL;
    int rc = kscope_start(&o);
    if (rc < 0)
        return raise_rc(rc);
    return PyLong_FromLong(rc);
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
    if (rc < 0)
        return raise_rc(rc);
    return PyUnicode_DecodeFSDefault(buf);
}

static PyObject *fn_data(PyObject *m, PyObject *args)
{
    (void)m;
    int session;
    const char *format = NULL;
    if (!PyArg_ParseTuple(args, "i|z:data", &session, &format))
        return NULL;
    char *out = NULL;
    size_t len = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = kscope_data(session, format, &out, &len);
    Py_END_ALLOW_THREADS if (rc < 0) return raise_rc(rc);
    PyObject *res = PyBytes_FromStringAndSize(out, (Py_ssize_t)len);
    kscope_free(out);
    return res;
}

static PyObject *fn_dropped(PyObject *m, PyObject *arg)
{
    (void)m;
    int session = PyLong_AsLong(arg);
    if (session == -1 && PyErr_Occurred())
        return NULL;
    int64_t n = kscope_dropped(session);
    if (n < 0)
        return raise_rc((int)n);
    return PyLong_FromLongLong(n);
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
    const char *utf8 = utf8_of(name, "scope name");
    uint32_t c;
    if (!utf8 || color_of(color, &c) < 0)
        return NULL;
    if (metrics == Py_None)
        metrics = NULL;
    int r = scope_push(utf8, c, flags, metrics);
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
    if (name && name != Py_None && !(utf8 = utf8_of(name, "scope name")))
        return NULL;
    int rc = kscope_exit(utf8);
    if (rc < 0)
        return raise_rc(rc);
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
static int manual_kwargs(PyObject *const *kwvalues, PyObject *kwnames, PyObject **triton_op,
                         PyObject **metrics)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i);
        if (PyUnicode_CompareWithASCIIString(k, "triton_op") == 0)
            *triton_op = kwvalues[i];
        else if (metrics && PyUnicode_CompareWithASCIIString(k, "metrics") == 0)
            *metrics = kwvalues[i];
        else {
            PyErr_Format(PyExc_TypeError, "unexpected keyword argument '%U'", k);
            return -1;
        }
    }
    return 0;
}

/* enter_scope(name, *, triton_op=False, metrics=None) -> id (-1: not
 * recorded). triton_op is accepted for Proton compatibility. */
static PyObject *fn_enter_scope(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                                PyObject *kwnames)
{
    (void)m;
    PyObject *triton_op = NULL, *metrics = NULL;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError, "enter_scope() takes 1 positional argument (%zd given)",
                     nargs);
        return NULL;
    }
    if (kwnames && manual_kwargs(args + nargs, kwnames, &triton_op, &metrics) < 0)
        return NULL;
    if (manual.n >= MANUAL_MAX) {
        PyErr_Format(PyExc_RecursionError, "more than %d scopes opened by enter_scope", MANUAL_MAX);
        return NULL;
    }
    const char *name = utf8_of(args[0], "scope name");
    if (!name)
        return NULL;
    int pushed = scope_push(name, 0, 0, metrics == Py_None ? NULL : metrics);
    if (pushed < 0)
        return NULL;
    int64_t id = pushed ? ++manual_next_id : 0;
    manual.id[manual.n++] = id;
    return PyLong_FromLongLong(pushed ? id : -1);
}

/* exit_scope(name=None, *, triton_op=False) -> the id enter_scope gave.
 * A name that is not the innermost scope's raises ValueError naming both
 * and leaves the scope open. */
static PyObject *fn_exit_scope(PyObject *m, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    (void)m;
    PyObject *triton_op = NULL;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError,
                     "exit_scope() takes at most 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    if (kwnames && manual_kwargs(args + nargs, kwnames, &triton_op, NULL) < 0)
        return NULL;
    const char *name = NULL;
    if (nargs == 1 && args[0] != Py_None && !(name = utf8_of(args[0], "scope name")))
        return NULL;
    if (manual.n == 0) {
        PyErr_Format(PyExc_ValueError,
                     "exit_scope(%s%s%s) but no scope opened by enter_scope is open on this thread",
                     name ? "'" : "", name ? name : "", name ? "'" : "");
        return NULL;
    }
    int64_t id = manual.id[manual.n - 1];
    if (id) {
        int rc = kscope_exit(name);
        if (rc < 0)
            return raise_rc(rc);
    }
    manual.n--;
    return PyLong_FromLongLong(id ? id : -1);
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
    const char *utf8 = utf8_of(name, "state name");
    if (!utf8)
        return NULL;
    int rc = kscope_state_enter(utf8);
    if (rc < 0)
        return raise_rc(rc);
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
    const char *utf8 = utf8_of(name, "mark name");
    if (!utf8)
        return NULL;
    return none_or_raise(kscope_mark(utf8));
}

#define MAX_CUSTOM 64

/* launch_metadata(name=None, flops8=0, flops16=0, flops32=0, flops64=0,
 * bytes=0, custom=None): metrics for the next kernel this thread launches. */
static PyObject *fn_launch_metadata(PyObject *m, PyObject *args, PyObject *kwargs)
{
    (void)m;
    static char *kwlist[] = {"name",    "flops8", "flops16", "flops32",
                             "flops64", "bytes",  "custom",  NULL};
    kscope_launch_meta meta = {0};
    PyObject *custom = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zdddddO:launch_metadata", kwlist, &meta.name,
                                     &meta.flops8, &meta.flops16, &meta.flops32, &meta.flops64,
                                     &meta.bytes, &custom))
        return NULL;
    const char *names[MAX_CUSTOM];
    double values[MAX_CUSTOM];
    if (custom && custom != Py_None) {
        if (!PyDict_Check(custom)) {
            PyErr_SetString(PyExc_TypeError, "custom must be a dict of name -> number");
            return NULL;
        }
        if (PyDict_GET_SIZE(custom) > MAX_CUSTOM) {
            PyErr_Format(PyExc_ValueError, "at most %d custom launch metrics", MAX_CUSTOM);
            return NULL;
        }
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(custom, &pos, &k, &v)) {
            const char *kn = utf8_of(k, "custom metric name");
            if (!kn)
                return NULL;
            double d = PyFloat_AsDouble(v);
            if (d == -1.0 && PyErr_Occurred()) {
                PyErr_Format(PyExc_TypeError, "custom launch metric '%s' is not a number", kn);
                return NULL;
            }
            names[meta.n_custom] = kn;
            values[meta.n_custom++] = d;
        }
        meta.custom_names = names;
        meta.custom_values = values;
    }
    return none_or_raise(kscope_launch_metadata(&meta));
}

/* A launch_metadata value as a double: bool, int, float or anything with
 * .item() (0-d tensors). Returns 1 with *out set, 0 for a value that is
 * not a number, -1 with an exception (from .item()). */
static int meta_number(PyObject *v, double *out)
{
    if (PyFloat_Check(v)) {
        *out = PyFloat_AS_DOUBLE(v);
        return 1;
    }
    if (PyLong_Check(v)) {
        *out = PyLong_AsDouble(v);
        return *out == -1.0 && PyErr_Occurred() ? -1 : 1;
    }
    if (v == Py_None || PyUnicode_Check(v) || !PyObject_HasAttrString(v, "item"))
        return 0;
    PyObject *item = PyObject_CallMethod(v, "item", NULL);
    if (!item)
        return -1;
    int rc = PyFloat_Check(item) || PyLong_Check(item) ? meta_number(item, out) : 0;
    Py_DECREF(item);
    return rc;
}

/* What Triton's launch_metadata function returned, as
 * kscope_launch_metadata: "name", flops8/16/32/64, "bytes", and every other
 * number as a custom metric ("function" and "stream" are Triton's, not
 * metrics; values that are not numbers are left out). 0, or -1 with an
 * exception. */
static int metadata_from_dict(PyObject *meta_dict)
{
    static const char *const flops[4] = {"flops8", "flops16", "flops32", "flops64"};
    if (!PyDict_Check(meta_dict)) {
        PyErr_Format(PyExc_TypeError, "launch metadata must be a dict, not %.100s",
                     Py_TYPE(meta_dict)->tp_name);
        return -1;
    }
    kscope_launch_meta meta = {0};
    double *fl[4] = {&meta.flops8, &meta.flops16, &meta.flops32, &meta.flops64};
    const char *names[MAX_CUSTOM];
    double values[MAX_CUSTOM];
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(meta_dict, &pos, &k, &v)) {
        const char *key = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if (!key) {
            PyErr_Clear();
            continue;
        }
        if (strcmp(key, "name") == 0) {
            if (PyUnicode_Check(v) && !(meta.name = utf8_of(v, "kernel name")))
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
    meta.custom_names = names;
    meta.custom_values = values;
    int rc = kscope_launch_metadata(&meta);
    if (rc < 0) {
        raise_rc(rc);
        return -1;
    }
    return 0;
}

/* The raised exception as one object, cleared (NULL if none). */
static PyObject *take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
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
#endif
}

/* launch_metadata_dict(meta): metadata_from_dict, raising. */
static PyObject *fn_launch_metadata_dict(PyObject *m, PyObject *meta_dict)
{
    (void)m;
    return metadata_from_dict(meta_dict) < 0 ? NULL : Py_NewRef(Py_None);
}

/* triton_enter(lazy_dict): the Triton launch hook's common case in C (no
 * include/exclude filter, no python context): evaluate the kernel's
 * launch_metadata (lazy_dict.get()) and hand it to the next launch. It
 * never raises into Triton's launcher: the first exception is kept for
 * take_hook_error(), and the launch goes on without metadata. */
static PyObject *fn_triton_enter(PyObject *m, PyObject *lazy_dict)
{
    module_state *st = PyModule_GetState(m);
    PyObject *meta = PyObject_CallMethodNoArgs(lazy_dict, st->str_get);
    int rc = meta ? metadata_from_dict(meta) : -1;
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

static PyObject *fn_profiling(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return PyLong_FromLong(kscope_profiling());
}

/* set_profiling(level): 0/1/2, a bool, or "off|on|detailed". */
static PyObject *fn_set_profiling(PyObject *m, PyObject *level)
{
    (void)m;
    long v;
    if (PyUnicode_Check(level)) {
        const char *s = utf8_of(level, "profiling level");
        if (!s)
            return NULL;
        v = kscope_parse_profiling(s);
        if (v < 0) {
            PyErr_Format(PyExc_ValueError, "profiling level '%s' is not one of off, on, detailed",
                         s);
            return NULL;
        }
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

/* ------------------------------------------------------ Python frames */

#define MAX_FRAMES 256

/* "file:line@function" for a frame, cached per (code, line). */
static PyObject *frame_name(module_state *st, PyCodeObject *code, int line)
{
    PyObject *key = Py_BuildValue("(Oi)", (PyObject *)code, line);
    if (!key)
        return NULL;
    PyObject *name = PyDict_GetItemWithError(st->frame_names, key);
    if (name) {
        Py_DECREF(key);
        return name; /* borrowed: the dict keeps it (and its UTF-8) alive */
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    name = PyUnicode_FromFormat("%U:%d@%U", code->co_filename, line, code->co_name);
    if (!name || PyDict_SetItem(st->frame_names, key, name) < 0) {
        Py_XDECREF(name);
        Py_DECREF(key);
        return NULL;
    }
    Py_DECREF(key);
    Py_DECREF(name);
    return name;
}

static int skipped_file(module_state *st, PyObject *filename)
{
    Py_ssize_t n = st->frame_skip ? PyTuple_GET_SIZE(st->frame_skip) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t r = PyUnicode_Tailmatch(filename, PyTuple_GET_ITEM(st->frame_skip, i), 0,
                                           PY_SSIZE_T_MAX, -1);
        if (r != 0)
            return (int)r; /* 1 match, -1 error */
    }
    return 0;
}

/* enter_frames() -> n: enter one scope per frame of the calling Python
 * stack, outermost first, leaving out files under the skipped prefixes;
 * exit_frames(n) leaves them. What context="python" records at launches. */
static PyObject *fn_enter_frames(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    module_state *st = PyModule_GetState(m);
    PyObject *names[MAX_FRAMES];
    int n = 0;
    PyFrameObject *f = PyEval_GetFrame(); /* borrowed */
    Py_XINCREF(f);
    while (f && n < MAX_FRAMES) {
        PyCodeObject *code = PyFrame_GetCode(f);
        int skip = skipped_file(st, code->co_filename);
        PyObject *name = NULL;
        if (skip == 0)
            name = frame_name(st, code, PyFrame_GetLineNumber(f));
        Py_DECREF(code);
        if (skip < 0 || (skip == 0 && !name)) {
            Py_DECREF(f);
            return NULL;
        }
        if (name)
            names[n++] = name;
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    Py_XDECREF(f);
    int entered = 0;
    for (int i = n - 1; i >= 0; i--) {
        int rc = kscope_enter(PyUnicode_AsUTF8(names[i]));
        if (rc < 0) {
            while (entered-- > 0)
                kscope_exit(NULL);
            return raise_rc(rc);
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
        if (rc < 0)
            return raise_rc(rc);
    }
    Py_RETURN_NONE;
}

/* _configure(decorate, frame_skip): hooks set by the package at import. */
static PyObject *fn_configure(PyObject *m, PyObject *args)
{
    module_state *st = PyModule_GetState(m);
    PyObject *decorate, *skip;
    if (!PyArg_ParseTuple(args, "OO!:_configure", &decorate, &PyTuple_Type, &skip))
        return NULL;
    Py_XSETREF(st->decorate, Py_NewRef(decorate));
    Py_XSETREF(st->frame_skip, Py_NewRef(skip));
    Py_RETURN_NONE;
}

/* ----------------------------------------------------- resource diagnostics */

/* A dict of the fields a GPU sample holds (absent fields left out), with
 * MAX's names. */
static PyObject *gpu_stats_dict(const kscope_gpu_stats *g)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
#define PUT(bit, key, value)                                                                       \
    do {                                                                                           \
        if (g->has & (bit)) {                                                                      \
            PyObject *v_ = PyLong_FromUnsignedLongLong((unsigned long long)(value));               \
            if (!v_ || PyDict_SetItemString(d, key, v_) < 0) {                                     \
                Py_XDECREF(v_);                                                                    \
                Py_DECREF(d);                                                                      \
                return NULL;                                                                       \
            }                                                                                      \
            Py_DECREF(v_);                                                                         \
        }                                                                                          \
    } while (0)
    PUT(~0u, "device", g->device);
    PUT(KSCOPE_GPU_HAS_UTIL, "gpu_usage_percent", g->gpu_usage_percent);
    PUT(KSCOPE_GPU_HAS_MEM_ACTIVITY, "memory_activity_percent", g->memory_activity_percent);
    PUT(KSCOPE_GPU_HAS_MEMORY, "total_bytes", g->total_bytes);
    PUT(KSCOPE_GPU_HAS_MEMORY, "free_bytes", g->free_bytes);
    PUT(KSCOPE_GPU_HAS_MEMORY, "used_bytes", g->used_bytes);
    PUT(KSCOPE_GPU_HAS_RESERVED, "reserved_bytes", g->reserved_bytes);
    PUT(KSCOPE_GPU_HAS_CORE_CLOCK, "core_mhz", g->core_mhz);
    PUT(KSCOPE_GPU_HAS_CORE_MAX, "core_max_mhz", g->core_max_mhz);
    PUT(KSCOPE_GPU_HAS_MEM_CLOCK, "mem_mhz", g->mem_mhz);
    PUT(KSCOPE_GPU_HAS_MEM_MAX, "mem_max_mhz", g->mem_max_mhz);
    PUT(KSCOPE_GPU_HAS_POWER, "power_mw", g->power_mw);
    PUT(KSCOPE_GPU_HAS_TEMPERATURE, "temperature_c", g->temperature_c);
    PUT(KSCOPE_GPU_HAS_THROTTLE, "throttle_reasons", g->throttle_reasons);
#undef PUT
    return d;
}

static PyObject *fn_gpu_init(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    int rc = kscope_gpu_init();
    if (rc < 0)
        return raise_rc(rc);
    return PyLong_FromLong(rc);
}

static PyObject *fn_gpu_shutdown(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    kscope_gpu_shutdown();
    Py_RETURN_NONE;
}

static PyObject *fn_gpu_name(PyObject *m, PyObject *arg)
{
    (void)m;
    long dev = PyLong_AsLong(arg);
    if (dev == -1 && PyErr_Occurred())
        return NULL;
    char buf[256];
    int rc = kscope_gpu_name((uint32_t)dev, buf, sizeof buf);
    if (rc < 0)
        return raise_rc(rc);
    return PyUnicode_FromString(buf);
}

static PyObject *fn_gpu_stats(PyObject *m, PyObject *arg)
{
    (void)m;
    long dev = PyLong_AsLong(arg);
    if (dev == -1 && PyErr_Occurred())
        return NULL;
    if (dev < 0) {
        PyErr_Format(PyExc_ValueError, "GPU index %ld is negative", dev);
        return NULL;
    }
    kscope_gpu_stats g;
    int rc = kscope_gpu_get_stats((uint32_t)dev, &g);
    if (rc < 0)
        return raise_rc(rc);
    return gpu_stats_dict(&g);
}

static PyObject *fn_gpu_process_memory(PyObject *m, PyObject *args)
{
    (void)m;
    unsigned int dev;
    int pid;
    if (!PyArg_ParseTuple(args, "Ii:gpu_process_memory", &dev, &pid))
        return NULL;
    uint64_t bytes = 0;
    int rc = kscope_gpu_process_memory(dev, pid, &bytes);
    if (rc < 0)
        return raise_rc(rc);
    return PyLong_FromUnsignedLongLong(bytes);
}

/* throttle_names(reasons) -> [name, ...] for every known bit set. */
static PyObject *fn_throttle_names(PyObject *m, PyObject *arg)
{
    (void)m;
    unsigned long long reasons = PyLong_AsUnsignedLongLong(arg);
    if (reasons == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    PyObject *list = PyList_New(0);
    for (int bit = 0; list && bit < 64; bit++) {
        const char *name = (reasons >> bit) & 1 ? kscope_gpu_throttle_name(1ull << bit) : NULL;
        if (!name)
            continue;
        PyObject *s = PyUnicode_FromString(name);
        if (!s || PyList_Append(list, s) < 0)
            Py_CLEAR(list);
        Py_XDECREF(s);
    }
    return list;
}

/* pids_for_port(port) -> sorted list of the listening processes and their
 * descendants. */
static PyObject *fn_pids_for_port(PyObject *m, PyObject *arg)
{
    (void)m;
    long port = PyLong_AsLong(arg);
    if (port == -1 && PyErr_Occurred())
        return NULL;
    if (port < 1 || port > 65535) {
        PyErr_Format(PyExc_ValueError, "port %ld is not in 1..65535", port);
        return NULL;
    }
    int stack[64], *pids = stack;
    int n = kscope_pids_for_port((int)port, pids, 64);
    if (n > 64) {
        if (!(pids = PyMem_Malloc((size_t)n * sizeof *pids)))
            return PyErr_NoMemory();
        n = kscope_pids_for_port((int)port, pids, (size_t)n);
    }
    PyObject *list = n < 0 ? raise_rc(n) : PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        PyObject *p = PyLong_FromLong(pids[i]);
        if (!p || PyList_Append(list, p) < 0)
            Py_CLEAR(list);
        Py_XDECREF(p);
    }
    if (pids != stack)
        PyMem_Free(pids);
    return list;
}

/* Integers of a Python iterable into a malloc'd int array. */
static int pid_array(PyObject *pids, int **out, size_t *n)
{
    PyObject *seq = PySequence_Fast(pids, "pids must be an iterable of ints");
    if (!seq)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    int *a = PyMem_Malloc((size_t)(len ? len : 1) * sizeof *a);
    if (!a) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v == -1 && PyErr_Occurred()) {
            PyMem_Free(a);
            Py_DECREF(seq);
            return -1;
        }
        a[i] = (int)v;
    }
    Py_DECREF(seq);
    *out = a;
    *n = (size_t)len;
    return 0;
}

/* CpuProcs(pids): kscope_cpu_begin over the processes; update() reads
 * again and returns (totals, [per process]) as dicts. */
typedef struct {
    PyObject_HEAD kscope_cpu_proc *procs;
    size_t n;
} CpuProcsObject;

static PyObject *cpu_procs_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"pids", NULL};
    PyObject *pids;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:CpuProcs", kwlist, &pids))
        return NULL;
    int *a;
    size_t n;
    if (pid_array(pids, &a, &n) < 0)
        return NULL;
    CpuProcsObject *self = (CpuProcsObject *)tp->tp_alloc(tp, 0);
    if (self)
        self->procs = PyMem_Calloc(n ? n : 1, sizeof *self->procs);
    if (!self || !self->procs) {
        PyMem_Free(a);
        Py_XDECREF(self);
        return PyErr_NoMemory();
    }
    self->n = n;
    for (size_t i = 0; i < n; i++)
        self->procs[i].pid = a[i];
    PyMem_Free(a);
    int rc = kscope_cpu_begin(self->procs, n);
    if (rc < 0) {
        Py_DECREF(self);
        return raise_rc(rc);
    }
    return (PyObject *)self;
}

static PyObject *cpu_procs_update(CpuProcsObject *self, PyObject *Py_UNUSED(ignored))
{
    kscope_cpu_stats t;
    int rc = kscope_cpu_update(self->procs, self->n, &t);
    if (rc < 0)
        return raise_rc(rc);
    PyObject *per = PyList_New(0);
    for (size_t i = 0; per && i < self->n; i++) {
        const kscope_cpu_proc *p = &self->procs[i];
        PyObject *d =
            Py_BuildValue("{s:i,s:O,s:d,s:d,s:d,s:d,s:K,s:I}", "pid", p->pid, "exited",
                          p->exited ? Py_True : Py_False, "user", p->user, "system", p->system,
                          "user_percent", p->user_percent, "system_percent", p->system_percent,
                          "rss_bytes", (unsigned long long)p->rss_bytes, "threads", p->threads);
        if (!d || PyList_Append(per, d) < 0)
            Py_CLEAR(per);
        Py_XDECREF(d);
    }
    if (!per)
        return NULL;
    return Py_BuildValue("({s:d,s:d,s:d,s:d,s:d,s:K,s:I,s:I}N)", "user", t.user, "user_percent",
                         t.user_percent, "system", t.system, "system_percent", t.system_percent,
                         "elapsed", t.elapsed, "rss_bytes", (unsigned long long)t.rss_bytes,
                         "threads", t.threads, "exited", t.exited, per);
}

static void cpu_procs_dealloc(CpuProcsObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyMem_Free(self->procs);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMethodDef cpu_procs_methods[] = {
    {"update", (PyCFunction)cpu_procs_update, METH_NOARGS,
     "update() -> (totals, [per process]) since the start"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot cpu_procs_slots[] = {
    {Py_tp_new, cpu_procs_new},
    {Py_tp_dealloc, cpu_procs_dealloc},
    {Py_tp_methods, cpu_procs_methods},
    {Py_tp_doc, "CpuProcs(pids)\n--\n\nCPU use of processes from now on (kscope_cpu_begin)."},
    {0, NULL},
};

static PyType_Spec cpu_procs_spec = {"kscope._kscope.CpuProcs", sizeof(CpuProcsObject), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
                                     cpu_procs_slots};

/* Recorder(interval_ms=100, pids=(), no_gpu=False, capacity=0): the
 * background sampler; samples() returns dicts. */
typedef struct {
    PyObject_HEAD kscope_recorder *rec;
} RecorderObject;

static PyObject *recorder_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"interval_ms", "pids", "no_gpu", "capacity", NULL};
    kscope_recorder_opts o = {0};
    PyObject *pids = NULL;
    int no_gpu = 0;
    Py_ssize_t capacity = 0;
    o.interval_ms = 100;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|dOpn:Recorder", kwlist, &o.interval_ms, &pids,
                                     &no_gpu, &capacity))
        return NULL;
    if (capacity < 0) {
        PyErr_SetString(PyExc_ValueError, "capacity must not be negative");
        return NULL;
    }
    int *a = NULL;
    size_t n = 0;
    if (pids && pids != Py_None && pid_array(pids, &a, &n) < 0)
        return NULL;
    o.pids = a;
    o.npids = n;
    o.no_gpu = no_gpu;
    o.capacity = (size_t)capacity;
    RecorderObject *self = (RecorderObject *)tp->tp_alloc(tp, 0);
    if (!self) {
        PyMem_Free(a);
        return NULL;
    }
    int rc = kscope_recorder_start(&o, &self->rec);
    PyMem_Free(a);
    if (rc < 0) {
        self->rec = NULL;
        Py_DECREF(self);
        return raise_rc(rc);
    }
    return (PyObject *)self;
}

static PyObject *recorder_stop(RecorderObject *self, PyObject *Py_UNUSED(ignored))
{
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = kscope_recorder_stop(self->rec);
    Py_END_ALLOW_THREADS return none_or_raise(rc);
}

static PyObject *sample_dict(const kscope_sample *s)
{
    PyObject *gpus = PyList_New(0);
    for (uint32_t i = 0; gpus && i < s->ngpu && i < KSCOPE_SAMPLE_GPUS; i++) {
        PyObject *g = gpu_stats_dict(&s->gpu[i]);
        if (!g || PyList_Append(gpus, g) < 0)
            Py_CLEAR(gpus);
        Py_XDECREF(g);
    }
    if (!gpus)
        return NULL;
    return Py_BuildValue("{s:K,s:I,s:I,s:d,s:d,s:d,s:K,s:I,s:N}", "t_ns",
                         (unsigned long long)s->t_ns, "nproc", s->nproc, "alive", s->alive,
                         "cpu_percent", s->cpu_percent, "user_percent", s->user_percent,
                         "system_percent", s->system_percent, "rss_bytes",
                         (unsigned long long)s->rss_bytes, "threads", s->threads, "gpus", gpus);
}

static PyObject *recorder_samples(RecorderObject *self, PyObject *Py_UNUSED(ignored))
{
    size_t n = kscope_recorder_count(self->rec);
    PyObject *list = PyList_New(0);
    for (size_t i = 0; list && i < n; i++) {
        kscope_sample s;
        int rc = kscope_recorder_read(self->rec, i, &s);
        if (rc < 0) {
            Py_DECREF(list);
            return raise_rc(rc);
        }
        PyObject *d = sample_dict(&s);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

static PyObject *recorder_get_dropped(RecorderObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromUnsignedLongLong(kscope_recorder_dropped(self->rec));
}

static PyObject *recorder_get_gpus(RecorderObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(kscope_recorder_gpus(self->rec));
}

static void recorder_dealloc(RecorderObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->rec) {
        Py_BEGIN_ALLOW_THREADS kscope_recorder_free(self->rec);
        Py_END_ALLOW_THREADS
    }
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyMethodDef recorder_methods[] = {
    {"stop", (PyCFunction)recorder_stop, METH_NOARGS, "Stop sampling (one last sample)."},
    {"samples", (PyCFunction)recorder_samples, METH_NOARGS, "Samples held, oldest first."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef recorder_getset[] = {
    {"dropped", (getter)recorder_get_dropped, NULL, "Samples dropped (ring full).", NULL},
    {"gpus", (getter)recorder_get_gpus, NULL, "GPUs sampled.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot recorder_slots[] = {
    {Py_tp_new, recorder_new},
    {Py_tp_dealloc, recorder_dealloc},
    {Py_tp_methods, recorder_methods},
    {Py_tp_getset, recorder_getset},
    {Py_tp_doc, "Recorder(interval_ms=100, pids=(), no_gpu=False, capacity=0)\n--\n\n"
                "Samples GPUs and processes on a thread of its own from now on."},
    {0, NULL},
};

static PyType_Spec recorder_spec = {"kscope._kscope.Recorder", sizeof(RecorderObject), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE, recorder_slots};

static PyMethodDef module_methods[] = {
    {"start", (PyCFunction)(void (*)(void))fn_start, METH_VARARGS | METH_KEYWORDS,
     "start(name=None, context=None, data=None, backend=None, mode=None) -> session id"},
    {"activate", fn_activate, METH_VARARGS, "activate(session=None)"},
    {"deactivate", (PyCFunction)(void (*)(void))fn_deactivate, METH_VARARGS | METH_KEYWORDS,
     "deactivate(session=None, flushing=False)"},
    {"finalize", (PyCFunction)(void (*)(void))fn_finalize, METH_VARARGS | METH_KEYWORDS,
     "finalize(session=None, output_format=None)"},
    {"output_path", fn_output_path, METH_VARARGS, "output_path(session, format=None) -> str"},
    {"data", fn_data, METH_VARARGS, "data(session, format=None) -> bytes"},
    {"dropped", fn_dropped, METH_O, "dropped(session) -> GPU records lost"},
    {"enter", (PyCFunction)(void (*)(void))fn_enter, METH_VARARGS | METH_KEYWORDS,
     "enter(name, color=None, flags=0, metrics=None) -> True if recorded"},
    {"exit", fn_exit, METH_VARARGS, "exit(name=None) -> True if a scope was left"},
    {"depth", fn_depth, METH_NOARGS, "depth() -> scopes open on this thread"},
    {"enter_scope", (PyCFunction)(void (*)(void))fn_enter_scope, METH_FASTCALL | METH_KEYWORDS,
     "enter_scope(name, *, triton_op=False, metrics=None) -> id (-1: not recorded)"},
    {"exit_scope", (PyCFunction)(void (*)(void))fn_exit_scope, METH_FASTCALL | METH_KEYWORDS,
     "exit_scope(name=None, *, triton_op=False) -> id of the scope left"},
    {"add_metrics", fn_add_metrics, METH_O, "add_metrics(dict): on the innermost scope"},
    {"state_enter", fn_state_enter, METH_O, "state_enter(name)"},
    {"state_exit", fn_state_exit, METH_NOARGS, "state_exit()"},
    {"mark", fn_mark, METH_O, "mark(name): an instant event"},
    {"launch_metadata", (PyCFunction)(void (*)(void))fn_launch_metadata,
     METH_VARARGS | METH_KEYWORDS, "launch_metadata(name=None, flops8=0, ..., custom=None)"},
    {"launch_metadata_dict", fn_launch_metadata_dict, METH_O,
     "launch_metadata_dict(meta): a Triton launch_metadata dict for the next kernel"},
    {"triton_enter", fn_triton_enter, METH_O,
     "triton_enter(lazy_dict): the Triton launch hook without filters (never raises)"},
    {"take_hook_error", fn_take_hook_error, METH_NOARGS,
     "take_hook_error(): the first exception triton_enter kept, or None; forgets it"},
    {"profiling", fn_profiling, METH_NOARGS, "profiling() -> 0 off, 1 on, 2 detailed"},
    {"set_profiling", fn_set_profiling, METH_O, "set_profiling(level)"},
    {"color", fn_color, METH_O, "color(name) -> 0xRRGGBB"},
    {"now_ns", fn_now_ns, METH_NOARGS, "now_ns() -> kscope's clock"},
    {"version", fn_version, METH_NOARGS, "version() -> library version"},
    {"last_error", fn_last_error, METH_NOARGS, "last_error() -> this thread's last message"},
    {"strerror", fn_strerror, METH_O, "strerror(code) -> (name, message)"},
    {"enter_frames", fn_enter_frames, METH_NOARGS, "enter_frames() -> scopes entered"},
    {"exit_frames", fn_exit_frames, METH_O, "exit_frames(n)"},
    {"_configure", fn_configure, METH_VARARGS, "_configure(decorate, frame_skip)"},
    {"gpu_init", fn_gpu_init, METH_NOARGS, "gpu_init() -> GPU count (pair with gpu_shutdown)"},
    {"gpu_shutdown", fn_gpu_shutdown, METH_NOARGS, "gpu_shutdown()"},
    {"gpu_name", fn_gpu_name, METH_O, "gpu_name(index) -> product name"},
    {"gpu_stats", fn_gpu_stats, METH_O, "gpu_stats(index) -> dict of the fields reported"},
    {"gpu_process_memory", fn_gpu_process_memory, METH_VARARGS,
     "gpu_process_memory(index, pid) -> bytes"},
    {"throttle_names", fn_throttle_names, METH_O, "throttle_names(reasons) -> [name, ...]"},
    {"pids_for_port", fn_pids_for_port, METH_O, "pids_for_port(port) -> [pid, ...]"},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------ module setup */

static PyTypeObject *add_type(PyObject *m, PyType_Spec *spec, const char *name,
                              vectorcallfunc vectorcall)
{
    PyTypeObject *tp = (PyTypeObject *)PyType_FromModuleAndSpec(m, spec, NULL);
    if (!tp)
        return NULL;
    /* Construct without building an args tuple: CPython calls a type's
     * tp_vectorcall when it is set. */
    if (vectorcall)
        tp->tp_vectorcall = vectorcall;
    if (PyModule_AddObjectRef(m, name, (PyObject *)tp) < 0) {
        Py_DECREF(tp);
        return NULL;
    }
    return tp;
}

static int module_exec(PyObject *m)
{
    module_state *st = PyModule_GetState(m);
    trace_default_color = kscope_color("modular_purple");
    st->method_type = (PyTypeObject *)PyType_FromModuleAndSpec(m, &scope_method_spec, NULL);
    if (!st->method_type)
        return -1;
    if (!(st->scope_type = add_type(m, &scope_spec, "scope", scope_vectorcall)) ||
        !(st->cpu_timed_type =
              add_type(m, &cpu_timed_spec, "cpu_timed_scope", cpu_timed_vectorcall)) ||
        !(st->trace_type = add_type(m, &trace_spec, "Trace", trace_vectorcall)) ||
        !(st->scoped_fn_type = add_type(m, &scoped_fn_spec, "ScopedFunction", NULL)) ||
        !(st->tracer_type = add_type(m, &tracer_spec, "Tracer", NULL)) ||
        !(st->cpu_procs_type = add_type(m, &cpu_procs_spec, "CpuProcs", NULL)) ||
        !(st->recorder_type = add_type(m, &recorder_spec, "Recorder", NULL)))
        return -1;
    if (add_scope_methods(st->method_type, st->scope_type) < 0 ||
        add_scope_methods(st->method_type, st->cpu_timed_type) < 0 ||
        add_scope_methods(st->method_type, st->trace_type) < 0)
        return -1;
    if (!(st->frame_names = PyDict_New()) || !(st->str_get = PyUnicode_InternFromString("get")))
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
    Py_VISIT(st->scope_type);
    Py_VISIT(st->cpu_timed_type);
    Py_VISIT(st->trace_type);
    Py_VISIT(st->scoped_fn_type);
    Py_VISIT(st->tracer_type);
    Py_VISIT(st->method_type);
    Py_VISIT(st->cpu_procs_type);
    Py_VISIT(st->recorder_type);
    Py_VISIT(st->decorate);
    Py_VISIT(st->frame_names);
    Py_VISIT(st->frame_skip);
    Py_VISIT(st->hook_error);
    Py_VISIT(st->str_get);
    return 0;
}

static int module_clear(PyObject *m)
{
    module_state *st = PyModule_GetState(m);
    scope_cache_clear(st); /* before the types it compares with */
    Py_CLEAR(st->scope_type);
    Py_CLEAR(st->cpu_timed_type);
    Py_CLEAR(st->trace_type);
    Py_CLEAR(st->scoped_fn_type);
    Py_CLEAR(st->tracer_type);
    Py_CLEAR(st->method_type);
    Py_CLEAR(st->cpu_procs_type);
    Py_CLEAR(st->recorder_type);
    Py_CLEAR(st->decorate);
    Py_CLEAR(st->frame_names);
    Py_CLEAR(st->frame_skip);
    Py_CLEAR(st->hook_error);
    Py_CLEAR(st->str_get);
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
    sizeof(module_state),  module_methods,   module_slots,
    module_traverse,       module_clear,     module_free,
};

PyMODINIT_FUNC PyInit__kscope(void)
{
    return PyModuleDef_Init(&kscope_module);
}
