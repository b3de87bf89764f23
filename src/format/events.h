/*
 * events.h - a timeline one event at a time: what the trace writers take
 * and the trace readers give. The core provides a session's events
 * (trace/trace.c), so a writer never looks inside the core's buffers and
 * the core never writes a file format; a trace reader (read/chrome-trace-read.c)
 * gives a file's events, each with what the file wrote (kscope__tev_read),
 * to the reading toolkit's consumers: the tree of a trace, the HTML
 * page's timeline, merge, and a writer again (convert).
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
    /* what traces read from files hold beside the above */
    KSCOPE__TEV_BEGIN,        /* a slice's start on its track (pid, tid, ts, name) */
    KSCOPE__TEV_END,          /* the end of the track's latest slice begun */
    KSCOPE__TEV_FLOW_START,   /* one end of a flow arrow: pid, tid, ts (ids in read) */
    KSCOPE__TEV_FLOW_END,     /* its other end */
    KSCOPE__TEV_PROCESS_SORT, /* a process's place among processes: pid, value */
    KSCOPE__TEV_THREAD_SORT,  /* a track's place in its process: pid, tid, value */
    KSCOPE__TEV_META,         /* other metadata of a track (pid, tid) */
    KSCOPE__TEV_OTHER,        /* any other event: kept for copies (read's fields) */
} kscope__tev_kind;

struct kscope__run_facts;

/* A metric given inside a host scope. */
typedef struct kscope__tev_metric {
    const char *key; /* without its (inc)/(exc)/(pty) suffix */
    int is_double;
    int64_t i;
    double d;
} kscope__tev_metric;

/* A value as a file wrote it. */
typedef enum {
    KSCOPE__TEV_ABSENT = 0,
    KSCOPE__TEV_STRING,  /* text: the string's characters (len of them: it may hold a NUL) */
    KSCOPE__TEV_NUMBER,  /* text: the number as written ("1.50") */
    KSCOPE__TEV_LITERAL, /* text: true, false or null */
    KSCOPE__TEV_OBJECT,  /* text: the value as compact JSON, numbers as written, */
    KSCOPE__TEV_ARRAY,   /*   when the reader was asked to keep it (else NULL) */
} kscope__tev_type;

typedef struct kscope__tev_value {
    kscope__tev_type type;
    const char *text; /* NUL-terminated after len bytes */
    size_t len;
} kscope__tev_value;

/* A member of an event (or of its args, or of the trace's metadata). */
typedef struct kscope__tev_field {
    const char *key; /* NUL-terminated after keylen bytes */
    size_t keylen;
    kscope__tev_value v;
} kscope__tev_field;

/* What a trace reader keeps of an event beyond the fields it has always
 * (format/format.h's readers are asked for these with KSCOPE__TREAD_*):
 * the fields as written, for a copy of the event; its args as JSON, for
 * showing them. */
#define KSCOPE__TREAD_STACK  1 /* call stacks (stack, nstack) */
#define KSCOPE__TREAD_FIELDS 2 /* fields: every member as written, in order */
#define KSCOPE__TREAD_ARGS   4 /* args_json and numbers */

/* An event as a trace file held it: the members every consumer reads, as
 * written, so each reads them by its own rules (a tree refuses a slice
 * whose "dur" is no number; the page leaves the slice out). */
typedef struct kscope__tev_read {
    size_t index; /* the event's place among the file's events, from 0 */
    kscope__tev_value name, pid, tid, ts, dur;
    kscope__tev_value id; /* a flow's id (or bind_id) */
    /* the scalar members of its args, in order (of every args object) */
    const kscope__tev_field *args;
    size_t nargs;
    int has_stack;                   /* its args hold a call stack (an array; stack, nstack) */
    int stack_bad;                   /* an entry of it is no plain string */
    const kscope__tev_field *fields; /* KSCOPE__TREAD_FIELDS */
    size_t nfields;
    kscope__tev_value args_json; /* KSCOPE__TREAD_ARGS: its (last) args object, and */
    const size_t *numbers;       /* where its numbers are: offset, length pairs */
    size_t nnumbers;
} kscope__tev_read;

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
    const kscope__tev_read *read; /* an event read from a file; NULL for a session's */
} kscope__tev;

/* Called for each event in order; non-zero stops the walk and is returned. */
typedef int (*kscope__tev_fn)(const kscope__tev *e, void *arg);

/* An event source: calls fn(event, fn_arg) for each event of the timeline;
 * 0, fn's non-zero value, or a negative KSCOPE_E*. */
typedef int (*kscope__tev_source)(void *source_arg, kscope__tev_fn fn, void *fn_arg);

#endif /* KSCOPE_EVENTS_H */
