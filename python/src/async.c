/*
 * async.c - AsyncScope: a scope around a coroutine from its first resume
 * to its end (kscope_async_*), for the decorators on async functions
 * (_wrap._StepScoped drives it). One call and the wall time per await of
 * the coroutine; each step (resume to suspension) is the thread's innermost
 * scope while it runs, so work of the step lands under it.
 */
#include "module.h"

typedef struct {
    PyObject_HEAD kscope_async a;
    PyObject *name; /* str */
    PyObject *keep; /* NULL, or the bytes copy utf8 points into (3.9) */
    const char *utf8;
    uint32_t color, flags;
    int max_span; /* traced: counted in max_spans_lost when not recorded */
} AsyncScopeObject;

/* AsyncScope(name, color=None, flags=0, max_span=False) */
static PyObject *async_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"name", "color", "flags", "max_span", NULL};
    PyObject *name, *color = NULL;
    unsigned int flags = 0;
    int max_span = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OIp:AsyncScope", kwlist, &name, &color,
                                     &flags, &max_span))
        return NULL;
    uint32_t c;
    PyObject *keep;
    const char *utf8 = utf8_of(name, "scope name", &keep);
    if (!utf8)
        return NULL;
    AsyncScopeObject *self =
        color_of(color, &c) < 0 ? NULL : (AsyncScopeObject *)PyType_GenericAlloc(type, 0);
    if (!self) {
        Py_XDECREF(keep);
        return NULL;
    }
    self->name = Py_NewRef(name);
    self->keep = keep;
    self->utf8 = utf8;
    self->color = c;
    self->flags = flags;
    self->max_span = max_span;
    return (PyObject *)self;
}

static void async_dealloc(PyObject *o)
{
    AsyncScopeObject *self = (AsyncScopeObject *)o;
    if (self->a.open)
        kscope_async_suspend(&self->a); /* never leave a step on the stack */
    Py_XDECREF(self->name);
    Py_XDECREF(self->keep);
    release_object(o);
}

/* begin(metrics=None) -> True when recorded: counts the call and opens the
 * first step, the metrics (added once per call) landing on the scope. */
static PyObject *async_begin(PyObject *o, PyObject *args)
{
    AsyncScopeObject *self = (AsyncScopeObject *)o;
    PyObject *metrics = Py_None;
    if (!PyArg_ParseTuple(args, "|O:begin", &metrics))
        return NULL;
    int rc = kscope_async_begin(&self->a, self->utf8, self->color, self->flags);
    if (rc == 0)
        rc = kscope_async_resume(&self->a);
    if (check_rc(rc) < 0)
        return NULL;
    if (rc > 0) {
        if (self->max_span)
            max_spans_lost++;
        Py_RETURN_FALSE;
    }
    if (metrics != Py_None && add_metrics_dict(metrics) < 0) {
        kscope_async_end(&self->a);
        return NULL;
    }
    Py_RETURN_TRUE;
}

/* resume(): open a step (nothing when one is open or nothing is recorded). */
static PyObject *async_resume(PyObject *o, PyObject *Py_UNUSED(ignored))
{
    AsyncScopeObject *self = (AsyncScopeObject *)o;
    if (self->a.node && !self->a.open) {
        int rc = kscope_async_resume(&self->a);
        if (check_rc(rc) < 0)
            return NULL;
    }
    Py_RETURN_NONE;
}

/* suspend() -> False when the step stays open: the coroutine left a scope
 * of its own open across the await (a `with scope()` around it); the step
 * then closes at a later suspension, or at the end, once that scope is
 * left. */
static PyObject *async_suspend(PyObject *o, PyObject *Py_UNUSED(ignored))
{
    AsyncScopeObject *self = (AsyncScopeObject *)o;
    int rc = kscope_async_suspend(&self->a);
    if (rc == KSCOPE_EMISMATCH)
        Py_RETURN_FALSE;
    if (check_rc(rc) < 0)
        return NULL;
    Py_RETURN_TRUE;
}

/* end(): close the open step and add the time since begin. */
static PyObject *async_end(PyObject *o, PyObject *Py_UNUSED(ignored))
{
    AsyncScopeObject *self = (AsyncScopeObject *)o;
    return none_or_raise(kscope_async_end(&self->a));
}

static PyMethodDef async_methods[] = {
    {"begin", async_begin, METH_VARARGS,
     "begin(metrics=None) -> True when recorded; the first step is open"},
    {"resume", async_resume, METH_NOARGS, "resume(): open a step"},
    {"suspend", async_suspend, METH_NOARGS, "suspend() -> False when the step stays open"},
    {"end", async_end, METH_NOARGS, "end(): close the step, add the time since begin"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot async_slots[] = {
    {Py_tp_new, async_new},
    {Py_tp_dealloc, async_dealloc},
    {Py_tp_methods, async_methods},
    {Py_tp_doc, "AsyncScope(name, color=None, flags=0, max_span=False)\n--\n\n"
                "A scope around a coroutine: one call per await, its wall time."},
    {0, NULL},
};

static PyType_Spec async_spec = {"kscope._kscope.AsyncScope", sizeof(AsyncScopeObject), 0,
                                 Py_TPFLAGS_DEFAULT, async_slots};

int async_exec(PyObject *m, module_state *st)
{
    st->async_type = add_type(m, &async_spec, "AsyncScope");
    return st->async_type ? 0 : -1;
}
