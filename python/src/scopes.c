/*
 * scopes.c - the scope objects: `scope`, `cpu_timed_scope` and MAX's
 * `Trace` (one object type, three heap types), the `scope_method`
 * descriptors that make their __enter__/__exit__ cost no bound method, the
 * cache of idle scope objects, and `ScopedFunction`, what the decorators
 * return. These are the per-scope paths: everything they run is in this
 * file or static inline in module.h.
 */
#include "module.h"

#include <structmember.h>

/* -------------------------------------------------- scope, cpu_timed, Trace */

/* One object type serves the three context managers; they differ in the
 * flags and colour they pass and in how they are constructed. */
typedef struct {
    PyObject_HEAD PyObject *name; /* str */
    PyObject *utf8;               /* NULL, or the bytes copy loc.name points into (3.9) */
    PyObject *metrics;            /* dict or NULL */
    kscope_loc loc;               /* name (UTF-8 of `name`), colour, flags, interned id */
    int entered;                  /* scopes pushed and not yet popped by this object */
    int by_id;                    /* enter through loc (see scope_push_loc) */
    int max_span;                 /* a Trace: records only while max_spans_on */
    vectorcall_fn vectorcall;     /* scope_vectorcall, where the Python has vectorcall */
} ScopeObject;

static PyObject *scope_vectorcall(PyObject *obj, PyObject *const *args, size_t nargsf,
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

void scope_freelist_clear(void)
{
    while (scope_nfree > 0)
        PyObject_Free(scope_freelist[--scope_nfree]);
}

/* A scope's (name, metrics, color) arguments checked: the name's UTF-8
 * (and its copy to keep, see utf8_of), metrics as a dict or NULL (None),
 * the colour as a number. 0 or -1 with an exception set. */
static int scope_args(PyObject *name, PyObject **metrics, PyObject *color, const char **utf8,
                      PyObject **keep, uint32_t *c)
{
    if (!(*utf8 = utf8_of(name, "scope name", keep)))
        return -1;
    if (*metrics == Py_None)
        *metrics = NULL;
    *c = 0;
    if ((*metrics && !PyDict_Check(*metrics) &&
         (PyErr_Format(PyExc_TypeError, "metrics must be a dict, not %.100s", type_name(*metrics)),
          1)) ||
        color_of(color, c) < 0) {
        Py_CLEAR(*keep);
        return -1;
    }
    return 0;
}

static PyObject *scope_new_common(PyTypeObject *tp, PyObject *name, PyObject *metrics,
                                  PyObject *color, uint32_t flags, int max_span)
{
    const char *utf8;
    PyObject *keep;
    uint32_t c;
    if (scope_args(name, &metrics, color, &utf8, &keep, &c) < 0)
        return NULL;
    ScopeObject *self = scope_alloc(tp);
    if (!self) {
        Py_XDECREF(keep);
        return NULL;
    }
    self->name = Py_NewRef(name);
    self->utf8 = keep;
    self->metrics = metrics && PyDict_Size(metrics) ? Py_NewRef(metrics) : NULL;
    loc_init(&self->loc, utf8, c, flags);
    self->entered = 0;
    self->by_id = 0;
    self->max_span = max_span;
    self->vectorcall = scope_vectorcall;
    return (PyObject *)self;
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
uint32_t trace_default_color; /* kscope_color("modular_purple") */
int max_spans_on;             /* MAX's switch; set by kscope.tracing */
unsigned long max_spans_lost;

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
                            uint32_t flags, int max_span)
{
    PyObject *obj = scope_new_common(tp, name, NULL, NULL, flags, max_span);
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
    return obj ? obj : cache_miss(slot, tp, name, color, flags, kind == CACHE_TRACE);
}

/* Is cached object o (or NULL) of one of the types in `st`? */
static int cached_of(const module_state *st, ScopeObject *o)
{
    PyTypeObject *tp = o ? Py_TYPE(o) : NULL;
    return o && (tp == st->scope_type || tp == st->cpu_timed_type || tp == st->trace_type);
}

/* Drop the cached objects of the types in `st`. */
void scope_cache_clear(module_state *st)
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
int scope_cache_traverse(module_state *st, visitproc visit, void *arg)
{
    for (int k = 0; k < CACHE_KINDS; k++)
        for (int i = 0; i < SCOPE_CACHE; i++)
            if (cached_of(st, scope_cache[k][i]))
                Py_VISIT(Py_TYPE(scope_cache[k][i]));
    return 0;
}

/* The one-positional-argument call, the common one, skips argument parsing. */
static inline PyObject *one_arg(PyObject *args, PyObject *kwargs)
{
    return !kwargs && PyTuple_Size(args) == 1 ? PyTuple_GetItem(args, 0) : NULL;
}

/* scope(name, metrics=None) */
static PyObject *scope_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name", "metrics", NULL};
    PyObject *name = one_arg(args, kwargs), *metrics = NULL;
    if (name)
        return cached_scope(CACHE_SCOPE, tp, name, 0, 0);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:scope", kwlist, &name, &metrics))
        return NULL;
    return scope_new_common(tp, name, metrics, NULL, 0, 0);
}

/* cpu_timed_scope(name, metrics=None) */
static PyObject *cpu_timed_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name", "metrics", NULL};
    PyObject *name = one_arg(args, kwargs), *metrics = NULL;
    if (name)
        return cached_scope(CACHE_CPU_TIMED, tp, name, 0, KSCOPE_CPU_TIMED);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:cpu_timed_scope", kwlist, &name, &metrics))
        return NULL;
    /* As Proton: "cpu_time" is the scope's own metric. */
    if (metrics && PyDict_Check(metrics) && PyDict_GetItemString(metrics, "cpu_time")) {
        PyErr_SetString(PyExc_ValueError, "The metric name 'cpu_time' is reserved.");
        return NULL;
    }
    return scope_new_common(tp, name, metrics, NULL, KSCOPE_CPU_TIMED, 0);
}

/* Trace(message, color="modular_purple") */
static PyObject *trace_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"message", "color", NULL};
    PyObject *name = one_arg(args, kwargs), *color = NULL;
    if (name)
        return cached_scope(CACHE_TRACE, tp, name, trace_default_color, 0);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:Trace", kwlist, &name, &color))
        return NULL;
    PyObject *obj = scope_new_common(tp, name, NULL, color, 0, 1);
    if (obj && !color)
        ((ScopeObject *)obj)->loc.color = trace_default_color;
    return obj;
}

static void scope_dealloc(ScopeObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_XDECREF(self->name);
    Py_XDECREF(self->utf8);
    Py_XDECREF(self->metrics);
    if (scope_nfree < SCOPE_FREELIST)
        scope_freelist[scope_nfree++] = self;
    else
        free_object(tp, self);
    Py_DECREF(tp);
}

/* Whether tp is one of the scope types (of any instance of the module),
 * and whether it is a Trace's: told by their slots, as the limited API
 * has no way from a type to its module. */
static int tp_is_scope(PyTypeObject *tp)
{
    return (PyType_GetFlags(tp) & Py_TPFLAGS_HEAPTYPE) &&
           PyType_GetSlot(tp, Py_tp_dealloc) == (void *)scope_dealloc;
}

static PyObject *scope_enter(ScopeObject *self, PyObject *Py_UNUSED(ignored))
{
    if (self->max_span && !max_spans_on)
        return Py_NewRef(self);
    int r = scope_push_loc(&self->loc, self->by_id, self->metrics);
    if (r < 0)
        return NULL;
    self->entered += r;
    if (self->max_span && !r)
        max_spans_lost++;
    return Py_NewRef(self);
}

static PyObject *scope_exit(ScopeObject *self)
{
    if (self->entered <= 0)
        Py_RETURN_FALSE;
    int rc = scope_pop_loc(&self->loc);
    if (check_rc(rc) < 0)
        return NULL; /* still open: the stack is as it was */
    self->entered--;
    Py_RETURN_FALSE;
}

/* Decorator use: scope("s")(func). The wrapping (sync or async, name and
 * docstring kept) is done by kscope._wrap.decorate (imported already when
 * the package is: a look-up in sys.modules). */
static PyObject *scope_decorate(ScopeObject *self, PyObject *func)
{
    PyObject *wrap = PyImport_ImportModule("kscope._wrap");
    PyObject *res =
        wrap ? PyObject_CallMethod(wrap, "decorate", "OO", (PyObject *)self, func) : NULL;
    Py_XDECREF(wrap);
    return res;
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
 * So `with scope("s"):` allocates no method object, and where the running
 * Python has vectorcall in its stable ABI (3.12) no arguments tuple either
 * (before, __exit__'s comes from CPython's free list).
 */
static PyObject *scope_dispatch(PyObject *obj, Py_ssize_t nargs, PyObject *first, int keywords)
{
    ScopeObject *self = (ScopeObject *)obj;
    if (keywords) {
        PyErr_Format(PyExc_TypeError, "%s() takes no keyword arguments", type_name(obj));
        return NULL;
    }
    switch (nargs) {
    case 0:
        return scope_enter(self, NULL);
    case 3:
        return scope_exit(self);
    case 1:
        return scope_decorate(self, first);
    default:
        PyErr_Format(PyExc_TypeError,
                     "a %s object is called with a function to decorate (1 argument), "
                     "not %zd arguments",
                     type_name(obj), nargs);
        return NULL;
    }
}

static PyObject *scope_call(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    Py_ssize_t nargs = PyTuple_Size(args);
    return scope_dispatch(obj, nargs, nargs > 0 ? PyTuple_GetItem(args, 0) : NULL,
                          kwargs && PyDict_Size(kwargs));
}

static PyObject *scope_vectorcall(PyObject *obj, PyObject *const *args, size_t nargsf,
                                  PyObject *kwnames)
{
    Py_ssize_t nargs = VECTORCALL_NARGS(nargsf);
    return scope_dispatch(obj, nargs, nargs > 0 ? args[0] : NULL, kwnames && PyTuple_Size(kwnames));
}

/* Trace.mark(): an instant event named like the span. */
static PyObject *scope_mark(ScopeObject *self, PyObject *Py_UNUSED(ignored))
{
    if (self->max_span && !max_spans_on)
        Py_RETURN_NONE;
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

static PyObject *scope_get_max_span(ScopeObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->max_span);
}

static PyObject *scope_repr(ScopeObject *self)
{
    return PyUnicode_FromFormat("<%s %R>", type_name((PyObject *)self), self->name);
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
    {"max_span", (getter)scope_get_max_span, NULL, "True for Trace: follows MAX's switch.", NULL},
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

/* The instances' vectorcall function, given to the scope types only where
 * the running Python has vectorcall (use_vectorcall); no members else. */
static PyMemberDef scope_vectorcall_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(ScopeObject, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};
static PyMemberDef no_members[] = {{NULL, 0, 0, 0, NULL}};

static PyType_Slot scope_slots[] = {
    {Py_tp_new, scope_new},       {Py_tp_dealloc, scope_dealloc},
    {Py_tp_getset, scope_getset}, {Py_tp_call, scope_call},
    {Py_tp_repr, scope_repr},     {Py_tp_doc, (void *)scope_doc},
    {Py_tp_members, no_members},  {0, NULL},
};

static PyType_Slot cpu_timed_slots[] = {
    {Py_tp_new, cpu_timed_new},   {Py_tp_dealloc, scope_dealloc},
    {Py_tp_getset, scope_getset}, {Py_tp_call, scope_call},
    {Py_tp_repr, scope_repr},     {Py_tp_doc, (void *)cpu_timed_doc},
    {Py_tp_members, no_members},  {0, NULL},
};

static PyType_Slot trace_slots[] = {
    {Py_tp_new, trace_new},         {Py_tp_dealloc, scope_dealloc}, {Py_tp_methods, trace_methods},
    {Py_tp_getset, scope_getset},   {Py_tp_call, scope_call},       {Py_tp_repr, scope_repr},
    {Py_tp_doc, (void *)trace_doc}, {Py_tp_members, no_members},    {0, NULL},
};

static PyType_Spec scope_spec = {"kscope._kscope.scope", sizeof(ScopeObject), 0, Py_TPFLAGS_DEFAULT,
                                 scope_slots};
static PyType_Spec cpu_timed_spec = {"kscope._kscope.cpu_timed_scope", sizeof(ScopeObject), 0,
                                     Py_TPFLAGS_DEFAULT, cpu_timed_slots};
static PyType_Spec trace_spec = {"kscope._kscope.Trace", sizeof(ScopeObject), 0, Py_TPFLAGS_DEFAULT,
                                 trace_slots};

/* ------------------------------------------------------------- scope_method */

/* __enter__ / __exit__ of the scope types (see scope_call). */
typedef struct {
    PyObject_HEAD int nargs; /* 0: __enter__, 3: __exit__ */
} ScopeMethodObject;

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
static PyObject *scope_method_call(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    ScopeMethodObject *desc = (ScopeMethodObject *)obj;
    Py_ssize_t nargs = PyTuple_Size(args);
    PyObject *self = nargs > 0 ? PyTuple_GetItem(args, 0) : NULL;
    if (nargs != desc->nargs + 1 || !tp_is_scope(Py_TYPE(self)) ||
        (kwargs && PyDict_Size(kwargs))) {
        PyErr_Format(PyExc_TypeError, "%s takes a kscope scope%s",
                     desc->nargs ? "__exit__" : "__enter__",
                     desc->nargs ? " and (exc_type, exc, traceback)" : "");
        return NULL;
    }
    return desc->nargs ? scope_exit((ScopeObject *)self) : scope_enter((ScopeObject *)self, NULL);
}

/* Made only by add_scope_methods. */
static PyObject *scope_method_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    (void)tp;
    (void)args;
    (void)kwargs;
    PyErr_SetString(PyExc_TypeError, "cannot create 'kscope._kscope.scope_method' instances");
    return NULL;
}

static void scope_method_dealloc(PyObject *self)
{
    release_object(self);
}

static PyObject *scope_method_repr(ScopeMethodObject *self)
{
    return PyUnicode_FromFormat("<slot '%s' of kscope scopes>",
                                self->nargs ? "__exit__" : "__enter__");
}

static PyType_Slot scope_method_slots[] = {
    {Py_tp_new, scope_method_new},   {Py_tp_dealloc, scope_method_dealloc},
    {Py_tp_call, scope_method_call}, {Py_tp_descr_get, scope_method_get},
    {Py_tp_repr, scope_method_repr}, {0, NULL},
};

static PyType_Spec scope_method_spec = {"kscope._kscope.scope_method", sizeof(ScopeMethodObject), 0,
                                        Py_TPFLAGS_DEFAULT, scope_method_slots};

/* Give the instances of spec's type the vectorcall protocol when the
 * running Python's stable ABI has it (see module.h). */
static void use_vectorcall(PyType_Spec *spec)
{
    if (!has_vectorcall)
        return;
    spec->flags |= TPFLAGS_HAVE_VECTORCALL;
    for (PyType_Slot *slot = spec->slots; slot->slot; slot++)
        if (slot->slot == Py_tp_members)
            slot->pfunc = scope_vectorcall_members;
}

/* Put __enter__ and __exit__ into a scope type. */
static int add_scope_methods(PyTypeObject *method_type, PyTypeObject *tp)
{
    static const char *const names[2] = {"__enter__", "__exit__"};
    for (int i = 0; i < 2; i++) {
        ScopeMethodObject *m = PyObject_New(ScopeMethodObject, method_type);
        if (!m)
            return -1;
        m->nargs = i ? 3 : 0;
        int rc = PyObject_SetAttrString((PyObject *)tp, names[i], (PyObject *)m);
        Py_DECREF(m);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------- ScopedFunction */

/* A callable that runs `func` inside a scope. It has a __dict__ so that
 * functools.update_wrapper can give it the function's name and docstring,
 * and binds like a function when it is a class attribute. */
typedef struct {
    PyObject_HEAD PyObject *func;
    PyObject *name;    /* str */
    PyObject *utf8;    /* NULL, or the bytes copy loc.name points into (3.9) */
    PyObject *metrics; /* dict or NULL */
    kscope_loc loc;    /* as in ScopeObject */
    int max_span;      /* traced: records only while max_spans_on */
    PyObject *dict;
} ScopedFnObject;

/* types.MethodType, what a ScopedFunction binds to an instance with (a
 * built-in type: it lives as long as the interpreter). */
static PyObject *method_type;

static PyObject *scoped_fn_call(PyObject *obj, PyObject *args, PyObject *kwargs)
{
    ScopedFnObject *self = (ScopedFnObject *)obj;
    if (self->max_span && !max_spans_on)
        return PyObject_Call(self->func, args, kwargs);
    int pushed = scope_push_loc(&self->loc, 1, self->metrics);
    if (pushed < 0)
        return NULL;
    if (self->max_span && !pushed)
        max_spans_lost++;
    PyObject *res = PyObject_Call(self->func, args, kwargs);
    if (pushed) {
        int rc = scope_pop_loc(&self->loc);
        if (res && check_rc(rc) < 0) {
            Py_DECREF(res);
            return NULL;
        }
    }
    return res;
}

/* ScopedFunction(func, name, metrics=None, color=None, flags=0, max_span=False) */
static PyObject *scoped_fn_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"func", "name", "metrics", "color", "flags", "max_span", NULL};
    PyObject *func, *name, *metrics = NULL, *color = NULL;
    unsigned int flags = 0;
    int max_span = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OU|OOIp:ScopedFunction", kwlist, &func, &name,
                                     &metrics, &color, &flags, &max_span))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_Format(PyExc_TypeError, "ScopedFunction wraps a callable, not %.100s",
                     type_name(func));
        return NULL;
    }
    const char *utf8;
    PyObject *keep;
    uint32_t c;
    if (scope_args(name, &metrics, color, &utf8, &keep, &c) < 0)
        return NULL;
    ScopedFnObject *self = (ScopedFnObject *)PyType_GenericAlloc(tp, 0);
    if (!self) {
        Py_XDECREF(keep);
        return NULL;
    }
    self->func = Py_NewRef(func);
    self->name = Py_NewRef(name);
    self->utf8 = keep;
    self->metrics = metrics && PyDict_Size(metrics) ? Py_NewRef(metrics) : NULL;
    loc_init(&self->loc, utf8, c, flags);
    self->max_span = max_span;
    self->dict = NULL;
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
    PyObject_GC_UnTrack(self);
    scoped_fn_clear(self);
    Py_CLEAR(self->name);
    Py_CLEAR(self->utf8);
    release_object(self);
}

/* Bind to an instance like a plain function does. */
static PyObject *scoped_fn_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyObject_CallFunctionObjArgs(method_type, self, obj, NULL);
}

static PyObject *scoped_fn_repr(ScopedFnObject *self)
{
    return PyUnicode_FromFormat("<kscope scoped %R of %R>", self->name, self->func);
}

/* __dict__: made on first use (functools.update_wrapper fills it). */
static PyObject *scoped_fn_get_dict(ScopedFnObject *self, void *Py_UNUSED(closure))
{
    if (!self->dict && !(self->dict = PyDict_New()))
        return NULL;
    return Py_NewRef(self->dict);
}

static int scoped_fn_set_dict(ScopedFnObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    if (!value || !PyDict_Check(value)) {
        PyErr_SetString(PyExc_TypeError, "__dict__ must be set to a dict");
        return -1;
    }
    Py_XDECREF(self->dict);
    self->dict = Py_NewRef(value);
    return 0;
}

static PyMemberDef scoped_fn_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(ScopedFnObject, dict), READONLY, NULL},
    {"scope_name", T_OBJECT, offsetof(ScopedFnObject, name), READONLY, "The scope's name."},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef scoped_fn_getset[] = {
    {"__dict__", (getter)scoped_fn_get_dict, (setter)scoped_fn_set_dict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot scoped_fn_slots[] = {
    {Py_tp_new, scoped_fn_new},
    {Py_tp_dealloc, scoped_fn_dealloc},
    {Py_tp_traverse, scoped_fn_traverse},
    {Py_tp_clear, scoped_fn_clear},
    {Py_tp_call, scoped_fn_call},
    {Py_tp_descr_get, scoped_fn_descr_get},
    {Py_tp_members, scoped_fn_members},
    {Py_tp_getset, scoped_fn_getset},
    {Py_tp_repr, scoped_fn_repr},
    {Py_tp_doc,
     "ScopedFunction(func, name, metrics=None, color=None, flags=0, max_span=False)\n--\n\n"
     "Calls func inside a scope (what the decorators return)."},
    {0, NULL},
};

static PyType_Spec scoped_fn_spec = {"kscope._kscope.ScopedFunction", sizeof(ScopedFnObject), 0,
                                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, scoped_fn_slots};

/* ------------------------------------------------------------ module setup */

int scopes_exec(PyObject *m, module_state *st)
{
    trace_default_color = kscope_color("modular_purple");
    if (!method_type) {
        PyObject *types = PyImport_ImportModule("types");
        method_type = types ? PyObject_GetAttrString(types, "MethodType") : NULL;
        Py_XDECREF(types);
        if (!method_type)
            return -1;
    }
    use_vectorcall(&scope_spec);
    use_vectorcall(&cpu_timed_spec);
    use_vectorcall(&trace_spec);
    st->method_type = (PyTypeObject *)PyType_FromSpec(&scope_method_spec);
    if (!st->method_type)
        return -1;
    if (!(st->scope_type = add_type(m, &scope_spec, "scope")) ||
        !(st->cpu_timed_type = add_type(m, &cpu_timed_spec, "cpu_timed_scope")) ||
        !(st->trace_type = add_type(m, &trace_spec, "Trace")) ||
        !(st->scoped_fn_type = add_type(m, &scoped_fn_spec, "ScopedFunction")))
        return -1;
    if (add_scope_methods(st->method_type, st->scope_type) < 0 ||
        add_scope_methods(st->method_type, st->cpu_timed_type) < 0 ||
        add_scope_methods(st->method_type, st->trace_type) < 0)
        return -1;
    return 0;
}
