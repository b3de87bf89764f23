/*
 * trace.c - write a trace session as Chrome trace JSON (Perfetto UI and
 * chrome://tracing load it): one track per host thread with its scopes as
 * nested slices and its marks as instants, one track per GPU stream (a
 * process per device) with kernels and copies, and flow arrows from each
 * launch to its kernel. Timestamps are µs since the session started.
 */
#include "core.h"
#include "diag/diag.h"
#include "format/jsonw.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_PID_BASE 1000000 /* pid of device d's process: GPU_PID_BASE + d */

typedef struct open_slice {
    uint32_t name;
    uint64_t begin_ns;
    size_t first_metric; /* index into the metric list */
} open_slice;

typedef struct metric_ev {
    uint32_t id;
    uint16_t type;
    uint64_t u;
} metric_ev;

typedef struct trace_ctx {
    kscope__jsonw *w;
    const kscope__session *s;
    int pid;
    open_slice *stack;
    int depth, cap;
    metric_ev *metrics;
    size_t nmetrics, capmetrics;
} trace_ctx;

static double rel_ns(const trace_ctx *c, uint64_t ns)
{
    return (double)((int64_t)(ns - c->s->start_ns));
}

static void common(trace_ctx *c, const char *name, const char *cat, const char *ph, int pid,
                   uint64_t tid, uint64_t ts_ns)
{
    kscope__jsonw *w = c->w;
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "name");
    kscope__jw_str(w, name);
    kscope__jw_key(w, "cat");
    kscope__jw_str(w, cat);
    kscope__jw_key(w, "ph");
    kscope__jw_str(w, ph);
    kscope__jw_key(w, "pid");
    kscope__jw_int(w, pid);
    kscope__jw_key(w, "tid");
    kscope__jw_uint(w, tid);
    kscope__jw_key(w, "ts");
    kscope__jw_us(w, (int64_t)rel_ns(c, ts_ns));
}

static void metadata(trace_ctx *c, const char *what, int pid, uint64_t tid, const char *value)
{
    kscope__jsonw *w = c->w;
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "name");
    kscope__jw_str(w, what);
    kscope__jw_key(w, "ph");
    kscope__jw_str(w, "M");
    kscope__jw_key(w, "pid");
    kscope__jw_int(w, pid);
    kscope__jw_key(w, "tid");
    kscope__jw_uint(w, tid);
    kscope__jw_key(w, "args");
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "name");
    kscope__jw_str(w, value);
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

static void metric_value(kscope__jsonw *w, const metric_ev *m)
{
    if (m->type == KSCOPE__T_INT) {
        int64_t v;
        memcpy(&v, &m->u, sizeof v);
        kscope__jw_int(w, v);
    } else {
        double v;
        memcpy(&v, &m->u, sizeof v);
        kscope__jw_double(w, v);
    }
}

static void call_stack_open(trace_ctx *c, int depth)
{
    kscope__jw_key(c->w, "call_stack");
    kscope__jw_open(c->w, '[');
    kscope__jw_str(c->w, "ROOT");
    for (int i = 0; i < depth; i++)
        kscope__jw_str(c->w, kscope__name(c->stack[i].name));
    kscope__jw_close(c->w, ']');
}

/* Close the innermost open slice at end_ns and write it. */
static void slice_close(trace_ctx *c, const kscope__thread *t, uint64_t end_ns)
{
    open_slice *o = &c->stack[c->depth - 1];
    common(c, kscope__name(o->name), "scope", "X", c->pid, t->tid, o->begin_ns);
    kscope__jw_key(c->w, "dur");
    kscope__jw_us(c->w, (int64_t)(end_ns - o->begin_ns));
    kscope__jw_key(c->w, "args");
    kscope__jw_open(c->w, '{');
    call_stack_open(c, c->depth);
    /* Metrics given inside this slice (inner slices took theirs). */
    for (size_t i = o->first_metric; i < c->nmetrics; i++) {
        const kscope__metric_def *d = kscope__metric_lookup(kscope__name(c->metrics[i].id));
        kscope__jw_key(c->w, d ? kscope__name(d->base) : kscope__name(c->metrics[i].id));
        metric_value(c->w, &c->metrics[i]);
    }
    kscope__jw_close(c->w, '}');
    kscope__jw_close(c->w, '}');
    c->nmetrics = o->first_metric;
    c->depth--;
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
    c->stack[c->depth++] = (open_slice){name, ns, c->nmetrics};
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

static void write_mark(trace_ctx *c, const kscope__thread *t, const kscope__ev *e)
{
    common(c, kscope__name(e->name), "mark", "i", c->pid, t->tid, kscope__ticks_to_ns(e->u));
    kscope__jw_key(c->w, "s");
    kscope__jw_str(c->w, "t");
    kscope__jw_key(c->w, "args");
    kscope__jw_open(c->w, '{');
    call_stack_open(c, c->depth);
    kscope__jw_close(c->w, '}');
    kscope__jw_close(c->w, '}');
}

static int thread_events(trace_ctx *c, const kscope__thread *t, uint64_t now_ns)
{
    const kscope__evbuf *b = &t->ev[c->s->slot];
    int rc = 0;
    c->depth = 0;
    c->nmetrics = 0;
    for (const kscope__evchunk *ch = b->head; ch && rc == 0; ch = ch->next) {
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
                    slice_close(c, t, kscope__ticks_to_ns(e->u));
                break;
            case KSCOPE__EV_MARK:
                write_mark(c, t, e);
                break;
            case KSCOPE__EV_METRIC:
                rc = push_metric(c, e);
                break;
            }
        }
    }
    while (rc == 0 && c->depth) {
        uint64_t begin = c->stack[c->depth - 1].begin_ns;
        slice_close(c, t, interval_end(c->s, begin, now_ns));
    }
    return rc;
}

/* Names from ROOT down to a GPU record's context node. */
static void gpu_call_stack(trace_ctx *c, uint64_t ctx, uint32_t kernel)
{
    const kscope__node *chain[KSCOPE__STACK_MAX + 4];
    int n = 0;
    for (const kscope__node *p = (const kscope__node *)(uintptr_t)ctx;
         p && p->kind != KSCOPE__NODE_ROOT && n < KSCOPE__STACK_MAX + 4; p = p->parent)
        chain[n++] = p;
    kscope__jw_key(c->w, "call_stack");
    kscope__jw_open(c->w, '[');
    kscope__jw_str(c->w, "ROOT");
    while (n > 0)
        kscope__jw_str(c->w, kscope__name(chain[--n]->name));
    kscope__jw_str(c->w, kscope__name(kernel));
    kscope__jw_close(c->w, ']');
}

static void gpu_event(trace_ctx *c, const kscope__gpu_ev *e)
{
    static const char *cats[] = {"gpu", "kernel", "memcpy", "memset"};
    const char *cat = e->kind <= 3 ? cats[e->kind] : "gpu";
    int pid = GPU_PID_BASE + (int)e->device;
    common(c, kscope__name(e->name), cat, "X", pid, e->stream, e->start_ns);
    kscope__jw_key(c->w, "dur");
    kscope__jw_us(c->w, (int64_t)(e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0));
    kscope__jw_key(c->w, "args");
    kscope__jw_open(c->w, '{');
    gpu_call_stack(c, e->ctx, e->name);
    kscope__jw_key(c->w, "device");
    kscope__jw_uint(c->w, e->device);
    kscope__jw_key(c->w, "stream");
    kscope__jw_uint(c->w, e->stream);
    kscope__jw_key(c->w, "correlation");
    kscope__jw_uint(c->w, e->correlation);
    if (e->bytes) {
        kscope__jw_key(c->w, "bytes");
        kscope__jw_uint(c->w, e->bytes);
    }
    if (e->src_device != e->dst_device) { /* a peer copy */
        kscope__jw_key(c->w, "src_device");
        kscope__jw_uint(c->w, e->src_device);
        kscope__jw_key(c->w, "dst_device");
        kscope__jw_uint(c->w, e->dst_device);
    }
    kscope__jw_close(c->w, '}');
    kscope__jw_close(c->w, '}');
    if (!e->launch_ns || !e->launch_tid)
        return;
    /* The launch call on its host thread, and an arrow to the kernel. */
    uint64_t lend = e->launch_end_ns > e->launch_ns ? e->launch_end_ns : e->launch_ns + 1;
    common(c, "launch", "launch", "X", c->pid, e->launch_tid, e->launch_ns);
    kscope__jw_key(c->w, "dur");
    kscope__jw_us(c->w, (int64_t)(lend - e->launch_ns));
    kscope__jw_close(c->w, '}');
    common(c, "launch", "launch", "s", c->pid, e->launch_tid, e->launch_ns);
    kscope__jw_key(c->w, "id");
    kscope__jw_uint(c->w, e->correlation);
    kscope__jw_close(c->w, '}');
    common(c, "launch", "launch", "f", pid, e->stream, e->start_ns);
    kscope__jw_key(c->w, "id");
    kscope__jw_uint(c->w, e->correlation);
    kscope__jw_key(c->w, "bp");
    kscope__jw_str(c->w, "e");
    kscope__jw_close(c->w, '}');
}

/* Name each device's process and each stream's track once. Distinct
 * (device, stream) pairs are few, so a short list does. */
static int gpu_tracks(trace_ctx *c)
{
    struct pair {
        uint32_t device, stream;
    } *seen = NULL;
    size_t nseen = 0, cap = 0;
    for (size_t i = 0; i < c->s->ngev; i++) {
        const kscope__gpu_ev *e = &c->s->gev[i];
        int dev_seen = 0, stream_seen = 0;
        for (size_t j = 0; j < nseen && !stream_seen; j++) {
            dev_seen |= seen[j].device == e->device;
            stream_seen = seen[j].device == e->device && seen[j].stream == e->stream;
        }
        if (stream_seen)
            continue;
        if (nseen == cap) {
            cap = cap ? cap * 2 : 16;
            struct pair *p = realloc(seen, cap * sizeof *p);
            if (!p) {
                free(seen);
                return KSCOPE_ENOMEM;
            }
            seen = p;
        }
        seen[nseen++] = (struct pair){e->device, e->stream};
        char label[64];
        if (!dev_seen) {
            snprintf(label, sizeof label, "GPU %u (%s)", e->device, kscope__gpu_device_type());
            metadata(c, "process_name", GPU_PID_BASE + (int)e->device, 0, label);
        }
        snprintf(label, sizeof label, "stream %u", e->stream);
        metadata(c, "thread_name", GPU_PID_BASE + (int)e->device, e->stream, label);
    }
    free(seen);
    return 0;
}

/* Samples of the resource recorder taken during the session, as counter
 * tracks ("ph":"C"). */
static int counter_tracks(trace_ctx *c, uint64_t now_ns)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return KSCOPE_ENOMEM;
    int first = 0; /* the trace already holds events: each counter adds ",\n{...}" */
    int rc =
        kscope__diag_chrome_counters(f, c->s->start_ns, now_ns, c->s->start_ns, c->pid, &first);
    if (fclose(f) != 0 || rc < 0) {
        free(text);
        return KSCOPE_ENOMEM;
    }
    kscope__jw_raw(c->w, text, len);
    free(text);
    return 0;
}

int kscope__build_trace(int slot, uint64_t now_ticks, char **out, size_t *len)
{
    kscope__session *s = &kscope__sessions[slot];
    kscope__jsonw w;
    kscope__jw_init(&w);
    trace_ctx c = {.w = &w, .s = s, .pid = (int)getpid()};
    uint64_t now_ns = kscope__ticks_to_ns(now_ticks);
    int rc = 0;
    kscope__jw_open(&w, '{');
    kscope__jw_key(&w, "displayTimeUnit");
    kscope__jw_str(&w, "us");
    kscope__jw_key(&w, "traceEvents");
    kscope__jw_open(&w, '[');
    metadata(&c, "process_name", c.pid, 0, "host");
    pthread_mutex_lock(&s->lock);
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t && rc == 0; t = t->next) {
        if (t->ev[slot].gen != s->gen || !t->ev[slot].head)
            continue;
        char label[64];
        if (t->name[0])
            snprintf(label, sizeof label, "%s (%u)", t->name, t->tid);
        else
            snprintf(label, sizeof label, "thread %u", t->tid);
        metadata(&c, "thread_name", c.pid, t->tid, label);
        rc = thread_events(&c, t, now_ns);
    }
    kscope__threads_unlock();
    if (rc == 0)
        rc = gpu_tracks(&c);
    for (size_t i = 0; i < s->ngev && rc == 0; i++)
        gpu_event(&c, &s->gev[i]);
    pthread_mutex_unlock(&s->lock);
    if (rc == 0)
        rc = counter_tracks(&c, now_ns);
    kscope__jw_close(&w, ']');
    kscope__jw_close(&w, '}');
    kscope__jw_raw(&w, "\n", 1);
    free(c.stack);
    free(c.metrics);
    if (rc != 0) {
        kscope__jw_free(&w);
        return kscope__fail(rc, "out of memory writing the trace of '%s'", s->name);
    }
    return kscope__jw_finish(&w, out, len);
}
