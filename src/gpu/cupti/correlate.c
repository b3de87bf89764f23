/*
 * correlate.c - which calling context launched each GPU record.
 *
 * CUPTI calls kscope back when a launch, copy or set API call begins and
 * ends (only those calls: every other API call costs nothing). At the
 * begin, the launching thread writes the call's correlation id, its
 * thread, its calling context and the time into a direct-mapped table.
 * A kernel, copy or set record carries the correlation id of the call that
 * launched it (for graph replays: of the graph launch), and its record can
 * only exist after that call began, so the buffer thread finds the
 * context with one lookup and delivers every record at once: no waiting
 * list, no API activity records, nothing done at scope boundaries.
 *
 * The table is written by many launching threads and read by the buffer
 * thread without a lock; each slot is a small seqlock: a writer claims it
 * by swapping its id for KSCOPE__CORR_BUSY (and gives up if another writer
 * holds it), a reader reads the id again after the fields. The end of a
 * call is one word holding its id, written once the call returns.
 *
 * kscope__corr_feed runs under the backend's buffer lock; the launch and
 * metadata functions run on launching threads, lock-free.
 */
#include "gpu/cupti/cupti-internal.h"

#include <stdlib.h>
#include <string.h>

#define CORR_MASK (KSCOPE__CORR_SIZE - 1u)

int kscope__corr_init(kscope__corr *c, kscope__gpu_deliver_fn deliver, void *arg)
{
    memset(c, 0, sizeof *c);
    c->launch = calloc(KSCOPE__CORR_SIZE, sizeof *c->launch);
    if (!c->launch)
        return kscope__fail(KSCOPE_ENOMEM, "GPU correlation table: out of memory");
    c->deliver = deliver;
    c->arg = arg;
    return 0;
}

void kscope__corr_free(kscope__corr *c)
{
    free(c->launch);
    for (size_t i = 0; i < KSCOPE__META_SLOTS; i++)
        free(atomic_exchange(&c->meta[i], NULL));
    memset(c, 0, sizeof *c);
}

/* ---------------------------------------------------------- followed calls */

int kscope__gpu_call_class(const char *name)
{
    const char *p = strncmp(name, "cuda", 4) == 0 ? name + 4
                    : strncmp(name, "cu", 2) == 0 ? name + 2
                                                  : NULL;
    if (!p)
        return KSCOPE__CALL_OTHER;
    if (strncmp(p, "Memcpy", 6) == 0 || strncmp(p, "Memset", 6) == 0)
        return KSCOPE__CALL_COPY;
    if ((strncmp(p, "Launch", 6) == 0 || strncmp(p, "GraphLaunch", 11) == 0) &&
        !strstr(p, "HostFunc"))
        return KSCOPE__CALL_LAUNCH;
    if (strncmp(p, "StreamBeginCapture", 18) == 0)
        return KSCOPE__CALL_BEGIN_CAPTURE;
    if (strncmp(p, "StreamEndCapture", 16) == 0)
        return KSCOPE__CALL_END_CAPTURE;
    return KSCOPE__CALL_OTHER;
}

/* The calls followed even where CUPTI cannot name its callbacks (copies
 * and sets are found by name only). Launches come from the runtime and the
 * driver both: a program may call either (Triton calls the driver). A
 * runtime launch also reaches the driver's cuLaunchKernel callback inside
 * it; the outermost call's id is the one its kernel carries (cupti.c
 * counts the depth). */
#define RT(id, cls)                                                                                \
    {                                                                                              \
        CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_##id, cls                            \
    }
#define DRV(id, cls)                                                                               \
    {                                                                                              \
        CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_##id, cls                              \
    }
#define LAUNCH KSCOPE__CALL_LAUNCH
#define BEGIN  KSCOPE__CALL_BEGIN_CAPTURE
#define END    KSCOPE__CALL_END_CAPTURE
const kscope__known_call kscope__known_calls[] = {
    RT(cudaLaunchKernel_v7000, LAUNCH),
    RT(cudaLaunchKernel_ptsz_v7000, LAUNCH),
    RT(cudaLaunchKernelExC_v11060, LAUNCH),
    RT(cudaLaunchKernelExC_ptsz_v11060, LAUNCH),
    RT(cudaLaunchCooperativeKernel_v9000, LAUNCH),
    RT(cudaLaunchCooperativeKernel_ptsz_v9000, LAUNCH),
    RT(cudaGraphLaunch_v10000, LAUNCH),
    RT(cudaGraphLaunch_ptsz_v10000, LAUNCH),
    DRV(cuLaunchKernel, LAUNCH),
    DRV(cuLaunchKernel_ptsz, LAUNCH),
    DRV(cuLaunchKernelEx, LAUNCH),
    DRV(cuLaunchKernelEx_ptsz, LAUNCH),
    DRV(cuLaunchCooperativeKernel, LAUNCH),
    DRV(cuLaunchCooperativeKernel_ptsz, LAUNCH),
    DRV(cuLaunchGrid, LAUNCH),
    DRV(cuLaunchGridAsync, LAUNCH),
    DRV(cuGraphLaunch, LAUNCH),
    DRV(cuGraphLaunch_ptsz, LAUNCH),
    /* stream captures (graphs.c) */
    RT(cudaStreamBeginCapture_v10000, BEGIN),
    RT(cudaStreamBeginCapture_ptsz_v10000, BEGIN),
    RT(cudaStreamBeginCaptureToGraph_v12030, BEGIN),
    RT(cudaStreamBeginCaptureToGraph_ptsz_v12030, BEGIN),
    RT(cudaStreamEndCapture_v10000, END),
    RT(cudaStreamEndCapture_ptsz_v10000, END),
    DRV(cuStreamBeginCapture, BEGIN),
    DRV(cuStreamBeginCapture_ptsz, BEGIN),
    DRV(cuStreamBeginCapture_v2, BEGIN),
    DRV(cuStreamBeginCapture_v2_ptsz, BEGIN),
    DRV(cuStreamBeginCaptureToGraph, BEGIN),
    DRV(cuStreamBeginCaptureToGraph_ptsz, BEGIN),
    DRV(cuStreamEndCapture, END),
    DRV(cuStreamEndCapture_ptsz, END),
    {0, 0, 0},
};
#undef RT
#undef DRV
#undef LAUNCH
#undef BEGIN
#undef END

/* ------------------------------------------------------ launching threads */

/* Ids the table can hold: CUPTI's 0 means none, BUSY marks a slot in
 * writing. */
static int storable(uint32_t corr)
{
    return corr != 0 && corr != KSCOPE__CORR_BUSY;
}

void kscope__corr_launch_enter(kscope__corr *c, uint32_t corr, uint64_t ctx, uint32_t tid,
                               uint64_t now_ns, uint64_t now_ticks)
{
    kscope__corr_launch *s = &c->launch[corr & CORR_MASK];
    uint32_t was = atomic_load_explicit(&s->correlation, memory_order_relaxed);
    if (!storable(corr) || was == corr)
        return; /* no id, or a call inside the call that holds it */
    /* Claim the slot; a writer already in it wins (see the header). */
    if (was == KSCOPE__CORR_BUSY ||
        !atomic_compare_exchange_strong_explicit(&s->correlation, &was, KSCOPE__CORR_BUSY,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    atomic_thread_fence(memory_order_release); /* BUSY is seen before the fields change */
    atomic_store_explicit(&s->tid, tid, memory_order_relaxed);
    atomic_store_explicit(&s->ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&s->start_ns, now_ns, memory_order_relaxed);
    atomic_store_explicit(&s->start_ticks, now_ticks, memory_order_relaxed);
    atomic_store_explicit(&s->end, 0, memory_order_relaxed);
    atomic_store_explicit(&s->end_ticks, 0, memory_order_relaxed);
    atomic_store_explicit(&s->correlation, corr, memory_order_release);
}

/* An end word: the id with the call's duration, so that an exit arriving
 * after its slot was taken over cannot pass for the new call's. */
static uint64_t end_word(uint32_t corr, uint64_t start, uint64_t end)
{
    uint64_t d = end > start ? end - start : 0;
    return (uint64_t)corr << 32 | (d > UINT32_MAX ? UINT32_MAX : d);
}

void kscope__corr_launch_exit(kscope__corr *c, uint32_t corr, uint64_t start_ns, uint64_t end_ns,
                              uint64_t start_ticks, uint64_t end_ticks)
{
    if (!storable(corr))
        return;
    kscope__corr_launch *s = &c->launch[corr & CORR_MASK];
    atomic_store_explicit(&s->end_ticks, end_word(corr, start_ticks, end_ticks),
                          memory_order_relaxed);
    atomic_store_explicit(&s->end, end_word(corr, start_ns, end_ns), memory_order_relaxed);
}

void kscope__corr_put_meta(kscope__corr *c, kscope__gpu_meta *m)
{
    kscope__gpu_meta *old = atomic_exchange_explicit(&c->meta[m->correlation % KSCOPE__META_SLOTS],
                                                     m, memory_order_acq_rel);
    free(old); /* its kernel never came, or is KSCOPE__META_SLOTS launches late */
}

/* ---------------------------------------------------------- buffer thread */

/* Take the metadata of launch `corr`, if any (caller frees). */
static kscope__gpu_meta *take_meta(kscope__corr *c, uint32_t corr)
{
    _Atomic(kscope__gpu_meta *) *slot = &c->meta[corr % KSCOPE__META_SLOTS];
    if (!atomic_load_explicit(slot, memory_order_relaxed))
        return NULL;
    kscope__gpu_meta *m = atomic_exchange_explicit(slot, NULL, memory_order_acq_rel);
    if (!m || m->correlation == corr)
        return m;
    /* Another launch's: put it back unless a newer one took the slot. */
    kscope__gpu_meta *expected = NULL;
    if (!atomic_compare_exchange_strong(slot, &expected, m))
        free(m);
    return NULL;
}

/* Fill r's launch fields from the table; returns the launch's context, 0
 * when the launch is unknown (before capture began, or its slot reused). */
static uint64_t find_launch(kscope__corr *c, kscope__gpu_record *r)
{
    const kscope__corr_launch *s = &c->launch[r->correlation & CORR_MASK];
    if (r->correlation == 0 ||
        atomic_load_explicit(&s->correlation, memory_order_acquire) != r->correlation)
        return 0;
    uint64_t ctx = atomic_load_explicit(&s->ctx, memory_order_relaxed);
    uint32_t tid = atomic_load_explicit(&s->tid, memory_order_relaxed);
    uint64_t start = atomic_load_explicit(&s->start_ns, memory_order_relaxed);
    uint64_t ticks = atomic_load_explicit(&s->start_ticks, memory_order_relaxed);
    uint64_t end = atomic_load_explicit(&s->end, memory_order_relaxed);
    uint64_t end_ticks = atomic_load_explicit(&s->end_ticks, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&s->correlation, memory_order_relaxed) != r->correlation)
        return 0; /* rewritten by a later launch while being read */
    r->launch_ns = start;
    r->launch_ticks = ticks;
    r->launch_end_ticks =
        (uint32_t)(end_ticks >> 32) == r->correlation ? ticks + (end_ticks & UINT32_MAX) : ticks;
    /* Not yet returned (or the word is another call's): the start. */
    r->launch_end_ns = (uint32_t)(end >> 32) == r->correlation ? start + (end & UINT32_MAX) : start;
    r->launch_tid = tid;
    return ctx;
}

void kscope__corr_feed(kscope__corr *c, const CUpti_Activity *rec)
{
    kscope__gpu_record r;
    if (!kscope__gpu_decode(rec, &r))
        return;
    if (r.kind == KSCOPE__GPU_KERNEL)
        r.name = r.function = kscope__demangle(r.name);
    uint64_t ctx = find_launch(c, &r);
    int graph_launch = (ctx & KSCOPE__CTX_GRAPH) != 0;
    ctx &= ~(uint64_t)KSCOPE__CTX_GRAPH;
    if (ctx == KSCOPE__CTX_OWN || (graph_launch && !r.graph_node && r.kind == KSCOPE__GPU_MEMCPY))
        return; /* kscope's own copy */
    int graph = r.graph_node && c->graph ? c->graph(c->graph_arg, &r) : 0;
    if (graph < 0)
        return; /* kscope's own work inside a graph */
    kscope__gpu_meta *m = r.kind == KSCOPE__GPU_KERNEL ? take_meta(c, r.correlation) : NULL;
    if (m && !r.meta) { /* a captured launch's own metadata comes first */
        r.meta = &m->meta;
        if (m->meta.name)
            r.name = m->meta.name;
    }
    if (!ctx)
        c->unattributed++;
    c->delivered++;
    c->deliver(c->arg, ctx, &r);
    if (graph > 0 && c->graph_done)
        c->graph_done(c->graph_arg);
    free(m);
}
