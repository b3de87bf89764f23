/*
 * chrome-trace.c - write a timeline as Chrome trace JSON, the form Perfetto
 * UI and chrome://tracing load: {"displayTimeUnit": "us", "traceEvents":
 * [...]} with "M" events naming processes and tracks, "X" slices (host
 * scopes, kernels, copies, launch calls), "i" instants (marks), "s"/"f"
 * flow arrows from each launch to its kernel, and "C" counters. Times are
 * microseconds with nanosecond precision, written as short as they go, and
 * no arg repeats what a field says (a GPU event's stream is its tid): a
 * trace's bytes are mostly its times and names. The run's facts (command, host,
 * start time, ...) go in the top-level "metadata" object, where Chrome's
 * own traces keep theirs; viewers that do not know it pass over it. An
 * event read from a Chrome trace (convert) is copied as the file wrote it.
 */
#include "format/chrome-trace.h"
#include "format/format.h"
#include "format/run-facts.h"
#include "kscope.h"

#include <math.h>
#include <stdlib.h>

/* The fields every event but metadata starts with. */
static void common(kscope__jsonw *w, const char *name, const char *cat, const char *ph, int pid,
                   uint64_t tid, int64_t ts_ns)
{
    kscope__jw_open(w, '{');
    kscope__jw_member_str(w, "name", name);
    kscope__jw_member_str(w, "cat", cat);
    kscope__jw_member_str(w, "ph", ph);
    kscope__jw_member_int(w, "pid", pid);
    kscope__jw_member_uint(w, "tid", tid);
    kscope__jw_member_us(w, "ts", ts_ns);
}

/* A metadata event up to its args' object, open for the one arg. */
static void meta_head(kscope__jsonw *w, const char *name, int64_t pid, const uint64_t *tid)
{
    kscope__jw_open(w, '{');
    kscope__jw_member_str(w, "name", name);
    kscope__jw_member_str(w, "ph", "M");
    kscope__jw_member_int(w, "pid", pid);
    if (tid)
        kscope__jw_member_uint(w, "tid", *tid);
    kscope__jw_key(w, "args");
    kscope__jw_open(w, '{');
}

void kscope__chrome_meta_str(kscope__jsonw *w, const char *name, int64_t pid, const uint64_t *tid,
                             const char *key, const char *value)
{
    meta_head(w, name, pid, tid);
    kscope__jw_member_str(w, key, value);
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

void kscope__chrome_meta_int(kscope__jsonw *w, const char *name, int64_t pid, const uint64_t *tid,
                             const char *key, int64_t value)
{
    meta_head(w, name, pid, tid);
    kscope__jw_member_int(w, key, value);
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

/* A process's or track's name (a track's names its tid). */
static void metadata(kscope__jsonw *w, const kscope__tev *e)
{
    const char *name = e->kind == KSCOPE__TEV_PROCESS ? "process_name" : "thread_name";
    kscope__chrome_meta_str(w, name, e->pid, &e->tid, "name", e->name);
}

static void call_stack(kscope__jsonw *w, const kscope__tev *e)
{
    kscope__jw_key(w, "call_stack");
    kscope__jw_open(w, '[');
    for (size_t i = 0; i < e->nstack; i++)
        kscope__jw_str(w, e->stack[i]);
    kscope__jw_close(w, ']');
}

static void duration(kscope__jsonw *w, const kscope__tev *e)
{
    kscope__jw_member_us(w, "dur", e->dur_ns);
}

static void slice(kscope__jsonw *w, const kscope__tev *e)
{
    common(w, e->name, e->cat, "X", e->pid, e->tid, e->ts_ns);
    duration(w, e);
    kscope__jw_key(w, "args");
    kscope__jw_open(w, '{');
    call_stack(w, e);
    for (size_t i = 0; i < e->nmetrics; i++) {
        const kscope__tev_metric *m = &e->metrics[i];
        kscope__jw_key(w, m->key);
        if (m->is_double)
            kscope__jw_double(w, m->d);
        else
            kscope__jw_int(w, m->i);
    }
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

static void mark(kscope__jsonw *w, const kscope__tev *e)
{
    common(w, e->name, e->cat, "i", e->pid, e->tid, e->ts_ns);
    kscope__jw_member_str(w, "s", "t");
    kscope__jw_key(w, "args");
    kscope__jw_open(w, '{');
    call_stack(w, e);
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

static void gpu(kscope__jsonw *w, const kscope__tev *e)
{
    common(w, e->name, e->cat, "X", e->pid, e->tid, e->ts_ns);
    duration(w, e);
    kscope__jw_key(w, "args");
    kscope__jw_open(w, '{');
    call_stack(w, e);
    /* the stream is the track (tid): not repeated */
    kscope__jw_member_uint(w, "device", e->gpu.device);
    kscope__jw_member_uint(w, "correlation", e->gpu.correlation);
    if (e->gpu.bytes)
        kscope__jw_member_uint(w, "bytes", e->gpu.bytes);
    if (e->gpu.src_device != e->gpu.dst_device) { /* a peer copy */
        kscope__jw_member_uint(w, "src_device", e->gpu.src_device);
        kscope__jw_member_uint(w, "dst_device", e->gpu.dst_device);
    }
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

/* The launch call on its host thread, and an arrow from it to the kernel. */
static void launch(kscope__jsonw *w, const kscope__tev *e)
{
    common(w, e->name, e->cat, "X", e->pid, e->tid, e->ts_ns);
    duration(w, e);
    kscope__jw_close(w, '}');
    common(w, e->name, e->cat, "s", e->pid, e->tid, e->ts_ns);
    kscope__jw_member_uint(w, "id", e->gpu.correlation);
    kscope__jw_close(w, '}');
    common(w, e->name, e->cat, "f", e->flow_pid, e->flow_tid, e->flow_ts_ns);
    kscope__jw_member_uint(w, "id", e->gpu.correlation);
    kscope__jw_member_str(w, "bp", "e");
    kscope__jw_close(w, '}');
}

static void counter(kscope__jsonw *w, const kscope__tev *e)
{
    kscope__jw_open(w, '{');
    kscope__jw_member_str(w, "name", e->name);
    kscope__jw_member_str(w, "ph", "C");
    kscope__jw_member_us(w, "ts", e->ts_ns);
    kscope__jw_member_int(w, "pid", e->pid);
    kscope__jw_key(w, "args");
    kscope__jw_open(w, '{');
    kscope__jw_member_double(w, "value", e->value);
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

/* A slice's begin or end, or an end of a flow arrow (its id: the
 * correlation), on its track. */
static void phase(kscope__jsonw *w, const kscope__tev *e, const char *ph)
{
    common(w, e->name, e->cat, ph, e->pid, e->tid, e->ts_ns);
    if (e->kind == KSCOPE__TEV_FLOW_START || e->kind == KSCOPE__TEV_FLOW_END)
        kscope__jw_member_uint(w, "id", e->gpu.correlation);
    kscope__jw_close(w, '}');
}

/* A process's or track's place among its siblings. */
static void sort_index(kscope__jsonw *w, const kscope__tev *e)
{
    int process = e->kind == KSCOPE__TEV_PROCESS_SORT;
    int64_t index = fabs(e->value) < 2e9 ? (int64_t)e->value : 0; /* no int beyond */
    kscope__chrome_meta_int(w, process ? "process_sort_index" : "thread_sort_index", e->pid,
                            process ? NULL : &e->tid, "sort_index", index);
}

/* An event read from a Chrome trace, as the file wrote it: its members. */
static void copy_read(kscope__jsonw *w, const kscope__tev_read *r)
{
    kscope__jw_open(w, '{');
    for (size_t i = 0; i < r->nfields; i++) {
        const kscope__tev_value *v = &r->fields[i].v;
        kscope__jw_key(w, r->fields[i].key);
        if (v->type == KSCOPE__TEV_STRING)
            kscope__jw_str(w, v->text);
        else
            kscope__jw_literal(w, v->text ? v->text : "null");
    }
    kscope__jw_close(w, '}');
}

/* The events go into w; the run's facts, which follow the events' array,
 * wait in meta. */
typedef struct trace_out {
    kscope__jsonw w, meta;
} trace_out;

static int write_event(const kscope__tev *e, void *arg)
{
    trace_out *o = arg;
    kscope__jsonw *w = &o->w;
    if (e->read && e->read->fields && e->kind != KSCOPE__TEV_RUN) {
        copy_read(w, e->read); /* read from a trace: copied as written */
        return 0;
    }
    switch (e->kind) {
    case KSCOPE__TEV_PROCESS:
    case KSCOPE__TEV_THREAD:
        metadata(w, e);
        break;
    case KSCOPE__TEV_SLICE:
        slice(w, e);
        break;
    case KSCOPE__TEV_MARK:
        mark(w, e);
        break;
    case KSCOPE__TEV_GPU:
        gpu(w, e);
        break;
    case KSCOPE__TEV_LAUNCH:
        launch(w, e);
        break;
    case KSCOPE__TEV_COUNTER:
        counter(w, e);
        break;
    case KSCOPE__TEV_RUN:
        kscope__jw_clear(&o->meta);
        o->meta.need_comma = 0;
        if (e->read)
            copy_read(&o->meta, e->read);
        else
            kscope__run_facts_json(&o->meta, e->run);
        break;
    case KSCOPE__TEV_BEGIN:
        phase(w, e, "B");
        break;
    case KSCOPE__TEV_END:
        phase(w, e, "E");
        break;
    case KSCOPE__TEV_FLOW_START:
        phase(w, e, "s");
        break;
    case KSCOPE__TEV_FLOW_END:
        phase(w, e, "f");
        break;
    case KSCOPE__TEV_PROCESS_SORT:
    case KSCOPE__TEV_THREAD_SORT:
        sort_index(w, e);
        break;
    case KSCOPE__TEV_META:
    case KSCOPE__TEV_OTHER:
        break; /* what they hold is in the fields of the file they came from */
    }
    return 0;
}

void kscope__chrome_trace_head(kscope__jsonw *w)
{
    kscope__jw_open(w, '{');
    kscope__jw_member_str(w, "displayTimeUnit", "us");
    kscope__jw_key(w, "traceEvents");
    kscope__jw_open(w, '[');
}

/* The events' array closed, the run's facts after it, the document
 * closed; rc is the source's. */
static int doc_tail(trace_out *o, int rc)
{
    kscope__jw_close(&o->w, ']');
    if (o->meta.out.len) {
        kscope__jw_key(&o->w, "metadata");
        kscope__jw_raw(&o->w, o->meta.out.buf, o->meta.out.len);
    }
    rc = rc == 0 && o->meta.out.failed ? KSCOPE_ENOMEM : rc;
    kscope__jw_free(&o->meta);
    kscope__jw_close(&o->w, '}');
    kscope__jw_raw(&o->w, "\n", 1);
    return rc == 0 ? 0 : rc < 0 ? rc : KSCOPE_EIO;
}

/* The whole document into o->w (made ready by the caller), the events
 * from the source; 0 or an error, as doc_tail says. */
static int write_doc(trace_out *o, kscope__tev_source source, void *source_arg)
{
    kscope__jw_init(&o->meta);
    kscope__chrome_trace_head(&o->w);
    return doc_tail(o, source(source_arg, write_event, o));
}

int kscope__chrome_trace_write(kscope__tev_source source, void *source_arg, char **out, size_t *len)
{
    trace_out o;
    kscope__jw_init(&o.w);
    int rc = write_doc(&o, source, source_arg);
    if (rc != 0) {
        kscope__jw_free(&o.w);
        return rc;
    }
    return kscope__jw_finish(&o.w, out, len);
}

int kscope__chrome_trace_to(kscope__tev_source source, void *source_arg, const kscope__sink *out)
{
    trace_out o;
    kscope__jw_init_sink(&o.w, out);
    int rc = write_doc(&o, source, source_arg);
    int end = kscope__jw_end(&o.w);
    return rc ? rc : end;
}
