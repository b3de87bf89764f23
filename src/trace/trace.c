/*
 * trace.c - a trace session's timeline as events for the trace writers
 * (format/events.h): one track per host thread with its scopes as nested
 * slices and its marks as instants, one track per GPU stream (a process
 * per device) with kernels and copies, the launch call of each, and the
 * resource samples taken during the session as counters, after the run's
 * facts (facts.c), which the writer keeps as the trace's metadata. Times
 * are ns since the session started.
 *
 * The events are read once, in the order spill.c gives them (the spill
 * file's, then memory's): each thread's in its own order, threads and GPU
 * work interleaved. A thread's open slices and the tracks seen are all
 * that is held, so writing a trace of any length takes little memory.
 */
#include "core/core.h"
#include "format/events.h"
#include "util/table.h"

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

/* One thread's place in the timeline as its events are read. */
typedef struct tstate {
    const kscope__thread *t;
    open_slice *stack;
    int depth, cap;
    metric_ev *metrics;
    size_t nmetrics, capmetrics;
} tstate;

/* A set of 64-bit keys (0 is empty): the tracks seen; uint64_t slots. */
typedef kscope__table keyset;

static uint64_t key_slot_hash(const void *slot)
{
    return kscope__number_hash(*(const uint64_t *)slot);
}

static const kscope__table_kind keys_kind = {.size = sizeof(uint64_t),
                                             .mark_size = sizeof(uint64_t),
                                             .first = 64,
                                             .key_size = sizeof(uint64_t),
                                             .hash = key_slot_hash};

typedef struct trace_ctx {
    kscope__tev_fn fn;
    void *arg;
    const kscope__session *s;
    int pid;
    uint64_t now_ns; /* open slices end here (or their interval's end) */
    tstate *threads;
    size_t nthreads, capthreads;
    tstate *cur;      /* of the last host events */
    keyset tracks;    /* device << 32 | stream (+1), and device processes */
    keyset launchers; /* threads with launch slices (tid + 1) */
    /* Scratch for the event being handed out. */
    const char *names[KSCOPE__STACK_MAX + 8];
    kscope__tev_metric *tmetrics;
    size_t captmetrics;
} trace_ctx;

/* Add key (not 0) to set: 1 when new, 0 when seen, -1 out of memory. */
static int keyset_add(keyset *k, uint64_t key)
{
    uint64_t h = kscope__number_hash(key);
    if (kscope__table_find(k, &keys_kind, h, &key))
        return 0;
    return kscope__table_add(k, &keys_kind, h, &key) ? 1 : -1;
}

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
static size_t host_stack(trace_ctx *c, const tstate *ts, int depth)
{
    size_t n = 0;
    c->names[n++] = "ROOT";
    for (int i = 0; i < depth && n < KSCOPE__STACK_MAX + 7; i++)
        c->names[n++] = kscope__name(ts->stack[i].name);
    return n;
}

/* The metrics [from, nmetrics) as writer metrics, base names. */
static int slice_metrics(trace_ctx *c, const tstate *ts, size_t from, kscope__tev *e)
{
    size_t n = ts->nmetrics - from;
    if (n > c->captmetrics) {
        kscope__tev_metric *p = realloc(c->tmetrics, n * sizeof *p);
        if (!p)
            return KSCOPE_ENOMEM;
        c->tmetrics = p;
        c->captmetrics = n;
    }
    for (size_t i = 0; i < n; i++) {
        const metric_ev *m = &ts->metrics[from + i];
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
static int slice_close(trace_ctx *c, tstate *ts, uint64_t end_ns)
{
    open_slice *o = &ts->stack[ts->depth - 1];
    if (end_ns < o->inner_end_ns)
        end_ns = o->inner_end_ns;
    if (ts->depth > 1 && ts->stack[ts->depth - 2].inner_end_ns < end_ns)
        ts->stack[ts->depth - 2].inner_end_ns = end_ns;
    kscope__tev e = {.kind = KSCOPE__TEV_SLICE,
                     .name = kscope__name(o->name),
                     .cat = "scope",
                     .pid = c->pid,
                     .tid = ts->t->tid,
                     .ts_ns = (int64_t)rel_ns(c, o->begin_ns),
                     .dur_ns = (int64_t)(end_ns - o->begin_ns)};
    e.stack = c->names;
    e.nstack = host_stack(c, ts, ts->depth);
    /* Metrics given inside this slice (inner slices took theirs). */
    int rc = slice_metrics(c, ts, o->first_metric, &e);
    if (rc == 0)
        rc = emit(c, &e);
    ts->nmetrics = o->first_metric;
    ts->depth--;
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

static int push_open(tstate *ts, uint32_t name, uint64_t ns)
{
    if (ts->depth == ts->cap) {
        int cap = ts->cap ? ts->cap * 2 : 64;
        open_slice *p = realloc(ts->stack, (size_t)cap * sizeof *p);
        if (!p)
            return KSCOPE_ENOMEM;
        ts->stack = p;
        ts->cap = cap;
    }
    ts->stack[ts->depth++] = (open_slice){name, ns, 0, ts->nmetrics};
    return 0;
}

static int push_metric(tstate *ts, const kscope__ev *e)
{
    if (ts->nmetrics == ts->capmetrics) {
        size_t cap = ts->capmetrics ? ts->capmetrics * 2 : 64;
        metric_ev *p = realloc(ts->metrics, cap * sizeof *p);
        if (!p)
            return KSCOPE_ENOMEM;
        ts->metrics = p;
        ts->capmetrics = cap;
    }
    ts->metrics[ts->nmetrics++] = (metric_ev){e->name, e->aux, e->u};
    return 0;
}

static int write_mark(trace_ctx *c, const tstate *ts, const kscope__ev *e)
{
    kscope__tev m = {.kind = KSCOPE__TEV_MARK,
                     .name = kscope__name(e->name),
                     .cat = "mark",
                     .pid = c->pid,
                     .tid = ts->t->tid,
                     .ts_ns = (int64_t)rel_ns(c, kscope__ticks_to_ns(e->u))};
    m.stack = c->names;
    m.nstack = host_stack(c, ts, ts->depth);
    return emit(c, &m);
}

/* The track name of a host thread with events: its name and id. */
static int name_thread(trace_ctx *c, const kscope__thread *t)
{
    char label[64];
    if (t->name[0])
        snprintf(label, sizeof label, "%s (%u)", t->name, t->tid);
    else
        snprintf(label, sizeof label, "thread %u", t->tid);
    return name_track(c, KSCOPE__TEV_THREAD, c->pid, t->tid, label);
}

/* Thread t's state, made (and its track named) at its first events. */
static tstate *thread_state(trace_ctx *c, const kscope__thread *t, int *rc)
{
    if (c->cur && c->cur->t == t)
        return c->cur;
    for (size_t i = 0; i < c->nthreads; i++)
        if (c->threads[i].t == t)
            return c->cur = &c->threads[i];
    if (c->nthreads == c->capthreads) {
        size_t cap = c->capthreads ? c->capthreads * 2 : 16;
        tstate *p = realloc(c->threads, cap * sizeof *p);
        if (!p) {
            *rc = KSCOPE_ENOMEM;
            return NULL;
        }
        c->threads = p;
        c->capthreads = cap;
    }
    c->cur = &c->threads[c->nthreads++];
    *c->cur = (tstate){.t = t};
    *rc = name_thread(c, t);
    return c->cur;
}

/* A thread's next host events (spill.c's visitor). */
static int host_events(void *arg, const kscope__thread *t, const kscope__ev *ev, uint32_t n)
{
    trace_ctx *c = arg;
    int rc = 0;
    tstate *ts = thread_state(c, t, &rc);
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const kscope__ev *e = &ev[i];
        switch (e->type) {
        case KSCOPE__EV_BEGIN:
            rc = push_open(ts, e->name, kscope__ticks_to_ns(e->u));
            break;
        case KSCOPE__EV_END:
            /* An end whose begin was not recorded (entered while the
             * session was paused, or in an earlier phase) has no slice to
             * close. */
            if (ts->depth && ts->stack[ts->depth - 1].name == e->name)
                rc = slice_close(c, ts, kscope__ticks_to_ns(e->u));
            break;
        case KSCOPE__EV_MARK:
            rc = write_mark(c, ts, e);
            break;
        case KSCOPE__EV_METRIC:
            rc = push_metric(ts, e);
            break;
        }
    }
    return rc;
}

/* Close every thread's slices still open. */
static int close_threads(trace_ctx *c, int rc)
{
    for (size_t i = 0; i < c->nthreads; i++) {
        tstate *ts = &c->threads[i];
        while (rc == 0 && ts->depth) {
            uint64_t begin = ts->stack[ts->depth - 1].begin_ns;
            rc = slice_close(c, ts, interval_end(c->s, begin, c->now_ns));
        }
    }
    return rc;
}

static void free_ctx(trace_ctx *c)
{
    for (size_t i = 0; i < c->nthreads; i++) {
        free(c->threads[i].stack);
        free(c->threads[i].metrics);
    }
    free(c->threads);
    kscope__table_free(&c->tracks);
    kscope__table_free(&c->launchers);
    free(c->tmetrics);
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
    if (rc == 0 && keyset_add(&c->tracks, ((uint64_t)g->device << 32 | g->stream) + 1) < 0)
        rc = KSCOPE_ENOMEM;
    if (rc != 0 || !g->launch_ns || !g->launch_tid)
        return rc;
    if (keyset_add(&c->launchers, (uint64_t)g->launch_tid + 1) < 0)
        return KSCOPE_ENOMEM;
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

/* GPU events read from spill.c's visitor. */
static int gpu_events(void *arg, const kscope__gpu_ev *ev, uint32_t n)
{
    trace_ctx *c = arg;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++)
        rc = gpu_event(c, &ev[i]);
    return rc;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The keys of a set, in order (0s first, to skip); NULL out of memory. */
static uint64_t *sorted_keys(const keyset *k)
{
    uint64_t *v = malloc((k->cap ? k->cap : 1) * sizeof *v);
    if (v && k->cap) {
        memcpy(v, k->slots, k->cap * sizeof *v);
        qsort(v, k->cap, sizeof *v, by_key);
    }
    return v;
}

/* Name each device's process and each track its work was on: a stream's,
 * or, for device scopes, an SM's warp slot's (thousands of them). */
static int gpu_tracks(trace_ctx *c)
{
    uint64_t *keys = sorted_keys(&c->tracks);
    if (!keys)
        return KSCOPE_ENOMEM;
    int rc = 0;
    uint32_t named_device = UINT32_MAX;
    for (size_t i = 0; i < c->tracks.cap && rc == 0; i++) {
        if (!keys[i])
            continue;
        uint32_t device = (uint32_t)((keys[i] - 1) >> 32), stream = (uint32_t)(keys[i] - 1);
        char label[64];
        int pid = GPU_PID_BASE + (int)device;
        if (device != named_device) {
            snprintf(label, sizeof label, "GPU %u (%s)", device, kscope__gpu_device_type());
            rc = name_track(c, KSCOPE__TEV_PROCESS, pid, 0, label);
            named_device = device;
        }
        if (KSCOPE__DEVSCOPE_IS_TRACK(stream))
            snprintf(label, sizeof label, "SM %u warp %u", (stream >> 8) & 0x3fffffu,
                     stream & 0xffu);
        else
            snprintf(label, sizeof label, "stream %u", stream);
        rc = rc ? rc : name_track(c, KSCOPE__TEV_THREAD, pid, stream, label);
    }
    free(keys);
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

/* Whether tid's track was named for its host events; else its thread's
 * name, when it has one, into *name. */
static int host_track_named(trace_ctx *c, uint32_t tid, const char **name)
{
    *name = NULL;
    for (size_t i = 0; i < c->nthreads; i++)
        if (c->threads[i].t->tid == tid)
            return 1;
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t && !*name; t = t->next)
        if (t->tid == tid && t->name[0])
            *name = t->name;
    kscope__threads_unlock();
    return 0;
}

/* Name the tracks that hold only launch slices: threads that launched GPU
 * work but recorded no scope in this session (or never annotated). */
static int launch_tracks(trace_ctx *c)
{
    uint64_t *keys = sorted_keys(&c->launchers);
    if (!keys)
        return KSCOPE_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < c->launchers.cap && rc == 0; i++) {
        if (!keys[i])
            continue;
        uint32_t tid = (uint32_t)(keys[i] - 1);
        const char *name;
        if (host_track_named(c, tid, &name))
            continue;
        char label[64];
        if (name)
            snprintf(label, sizeof label, "%s (%u)", name, tid);
        else
            snprintf(label, sizeof label, "thread %u", tid);
        rc = name_track(c, KSCOPE__TEV_THREAD, c->pid, tid, label);
    }
    free(keys);
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

/* The event source of format/events.h over one session slot (or one of
 * its completed phases); source_arg is a kscope__trace_args. The caller
 * holds kscope__session_lock. */
int kscope__trace_source(void *source_arg, kscope__tev_fn fn, void *fn_arg)
{
    const kscope__trace_args *a = source_arg;
    kscope__session *s = &kscope__sessions[a->slot];
    trace_ctx c = {.fn = fn, .arg = fn_arg, .s = s, .pid = (int)getpid()};
    if (s->active && !a->phase) /* a paused session reads the same each time */
        kscope__clock_refresh();
    c.now_ns = kscope__ticks_to_ns(a->phase ? a->phase->end_ticks : a->now_ticks);
    int rc = run_facts(&c);
    rc = rc ? rc : name_track(&c, KSCOPE__TEV_PROCESS, c.pid, 0, "host");
    kscope__trace_visit v = {host_events, gpu_events, &c};
    if (rc == 0)
        rc = a->phase ? kscope__spill_read(&a->phase->trace, &v) : kscope__trace_each(s, &v);
    rc = close_threads(&c, rc);
    if (rc == 0)
        rc = launch_tracks(&c);
    if (rc == 0)
        rc = gpu_tracks(&c);
    pthread_mutex_lock(&s->lock);
    int sampled = s->sampled && s->gpu;
    pthread_mutex_unlock(&s->lock);
    if (rc == 0)
        rc = counter_tracks(&c, c.now_ns);
    if (rc == 0 && sampled)
        rc = window_track(&c, c.now_ns);
    free_ctx(&c);
    return rc;
}
