/*
 * pcs.c - PC samples in the core (the pcsampling mode option is read in
 * core/options.c): the counts a backend delivers onto kernel nodes and the source-line nodes below
 * them, and the samples it lost.
 *
 * A backend samples program counters and knows, for each sample, the
 * kernel, the source line and why the warp stalled; it hands the counts
 * over (kscope__record_pcs) already attributed to a launch's calling
 * context. They are kept per node and session as a short list of
 * (metric, count), written by the backend's thread under the session's
 * lock, read when the tree is built.
 */
#include "core/core.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- recording */

uint32_t kscope__pcs_sessions(void)
{
    uint32_t mask = 0;
    for (int s = 0; s < KSCOPE_MAX_SESSIONS; s++)
        if (kscope__sessions[s].in_use && kscope__sessions[s].pcs && !kscope__sessions[s].trace)
            mask |= 1u << s;
    return mask;
}

void kscope__add_dropped_samples(uint32_t sessions, int64_t n)
{
    for (int s = 0; s < KSCOPE_MAX_SESSIONS; s++)
        if (sessions >> s & 1 && kscope__sessions[s].in_use)
            __atomic_fetch_add(&kscope__sessions[s].dropped_samples, n, __ATOMIC_RELAXED);
}

int64_t kscope_dropped_samples(int session)
{
    return kscope__session_count(session, offsetof(kscope__session, dropped_samples));
}

/* Add `value` to metric `name` of the list at *head. 0, or -1 out of memory. */
static int count_add(kscope__count **head, uint32_t name, uint64_t value)
{
    kscope__count *c = *head;
    while (c && c->name != name)
        c = c->next;
    if (!c) {
        if (!(c = calloc(1, sizeof *c)))
            return -1;
        c->name = name;
        /* Appended, so metrics keep the order they first came in. */
        kscope__count **tail = head;
        while (*tail)
            tail = &(*tail)->next;
        *tail = c;
    }
    c->value += value;
    return 0;
}

/* The node's counters for slot s, made when missing (NULL out of memory). */
static kscope__gpustats *stats_of(kscope__node *n, int s, uint32_t device)
{
    kscope__gpustats *g = kscope__node_gpu(n, s);
    if (!g && (g = kscope__node_gpu_make(n, s)) != NULL)
        g->device = g->src_device = g->dst_device = device;
    return g;
}

static void add_to(kscope__session *s, kscope__node *n, const kscope__pcs_record *r)
{
    kscope__gpustats *g = stats_of(n, s->slot, r->device);
    int lost = !g;
    for (size_t i = 0; g && i < r->n; i++)
        if (r->value[i] && count_add(&g->samples, r->name[i], r->value[i]) != 0)
            lost = 1;
    if (lost)
        s->dropped_samples++;
}

void kscope__record_pcs(const kscope__pcs_record *r)
{
    kscope__node *ctx = r->ctx ? (kscope__node *)(uintptr_t)r->ctx : &kscope__g.root;
    uint64_t total = 0;
    for (size_t i = 0; i < r->n; i++)
        total += r->value[i];
    if (!total)
        return; /* nothing to show: no node for it */
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        kscope__session *s = &kscope__sessions[i];
        if (!(r->sessions >> i & 1) || !s->in_use || !s->pcs || s->trace)
            continue;
        pthread_mutex_lock(&s->lock);
        kscope__node *k = kscope__node_child_locked(ctx, r->kernel, KSCOPE__NODE_KERNEL, r->device);
        kscope__node *at =
            k && r->frame ? kscope__node_child_locked(k, r->frame, KSCOPE__NODE_LINE, r->device)
                          : k;
        if (at)
            add_to(s, at, r);
        else
            s->dropped_samples++;
        pthread_mutex_unlock(&s->lock);
    }
}

/* ----------------------------------------------------------------- output */

void kscope__gpustats_free(kscope__gpustats *g)
{
    if (!g)
        return;
    for (kscope__custom *c = g->custom, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    for (kscope__count *c = g->samples, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(g);
}

int kscope__pcs_metrics(kscope__ptree *t, kscope__pnode *pn, const kscope__count *c)
{
    int rc = 0;
    for (; c && rc == 0; c = c->next) {
        const char *key = kscope__name(c->name);
        rc = kscope__ptree_add_inclusive(t, key);
        rc = rc ? rc : kscope__pnode_add_int(t, pn, key, (int64_t)c->value);
    }
    return rc;
}
