/*
 * tracer.c - MAX's `Tracer`: a stack of spans pushed and popped by hand
 * over kscope_tracer (push/pop/next/cleanup/mark, a context manager),
 * closed when it is cleaned up, leaves a `with`, or dies.
 */
#include "module.h"

/* ------------------------------------------------------------------ Tracer */

/* MAX's Tracer over kscope_tracer: a stack of spans pushed and popped by
 * hand, closed when the object is cleaned up, exits a `with`, or dies. The
 * names are kept so mark() can name the instant after the top span. */
typedef struct {
    PyObject_HEAD kscope_tracer t;
    PyObject *names;                    /* list per level: the message, or None
                                           where MAX pushes None (no message,
                                           switch off) */
    uint32_t colors[KSCOPE_TRACER_MAX]; /* per level */
    unsigned long thread;               /* the creating thread: its scope stack holds ours */
} TracerObject;

static int tracer_push_one(TracerObject *self, PyObject *message, PyObject *color)
{
    uint32_t c = 0;
    const char *name = NULL;
    PyObject *keep = NULL;
    if (message && message != Py_None && !(name = utf8_of(message, "message", &keep)))
        return -1;
    if (color_of(color, &c) < 0) {
        Py_XDECREF(keep);
        return -1;
    }
    if (!color || color == Py_None)
        c = trace_default_color;
    int rc = 0, full = 0, span = name && max_spans_on;
    if (self->t.depth < KSCOPE_TRACER_MAX)
        self->colors[self->t.depth] = c;
    if (span) {
        rc = kscope_tracer_push(&self->t, name, c);
        if (rc == 0 && !self->t.real[self->t.depth - 1])
            max_spans_lost++;
    } else if (self->t.depth < KSCOPE_TRACER_MAX) {
        /* No message or MAX's switch off: a placeholder level, as MAX
         * pushes None. */
        self->t.real[self->t.depth++] = 0;
    } else {
        full = 1;
    }
    Py_XDECREF(keep);
    if (full) {
        PyErr_Format(PyExc_RecursionError, "tracer holds %d spans already", KSCOPE_TRACER_MAX);
        return -1;
    }
    if (check_rc(rc) < 0)
        return -1;
    return PyList_Append(self->names, span ? message : Py_None);
}

static int tracer_pop_one(TracerObject *self)
{
    int rc = kscope_tracer_pop(&self->t);
    if (rc < 0) {
        if (rc == KSCOPE_EEMPTY)
            PyErr_SetString(PyExc_IndexError, "pop from an empty Tracer");
        else
            check_rc(rc);
        return -1;
    }
    Py_ssize_t n = PyList_Size(self->names);
    return n > 0 ? PyList_SetSlice(self->names, n - 1, n, NULL) : 0;
}

static PyObject *tracer_new(PyTypeObject *tp, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"message", "color", NULL};
    PyObject *message = NULL, *color = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:Tracer", kwlist, &message, &color))
        return NULL;
    TracerObject *self = (TracerObject *)PyType_GenericAlloc(tp, 0);
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
    if (PyList_SetSlice(self->names, 0, PyList_Size(self->names), NULL) < 0)
        return NULL;
    return none_or_raise(rc);
}

static PyObject *tracer_mark(TracerObject *self, PyObject *Py_UNUSED(ignored))
{
    Py_ssize_t n = PyList_Size(self->names);
    if (n == 0 || self->t.depth == 0) {
        PyErr_SetString(PyExc_AssertionError, "stack underflow in Tracer.mark()");
        return NULL;
    }
    PyObject *top = PyList_GetItem(self->names, n - 1);
    if (top == Py_None || !self->t.real[self->t.depth - 1])
        Py_RETURN_NONE; /* a placeholder: nothing to mark */
    PyObject *keep;
    const char *name = utf8_of(top, "message", &keep);
    if (!name)
        return NULL;
    int rc = kscope_tracer_mark(&self->t, name);
    Py_XDECREF(keep);
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

/* trace_stack: MAX's list, one entry per level: a Trace of the level's
 * message and colour, or None where MAX pushes None. A new list (a
 * snapshot: changing it changes no span). */
static PyObject *tracer_get_trace_stack(TracerObject *self, void *Py_UNUSED(closure))
{
    PyObject *mod = PyImport_ImportModule("kscope._kscope");
    PyObject *trace = mod ? PyObject_GetAttrString(mod, "Trace") : NULL;
    Py_XDECREF(mod);
    Py_ssize_t n = trace ? PyList_Size(self->names) : -1;
    PyObject *list = n >= 0 ? PyList_New(0) : NULL;
    for (Py_ssize_t i = 0; list && i < n; i++) {
        PyObject *name = PyList_GetItem(self->names, i);
        PyObject *entry =
            name == Py_None ? Py_NewRef(Py_None)
            : i < KSCOPE_TRACER_MAX
                ? PyObject_CallFunction(trace, "Ok", name, (unsigned long)self->colors[i])
                : NULL;
        append_new(&list, entry);
    }
    Py_XDECREF(trace);
    return list;
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
    while (self->t.depth > 0 && PyList_Size(self->names) >= self->t.depth) {
        int i = self->t.depth - 1;
        PyObject *name = PyList_GetItem(self->names, i);
        if (self->t.real[i]) {
            PyObject *keep = NULL;
            const char *utf8 = name ? utf8_of(name, "message", &keep) : NULL;
            int rc = utf8 ? kscope_exit(utf8) : -1;
            Py_XDECREF(keep);
            if (rc < 0)
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

/* The finalizer runs here when the last reference goes (the garbage
 * collector runs it first for a tracer in a cycle; a second run finds
 * nothing left to close). */
static void tracer_dealloc(TracerObject *self)
{
    PyObject_GC_UnTrack(self);
    tracer_finalize(self);
    tracer_clear(self);
    release_object(self);
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
    {"trace_stack", (getter)tracer_get_trace_stack, NULL,
     "MAX's stack: a Trace per span, None per placeholder (a snapshot).", NULL},
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

static PyType_Spec tracer_spec = {"kscope._kscope.Tracer", sizeof(TracerObject), 0,
                                  Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, tracer_slots};

int tracer_exec(PyObject *m, module_state *st)
{
    st->tracer_type = add_type(m, &tracer_spec, "Tracer");
    return st->tracer_type ? 0 : -1;
}
