/*
 * fake-cupti.c - stands in for libcupti (and, built whole, for the CUDA
 * driver too) where no GPU is.
 *
 * Built plainly (cc, no CUDA headers) it is cuptiSubscribe alone, for the
 * CUPTI conflict test: it returns $FAKE_CUPTI_RC (39: another subscriber
 * holds it).
 *
 * Built with -DFAKE_CUPTI_FULL and the CUDA headers it is a whole CUPTI
 * and driver, as much of them as kscope's CUPTI backend calls, with a
 * pretend GPU the tests drive through fake_* functions: streams that
 * capture, launches that make graph nodes while their stream captures and
 * kernel records otherwise, graphs instantiated (nodes created and cloned,
 * as CUPTI reports them) and launched (a record per node, carrying its
 * node's id and the launch's correlation id). Each API call runs the
 * subscriber's callbacks at its begin and end, and each graph change its
 * resource callbacks. It counts what a profiler must not do while a
 * capture is open (synchronise a context, flush CUPTI, allocate pinned
 * memory): fake_count("sync_in_capture") and the like. "Device memory" is
 * host memory: a copy from it happens at once.
 */
#include <stdlib.h>

#ifndef FAKE_CUPTI_FULL

int cuptiSubscribe(void **subscriber, void *callback, void *userdata)
{
    (void)callback;
    (void)userdata;
    *subscriber = NULL;
    const char *rc = getenv("FAKE_CUPTI_RC");
    return rc ? atoi(rc) : 0;
}

#else

#include <cupti.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define API       __attribute__((visibility("default")))
#define MAX_NODES 512
#define SLOT      sizeof(CUpti_ActivityKernel10) /* one record per slot */
#define MAX_RECS  4096

typedef struct fake_node {
    uint64_t id;
    char name[64];
} fake_node;

typedef struct fake_graph { /* a graph or an exec: ids share one space */
    uint32_t id;
    fake_node *node[MAX_NODES];
    int n;
} fake_graph;

typedef struct pretend_stream {
    int capturing;
    fake_graph *graph;
} pretend_stream;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc sub_fn;
static void *sub_arg;
static uint8_t enabled[8][1024];
static CUpti_BuffersCallbackRequestFunc want_buffer;
static CUpti_BuffersCallbackCompleteFunc done_buffer;
static CUpti_TimestampCallbackFunc clock_fn;
static uint8_t recs[MAX_RECS][SLOT];
static int nrecs;
static uint32_t next_corr = 1, next_graph = 1;
static uint64_t next_node = 1000;
static int open_captures;
static pretend_stream streams[4];
static struct {
    int sync, flush, alloc, dtoh, sync_in_capture, flush_in_capture, alloc_in_capture;
} counts;

/* ------------------------------------------------------------ callbacks */

static void callback(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    if (sub_fn && d < 8 && id < 1024 && enabled[d][id])
        sub_fn(sub_arg, d, id, data);
}

typedef struct call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_CallbackData data;
    int rc;
    uint32_t outer; /* correlation id of the call this one is made in */
} call;

static __thread uint32_t tl_corr; /* of the API call in progress */

static void call_begin(call *c, CUpti_CallbackDomain d, CUpti_CallbackId cbid, const char *name,
                       const void *params)
{
    memset(c, 0, sizeof *c);
    c->domain = d;
    c->cbid = cbid;
    c->data.functionName = name;
    c->data.functionParams = params;
    c->data.functionReturnValue = &c->rc;
    c->outer = tl_corr;
    if (!tl_corr) { /* a call made inside another (its callbacks) shares its id */
        pthread_mutex_lock(&mu);
        tl_corr = next_corr++;
        pthread_mutex_unlock(&mu);
    }
    c->data.correlationId = tl_corr;
    c->data.callbackSite = CUPTI_API_ENTER;
    callback(d, cbid, &c->data);
}

static void call_end(call *c, int rc)
{
    c->rc = rc;
    c->data.callbackSite = CUPTI_API_EXIT;
    callback(c->domain, c->cbid, &c->data);
    tl_corr = c->outer;
}

static void resource(CUpti_CallbackId id, CUpti_GraphData *g)
{
    CUpti_ResourceData rd = {.resourceDescriptor = g};
    callback(CUPTI_CB_DOMAIN_RESOURCE, id, &rd);
}

static uint64_t now(void)
{
    return clock_fn ? clock_fn() : 0;
}

/* Queue a kernel record (graph_node 0: not graph work). */
/* A kernel name that lives as long as the process, as CUPTI's do: a
 * record may be read after the node that named it was destroyed (mu held). */
static const char *kept_name(const char *name)
{
    static struct kept {
        struct kept *next;
        char name[64];
    } * kept;
    for (struct kept *k = kept; k; k = k->next)
        if (strcmp(k->name, name) == 0)
            return k->name;
    struct kept *k = calloc(1, sizeof *k);
    if (!k)
        return "";
    snprintf(k->name, sizeof k->name, "%s", name);
    k->next = kept;
    kept = k;
    return k->name;
}

static void kernel_record(const char *name, uint32_t corr, uint64_t graph_node)
{
    pthread_mutex_lock(&mu);
    if (nrecs < MAX_RECS) {
        CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)recs[nrecs++];
        memset(k, 0, SLOT);
        k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k->name = kept_name(name);
        k->start = now();
        k->end = k->start + 1000;
        k->correlationId = corr;
        k->graphNodeId = graph_node;
        k->streamId = 7;
    }
    pthread_mutex_unlock(&mu);
}

static void copy_record(uint32_t corr, uint64_t bytes)
{
    pthread_mutex_lock(&mu);
    if (nrecs < MAX_RECS) {
        CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)recs[nrecs++];
        memset(m, 0, SLOT);
        m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
        m->bytes = bytes;
        m->start = now();
        m->end = m->start + 100;
        m->correlationId = corr;
    }
    pthread_mutex_unlock(&mu);
}

/* --------------------------------------------------------- the tests' API */

API CUstream fake_stream(int i)
{
    return (CUstream)&streams[i];
}

API int fake_count(const char *what)
{
    static const struct {
        const char *name;
        int *v;
    } all[] = {{"sync", &counts.sync},
               {"flush", &counts.flush},
               {"alloc", &counts.alloc},
               {"dtoh", &counts.dtoh},
               {"sync_in_capture", &counts.sync_in_capture},
               {"flush_in_capture", &counts.flush_in_capture},
               {"alloc_in_capture", &counts.alloc_in_capture}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(all[i].name, what) == 0)
            return *all[i].v;
    return -1;
}

/* cudaStreamBeginCapture(s, global mode). */
API void fake_begin_capture(CUstream s)
{
    pretend_stream *st = (pretend_stream *)s;
    cudaStreamBeginCapture_v10000_params p = {.stream = (cudaStream_t)s};
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
               CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, "cudaStreamBeginCapture",
               &p);
    st->capturing = 1;
    st->graph = calloc(1, sizeof *st->graph);
    st->graph->id = next_graph++;
    open_captures++;
    call_end(&c, 0);
}

/* cudaStreamEndCapture(s): the graph captured. */
API CUgraph fake_end_capture(CUstream s)
{
    pretend_stream *st = (pretend_stream *)s;
    CUgraph g = NULL;
    cudaStreamEndCapture_v10000_params p = {.stream = (cudaStream_t)s, .pGraph = (cudaGraph_t *)&g};
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
               CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, "cudaStreamEndCapture", &p);
    g = (CUgraph)st->graph;
    st->graph = NULL;
    st->capturing = 0;
    open_captures--;
    call_end(&c, 0);
    return g;
}

/* cudaLaunchKernel on s: a node of the graph s captures, else a kernel. */
API void fake_launch(CUstream s, const char *kernel)
{
    pretend_stream *st = (pretend_stream *)s;
    cudaLaunchKernel_v7000_params p = {.stream = (cudaStream_t)s};
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
               "cudaLaunchKernel", &p);
    if (st && st->capturing && st->graph->n < MAX_NODES) {
        fake_node *n = calloc(1, sizeof *n);
        n->id = next_node++;
        snprintf(n->name, sizeof n->name, "%s", kernel);
        st->graph->node[st->graph->n++] = n;
        CUpti_GraphData g = {.graph = (CUgraph)st->graph, .node = (CUgraphNode)n};
        resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &g);
    } else {
        kernel_record(kernel, c.data.correlationId, 0);
    }
    call_end(&c, 0);
}

/* cudaGraphInstantiate: each node made again, then reported cloned. */
API CUgraphExec fake_instantiate(CUgraph graph)
{
    fake_graph *g = (fake_graph *)graph, *e = calloc(1, sizeof *e);
    e->id = next_graph++;
    for (int i = 0; i < g->n; i++) {
        fake_node *n = calloc(1, sizeof *n);
        n->id = next_node++;
        memcpy(n->name, g->node[i]->name, sizeof n->name);
        e->node[e->n++] = n;
        CUpti_GraphData d = {.graph = (CUgraph)e, .node = (CUgraphNode)n};
        resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &d);
        d.originalGraph = graph;
        d.originalNode = (CUgraphNode)g->node[i];
        resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, &d);
    }
    CUpti_GraphData d = {.graph = graph, .graphExec = (CUgraphExec)e};
    resource(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, &d);
    return (CUgraphExec)e;
}

/* cudaGraphLaunch(exec, s): a record per node. */
API void fake_graph_launch(CUgraphExec exec, CUstream s)
{
    fake_graph *e = (fake_graph *)exec;
    cudaGraphLaunch_v10000_params p = {.graphExec = (cudaGraphExec_t)exec,
                                       .stream = (cudaStream_t)s};
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
               "cudaGraphLaunch", &p);
    for (int i = 0; i < e->n; i++)
        kernel_record(e->node[i]->name, c.data.correlationId, e->node[i]->id);
    call_end(&c, 0);
}

static void destroy(fake_graph *g, int exec)
{
    for (int i = 0; i < g->n; i++) {
        CUpti_GraphData d = {.graph = (CUgraph)g, .node = (CUgraphNode)g->node[i]};
        resource(CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING, &d);
        free(g->node[i]);
    }
    CUpti_GraphData d = {.graph = exec ? NULL : (CUgraph)g,
                         .graphExec = exec ? (CUgraphExec)g : NULL};
    resource(exec ? CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING
                  : CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,
             &d);
    free(g);
}

API void fake_exec_destroy(CUgraphExec e)
{
    destroy((fake_graph *)e, 1);
}

API void fake_graph_destroy(CUgraph g)
{
    destroy((fake_graph *)g, 0);
}

/* ------------------------------------------------------------------ CUPTI */

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *arg)
{
    const char *rc = getenv("FAKE_CUPTI_RC");
    if (rc && atoi(rc))
        return (CUptiResult)atoi(rc);
    *s = (CUpti_SubscriberHandle)&sub_fn;
    sub_fn = fn;
    sub_arg = arg;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    (void)s;
    sub_fn = NULL;
    memset(enabled, 0, sizeof enabled);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                    CUpti_CallbackId id)
{
    (void)s;
    if (d >= 8 || id >= 1024)
        return CUPTI_ERROR_INVALID_PARAMETER;
    enabled[d][id] = (uint8_t)on;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t id, const char **name)
{
    static const struct {
        CUpti_CallbackDomain d;
        uint32_t id;
        const char *name;
    } names[] = {
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
         "cudaLaunchKernel_v7000"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
         "cudaGraphLaunch_v10000"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
         "cudaStreamBeginCapture_v10000"},
        {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
         "cudaStreamEndCapture_v10000"},
        {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
         "cuMemcpyDtoHAsync_v2"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].d == d && names[i].id == id) {
            *name = names[i].name;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

/* Entry points whose one argument the fake has no use for: they succeed
 * and change nothing. */
#define ACCEPT_AND_IGNORE(X)                                                                       \
    X(CUptiResult, CUPTI_SUCCESS, cuptiActivityEnable, CUpti_ActivityKind)                         \
    X(CUptiResult, CUPTI_SUCCESS, cuptiActivityDisable, CUpti_ActivityKind)                        \
    X(CUresult, CUDA_SUCCESS, cuDevicePrimaryCtxRelease_v2, CUdevice)                              \
    X(CUresult, CUDA_SUCCESS, cuCtxPushCurrent_v2, CUcontext)
#define STUB(ret, ok, fn, arg_type)                                                                \
    API ret fn(arg_type ignored)                                                                   \
    {                                                                                              \
        (void)ignored;                                                                             \
        return ok;                                                                                 \
    }
ACCEPT_AND_IGNORE(STUB)
#undef STUB

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                               CUpti_BuffersCallbackCompleteFunc done)
{
    want_buffer = req;
    done_buffer = done;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    clock_fn = fn;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
    uint8_t *next = *rec ? (uint8_t *)*rec + SLOT : buffer;
    if ((size_t)(next - buffer) + SLOT > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
    (void)c;
    (void)s;
    *n = 0;
    return CUPTI_SUCCESS;
}

/* Hand every queued record to the subscriber, in buffers it gives. */
API CUptiResult cuptiActivityFlushAll(uint32_t flags)
{
    (void)flags;
    counts.flush++;
    counts.flush_in_capture += open_captures > 0;
    pthread_mutex_lock(&mu);
    int n = nrecs;
    static uint8_t copy[MAX_RECS][SLOT];
    memcpy(copy, recs, (size_t)n * SLOT);
    nrecs = 0;
    pthread_mutex_unlock(&mu);
    for (int at = 0; at < n && want_buffer && done_buffer;) {
        uint8_t *buf = NULL;
        size_t size = 0, max = 0;
        want_buffer(&buf, &size, &max);
        if (!buf)
            return CUPTI_ERROR_OUT_OF_MEMORY;
        size_t k = 0;
        while (at < n && (k + 1) * SLOT <= size)
            memcpy(buf + SLOT * k++, copy[at++], SLOT);
        done_buffer(NULL, 0, buf, size, k * SLOT);
    }
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    (void)r;
    *s = "fake CUPTI error";
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetGraphNodeId(CUgraphNode node, uint64_t *id)
{
    *id = ((fake_node *)node)->id;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetGraphId(CUgraph graph, uint32_t *id)
{
    *id = ((fake_graph *)graph)->id;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetGraphExecId(CUgraphExec exec, uint32_t *id)
{
    *id = ((fake_graph *)exec)->id;
    return CUPTI_SUCCESS;
}

/* ----------------------------------------------------------------- driver */

static int fake_ctx;

API CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *d, int i)
{
    *d = i;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 1;
    return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = (CUcontext)&fake_ctx;
    return CUDA_SUCCESS;
}

API CUresult cuCtxSynchronize(void)
{
    counts.sync++;
    counts.sync_in_capture += open_captures > 0;
    return open_captures > 0 ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
    (void)d;
    *flags = 0;
    *active = 1;
    return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)&fake_ctx;
    return CUDA_SUCCESS;
}

API CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    *c = (CUcontext)&fake_ctx;
    return CUDA_SUCCESS;
}

API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    pretend_stream *f = (pretend_stream *)s;
    int mine = f >= streams && f < streams + 4;
    *st = mine && f->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

API CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags)
{
    (void)flags;
    counts.alloc++;
    counts.alloc_in_capture += open_captures > 0;
    *p = calloc(1, bytes);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuMemFreeHost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s)
{
    cuMemcpyDtoHAsync_v2_params p = {
        .dstHost = dst, .srcDevice = src, .ByteCount = bytes, .hStream = s};
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
               "cuMemcpyDtoHAsync_v2", &p);
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    counts.dtoh++;
    copy_record(c.data.correlationId, bytes);
    call_end(&c, 0);
    return CUDA_SUCCESS;
}

#endif /* FAKE_CUPTI_FULL */
