/*
 * graphs.c - where the work of a GPU graph goes: under the context
 * that launched the graph, at <captured_at> and, beneath it, the context
 * each node was captured in, as Proton shows it. Metrics recorded while the
 * graph was captured come back at each launch the same way.
 *
 * The capture path is rebuilt from the capture context's parents (nodes
 * live as long as the process, so a context noted at capture time is still
 * good at any launch). Nodes are found lock-free once made; making one
 * takes the launch context owner's lock. Called from the backend's buffer
 * thread (records) and its flush (values), never from a launch.
 */
#include "core/core.h"

#include <stdlib.h>

#define PATH_MAX_NODES (KSCOPE__STACK_MAX + KSCOPE__STATE_MAX + 2)

kscope__node *kscope__captured_node(kscope__node *launch, uint64_t capture_ctx)
{
    static _Atomic uint32_t tag;
    uint32_t id = atomic_load_explicit(&tag, memory_order_relaxed);
    if (!id) {
        id = kscope__intern(KSCOPE__CAPTURED_AT);
        if (!id)
            return NULL;
        atomic_store_explicit(&tag, id, memory_order_relaxed);
    }
    kscope__node *at = kscope__node_child_locked(launch, id, KSCOPE__NODE_SCOPE, 0);
    const kscope__node *path[PATH_MAX_NODES];
    size_t n = 0;
    for (const kscope__node *p = (const kscope__node *)(uintptr_t)capture_ctx;
         p && p->kind != KSCOPE__NODE_ROOT && n < PATH_MAX_NODES; p = p->parent)
        path[n++] = p;
    while (at && n-- > 0)
        at = kscope__node_child_locked(at, path[n]->name, path[n]->kind, 0);
    return at;
}

/* The sum of n values of `type`, as a double (a kernel's counters hold one
 * number per metric). */
static double value_sum(int type, const void *vals, size_t n)
{
    double sum = 0;
    int is_int = type == KSCOPE__T_INT || type == KSCOPE__T_INTVEC;
    for (size_t i = 0; i < n; i++)
        sum += is_int ? (double)((const int64_t *)vals)[i] : ((const double *)vals)[i];
    return sum;
}

/* A launch metric of a kernel: added to the kernel's counters when the
 * session recorded the kernel (the records of a launch come before its
 * values, see the backend's flush). Caller holds s->lock. */
static void kernel_value(kscope__session *s, kscope__node *at, const kscope__graph_value *v,
                         const void *vals)
{
    kscope__node *k = kscope__node_child_locked(at, v->kernel, KSCOPE__NODE_KERNEL, v->device);
    kscope__gpustats *g = k ? kscope__node_gpu(k, s->slot) : NULL;
    if (g)
        kscope__gpustats_add(g, v->def->id, value_sum(v->type, vals, v->n));
}

void kscope__record_graph_value(uint64_t launch_ctx, uint64_t launch_ns,
                                const kscope__graph_value *v, const void *vals)
{
    kscope__node *launch = launch_ctx ? (kscope__node *)(uintptr_t)launch_ctx : &kscope__g.root;
    kscope__node *at = NULL;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        kscope__session *s = &kscope__sessions[i];
        /* Trace sessions keep metrics as events of a thread: a graph's
         * launch has none to put them on. */
        if (!s->in_use || s->trace)
            continue;
        pthread_mutex_lock(&s->lock);
        int recording = kscope__recording_at(s, launch_ns) && kscope__recording_at(s, v->ns);
        pthread_mutex_unlock(&s->lock);
        /* (a session that started after the capture has no place for it) */
        if (!recording)
            continue;
        if (!v->kernel && kscope__session_metric_type(s, v->def, v->type, 0) != 0) {
            kscope__warn_once("graph-metric-type", "a graph's metric is left out: %s",
                              kscope_last_error());
            continue;
        }
        if (!at && !(at = kscope__captured_node(launch, v->ctx)))
            return; /* out of memory */
        pthread_mutex_lock(&s->lock);
        if (v->kernel)
            kernel_value(s, at, v, vals);
        else
            kscope__node_metric(at, s->slot, v->def, v->type, vals, v->n);
        pthread_mutex_unlock(&s->lock);
    }
}
