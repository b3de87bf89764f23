/*
 * diag.c - resource diagnostics: GPU statistics through the GPU vendors'
 * libraries (gpu_init, gpu_stats, gpu_vendors, ...), the CPU use of
 * processes (CpuProcs), the background sampler (Recorder) and the
 * processes behind a port (pids_for_port).
 */
#include "module.h"

#include "diag/diag.h"

/* ----------------------------------------------------- resource diagnostics */

/* A dict of the fields a GPU sample holds (absent fields left out), with
 * MAX's names, and the GPU's name ("id": "nv0"). */
static PyObject *gpu_stats_dict(const kscope_gpu_stats *g)
{
    PyObject *d = PyDict_New();
    if (!d)
        return NULL;
    char id[32];
    if (kscope_gpu_id(g->device, id, sizeof id) < 0)
        snprintf(id, sizeof id, "gpu%u", g->device);
    PyObject *id_obj = PyUnicode_FromString(id);
    if (!id_obj || PyDict_SetItemString(d, "id", id_obj) < 0) {
        Py_XDECREF(id_obj);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(id_obj);
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
    return int_or_raise(kscope_gpu_init());
}

static PyObject *fn_gpu_shutdown(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    kscope_gpu_shutdown();
    Py_RETURN_NONE;
}

/* A text about GPU `arg` (an index) that `get` writes (kscope_gpu_name,
 * kscope_gpu_id), as a str. A negative index is asked as UINT32_MAX, which
 * no GPU has, so that the library's "no GPU" error tells it. */
static PyObject *gpu_text(PyObject *arg, int (*get)(uint32_t device, char *buf, size_t size))
{
    long dev = PyLong_AsLong(arg);
    if (dev == -1 && PyErr_Occurred())
        return NULL;
    char buf[256];
    int rc = get(dev < 0 ? UINT32_MAX : (uint32_t)dev, buf, sizeof buf);
    if (check_rc(rc) < 0)
        return NULL;
    return PyUnicode_FromString(buf);
}

/* gpu_name(index) -> the GPU's product name. */
static PyObject *fn_gpu_name(PyObject *m, PyObject *arg)
{
    (void)m;
    return gpu_text(arg, kscope_gpu_name);
}

/* gpu_id(index) -> the GPU's name in every output ("nv0"). */
static PyObject *fn_gpu_id(PyObject *m, PyObject *arg)
{
    (void)m;
    return gpu_text(arg, kscope_gpu_id);
}

/* gpu_vendors() -> [(id, library, why), ...]: each GPU vendor's prefix of
 * its GPUs' names, its library, and why that did not load at the last
 * gpu_init ("" when it did). */
static PyObject *fn_gpu_vendors(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    PyObject *list = PyList_New(0);
    const kscope__gpu_vendor *v;
    for (size_t i = 0; list && (v = kscope__gpu_vendor_at(i)); i++)
        append_new(&list, Py_BuildValue("(sss)", v->id, v->label, kscope__gpu_vendor_error(i)));
    return list;
}

const kscope__backend *default_backend(void)
{
    const kscope__backend *b = kscope__backend_default();
    return b ? b : kscope__backend_at(0);
}

/* gpu_probe() -> what this machine offers the default GPU backend, found
 * without starting it: {"backend", "devices", "tool" (its tool library
 * loads), "diag" (its GPUs' diagnostics library loads), "why" (what is
 * missing, one line)}; None when the registry has no backend to ask. */
static PyObject *fn_gpu_probe(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    const kscope__backend *b = default_backend();
    if (!b || !b->probe)
        Py_RETURN_NONE;
    kscope__probe p;
    b->probe(&p);
    const kscope__gpu_vendor *v;
    int diag = 0;
    for (size_t i = 0; b->diag_id && (v = kscope__gpu_vendor_at(i)); i++)
        if (strcmp(v->id, b->diag_id) == 0 && (diag = v->found()) == 0) {
            size_t used = strlen(p.why);
            snprintf(p.why + used, sizeof p.why - used, "%s%s not found", used ? "; " : "",
                     v->label);
        }
    return Py_BuildValue("{s:s,s:i,s:O,s:O,s:O,s:s}", "backend", b->name, "devices", p.devices,
                         "tool", p.tool ? Py_True : Py_False, "diag", diag ? Py_True : Py_False,
                         "runtime", p.runtime ? Py_True : Py_False, "why", p.why);
}

/* gpu_profiler(start) -> None: the default GPU backend's runtime profiler
 * start (True) or stop (False), as the program would call it (what
 * --capture-range follows); RuntimeError when it cannot be called. */
static PyObject *fn_gpu_profiler(PyObject *m, PyObject *arg)
{
    (void)m;
    int start = PyObject_IsTrue(arg);
    if (start < 0)
        return NULL;
    const kscope__backend *b = default_backend();
    if (!b || !b->profiler) {
        PyErr_SetString(PyExc_RuntimeError, "no GPU backend with profiler start/stop calls");
        return NULL;
    }
    if (check_rc(b->profiler(start)) < 0)
        return NULL;
    Py_RETURN_NONE;
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
    if (check_rc(rc) < 0)
        return NULL;
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
    if (check_rc(rc) < 0)
        return NULL;
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
        if (name)
            append_new(&list, PyUnicode_FromString(name));
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
    PyObject *list = check_rc(n) < 0 ? NULL : PyList_New(0);
    for (int i = 0; list && i < n; i++)
        append_new(&list, PyLong_FromLong(pids[i]));
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
    Py_ssize_t len = PySequence_Size(seq);
    int *a = PyMem_Malloc((size_t)(len ? len : 1) * sizeof *a);
    if (!a) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PySequence_GetItem(seq, i);
        long v = item ? PyLong_AsLong(item) : -1;
        Py_XDECREF(item);
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
    CpuProcsObject *self = (CpuProcsObject *)PyType_GenericAlloc(tp, 0);
    if (self && (self->procs = PyMem_Malloc((n ? n : 1) * sizeof *self->procs)) != NULL)
        memset(self->procs, 0, (n ? n : 1) * sizeof *self->procs);
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
    if (check_rc(rc) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *cpu_procs_update(CpuProcsObject *self, PyObject *Py_UNUSED(ignored))
{
    kscope_cpu_stats t;
    int rc = kscope_cpu_update(self->procs, self->n, &t);
    if (check_rc(rc) < 0)
        return NULL;
    PyObject *per = PyList_New(0);
    for (size_t i = 0; per && i < self->n; i++) {
        const kscope_cpu_proc *p = &self->procs[i];
        append_new(&per, Py_BuildValue("{s:i,s:O,s:d,s:d,s:d,s:d,s:K,s:I}", "pid", p->pid, "exited",
                                       p->exited ? Py_True : Py_False, "user", p->user, "system",
                                       p->system, "user_percent", p->user_percent, "system_percent",
                                       p->system_percent, "rss_bytes",
                                       (unsigned long long)p->rss_bytes, "threads", p->threads));
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
    PyMem_Free(self->procs);
    release_object(self);
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
                                     Py_TPFLAGS_DEFAULT, cpu_procs_slots};

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
    RecorderObject *self = (RecorderObject *)PyType_GenericAlloc(tp, 0);
    if (!self) {
        PyMem_Free(a);
        return NULL;
    }
    int rc = kscope_recorder_start(&o, &self->rec);
    PyMem_Free(a);
    if (check_rc(rc) < 0) {
        self->rec = NULL;
        Py_DECREF(self);
        return NULL;
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
    for (uint32_t i = 0; gpus && i < s->ngpu && i < KSCOPE_SAMPLE_GPUS; i++)
        append_new(&gpus, gpu_stats_dict(&s->gpu[i]));
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
        if (check_rc(rc) < 0) {
            Py_DECREF(list);
            return NULL;
        }
        append_new(&list, sample_dict(&s));
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
    if (self->rec) {
        Py_BEGIN_ALLOW_THREADS kscope_recorder_free(self->rec);
        Py_END_ALLOW_THREADS
    }
    release_object(self);
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
                                    Py_TPFLAGS_DEFAULT, recorder_slots};

PyMethodDef diag_functions[] = {
    {"gpu_init", fn_gpu_init, METH_NOARGS, "gpu_init() -> GPU count (pair with gpu_shutdown)"},
    {"gpu_shutdown", fn_gpu_shutdown, METH_NOARGS, "gpu_shutdown()"},
    {"gpu_name", fn_gpu_name, METH_O, "gpu_name(index) -> product name"},
    {"gpu_stats", fn_gpu_stats, METH_O, "gpu_stats(index) -> dict of the fields reported"},
    {"gpu_probe", fn_gpu_probe, METH_NOARGS,
     "gpu_probe() -> what the default GPU backend finds here, starting nothing"},
    {"gpu_profiler", fn_gpu_profiler, METH_O,
     "gpu_profiler(start) -> None: the GPU runtime's profiler start/stop"},
    {"gpu_id", fn_gpu_id, METH_O, "gpu_id(index) -> the GPU's name (\"nv0\")"},
    {"gpu_vendors", fn_gpu_vendors, METH_NOARGS,
     "gpu_vendors() -> [(prefix, library, why not loaded), ...]"},
    {"gpu_process_memory", fn_gpu_process_memory, METH_VARARGS,
     "gpu_process_memory(index, pid) -> bytes"},
    {"throttle_names", fn_throttle_names, METH_O, "throttle_names(reasons) -> [name, ...]"},
    {"pids_for_port", fn_pids_for_port, METH_O, "pids_for_port(port) -> [pid, ...]"},
    {NULL, NULL, 0, NULL},
};

int diag_exec(PyObject *m, module_state *st)
{
    if (!(st->cpu_procs_type = add_type(m, &cpu_procs_spec, "CpuProcs")) ||
        !(st->recorder_type = add_type(m, &recorder_spec, "Recorder")))
        return -1;
    return 0;
}
