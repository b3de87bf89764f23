/*
 * build.c - turn one session slot of every thread's calling-context tree
 * into a profile tree: threads merge under one ROOT, same-named children
 * merge, and scopes still open are closed at the time of the call.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

typedef struct builder {
    kscope__ptree *t;
    int slot;
    int cut;                   /* what is built is taken: the slot starts anew after it */
    uint64_t end_ticks;        /* where open scopes end */
    const kscope__thread *thr; /* thread being merged (its open frames) */
} builder;

/* ---------------------------------------------------------------- counters */

/* What node n counted in slot s since its baseline; with cut, the baseline
 * moves to now, so that the next reading starts after this one. Only the
 * owner writes the counters; a baseline is kept beside them, by page, once
 * one is not zero. 0, or KSCOPE_ENOMEM (nothing moved). Caller holds
 * kscope__session_lock. */
static int node_counts(kscope__node *n, int s, int cut, kscope__stats_base *out)
{
    *out = (kscope__stats_base){0};
    if (n->kind == KSCOPE__NODE_ROOT) /* not in a page: counts nothing */
        return 0;
    kscope__node_page *pg = kscope__page_of(n);
    const kscope__stats *st = atomic_load_explicit(&pg->stats[s], memory_order_acquire);
    if (!st)
        return 0;
    uint32_t i = kscope__page_index(n);
    const _Atomic uint64_t *cpu = atomic_load_explicit(&pg->cpu[s], memory_order_acquire);
    kscope__stats_base now = {atomic_load_explicit(&st[i].calls, memory_order_relaxed),
                              atomic_load_explicit(&st[i].ticks, memory_order_relaxed),
                              cpu ? atomic_load_explicit(&cpu[i], memory_order_relaxed) : 0};
    kscope__stats_base *base = pg->base[s] ? &pg->base[s][i] : NULL;
    kscope__stats_base was = base ? *base : (kscope__stats_base){0};
    *out = (kscope__stats_base){now.calls - was.calls, now.ticks - was.ticks,
                                now.cpu_ticks - was.cpu_ticks};
    if (!cut || (out->calls == 0 && out->ticks == 0 && out->cpu_ticks == 0))
        return 0;
    if (!base) {
        if (!(pg->base[s] = calloc(KSCOPE__PAGE_NODES, sizeof *pg->base[s])))
            return KSCOPE_ENOMEM;
        base = &pg->base[s][i];
    }
    *base = now;
    return 0;
}

/* Drop slot's user metrics and GPU counters of n: they went into a tree,
 * or a new session or phase starts. Caller holds the owner's lock and the
 * session's. */
static void node_drop(kscope__node *n, int slot)
{
    kscope__node_ext *x = kscope__node_ext_get(n);
    if (!x)
        return;
    kscope__gpustats_free(x->gpu[slot]);
    x->gpu[slot] = NULL;
    kscope__umetric **pm = &x->metrics;
    while (*pm) {
        kscope__umetric *m = *pm;
        if (m->slot == slot) {
            *pm = m->next;
            if (m->type == KSCOPE__T_INTVEC)
                free(m->v.iv);
            else if (m->type == KSCOPE__T_DOUBLEVEC)
                free(m->v.dv);
            else if (m->type == KSCOPE__T_STRING)
                free(m->v.s);
            free(m);
        } else {
            pm = &m->next;
        }
    }
}

int kscope__node_recorded(kscope__node *n, int slot)
{
    kscope__stats_base c;
    node_counts(n, slot, 0, &c);
    return c.calls > 0 || kscope__node_gpu(n, slot) != NULL;
}

/* Start slot anew on every node of one owner (t NULL: the global root's),
 * holding its lock: the counters' baselines move to now, metrics and GPU
 * counters go. Nodes are reached by their pages, not the tree. */
static int reset_owner(kscope__thread *t, kscope__node *root, int slot)
{
    pthread_mutex_t *lock = kscope__owner_lock(root);
    int rc = 0;
    pthread_mutex_lock(lock);
    node_drop(root, slot);
    for (kscope__node_page *pg = kscope__node_pages(t); pg; pg = pg->next) {
        int counted = atomic_load_explicit(&pg->stats[slot], memory_order_acquire) != NULL;
        kscope__node *nodes = (kscope__node *)pg + KSCOPE__PAGE_HEAD;
        for (uint32_t i = 0; i < pg->used; i++) {
            kscope__stats_base unused;
            if (counted && node_counts(&nodes[i], slot, 1, &unused) != 0)
                rc = KSCOPE_ENOMEM;
            node_drop(&nodes[i], slot);
        }
    }
    pthread_mutex_unlock(lock);
    return rc;
}

int kscope__reset_slot(int slot)
{
    int rc = 0;
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t; t = t->next) {
        int r = reset_owner(t, &t->root, slot);
        rc = rc ? rc : r;
    }
    kscope__threads_unlock();
    /* The global root: GPU work with no context, and graph work under it. */
    int r = reset_owner(NULL, &kscope__g.root, slot);
    return rc ? rc : r;
}

/* Ticks a scope still open on the thread being merged adds at build time. */
static uint64_t open_ticks(const builder *b, const kscope__node *n, uint64_t *start)
{
    if (!b->thr)
        return 0;
    int depth = KSCOPE__LOAD(&b->thr->depth); /* the owner may be running */
    uint64_t act = atomic_load(&kscope__act_ticks[b->slot]);
    for (int i = 1; i <= depth && i <= KSCOPE__STACK_MAX; i++) {
        const kscope__frame *f = &b->thr->stack[i];
        if (KSCOPE__LOAD_RELAXED(&f->node) != n)
            continue;
        uint64_t start_ticks = KSCOPE__LOAD_RELAXED(&f->start);
        uint64_t from = start_ticks > act ? start_ticks : act;
        *start = from;
        return b->end_ticks > from ? b->end_ticks - from : 0;
    }
    return 0;
}

static int add_user_metric(builder *b, kscope__pnode *pn, const kscope__umetric *m)
{
    const char *key = kscope__name(m->def->base);
    int rc = 0;
    if (m->def->kind == KSCOPE__MK_INC && (rc = kscope__ptree_add_inclusive(b->t, key)) != 0)
        return rc;
    int pty = m->def->kind == KSCOPE__MK_PTY;
    switch (m->type) {
    case KSCOPE__T_INT:
        return pty ? kscope__pnode_set_int(b->t, pn, key, m->v.i)
                   : kscope__pnode_add_int(b->t, pn, key, m->v.i);
    case KSCOPE__T_DOUBLE:
        return pty ? kscope__pnode_set_double(b->t, pn, key, m->v.d)
                   : kscope__pnode_add_double(b->t, pn, key, m->v.d);
    case KSCOPE__T_STRING:
        return kscope__pnode_set_string(b->t, pn, key, m->v.s);
    default: {
        /* Vectors from several threads add element-wise. */
        kscope__vtype vt = m->type == KSCOPE__T_INTVEC ? KSCOPE__V_INTVEC : KSCOPE__V_DOUBLEVEC;
        const char *k = kscope__ptree_intern_cstr(b->t, key);
        kscope__pmetric *old = k ? kscope__pnode_metric(pn, k) : NULL;
        if (!old || pty || old->type != vt)
            return kscope__pnode_set_vec(b->t, pn, key, vt,
                                         vt == KSCOPE__V_INTVEC ? (void *)m->v.iv : (void *)m->v.dv,
                                         m->n);
        uint32_t n = old->n > m->n ? old->n : m->n;
        size_t esz = vt == KSCOPE__V_INTVEC ? sizeof(int64_t) : sizeof(double);
        void *sum = calloc(n ? n : 1, esz);
        if (!sum)
            return KSCOPE_ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
            if (vt == KSCOPE__V_INTVEC)
                ((int64_t *)sum)[i] = (i < old->n ? old->v.iv[i] : 0) + (i < m->n ? m->v.iv[i] : 0);
            else
                ((double *)sum)[i] = (i < old->n ? old->v.dv[i] : 0) + (i < m->n ? m->v.dv[i] : 0);
        }
        rc = kscope__pnode_set_vec(b->t, pn, key, vt, sum, n);
        free(sum);
        return rc;
    }
    }
}

/* A node's host counters and user metrics into pn (taken, with cut). */
static int host_metrics(builder *b, kscope__pnode *pn, kscope__node *n)
{
    kscope__stats_base c;
    int rc = node_counts(n, b->slot, b->cut, &c);
    if (rc)
        return rc;
    uint64_t calls = c.calls, ticks = c.ticks, cpu = c.cpu_ticks;
    uint64_t start = 0, extra = open_ticks(b, n, &start);
    if (calls && (rc = kscope__pnode_add_int(b->t, pn, "calls", (int64_t)calls)) != 0)
        return rc;
    if (n->kind == KSCOPE__NODE_SCOPE && (calls || ticks || extra))
        rc = kscope__pnode_add_int(b->t, pn, "wall_time (ns)",
                                   (int64_t)kscope__ticks_delta_ns(ticks + extra));
    if (rc == 0 && cpu)
        rc = kscope__pnode_add_int(b->t, pn, "cpu_time (ns)", (int64_t)kscope__ticks_delta_ns(cpu));
    const kscope__node_ext *x = kscope__node_ext_get(n);
    for (const kscope__umetric *m = x ? x->metrics : NULL; m && rc == 0; m = m->next)
        if (m->slot == b->slot)
            rc = add_user_metric(b, pn, m);
    return rc;
}

static int gpu_metrics(builder *b, kscope__pnode *pn, const kscope__gpustats *g)
{
    static const char *flops[4] = {"flops8", "flops16", "flops32", "flops64"};
    static const char *inclusive[] = {"time (ns)", "count", "bytes"};
    kscope__ptree *t = b->t;
    for (size_t i = 0; i < 3; i++)
        if (kscope__ptree_add_inclusive(t, inclusive[i]) != 0)
            return KSCOPE_ENOMEM;
    kscope__pmetric *mn = kscope__pnode_metric(pn, kscope__ptree_intern_cstr(t, "min_time (ns)"));
    kscope__pmetric *mx = kscope__pnode_metric(pn, kscope__ptree_intern_cstr(t, "max_time (ns)"));
    int64_t lo = mn && mn->v.i < (int64_t)g->min_ns ? mn->v.i : (int64_t)g->min_ns;
    int64_t hi = mx && mx->v.i > (int64_t)g->max_ns ? mx->v.i : (int64_t)g->max_ns;
    char dev[16];
    snprintf(dev, sizeof dev, "%u", g->device);
    int rc = kscope__pnode_add_int(t, pn, "time (ns)", (int64_t)g->time_ns);
    rc = rc ? rc : kscope__pnode_add_int(t, pn, "count", (int64_t)g->count);
    rc = rc ? rc : kscope__pnode_set_int(t, pn, "min_time (ns)", lo);
    rc = rc ? rc : kscope__pnode_set_int(t, pn, "max_time (ns)", hi);
    rc = rc ? rc : kscope__pnode_set_string(t, pn, "device_id", dev);
    rc = rc ? rc : kscope__pnode_set_string(t, pn, "device_type", kscope__gpu_device_type());
    if (rc == 0 && g->src_device != g->dst_device) { /* a peer copy */
        char src[16], dst[16];
        snprintf(src, sizeof src, "%u", g->src_device);
        snprintf(dst, sizeof dst, "%u", g->dst_device);
        rc = kscope__pnode_set_string(t, pn, "src_device_id", src);
        rc = rc ? rc : kscope__pnode_set_string(t, pn, "dst_device_id", dst);
    }
    uint64_t bytes = g->bytes + (uint64_t)g->meta_bytes;
    if (rc == 0 && bytes)
        rc = kscope__pnode_add_int(t, pn, "bytes", (int64_t)bytes);
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (g->flops[i] == 0)
            continue;
        rc = kscope__ptree_add_inclusive(t, flops[i]);
        rc = rc ? rc : kscope__pnode_add_double(t, pn, flops[i], g->flops[i]);
    }
    for (const kscope__custom *c = g->custom; c && rc == 0; c = c->next) {
        rc = kscope__ptree_add_inclusive(t, kscope__name(c->name));
        rc = rc ? rc : kscope__pnode_add_double(t, pn, kscope__name(c->name), c->value);
    }
    return rc;
}

/* The output child for a CCT child: kernels also match on device. */
static kscope__pnode *out_child(builder *b, kscope__pnode *parent, const kscope__node *c,
                                const char *name)
{
    if (c->kind != KSCOPE__NODE_KERNEL && c->kind != KSCOPE__NODE_COPY)
        return kscope__pnode_child(b->t, parent, name);
    char dev[16];
    snprintf(dev, sizeof dev, "%u", c->device);
    const char *devkey = kscope__ptree_intern_cstr(b->t, "device_id");
    for (uint32_t i = 0; i < parent->nchildren; i++) {
        kscope__pnode *p = parent->children[i];
        if (p->name != name)
            continue;
        kscope__pmetric *d = kscope__pnode_metric(p, devkey);
        if (!d || (d->type == KSCOPE__V_STRING && strcmp(d->v.s, dev) == 0))
            return p;
    }
    return kscope__pnode_add(b->t, parent, name);
}

static int merge_child(builder *b, kscope__pnode *pn, kscope__node *c);

/* Children are linked newest first; merge them oldest first so the output
 * lists scopes in the order the program first entered them. */
static int merge(builder *b, kscope__pnode *pn, const kscope__node *n)
{
    kscope__node *local[64], **kids = local;
    size_t count = 0, cap = 64;
    int rc = 0;
    for (kscope__node *c = atomic_load_explicit(&n->first_child, memory_order_acquire); c;
         c = c->next_sibling) {
        if (count == cap) {
            kscope__node **p = malloc(cap * 2 * sizeof *p);
            if (!p) {
                rc = KSCOPE_ENOMEM;
                break;
            }
            memcpy(p, kids, count * sizeof *p);
            if (kids != local)
                free(kids);
            kids = p;
            cap *= 2;
        }
        kids[count++] = c;
    }
    /* the first thread's children all come: room for them at once */
    if (rc == 0 && pn->nchildren == 0 && count > 1 && count <= UINT32_MAX)
        rc = kscope__pnode_reserve(b->t, pn, (uint32_t)count);
    while (rc == 0 && count > 0)
        rc = merge_child(b, pn, kids[--count]);
    if (kids != local)
        free(kids);
    return rc;
}

static int merge_child(builder *b, kscope__pnode *pn, kscope__node *c)
{
    /* the recorder's interned name: unique too, and kept for good */
    const char *name = kscope__name(c->name);
    uint32_t before = pn->nchildren;
    kscope__pnode *pc = out_child(b, pn, c, name);
    if (!pc)
        return KSCOPE_ENOMEM;
    int created = pn->nchildren != before;
    int dev = c->kind == KSCOPE__NODE_DEVSCOPE;
    int gpu = c->kind == KSCOPE__NODE_KERNEL || c->kind == KSCOPE__NODE_COPY ||
              c->kind == KSCOPE__NODE_LINE || dev;
    const kscope__gpustats *g = gpu ? kscope__node_gpu(c, b->slot) : NULL;
    int rc = gpu ? 0 : host_metrics(b, pc, c);
    if (g && g->count)
        rc = dev ? kscope__devscope_metrics(b->t, pc, g, kscope__sessions[b->slot].dso.flags & 1u)
                 : gpu_metrics(b, pc, g);
    if (rc == 0 && g && g->samples)
        rc = kscope__pcs_metrics(b->t, pc, g->samples);
    if (rc == 0 && b->cut)
        node_drop(c, b->slot);
    if (rc == 0)
        rc = merge(b, pc, c);
    /* A path the session never saw is left out. */
    if (rc == 0 && created && pc->nchildren == 0 && pc->nmetrics == 0)
        pn->nchildren--;
    return rc;
}

typedef struct summary_ctx {
    kscope__ptree *t;
    int rc;
} summary_ctx;

static void put_summary(const char *name, double value, void *arg)
{
    summary_ctx *c = arg;
    if (c->rc == 0)
        c->rc = kscope__pnode_set_double(c->t, c->t->root, name, value);
}

kscope__ptree *kscope__build_tree(int slot, uint64_t now_ticks, int cut)
{
    kscope__ptree *t = kscope__ptree_new();
    if (!t)
        return NULL;
    kscope__session *s = &kscope__sessions[slot];
    if (s->active) /* a paused session reads the same each time */
        kscope__clock_refresh();
    builder b = {t, slot, cut, s->active ? now_ticks : atomic_load(&kscope__deact_ticks[slot]),
                 NULL};
    int rc = 0;
    /* Lock order, as in kscope__record_gpu: session, then threads, then a
     * thread's (or the global root's) own. Each owner's nodes are read,
     * and with cut taken, while no metric or GPU record can reach them. */
    pthread_mutex_lock(&s->lock);
    kscope__threads_lock();
    for (kscope__thread *th = kscope__threads(); th && rc == 0; th = th->next) {
        pthread_mutex_lock(&th->lock);
        b.thr = th;
        rc = host_metrics(&b, t->root, &th->root);
        rc = rc ? rc : merge(&b, t->root, &th->root);
        if (rc == 0 && cut)
            node_drop(&th->root, slot);
        pthread_mutex_unlock(&th->lock);
    }
    kscope__threads_unlock();
    b.thr = NULL;
    if (rc == 0) {
        pthread_mutex_t *global = kscope__owner_lock(&kscope__g.root);
        pthread_mutex_lock(global);
        rc = merge(&b, t->root, &kscope__g.root);
        if (rc == 0 && cut)
            node_drop(&kscope__g.root, slot);
        pthread_mutex_unlock(global);
    }
    pthread_mutex_unlock(&s->lock);
    if (rc == 0) {
        /* Resource samples taken while the session ran: mean and max. */
        summary_ctx sc = {t, 0};
        kscope__sampler_summary(s->start_ns, kscope__ticks_to_ns(now_ticks), put_summary, &sc);
        rc = sc.rc;
    }
    /* A sampled session says what fraction it sampled and estimates. */
    if (rc == 0)
        rc = kscope__sampling_tree(s, t, kscope__ticks_to_ns(now_ticks));
    /* Records lost on the way are counted where every reader sees them. */
    int64_t dropped = __atomic_load_n(&s->dropped, __ATOMIC_RELAXED);
    if (rc == 0 && dropped > 0)
        rc = kscope__pnode_set_int(t, t->root, "dropped_records", dropped);
    int64_t lost = __atomic_load_n(&s->dropped_samples, __ATOMIC_RELAXED);
    if (rc == 0 && lost > 0)
        rc = kscope__pnode_set_int(t, t->root, "dropped_samples", lost);
    int64_t dlost = __atomic_load_n(&s->dscope_lost, __ATOMIC_RELAXED);
    if (rc == 0 && dlost > 0)
        rc = kscope__pnode_set_int(t, t->root, "device_scopes_lost", dlost);
    if (rc == 0)
        kscope__devices_to_ptree(t);
    if (rc != 0) {
        kscope__ptree_free(t);
        return NULL;
    }
    return t;
}
