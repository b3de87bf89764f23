/*
 * events.h - a session's timeline as the trace writers take it: one event
 * at a time, from an iterator the core provides (core/trace.c), so a
 * writer never looks inside the core's buffers and the core never writes
 * a file format.
 *
 * Times are nanoseconds since the session started. Strings and arrays
 * belong to the iterator and are valid during the callback only.
 */
#ifndef KSCOPE_EVENTS_H
#define KSCOPE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    KSCOPE__TEV_PROCESS = 1, /* name a process: pid, name */
    KSCOPE__TEV_THREAD,      /* name a track: pid, tid, name */
    KSCOPE__TEV_SLICE,       /* a host scope: pid, tid, ts, dur, name, stack, metrics */
    KSCOPE__TEV_MARK,        /* an instant: pid, tid, ts, name, stack */
    KSCOPE__TEV_GPU,         /* a kernel or copy: pid (device's), tid (stream), ts, dur,
                                name, cat, stack, gpu */
    KSCOPE__TEV_LAUNCH,      /* the launch call of a GPU event: pid, tid, ts, dur, and the
                                flow to its GPU event (flow_pid, flow_tid, flow_ts_ns) */
    KSCOPE__TEV_COUNTER,     /* a sampled value: pid, ts, name (the track), value */
    KSCOPE__TEV_RUN,         /* the run's facts (run): the trace's metadata, once */
} kscope__tev_kind;

struct kscope__run_facts;

/* A metric given inside a host scope. */
typedef struct kscope__tev_metric {
    const char *key; /* without its (inc)/(exc)/(pty) suffix */
    int is_double;
    int64_t i;
    double d;
} kscope__tev_metric;

typedef struct kscope__tev {
    kscope__tev_kind kind;
    const char *name;
    const char *cat; /* "scope", "mark", "kernel", "memcpy", "memset", "launch" */
    int pid;
    uint64_t tid;
    int64_t ts_ns, dur_ns;
    const char *const *stack; /* calling context from "ROOT" down */
    size_t nstack;
    const kscope__tev_metric *metrics;
    size_t nmetrics;
    struct {
        uint32_t device, stream, correlation;
        uint32_t src_device, dst_device; /* differ for peer copies only */
        uint64_t bytes;                  /* 0: none */
    } gpu;
    int flow_pid;
    uint64_t flow_tid;
    int64_t flow_ts_ns;
    double value;
    const struct kscope__run_facts *run;
} kscope__tev;

/* Called for each event in order; non-zero stops the walk and is returned. */
typedef int (*kscope__tev_fn)(const kscope__tev *e, void *arg);

/* An event source: calls fn(event, fn_arg) for each event of the timeline;
 * 0, fn's non-zero value, or a negative KSCOPE_E*. */
typedef int (*kscope__tev_source)(void *source_arg, kscope__tev_fn fn, void *fn_arg);

/* Write the events of `source` as Chrome trace JSON (format/chrome-trace.c)
 * into a malloc'd buffer, or to a sink as they come (format/sink.h), or
 * gzip-compressed to a sink (format/gzipw.c). 0 or a negative KSCOPE_E*. */
struct kscope__sink;
int kscope__chrome_trace_write(kscope__tev_source source, void *source_arg, char **out,
                               size_t *len);
int kscope__chrome_trace_to(kscope__tev_source source, void *source_arg,
                            const struct kscope__sink *out);
int kscope__chrome_trace_gz_to(kscope__tev_source source, void *source_arg,
                               const struct kscope__sink *out);
/* Whether zlib can be loaded for it (looked up the first time asked). */
int kscope__gzip_available(void);

#endif /* KSCOPE_EVENTS_H */
