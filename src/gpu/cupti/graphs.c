/*
 * graphs.c - CUDA graphs in the CUPTI backend: stream captures, graph
 * nodes and graph launches.
 *
 * What a profiler must not do while a stream capture is open: synchronise
 * a context or flush CUPTI (either ends the program's capture with
 * cudaErrorStreamCaptureInvalidated), allocate pinned memory, read device
 * memory. The callbacks on the begin and end of each capture note, per
 * thread, the streams it captures; `capturing` answers from them (and asks
 * the driver about the legacy stream, which reports a capture begun before
 * kscope subscribed) so that the core puts its flushes off.
 *
 * Where graph work goes. A kernel, copy or set a graph runs carries the
 * correlation id of the graph launch (so correlate.c finds the launching
 * context) and the id of its graph node. When a node is created (CUPTI's
 * resource callback, on the thread that captures), this file notes the
 * context it was created in, the time, and the launch metadata of the
 * launch that made it; a node cloned into an executable graph gets the
 * original's. A record of such a node then goes under the launch context
 * at <captured_at>/<capture context> (attrib/graphs.c), for the sessions that
 * recorded both at capture and at launch. A graph executed that kscope did
 * not see being made (built before profiling started) is said once on
 * stderr, as Proton says it, and its work goes under the launch context.
 *
 * Metrics recorded while a thread captures are kept with the graph it
 * captures and come back at each launch. Host values are added as they
 * are; a value a launch computes on the device (a tensor metric) is a
 * device address the launch writes: after each launch of such a graph, one
 * asynchronous copy on the launch's stream moves the values into pinned
 * memory (kscope's own copy: its record is dropped), and the next flush
 * (after its synchronisation) adds them.
 *
 * Locking: `lock` guards the tables; the launch path reads a direct-mapped
 * array of executable graphs without it, and takes it only for graphs that
 * carry metrics. `pend_lock` guards the launches waiting for a flush and
 * their pinned memory; kscope's copies are made under it, never under
 * `lock` (a copy may deliver CUPTI's records on this thread, which looks
 * nodes up). Neither is held while taking the other.
 */
#include "gpu/cupti/cupti-internal.h"
#include "util/util.h"

#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXEC_SLOTS  8192u /* direct-mapped by exec id: the launch path's view */
#define TL_CAPTURES 8     /* streams one thread may capture at once */
#define RING_VALUES 65536 /* 8-byte values copied back per flush */

kscope__graph_api kscope__graph_fns;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kscope__u64map nodes;        /* node id -> kscope__gnode */
static kscope__u64map graph_values; /* graph id -> kscope__gvlist */
static kscope__u64map exec_values;  /* exec id -> kscope__gvlist */
static kscope__released released;
static uint64_t *retired; /* ids of nodes destroyed since the last flush */
static size_t nretired, capretired;
static int64_t next_token = 1; /* tokens > 1; 1 says "kept" for host values */

/* id << 8 | EXEC_*: whether an exec was seen being made, carries values,
 * was warned about. An exec 8192 ids later takes the slot over. */
static _Atomic uint64_t exec_slot[EXEC_SLOTS];
enum { EXEC_KNOWN = 1, EXEC_VALUES = 2, EXEC_WARNED = 4 };

typedef struct tl_capture {
    CUstream stream;
    kscope__gvlist *values; /* kept for the graph this capture makes */
} tl_capture;

static __thread tl_capture tl_cap[TL_CAPTURES];
static __thread int tl_ncap;
static _Atomic int open_captures;
static __thread int tl_hide;                    /* kscope's own work (capture_hide) */
static __thread int tl_own;                     /* kscope's own copy in flight */
static __thread kscope__gpu_meta *tl_call_meta; /* of the launch being captured */

/* Launches waiting for a flush to add the values they produced. */
typedef struct pending {
    kscope__gvalue *g;
    uint64_t ctx, ns; /* launch context and time */
    size_t at;        /* index into ring, or SIZE_MAX: host values */
} pending;

static pthread_mutex_t pend_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *ring; /* pinned host memory */
static size_t ring_used;
static pending *pend;
static size_t npend, cappend;

/* ---------------------------------------------------------------- captures */

static CUstreamCaptureStatus stream_status(CUstream s, CUresult *rc)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    *rc = kscope__graph_fns.is_capturing ? kscope__graph_fns.is_capturing(s, &st)
                                         : CUDA_ERROR_NOT_SUPPORTED;
    return st;
}

int kscope__graphs_capturing(int this_thread)
{
    if (this_thread)
        return tl_ncap > 0;
    if (atomic_load_explicit(&open_captures, memory_order_acquire) > 0)
        return 1;
    /* A capture kscope did not see begin: the legacy stream reports one
     * on a blocking stream of the current context. */
    CUresult rc;
    CUstreamCaptureStatus st = stream_status(CU_STREAM_LEGACY, &rc);
    return rc == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ||
           (rc == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE);
}

static int find_capture(CUstream s)
{
    for (int i = 0; i < tl_ncap; i++)
        if (tl_cap[i].stream == s)
            return i;
    return -1;
}

static void capture_begun(CUstream s)
{
    if (find_capture(s) >= 0 || tl_ncap == TL_CAPTURES)
        return; /* seen from the runtime and the driver both */
    tl_cap[tl_ncap++] = (tl_capture){s, NULL};
    atomic_fetch_add(&open_captures, 1);
}

/* The capture on s ended, making `graph` (NULL: failed). Values kept
 * during it go to the graph. */
static void capture_ended(CUstream s, CUgraph graph)
{
    int i = find_capture(s);
    if (i < 0)
        return;
    CUresult rc;
    if (!graph && stream_status(s, &rc) == CU_STREAM_CAPTURE_STATUS_ACTIVE && rc == CUDA_SUCCESS)
        return; /* the end was refused (another thread's capture): still open */
    kscope__gvlist *values = tl_cap[i].values;
    tl_cap[i] = tl_cap[--tl_ncap];
    atomic_fetch_sub(&open_captures, 1);
    uint32_t id = 0;
    pthread_mutex_lock(&lock);
    if (values && graph && kscope__graph_fns.graph_id(graph, &id) == CUPTI_SUCCESS && id &&
        kscope__u64map_put(&graph_values, id, values) == 0)
        values = NULL;
    kscope__gvlist_free(values, &released);
    pthread_mutex_unlock(&lock);
}

void kscope__graphs_capture_call(int begin, const CUpti_CallbackData *cb)
{
    if (cb->callbackSite != CUPTI_API_EXIT || !cb->functionParams)
        return;
    int ok = cb->functionReturnValue && *(const int *)cb->functionReturnValue == 0;
    if (begin) {
        /* Every begin call has the stream first. */
        if (ok)
            capture_begun(((const cuStreamBeginCapture_params *)cb->functionParams)->hStream);
        return;
    }
    const cuStreamEndCapture_params *p = cb->functionParams;
    capture_ended(p->hStream, ok && p->phGraph ? *p->phGraph : NULL);
}

/* ------------------------------------------------------------------ nodes */

void kscope__graphs_call_meta(kscope__gpu_meta *m)
{
    free(tl_call_meta);
    tl_call_meta = m;
}

void kscope__graphs_call_done(void)
{
    free(tl_call_meta);
    tl_call_meta = NULL;
}

static uint64_t node_id(CUgraphNode n)
{
    uint64_t id = 0;
    return n && kscope__graph_fns.node_id(n, &id) == CUPTI_SUCCESS ? id : 0;
}

/* A node made by a launch into a capture (or by a graph API call): its
 * context is the calling thread's now. Instantiating a graph makes each
 * node again, then reports the clone (node_cloned): a node already known
 * is kept as it is. */
static void node_created(const CUpti_GraphData *g)
{
    uint64_t id = node_id(g->node);
    if (!id)
        return;
    kscope__gnode n = {.ctx = kscope__current_ctx(), .ns = kscope_now_ns(), .meta = tl_call_meta};
    n.flags = tl_hide ? KSCOPE__GNODE_HIDDEN : 0;
    pthread_mutex_lock(&lock);
    if (!kscope__u64map_get(&nodes, id))
        kscope__gnode_put(&nodes, id, &n); /* out of memory: its work goes to the launch */
    pthread_mutex_unlock(&lock);
    kscope__graphs_call_done(); /* one launch, one node */
}

static void node_cloned(const CUpti_GraphData *g)
{
    uint64_t id = node_id(g->node), from = node_id(g->originalNode);
    if (!id)
        return;
    pthread_mutex_lock(&lock);
    const kscope__gnode *orig = kscope__u64map_get(&nodes, from);
    kscope__gnode unknown = {.flags = KSCOPE__GNODE_UNKNOWN};
    kscope__gnode_put(&nodes, id, orig ? orig : &unknown);
    pthread_mutex_unlock(&lock);
}

/* A node destroyed may still have work whose records CUPTI has not
 * delivered (a graph destroyed right after its launch): it stays known
 * until the next flush has delivered them (kscope__graphs_flushed). */
static void node_destroyed(const CUpti_GraphData *g)
{
    uint64_t id = node_id(g->node);
    pthread_mutex_lock(&lock);
    if (id && kscope__u64map_get(&nodes, id)) {
        if (nretired < capretired || KSCOPE__ROOM(retired, capretired, nretired + 1, 256) == 0)
            retired[nretired++] = id;
        else /* out of memory: forget it now */
            kscope__gnode_free(kscope__u64map_del(&nodes, id));
    }
    pthread_mutex_unlock(&lock);
}

size_t kscope__graphs_retired(void)
{
    pthread_mutex_lock(&lock);
    size_t n = nretired;
    pthread_mutex_unlock(&lock);
    return n;
}

void kscope__graphs_flushed(size_t n)
{
    pthread_mutex_lock(&lock);
    if (n > nretired)
        n = nretired;
    for (size_t i = 0; i < n; i++)
        kscope__gnode_free(kscope__u64map_del(&nodes, retired[i]));
    if (n)
        memmove(retired, retired + n, (nretired - n) * sizeof *retired);
    nretired -= n;
    pthread_mutex_unlock(&lock);
}

/* ------------------------------------------------------- graphs and execs */

static uint32_t graph_id(CUgraph g)
{
    uint32_t id = 0;
    return g && kscope__graph_fns.graph_id(g, &id) == CUPTI_SUCCESS ? id : 0;
}

static uint32_t exec_id(CUgraphExec e)
{
    uint32_t id = 0;
    return e && kscope__graph_fns.exec_id(e, &id) == CUPTI_SUCCESS ? id : 0;
}

static void set_exec(uint32_t id, uint64_t flags)
{
    atomic_store_explicit(&exec_slot[id % EXEC_SLOTS], (uint64_t)id << 8 | flags,
                          memory_order_release);
}

static uint64_t exec_flags(uint32_t id)
{
    uint64_t s = atomic_load_explicit(&exec_slot[id % EXEC_SLOTS], memory_order_acquire);
    return s >> 8 == id ? s & 0xff : 0;
}

/* A graph copied (cudaGraphClone) keeps the original's values. */
static void graph_cloned(const CUpti_GraphData *g)
{
    uint32_t id = graph_id(g->graph), from = graph_id(g->originalGraph);
    pthread_mutex_lock(&lock);
    const kscope__gvlist *l = kscope__u64map_get(&graph_values, from);
    kscope__gvlist *copy = l && id ? kscope__gvlist_copy(l) : NULL;
    if (copy && kscope__u64map_put(&graph_values, id, copy) != 0)
        kscope__gvlist_free(copy, &released);
    pthread_mutex_unlock(&lock);
}

static void exec_created(const CUpti_GraphData *g)
{
    uint32_t id = exec_id(g->graphExec), from = graph_id(g->graph);
    if (!id)
        return;
    pthread_mutex_lock(&lock);
    const kscope__gvlist *l = kscope__u64map_get(&graph_values, from);
    kscope__gvlist *copy = l && l->n ? kscope__gvlist_copy(l) : NULL;
    if (copy && kscope__u64map_put(&exec_values, id, copy) != 0) {
        kscope__gvlist_free(copy, &released);
        copy = NULL;
    }
    set_exec(id, EXEC_KNOWN | (copy ? EXEC_VALUES : 0));
    pthread_mutex_unlock(&lock);
}

static void exec_destroyed(const CUpti_GraphData *g)
{
    uint32_t id = exec_id(g->graphExec);
    pthread_mutex_lock(&lock);
    kscope__gvlist_free(kscope__u64map_del(&exec_values, id), &released);
    if (id && exec_flags(id))
        set_exec(id, 0);
    pthread_mutex_unlock(&lock);
}

static void graph_destroyed(const CUpti_GraphData *g)
{
    uint32_t id = graph_id(g->graph);
    pthread_mutex_lock(&lock);
    kscope__gvlist_free(kscope__u64map_del(&graph_values, id), &released);
    pthread_mutex_unlock(&lock);
}

void kscope__graphs_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
    const CUpti_GraphData *g = rd ? rd->resourceDescriptor : NULL;
    if (!g || !kscope__graph_fns.node_id)
        return;
    switch (cbid) {
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED:
        node_created(g);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED:
        node_cloned(g);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING:
        node_destroyed(g);
        break;
    case CUPTI_CBID_RESOURCE_GRAPH_CLONED:
        graph_cloned(g);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
        exec_created(g);
        break;
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING:
        exec_destroyed(g);
        break;
    case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING:
        graph_destroyed(g);
        break;
    default:
        break;
    }
}

const CUpti_CallbackId kscope__graph_resource_cbids[] = {
    CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,          CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED,
    CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING, CUPTI_CBID_RESOURCE_GRAPH_CLONED,
    CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED,          CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
    CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING,     0,
};

/* ------------------------------------------------------------ the records */

int kscope__graphs_lookup(void *arg, kscope__gpu_record *r)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    const kscope__gnode *n = kscope__u64map_get(&nodes, r->graph_node);
    if (!n || (n->flags & KSCOPE__GNODE_UNKNOWN)) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    if (n->flags & KSCOPE__GNODE_HIDDEN) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    r->captured = 1;
    r->capture_ctx = n->ctx;
    r->capture_ns = n->ns;
    if (n->meta) {
        r->meta = &n->meta->meta;
        if (n->meta->meta.name)
            r->name = n->meta->meta.name;
    }
    return 1; /* the meta stays valid until kscope__graphs_lookup_done */
}

void kscope__graphs_lookup_done(void *arg)
{
    (void)arg;
    pthread_mutex_unlock(&lock);
}

/* -------------------------------------------------------------- launches */

/* A graph launch's exec and stream: runtime and driver calls have the
 * same two parameters (a per-thread-stream call's 0 is that stream). */
static void launch_params(CUpti_CallbackId cbid, int driver, const void *params, CUgraphExec *exec,
                          CUstream *stream)
{
    const cuGraphLaunch_params *p = params;
    *exec = p->hGraph;
    *stream = p->hStream;
    int ptsz = driver ? cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz
                      : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
    if (ptsz && !*stream)
        *stream = CU_STREAM_PER_THREAD;
}

int kscope__graphs_is_launch(int driver, CUpti_CallbackId cbid)
{
    return driver ? cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
                        cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz
                  : cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
                        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
}

void kscope__graphs_launch_enter(int driver, CUpti_CallbackId cbid, const void *params)
{
    CUgraphExec e;
    CUstream s;
    if (!params || !kscope__graph_fns.exec_id)
        return;
    launch_params(cbid, driver, params, &e, &s);
    uint32_t id = exec_id(e);
    if (!id || exec_flags(id))
        return;
    pthread_mutex_lock(&lock);
    if (!exec_flags(id)) {
        set_exec(id, EXEC_WARNED);
        if (!getenv("KSCOPE_QUIET"))
            fprintf(stderr,
                    "kscope: Cannot find graph for graphExecId: %u: it was built before "
                    "profiling started, so its work is recorded under the launch without the "
                    "context it was captured in; start profiling before the graph is created\n",
                    id);
    }
    pthread_mutex_unlock(&lock);
}

/* Room for the copies of a flush's worth of values (pinned memory; not
 * while a capture is open, where allocating is not allowed). */
static int ring_ready(void)
{
    if (ring)
        return 1;
    if (!kscope__graph_fns.host_alloc || kscope__graphs_capturing(0))
        return 0;
    void *p = NULL;
    if (kscope__graph_fns.host_alloc(&p, RING_VALUES * sizeof *ring, 0) != CUDA_SUCCESS)
        return 0;
    ring = p;
    return 1;
}

/* Queue one launch's value g, whose hold the caller passes on: copy
 * device values back on the launch's stream (pend_lock held). Returns 0,
 * or -1 when it is lost (the caller drops the hold). */
static int queue(kscope__gvalue *g, uint64_t ctx, uint64_t ns, CUstream stream)
{
    if (npend == cappend && KSCOPE__ROOM(pend, cappend, npend + 1, 64) != 0)
        return -1;
    size_t at = SIZE_MAX;
    if (g->v.device_ptr) {
        if (!ring_ready() || ring_used + g->v.n > RING_VALUES || !kscope__graph_fns.copy_dtoh) {
            kscope__warn_once("graph-values", "values a graph computed were lost: too many "
                                              "launches between flushes, or no pinned memory");
            return -1;
        }
        at = ring_used;
        tl_own = 1;
        CUresult rc = kscope__graph_fns.copy_dtoh(ring + at, (CUdeviceptr)g->v.device_ptr,
                                                  g->v.n * sizeof *ring, stream);
        tl_own = 0;
        if (rc != CUDA_SUCCESS)
            return -1;
        ring_used += g->v.n;
    }
    pend[npend++] = (pending){g, ctx, ns, at};
    return 0;
}

#define BATCH 64

void kscope__graphs_launch_exit(int driver, CUpti_CallbackId cbid, const void *params, uint64_t ctx,
                                uint64_t ns)
{
    CUgraphExec e;
    CUstream s;
    if (!params || !kscope__graph_fns.exec_id || tl_ncap > 0)
        return; /* a launch into a capture runs nothing now */
    launch_params(cbid, driver, params, &e, &s);
    uint32_t id = exec_id(e);
    if (!id || !(exec_flags(id) & EXEC_VALUES))
        return;
    for (size_t from = 0, total = 1; from < total; from += BATCH) {
        kscope__gvalue *batch[BATCH];
        size_t n = 0;
        pthread_mutex_lock(&lock);
        const kscope__gvlist *l = kscope__u64map_get(&exec_values, id);
        total = l ? l->n : 0;
        for (size_t i = from; i < total && n < BATCH; i++, n++) {
            batch[n] = l->items[i];
            batch[n]->refs++;
        }
        pthread_mutex_unlock(&lock);
        size_t lost = 0;
        pthread_mutex_lock(&pend_lock);
        for (size_t i = 0; i < n; i++)
            if (queue(batch[i], ctx, ns, s) != 0)
                batch[lost++] = batch[i];
        pthread_mutex_unlock(&pend_lock);
        if (!lost)
            continue;
        kscope__add_dropped((int64_t)lost);
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < lost; i++)
            kscope__gvalue_unref(batch[i], &released);
        pthread_mutex_unlock(&lock);
    }
}

int kscope__graphs_own_call(void)
{
    return tl_own;
}

/* ------------------------------------------------------ values and flushes */

int64_t kscope__graphs_value(const kscope__graph_value *v)
{
    if (tl_ncap == 0)
        return 0;
    tl_capture *c = &tl_cap[tl_ncap - 1];
    if (!c->values && !(c->values = calloc(1, sizeof *c->values)))
        return kscope__fail(KSCOPE_ENOMEM, "out of memory keeping a graph's metric");
    pthread_mutex_lock(&lock);
    int64_t token = v->device_ptr ? ++next_token : 0;
    kscope__gvalue *g = kscope__gvalue_new(v, token);
    int rc = g ? kscope__gvlist_add(c->values, g) : KSCOPE_ENOMEM;
    if (rc != 0)
        free(g);
    pthread_mutex_unlock(&lock);
    if (rc != 0)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory keeping a graph's metric");
    return token ? token : 1;
}

void kscope__graphs_hide(int on)
{
    tl_hide = on;
}

size_t kscope__graphs_released(int64_t *out, size_t n)
{
    pthread_mutex_lock(&lock);
    size_t k = kscope__released_take(&released, out, n);
    pthread_mutex_unlock(&lock);
    return k;
}

/* Drop the holds of the launches pend[0..n) (lock taken here). */
static void unref_pending(const pending *p, size_t n)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++)
        kscope__gvalue_unref(p[i].g, &released);
    pthread_mutex_unlock(&lock);
}

void kscope__graphs_drain(void)
{
    pthread_mutex_lock(&pend_lock);
    for (size_t i = 0; i < npend; i++) {
        const pending *p = &pend[i];
        const void *vals = p->at == SIZE_MAX ? p->g->v.vals : (const void *)(ring + p->at);
        kscope__record_graph_value(p->ctx, p->ns, &p->g->v, vals);
    }
    unref_pending(pend, npend);
    npend = 0;
    ring_used = 0;
    pthread_mutex_unlock(&pend_lock);
}

/* Free every value list of map m (lock held); execs lose their values. */
static void forget_values(kscope__u64map *m, int execs)
{
    for (size_t i = 0; i < m->cap; i++) {
        kscope__u64slot *sl = &m->slot[i];
        if (!sl->key || sl->key == UINT64_MAX)
            continue;
        kscope__gvlist_free(sl->val, &released);
        if (execs && (exec_flags((uint32_t)sl->key) & EXEC_VALUES))
            set_exec((uint32_t)sl->key, EXEC_KNOWN);
    }
    kscope__u64map_free(m, NULL);
}

void kscope__graphs_stop(int drained)
{
    /* Unsubscribed, kscope no longer sees graphs destroyed: what their
     * launches would add is forgotten, so that the memory it names can go. */
    pthread_mutex_lock(&lock);
    forget_values(&graph_values, 0);
    forget_values(&exec_values, 1);
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&pend_lock);
    unref_pending(pend, npend); /* their copies may still run: lost */
    if (npend)
        kscope__add_dropped((int64_t)npend);
    npend = 0;
    ring_used = 0;
    if (drained && ring && kscope__graph_fns.host_free) {
        kscope__graph_fns.host_free(ring);
        ring = NULL;
    }
    free(pend);
    pend = NULL;
    cappend = 0;
    pthread_mutex_unlock(&pend_lock);
}
