/*
 * graphs.c - tensor metrics (scope metrics and launch metadata whose value
 * is a tensor) and GPU graph capture (CUDA graphs).
 *
 * Outside a capture a tensor's value is read at once (.item(), or .tolist()
 * for one with several elements). Inside a capture that read would end the
 * program's capture (cudaErrorStreamCaptureInvalidated), and the value does
 * not exist yet anyway: each launch of the graph computes it. So the
 * tensor is copied, by work captured into the graph, into a flat float64
 * or int64 tensor (kscope's own work: the backend never shows it), and the
 * backend is given that copy's device address: after each launch it copies
 * the values back and adds them under <captured_at> (src/gpu/cupti/graphs.c).
 *
 * The copy must live as long as the graph writes to it: kscope._graphs.held
 * keeps it under the token the backend gave, until the backend says the
 * graph is gone (graph_release, called whenever a copy is kept and at each
 * finalize).
 */
#include "module.h"

#include "attrib/attrib.h"
#include "kscope-internal.h"

/* ------------------------------------------------------------- the checks */

/* What frameworks call the default backend's devices ("is_<it>" on a
 * tensor, torch.<it>), from the registry; NULL: none. */
static const char *framework_device(void)
{
    const kscope__backend *b = default_backend();
    return b ? b->framework_device : NULL;
}

/* The truth of `o`, a new reference that is released: 1, 0, -1 with an
 * exception; 0 when o is NULL (a lookup or call that failed: its exception
 * is dropped, as that of an object that is not what is looked for). */
static int truth_of(PyObject *o)
{
    if (!o) {
        PyErr_Clear();
        return 0;
    }
    int yes = PyObject_IsTrue(o);
    Py_DECREF(o);
    return yes;
}

/* Whether `value` is a tensor on the backend's devices: 1, 0, -1 with an
 * exception. */
static int is_gpu_tensor(PyObject *value, const char *device)
{
    char attr[64];
    snprintf(attr, sizeof attr, "is_%s", device);
    return truth_of(PyObject_GetAttrString(value, attr));
}

/* Whether torch says the current stream captures (torch is loaded: a GPU
 * tensor came from it). 1, 0, -1 with an exception. */
static int torch_capturing(const char *device)
{
    PyObject *name = PyUnicode_FromString("torch");
    if (!name)
        return -1;
    PyObject *torch = PyImport_GetModule(name);
    Py_DECREF(name);
    if (!torch)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *mod = PyObject_GetAttrString(torch, device);
    Py_DECREF(torch);
    if (!mod) {
        PyErr_Clear();
        return 0;
    }
    PyObject *r = PyObject_CallMethod(mod, "is_current_stream_capturing", NULL);
    Py_DECREF(mod);
    return truth_of(r);
}

int tensor_in_capture(PyObject *value)
{
    const char *device = framework_device();
    if (!device)
        return 0;
    int gpu = is_gpu_tensor(value, device);
    if (gpu <= 0)
        return gpu;
    if (kscope__capturing(1))
        return 1;
    return torch_capturing(device);
}

/* ----------------------------------------------------------- held copies */

static PyObject *held_dict(void)
{
    PyObject *mod = PyImport_ImportModule("kscope._graphs");
    if (!mod)
        return NULL;
    PyObject *held = PyObject_GetAttrString(mod, "held");
    Py_DECREF(mod);
    if (held && !PyDict_Check(held)) {
        Py_DECREF(held);
        PyErr_SetString(PyExc_TypeError, "kscope._graphs.held is not a dict");
        return NULL;
    }
    return held;
}

/* Drop the copies of graphs that are gone. 0, or -1 with an exception. */
static int release_held(void)
{
    int64_t tokens[256];
    size_t n = kscope__capture_released(tokens, 256);
    if (n == 0)
        return 0;
    PyObject *held = held_dict();
    if (!held)
        return -1;
    int rc = 0;
    for (; n > 0 && rc == 0; n = kscope__capture_released(tokens, 256)) {
        for (size_t i = 0; i < n && rc == 0; i++) {
            PyObject *key = PyLong_FromLongLong(tokens[i]);
            if (!key || (PyDict_DelItem(held, key) < 0 && !PyErr_ExceptionMatches(PyExc_KeyError)))
                rc = -1;
            else
                PyErr_Clear();
            Py_XDECREF(key);
        }
    }
    Py_DECREF(held);
    return rc;
}

/* graph_release(): drop the copies whose graphs are gone. */
static PyObject *fn_graph_release(PyObject *m, PyObject *Py_UNUSED(ignored))
{
    (void)m;
    return release_held() < 0 ? NULL : Py_NewRef(Py_None);
}

/* ------------------------------------------------------ values in capture */

/* value.<method>() */
static PyObject *call0(PyObject *value, const char *method)
{
    return PyObject_CallMethod(value, method, NULL);
}

/* A flat float64 (*is_float) or int64 copy of tensor `value`, made by work
 * the capture records as kscope's own. */
static PyObject *captured_copy(PyObject *value, int *is_float)
{
    PyObject *fp = call0(value, "is_floating_point");
    if (!fp)
        return NULL;
    *is_float = PyObject_IsTrue(fp);
    Py_DECREF(fp);
    if (*is_float < 0)
        return NULL;
    PyObject *det = call0(value, "detach");
    if (!det)
        return NULL;
    kscope__capture_hide(1);
    PyObject *conv = call0(det, *is_float ? "double" : "long");
    PyObject *flat = conv ? PyObject_CallMethod(conv, "reshape", "(i)", -1) : NULL;
    PyObject *copy = flat ? call0(flat, "clone") : NULL;
    kscope__capture_hide(0);
    Py_DECREF(det);
    Py_XDECREF(conv);
    Py_XDECREF(flat);
    return copy;
}

/* An integer attribute or method result of `o` (numel(), data_ptr(),
 * get_device()). */
static int call_int(PyObject *o, const char *method, long long *out)
{
    PyObject *r = call0(o, method);
    if (!r)
        return -1;
    *out = PyLong_AsLongLong(r);
    Py_DECREF(r);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

int capture_tensor(const char *name, PyObject *value, const char *kernel)
{
    const kscope__metric_def *def = kscope__metric_lookup(name);
    if (!def) {
        return check_rc(KSCOPE_EINVAL);
    }
    int is_float;
    PyObject *copy = captured_copy(value, &is_float);
    long long n = 0, ptr = 0, device = 0;
    if (!copy || call_int(copy, "numel", &n) < 0 || call_int(copy, "data_ptr", &ptr) < 0 ||
        call_int(copy, "get_device", &device) < 0) {
        Py_XDECREF(copy);
        return -1;
    }
    kscope__graph_value v = {.def = def,
                             .n = (size_t)n,
                             .device_ptr = (uint64_t)ptr,
                             .kernel = kernel ? kscope__intern(kernel) : 0,
                             .device = device > 0 ? (uint32_t)device : 0};
    v.type = n == 1 ? (is_float ? KSCOPE__T_DOUBLE : KSCOPE__T_INT)
                    : (is_float ? KSCOPE__T_DOUBLEVEC : KSCOPE__T_INTVEC);
    int64_t token = n > 0 ? kscope__capture_value(&v) : 0;
    if (token == 0)
        kscope__warn_once("tensor-capture",
                          "a tensor metric recorded during a %s graph capture is left out: "
                          "the capture began before kscope's GPU capture did",
                          kscope__gpu_device_type());
    int rc = check_rc(token);
    if (token > 1) { /* keep the copy as long as the graph writes to it */
        PyObject *held = held_dict();
        PyObject *key = held ? PyLong_FromLongLong(token) : NULL;
        if (!key || PyDict_SetItem(held, key, copy) < 0)
            rc = -1;
        Py_XDECREF(key);
        Py_XDECREF(held);
    }
    Py_DECREF(copy);
    return rc == 0 ? release_held() : rc;
}

PyMethodDef graph_functions[] = {
    {"graph_release", fn_graph_release, METH_NOARGS,
     "graph_release(): drop the metric copies of GPU graphs that are gone"},
    {NULL, NULL, 0, NULL},
};
