/*
 * module.h - what the files of the kscope._kscope extension share: the
 * module state, the error and argument helpers, the scope push and pop of
 * the per-scope paths, and each file's part of the module's setup.
 *
 * The helpers that a scope's entry and exit run (utf8_of, scope_push_loc,
 * scope_pop_loc, ...) are static inline here, so every file that enters
 * scopes has its own copy and no call crosses files on that path; only
 * error paths (check_rc) and metrics (add_metrics_dict) are calls into
 * another file.
 *
 * The extension's files, by API area:
 *   module.c    module setup (state, types, functions), errors, version, clock
 *   scopes.c    scope, cpu_timed_scope, Trace and their __enter__/__exit__,
 *               ScopedFunction (the decorators), the scope cache
 *   tracer.c    MAX's Tracer
 *   async.c     AsyncScope, the scope of a coroutine (async decorators)
 *   sessions.c  sessions, enter/exit, enter_scope/exit_scope, metrics,
 *               states, marks, the profiling switch, colours, formats
 *   hooks.c     launch metadata, the Triton launch hook, Python frames
 *   diag.c      GPU and CPU diagnostics, the recorder, a port's processes
 *   graphs.c    tensor metrics inside a CUDA graph capture
 */
#ifndef KSCOPE_PY_MODULE_H
#define KSCOPE_PY_MODULE_H

/* The stable ABI of CPython 3.9: one build (the cp39-abi3 wheel) loads in
 * every CPython from 3.9. Only the limited API of 3.9 is used, and two
 * later additions where the running Python's stable ABI has them, chosen
 * when the module is set up: a str's own UTF-8 (3.10, str_utf8 below) and
 * the vectorcall protocol for the scope objects' calls (3.12,
 * has_vectorcall below). */
#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x03090000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kscope.h"

#include <stdint.h>
#include <string.h>

/* Nothing declared here leaves the extension: it exports PyInit__kscope
 * (and the library's kscope_* API) only. */
#pragma GCC visibility push(hidden)

/* ------------------------------------------------------------ module state */

/* The attributes of frames and code objects that Python frames as scopes
 * read (hooks.c), by index into module_state.frame_attr. */
enum { FRAME_F_CODE, FRAME_F_LINENO, FRAME_F_BACK, FRAME_CO_FILENAME, FRAME_CO_NAME, FRAME_ATTRS };

/* The module keeps its types in module state (multi-phase init), so it
 * holds no process-wide Python objects of its own. */
typedef struct {
    PyTypeObject *scope_type;     /* kscope.scope */
    PyTypeObject *cpu_timed_type; /* kscope.cpu_timed_scope */
    PyTypeObject *trace_type;     /* kscope.Trace (MAX) */
    PyTypeObject *scoped_fn_type; /* what the decorators return */
    PyTypeObject *tracer_type;    /* kscope.Tracer (MAX) */
    PyTypeObject *async_type;     /* what async decorators drive */
    PyTypeObject *method_type;    /* __enter__/__exit__ of the scope types */
    PyTypeObject *cpu_procs_type; /* resource diagnostics */
    PyTypeObject *recorder_type;
    PyObject *frame_names;             /* (code, line) -> "file:line@function", None if skipped */
    PyObject *frame_skip;              /* tuple of filename prefixes left out */
    PyObject *hook_error;              /* the first exception triton_enter kept */
    PyObject *str_get;                 /* "get", interned */
    PyObject *frame_attr[FRAME_ATTRS]; /* "f_code", ..., interned */
} module_state;

/* Every reference of module_state but the frame_attr array, X(field) each:
 * the one list that module_traverse visits and module_clear clears
 * (module.c), so a field added above is added here too. */
#define MODULE_STATE_REFS(X)                                                                       \
    X(scope_type)                                                                                  \
    X(cpu_timed_type)                                                                              \
    X(trace_type)                                                                                  \
    X(scoped_fn_type)                                                                              \
    X(tracer_type)                                                                                 \
    X(async_type)                                                                                  \
    X(method_type)                                                                                 \
    X(cpu_procs_type)                                                                              \
    X(recorder_type)                                                                               \
    X(frame_names)                                                                                 \
    X(frame_skip)                                                                                  \
    X(hook_error)                                                                                  \
    X(str_get)

/* ------------------------------------------------------- errors (module.c) */

/* The one place kscope return codes become Python exceptions: 0 for rc >=
 * 0 (success, a count, 1 for "nothing recorded": never an error); for a
 * negative kscope error code, sets the exception for it with the thread's
 * kscope message and returns -1. */
int check_rc(int64_t rc);

/* None for rc >= 0, else NULL with the exception check_rc set. */
static inline PyObject *none_or_raise(int rc)
{
    if (check_rc(rc) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* rc as an int for rc >= 0 (a session id, a count), else NULL with the
 * exception check_rc set. */
static inline PyObject *int_or_raise(int64_t rc)
{
    if (check_rc(rc) < 0)
        return NULL;
    return PyLong_FromLongLong(rc);
}

/* ----------------------------------------------------------------- helpers */

/* Append `item`, a new reference (NULL when the call making it failed), to
 * the list *list and release it. On any failure *list is released and set
 * to NULL, the exception set: a loop building a list runs while the list
 * is not NULL, and returns it. */
static inline void append_new(PyObject **list, PyObject *item)
{
    if (!item || PyList_Append(*list, item) < 0)
        Py_CLEAR(*list);
    Py_XDECREF(item);
}

/* ------------------------------------------------------- the limited API */

/* What 3.9's headers lack that 3.10's stable ABI has as functions. */
#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *py_newref(PyObject *o)
{
    Py_INCREF(o);
    return o;
}
static inline PyObject *py_xnewref(PyObject *o)
{
    Py_XINCREF(o);
    return o;
}
#define Py_NewRef(o)  py_newref((PyObject *)(o))
#define Py_XNewRef(o) py_xnewref((PyObject *)(o))
#endif

/* PyModule_AddObjectRef of 3.10: add `o` to module m as `name`, keeping
 * the caller's reference. 0, or -1 with an exception. */
static inline int add_object_ref(PyObject *m, const char *name, PyObject *o)
{
    Py_INCREF(o);
    if (PyModule_AddObject(m, name, o) < 0) {
        Py_DECREF(o);
        return -1;
    }
    return 0;
}

/* A type's name, for error messages: type(o).__name__ as UTF-8 in a
 * per-thread buffer, valid until the thread's next call (the limited API
 * has no tp_name). Never fails ("?" when the name cannot be read). */
const char *type_name(PyObject *o);

/* PyUnicode_AsUTF8AndSize (in the stable ABI from 3.10), looked up when
 * the module is set up if the running Python is 3.10 or newer; NULL on
 * 3.9, whose stable ABI lends no str's UTF-8 (module.c). */
typedef const char *(*str_utf8_fn)(PyObject *, Py_ssize_t *);
extern str_utf8_fn str_utf8;

/* The vectorcall protocol of 3.12's stable ABI (its flag, argument-count
 * bit and function type, fixed since): set on the scope types when the
 * running Python is 3.12 or newer (has_vectorcall, module.c), so that
 * `with` calls __enter__ and __exit__ without an arguments tuple. */
#define TPFLAGS_HAVE_VECTORCALL     (1UL << 11)
#define VECTORCALL_ARGUMENTS_OFFSET ((size_t)1 << (8 * sizeof(size_t) - 1))
#define VECTORCALL_NARGS(nargsf)    ((Py_ssize_t)((nargsf) & ~VECTORCALL_ARGUMENTS_OFFSET))
typedef PyObject *(*vectorcall_fn)(PyObject *, PyObject *const *, size_t, PyObject *);
extern int has_vectorcall;

/* UTF-8 of a str argument; NULL with TypeError (not a str) or ValueError
 * (a NUL inside). The pointer stays valid while the str lives and *keep is
 * held: *keep is set to NULL when the UTF-8 is the str's own cached one
 * (3.10 and newer: no copy), or to a new reference to a bytes copy (3.9)
 * that the caller releases (Py_XDECREF) once done with the pointer. */
static inline const char *utf8_of(PyObject *o, const char *what, PyObject **keep)
{
    *keep = NULL;
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %.100s", what, type_name(o));
        return NULL;
    }
    const char *s;
    Py_ssize_t n;
    if (str_utf8) {
        s = str_utf8(o, &n);
    } else {
        PyObject *b = PyUnicode_AsUTF8String(o);
        if (!b || PyBytes_AsStringAndSize(b, (char **)&s, &n) < 0) {
            Py_XDECREF(b);
            return NULL;
        }
        *keep = b;
    }
    if (s && (Py_ssize_t)strlen(s) != n) {
        PyErr_Format(PyExc_ValueError, "%s contains a NUL character", what);
        Py_CLEAR(*keep);
        return NULL;
    }
    return s;
}

/* utf8_of for a pointer wanted beside others: a copy is appended to the
 * list *keeps (made on the first copy; the caller releases it). */
static inline const char *utf8_kept(PyObject *o, const char *what, PyObject **keeps)
{
    PyObject *keep;
    const char *s = utf8_of(o, what, &keep);
    if (!s || !keep)
        return s;
    if (!*keeps && !(*keeps = PyList_New(0))) {
        Py_DECREF(keep);
        return NULL;
    }
    int rc = PyList_Append(*keeps, keep);
    Py_DECREF(keep);
    return rc < 0 ? NULL : s;
}

/* A colour given as a name ("red") or as 0xRRGGBB. */
static inline int color_of(PyObject *o, uint32_t *out)
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
    PyObject *keep;
    const char *name = utf8_of(o, "colour", &keep);
    if (!name)
        return -1;
    *out = kscope_color(name);
    Py_XDECREF(keep);
    return 0;
}

/* ------------------------------------------------------ metrics (sessions.c) */

/* Add a dict of metrics (name -> int, float, list of numbers or 0-d
 * tensor) to the innermost scope. 0, or -1 with an exception. */
int add_metrics_dict(PyObject *metrics);

/* ------------------------------------------------------ scope push and pop */

/* Leave the scope pushed by scope_push_loc: by id once loc has one (the
 * entry went through loc while recording), else by name. */
static inline int scope_pop_loc(kscope_loc *loc)
{
    return loc->id ? kscope_exit_loc(loc) : kscope_exit(loc->name);
}

/* The rest of scope_push and scope_push_loc once kscope_enter* returned
 * rc: add the metrics to a pushed scope, leaving it again (by loc, or by
 * name when loc is NULL) if they fail: never open behind an exception. */
static inline int after_enter(int rc, PyObject *metrics, kscope_loc *loc, const char *name)
{
    if (check_rc(rc) < 0)
        return -1;
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
static inline int scope_push(const char *name, uint32_t color, uint32_t flags, PyObject *metrics)
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
static inline int scope_push_loc(kscope_loc *loc, int by_id, PyObject *metrics)
{
    if (!by_id || !loc->name[0])
        return scope_push(loc->name, loc->color, loc->flags, metrics);
    return after_enter(kscope_enter_loc(loc), metrics, loc, NULL);
}

/* A loc for a scope named by `utf8` (kept alive by its owner). */
static inline void loc_init(kscope_loc *loc, const char *utf8, uint32_t color, uint32_t flags)
{
    memset(loc, 0, sizeof *loc);
    loc->name = utf8;
    loc->color = color;
    loc->flags = flags;
}

/* ------------------------------------------------------------ module setup */

/* kscope_color("modular_purple"): Trace's and Tracer's default colour, set
 * when the module is set up (scopes.c). */
extern uint32_t trace_default_color;

/* MAX's switch (scopes.c): Trace, traced and Tracer record only while it is
 * on, as MAX's calls do only with MODULAR_ENABLE_PROFILING set. Proton-style
 * scopes and sessions do not look at it. */
extern int max_spans_on;

/* MAX-style spans entered while MAX's switch was on that no session
 * recorded (scopes.c; counted under the GIL): what the exit line of
 * kscope.tracing tells. */
extern unsigned long max_spans_lost;

/* Make the type of `spec` and add it to module m as `name` (module.c). */
PyTypeObject *add_type(PyObject *m, PyType_Spec *spec, const char *name);

/* Free the memory of an object of heap type tp (its tp_free). */
static inline void free_object(PyTypeObject *tp, void *self)
{
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(self);
}

/* The end of a heap type's tp_dealloc: free self's memory (free_object)
 * and release the reference to its type that each of its objects holds. */
static inline void release_object(void *self)
{
    PyTypeObject *tp = Py_TYPE((PyObject *)self);
    free_object(tp, self);
    Py_DECREF(tp);
}

/* Each file's types, made and added to module m (state st): 0, or -1 with
 * an exception. */
int scopes_exec(PyObject *m, module_state *st);
int tracer_exec(PyObject *m, module_state *st);
int async_exec(PyObject *m, module_state *st);
int diag_exec(PyObject *m, module_state *st);

/* The scope cache's references to the types in st (scopes.c), and the
 * memory of dead scope objects kept for new ones. */
int scope_cache_traverse(module_state *st, visitproc visit, void *arg);
void scope_cache_clear(module_state *st);
void scope_freelist_clear(void);

/* Each file's module functions, added by module_exec. */
extern PyMethodDef session_functions[];
extern PyMethodDef hook_functions[];
extern PyMethodDef diag_functions[];
extern PyMethodDef graph_functions[];

/* ------------------------------------------------------ GPU backend (diag.c) */

/* The GPU backend that the module's GPU calls ask (gpu_probe, gpu_profiler,
 * tensor metrics): the registry's default (first built) one, else its
 * first; NULL when the registry has none. */
const struct kscope__backend *default_backend(void);

/* ------------------------------------------ tensor metrics (graphs.c) */

/* Whether `value` is a CUDA tensor while this thread captures a CUDA graph
 * (reading it now would end the capture): 1, 0, -1 with an exception. */
int tensor_in_capture(PyObject *value);

/* Keep tensor metric `name` for the graph being captured: each launch adds
 * the value it computes (to the kernel named `kernel` launched next, or,
 * NULL, to the innermost scope). 0, or -1 with an exception. */
int capture_tensor(const char *name, PyObject *value, const char *kernel);

#pragma GCC visibility pop

#endif /* KSCOPE_PY_MODULE_H */
