/*
 * trace.c - a trace session's timeline as events for the trace writers
 * (format/events.h): one track per host thread with its scopes as nested
 * slices and its marks as instants, one track per GPU stream (a process
 * per device) with kernels and copies, the launch call of each, and the
 * resource samples taken during the session as counters, after the run's
 * facts (facts.c), which the writer keeps as the trace's metadata. Times
 * are ns since the session started.
 */
#include "core.h"
#include "format/events.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_PID_BASE 1000000 /* pid of device d's process: GPU_PID_BASE + d */

typedef struct open_slice {
    uint32_t name;
    uint64_t begin_ns;
    uint64_t inner_end_ns; /* the latest end of the slices closed inside it */
    size_t first_metric;   /* index into the metric list */
} open_slice;

typedef struct metric_ev {
    uint32_t id;
    uint16_t type;
    uint64_t u;
} metric_ev;

typedef struct trace_ctx {
    kscope__tev_fn fn;
    void *arg;
    const kscope__session *s;
    int pid;
    open_slice *stack;
    int depth, cap;
    metric_ev *metrics;
    size_t nmetrics, capmetrics;
    /* Scratch for the event being handed out. */
    const char *names[KSCOPE__STACK_MAX + 8];
    kscope__tev_metric *tmetrics;
    size_t captmetrics;
} trace_ctx;

static double rel_ns(const trace_ctx *c, uint64_t ns)
{
    return (double)((int64_t)(ns - c->s->start_ns));
}

static int emit(trace_ctx *c, kscope__tev *e)
{
    return c->fn(e, c->arg);
}

static int name_track(trace_ctx *c, kscope__tev_kind kind, int pid, uint64_t tid, const char *name)
{
    kscope__tev e = {.kind = kind, .name = name, .pid = pid, .tid = tid};
    return emit(c, &e);
}

/* "ROOT" and the names of the open slices [0, depth) into c->names. */
static size_t host_stack(trace_ctx *c, int depth)
{
    size_t n = 0;
    c->names[n++] = "ROOT";
    for (int i = 0; i < depth && n < KSCOPE__STACK_MAX + 7; i++)
        c->names[n++] = kscope__name(c->stack[i].name);
    return n;
}

/* The metrics [from, nmetrics) as writer metrics, base names. */
static int slice_metrics(trace_ctx *c, size_t from, kscope__tev *e)
{
    size_t n = c->nmetrics - from;
    if (n > c->captmetrics) {
        kscope__tev_metric *p = realloc(c->tmetrics, n * sizeof *p);
        if (!p)
            return KSCOPE_ENOMEM;
        c->tmetrics = p;
        c->captmetrics = n;
    }
    for (size_t i = 0; i < n; i++) {
        const metric_ev *m = &c->metrics[from + i];
        const kscope__metric_def *d = kscope__metric_lookup(kscope__name(m->id));
        kscope__tev_metric *t = &c->tmetrics[i];
        t->key = d ? kscope__name(d->base) : kscope__name(m->id);
        t->is_double = m->type != KSCOPE__T_INT;
        if (t->is_double)
            memcpy(&t->d, &m->u, sizeof t->d);
        else
            memcpy(&t->i, &m->u, sizeof t->i);
    }
    e->metrics = c->tmetrics;
    e->nmetrics = n;
    return 0;
}

/* Close the innermost open slice at end_ns and hand it out. A slice whose
 * end was not recorded (left while the session was paused, or open at the
 * end) ends no earlier than the slices recorded inside it: a track nests. */
static int slice_close(trace_ctx *c, const kscope__thread *t, uint64_t end_ns)
{
    open_slice *o = &c->stack[c->depth - 1];
    if (end_ns < o->inner_end_ns)
        end_ns = o->inner_end_ns;
    if (c->depth > 1 && c->stack[c->depth - 2].inner_end_ns < end_ns)
        c->stack[c->depth - 2].inner_end_ns = end_ns;
    kscope__tev e = {.kind = KSCOPE__TEV_SLICE,
                     .name = kscope__name(o->name),
                     .cat = "scope",
                     .pid = c->pid,
                     .tid = t->tid,
                     .ts_ns = (int64_t)rel_ns(c, o->begin_ns),
                     .dur_ns = (int64_t)(end_ns - o->begin_ns)};
    e.stack = c->names;
    e.nstack = host_stack(c, c->depth);
    /* Metrics given inside this slice (inner slices took theirs). */
    int rc = slice_metrics(c, o->first_metric, &e);
    if (rc == 0)
        rc = emit(c, &e);
    c->nmetrics = o->first_metric;
    c->depth--;
    return rc;
}

/* End of the activity interval holding `ns` (open scopes end there). */
static uint64_t interval_end(const kscope__session *s, uint64_t ns, uint64_t now_ns)
{
    for (size_t i = 0; i < s->niv; i++)
        if (ns >= s->iv[i].start_ns && ns < s->iv[i].end_ns)
            return s->iv[i].end_ns == UINT64_MAX ? now_ns : s->iv[i].end_ns;
    return now_ns;
}

static int push_open(trace_ctx *c, uint32_t name, uint64_t ns)
{
    if (c->depth == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        open_slice *p = realloc(c->stack, (size_t)cap * sizeof *p);
        if (!p)
            return KSCOPE_ENOMEM;
        c->stack = p;
        c->cap = cap;
    }
    c->stack[c->depth++] = (open_slice){name, ns, 0, c->nmetrics};
    return 0;
}

static int push_metric(trace_ctx *c, const kscope__ev *e)
{
    if (c->nmetrics == c->capmetrics) {
        size_t cap = c->capmetrics ? c->capmetrics * 2 : 64;
        metric_ev *p = realloc(c->metrics, cap * sizeof *p);
        if (!p)
            return KSCOPE_ENOMEM;
        c->metrics = p;
        c->capmetrics = cap;
    }
    c->metrics[c->nmetrics++] = (metric_ev){e->name, e->aux, e->u};
    return 0;
}

static int write_mark(trace_ctx *c, const kscope__thread *t, const kscope__ev *e)
{
    kscope__tev m = {.kind = KSCOPE__TEV_MARK,
                     .name = kscope__name(e->name),
                     .cat = "mark",
                     .pid = c->pid,
                     .tid = t->tid,
                     .ts_ns = (int64_t)rel_ns(c, kscope__ticks_to_ns(e->u))};
    m.stack = c->names;
    m.nstack = host_stack(c, c->depth);
    return emit(c, &m);
}

static int thread_events(trace_ctx *c, const kscope__thread *t, uint64_t now_ns)
{
    const kscope__evbuf *b = &t->ev[c->s->slot];
    int rc = 0;
    c->depth = 0;
    c->nmetrics = 0;
    for (const kscope__evchunk *ch = KSCOPE__LOAD(&b->head); ch && rc == 0;
         ch = KSCOPE__LOAD(&ch->next)) {
        uint32_t n = atomic_load_explicit(&ch->n, memory_order_acquire);
        for (uint32_t i = 0; i < n && rc == 0; i++) {
            const kscope__ev *e = &ch->ev[i];
            switch (e->type) {
            case KSCOPE__EV_BEGIN:
                rc = push_open(c, e->name, kscope__ticks_to_ns(e->u));
                break;
            case KSCOPE__EV_END:
                /* An end whose begin was not recorded (entered while the
                 * session was paused) has no slice to close. */
                if (c->depth && c->stack[c->depth - 1].name == e->name)
                    rc = slice_close(c, t, kscope__ticks_to_ns(e->u));
                break;
            case KSCOPE__EV_MARK:
                rc = write_mark(c, t, e);
                break;
            case KSCOPE__EV_METRIC:
                rc = push_metric(c, e);
                break;
            }
        }
    }
    while (rc == 0 && c->depth) {
        uint64_t begin = c->stack[c->depth - 1].begin_ns;
        rc = slice_close(c, t, interval_end(c->s, begin, now_ns));
    }
    return rc;
}

/* Names from ROOT down to a GPU record's context node, then the kernel. */
static size_t gpu_stack(trace_ctx *c, uint64_t ctx, uint32_t kernel)
{
    const kscope__node *chain[KSCOPE__STACK_MAX + 4];
    int n = 0;
    for (const kscope__node *p = (const kscope__node *)(uintptr_t)ctx;
         p && p->kind != KSCOPE__NODE_ROOT && n < KSCOPE__STACK_MAX + 4; p = p->parent)
        chain[n++] = p;
    size_t k = 0;
    c->names[k++] = "ROOT";
    while (n > 0)
        c->names[k++] = kscope__name(chain[--n]->name);
    c->names[k++] = kscope__name(kernel);
    return k;
}

static int gpu_event(trace_ctx *c, const kscope__gpu_ev *g)
{
    static const char *cats[] = {"gpu", "kernel", "memcpy", "memset", "device_scope"};
    kscope__tev e = {
        .kind = KSCOPE__TEV_GPU,
        .name = kscope__name(g->name),
        .cat = g->kind <= 4 ? cats[g->kind] : "gpu",
        .pid = GPU_PID_BASE + (int)g->device,
        .tid = g->stream,
        .ts_ns = (int64_t)rel_ns(c, g->start_ns),
        .dur_ns = (int64_t)(g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0),
        .gpu = {g->device, g->stream, g->correlation, g->src_device, g->dst_device, g->bytes}};
    e.stack = c->names;
    e.nstack = gpu_stack(c, g->ctx, g->parent ? g->parent : g->name);
    if (g->parent) /* a device scope: below its kernel */
        c->names[e.nstack++] = kscope__name(g->name);
    int rc = emit(c, &e);
    if (rc != 0 || !g->launch_ns || !g->launch_tid)
        return rc;
    /* On the host scopes' clock, so that it nests among them. */
    uint64_t l0 = g->launch_ns, l1 = g->launch_end_ns;
    if (g->launch_ticks) {
        l0 = kscope__ticks_to_ns(g->launch_ticks);
        l1 = kscope__ticks_to_ns(g->launch_ticks + g->launch_ticks_dur);
    }
    uint64_t ldur = l1 > l0 ? l1 - l0 : 1;
    kscope__tev l = {.kind = KSCOPE__TEV_LAUNCH,
                     .name = "launch",
                     .cat = "launch",
                     .pid = c->pid,
                     .tid = g->launch_tid,
                     .ts_ns = (int64_t)rel_ns(c, l0),
                     .dur_ns = (int64_t)ldur,
                     .gpu = e.gpu,
                     .flow_pid = e.pid,
                     .flow_tid = e.tid,
                     .flow_ts_ns = e.ts_ns};
    return emit(c, &l);
}

/* Whether key (device << 32 | stream, + 1) is in the open-addressing set
 * of cap slots (a power of two); added when not. */
static int seen_add(uint64_t *set, size_t cap, uint64_t key)
{
    size_t j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
    for (; set[j]; j = (j + 1) & (cap - 1))
        if (set[j] == key)
            return 1;
    set[j] = key;
    return 0;
}

/* Name each device's process and each track once: a stream's, or, for
 * device scopes, an SM's warp slot's (thousands of them: hence the set). */
static int gpu_tracks(trace_ctx *c)
{
    size_t cap = 64;
    while (cap < 4 * c->s->ngev + 64)
        cap <<= 1;
    uint64_t *seen = calloc(cap, sizeof *seen);
    if (!seen)
        return KSCOPE_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < c->s->ngev && rc == 0; i++) {
        const kscope__gpu_ev *e = &c->s->gev[i];
        if (seen_add(seen, cap, ((uint64_t)e->device << 32 | e->stream) + 1))
            continue;
        char label[64];
        int pid = GPU_PID_BASE + (int)e->device;
        if (!seen_add(seen, cap, ((uint64_t)(e->device | 1u << 31) << 32) + 1)) {
            snprintf(label, sizeof label, "GPU %u (%s)", e->device, kscope__gpu_device_type());
            rc = name_track(c, KSCOPE__TEV_PROCESS, pid, 0, label);
        }
        if (KSCOPE__DEVSCOPE_IS_TRACK(e->stream))
            snprintf(label, sizeof label, "SM %u warp %u", (e->stream >> 8) & 0x3fffffu,
                     e->stream & 0xffu);
        else
            snprintf(label, sizeof label, "stream %u", e->stream);
        rc = rc ? rc : name_track(c, KSCOPE__TEV_THREAD, pid, e->stream, label);
    }
    free(seen);
    return rc;
}

typedef struct counter_ctx {
    trace_ctx *c;
    int rc;
} counter_ctx;

static void counter_sample(const char *series, uint64_t t_ns, double value, void *arg)
{
    counter_ctx *cc = arg;
    kscope__tev e = {.kind = KSCOPE__TEV_COUNTER,
                     .name = series,
                     .pid = cc->c->pid,
                     .ts_ns = (int64_t)rel_ns(cc->c, t_ns),
                     .value = value};
    if (cc->rc == 0)
        cc->rc = emit(cc->c, &e);
}

/* Resource samples taken during the session, as counter tracks. */
static int counter_tracks(trace_ctx *c, uint64_t now_ns)
{
    counter_ctx cc = {c, 0};
    kscope__sampler_each(c->s->start_ns, now_ns, counter_sample, &cc);
    return cc.rc;
}

/* A sampled session's windows as a counter track: 1 from the moment GPU
 * capture opened, 0 from when it closed. */
static void window_edges(uint64_t open, uint64_t close, void *arg)
{
    counter_ctx *cc = arg;
    uint64_t t0 = cc->c->s->start_ns;
    kscope__tev e = {.kind = KSCOPE__TEV_COUNTER, .name = "gpu_sampled", .pid = cc->c->pid};
    e.ts_ns = (int64_t)rel_ns(cc->c, open > t0 ? open : t0);
    e.value = 1;
    if (cc->rc == 0)
        cc->rc = emit(cc->c, &e);
    e.ts_ns = (int64_t)rel_ns(cc->c, close);
    e.value = 0;
    if (cc->rc == 0 && close != UINT64_MAX)
        cc->rc = emit(cc->c, &e);
}

static int window_track(trace_ctx *c, uint64_t now_ns)
{
    counter_ctx cc = {c, 0};
    kscope__tev e = {.kind = KSCOPE__TEV_COUNTER, .name = "gpu_sampled", .pid = c->pid};
    cc.rc = emit(c, &e); /* 0 at the start, until the first window */
    kscope__sampling_windows(c->s->start_ns, now_ns, window_edges, &cc);
    return cc.rc;
}

/* Whether host_tracks named tid's track: a registered thread with events in
 * this session. Its name, when it has one, goes to *name. Registry locked. */
static int host_track_named(trace_ctx *c, int slot, uint32_t tid, const char **name)
{
    *name = NULL;
    for (kscope__thread *t = kscope__threads(); t; t = t->next) {
        if (t->tid != tid)
            continue;
        if (KSCOPE__LOAD(&t->ev[slot].gen) == c->s->gen && KSCOPE__LOAD(&t->ev[slot].head))
            return 1;
        *name = t->name[0] ? t->name : NULL;
    }
    return 0;
}

/* Name the tracks that hold only launch slices: threads that launched GPU
 * work but recorded no scope in this session (or never annotated). The
 * launching threads are few, so a short list does. */
static int launch_tracks(trace_ctx *c, int slot)
{
    uint32_t *seen = NULL;
    size_t nseen = 0, cap = 0;
    int rc = 0;
    kscope__threads_lock();
    for (size_t i = 0; i < c->s->ngev && rc == 0; i++) {
        uint32_t tid = c->s->gev[i].launch_tid;
        size_t j = 0;
        while (j < nseen && seen[j] != tid)
            j++;
        if (!tid || !c->s->gev[i].launch_ns || j < nseen)
            continue;
        if (nseen == cap) {
            cap = cap ? cap * 2 : 16;
            uint32_t *p = realloc(seen, cap * sizeof *p);
            if (!p) {
                rc = KSCOPE_ENOMEM;
                break;
            }
            seen = p;
        }
        seen[nseen++] = tid;
        const char *name;
        if (host_track_named(c, slot, tid, &name))
            continue;
        char label[64];
        if (name)
            snprintf(label, sizeof label, "%s (%u)", name, tid);
        else
            snprintf(label, sizeof label, "thread %u", tid);
        rc = name_track(c, KSCOPE__TEV_THREAD, c->pid, tid, label);
    }
    kscope__threads_unlock();
    free(seen);
    return rc;
}

static int host_tracks(trace_ctx *c, int slot, uint64_t now_ns)
{
    int rc = name_track(c, KSCOPE__TEV_PROCESS, c->pid, 0, "host");
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t && rc == 0; t = t->next) {
        if (KSCOPE__LOAD(&t->ev[slot].gen) != c->s->gen || !KSCOPE__LOAD(&t->ev[slot].head))
            continue;
        char label[64];
        if (t->name[0])
            snprintf(label, sizeof label, "%s (%u)", t->name, t->tid);
        else
            snprintf(label, sizeof label, "thread %u", t->tid);
        rc = name_track(c, KSCOPE__TEV_THREAD, c->pid, t->tid, label);
        if (rc == 0)
            rc = thread_events(c, t, now_ns);
    }
    kscope__threads_unlock();
    return rc;
}

static int run_facts(trace_ctx *c)
{
    kscope__facts_buf b;
    kscope__run_facts_fill(c->s, &b);
    kscope__tev e = {.kind = KSCOPE__TEV_RUN, .run = &b.f};
    int rc = emit(c, &e);
    kscope__run_facts_done(&b);
    return rc;
}

/* The event source of format/events.h over one session slot; source_arg
 * is a kscope__trace_args. The caller holds kscope__session_lock. */
int kscope__trace_source(void *source_arg, kscope__tev_fn fn, void *fn_arg)
{
    const kscope__trace_args *a = source_arg;
    kscope__session *s = &kscope__sessions[a->slot];
    trace_ctx c = {.fn = fn, .arg = fn_arg, .s = s, .pid = (int)getpid()};
    if (s->active) /* a paused session reads the same each time */
        kscope__clock_refresh();
    uint64_t now_ns = kscope__ticks_to_ns(a->now_ticks);
    int rc = run_facts(&c);
    pthread_mutex_lock(&s->lock);
    rc = rc ? rc : host_tracks(&c, a->slot, now_ns);
    if (rc == 0)
        rc = launch_tracks(&c, a->slot);
    if (rc == 0)
        rc = gpu_tracks(&c);
    for (size_t i = 0; i < s->ngev && rc == 0; i++)
        rc = gpu_event(&c, &s->gev[i]);
    int sampled = s->sampled && s->gpu;
    pthread_mutex_unlock(&s->lock);
    if (rc == 0)
        rc = counter_tracks(&c, now_ns);
    if (rc == 0 && sampled)
        rc = window_track(&c, now_ns);
    free(c.stack);
    free(c.metrics);
    free(c.tmetrics);
    return rc;
}
