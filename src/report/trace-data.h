/*
 * trace-data.h - a trace's timeline as the page holds it, between its
 * builder (trace-data.c, fed the events a trace reader gives, with
 * trace-args.c for events' args and B/E pairs) and the writer of the
 * page's JSON (trace-out.c).
 */
#ifndef KSCOPE_REPORT_TRACE_DATA_H
#define KSCOPE_REPORT_TRACE_DATA_H

#include "format/jsonw.h"
#include "report/report.h"

#include <stddef.h>
#include <stdint.h>

/* An event's args, in two parts: a template, the args' JSON text with each
 * number replaced by '#' (interned: events that differ in numbers only,
 * such as kernels by their correlation ids, share one), and the numbers'
 * own texts, comma-separated, in the pool. */
typedef struct args_ref {
    int32_t tmpl; /* index into the template table; -1: no args */
    uint32_t len; /* bytes of number text in the pool */
    size_t off;
} args_ref;

/* A slice or a mark (dur unused). */
typedef struct slice {
    int64_t ts, dur;
    int32_t track, name;
    args_ref args;
} slice;

/* A "B" or "E" event, paired into slices once the whole trace is read. */
typedef struct be_event {
    int64_t ts;
    int32_t track, name;
    uint32_t seq; /* order in the file, for events at one time */
    int begin;
    args_ref args;
} be_event;

typedef struct flow_end {
    int32_t id, track; /* id: string index of the flow's id */
    int64_t ts;
    int start;
} flow_end;

typedef struct sample {
    int32_t series;
    int64_t ts;
    double v;
} sample;

/* A (pid, tid) track, a process name or a counter series (tid unused). */
typedef struct track {
    int32_t pid, tid, name, sort;
} track;

/* Interned strings: each text once, found through a hash. */
typedef struct strtab {
    char **str;
    size_t n, cap, hcap;
    int32_t *hash;
} strtab;

/* One scalar of the trace's top-level "metadata" object. */
typedef struct meta_field {
    char *key, *value;
    int is_num;
} meta_field;

/* What has been collected of the trace. */
struct kscope__timeline {
    sample *args; /* the event's numbers (series: the arg's name) */
    size_t nargs, capargs;
    kscope__jsonw argw, argnum; /* an args template and its numbers, while made */
    strtab names, argtab;       /* names (and ids) / args templates */
    char *pool;                 /* args' numbers */
    size_t npool, cappool;
    track *tracks, *pnames, *series;
    size_t ntracks, captracks, npnames, cappnames, nseries, capseries;
    slice *slices, *marks;
    size_t nslices, capslices, nmarks, capmarks;
    be_event *be;
    size_t nbe, capbe, unended;
    size_t unplaced; /* events whose times the timeline cannot hold */
    flow_end *flows;
    size_t nflows, capflows;
    sample *samples;
    size_t nsamples, capsamples;
    meta_field *meta;
    size_t nmeta, capmeta;
};
typedef struct kscope__timeline tparse;

/* Append room for one more element of arr (0 on out of memory). */
#define GROW(arr, n, cap)                                                                          \
    ((n) < (cap) || kscope__report_grow((void **)&(arr), &(cap), sizeof *(arr)))
int kscope__report_grow(void **arr, size_t *cap, size_t size);

/* The index of s in t (added when new); -1 on out of memory. */
int32_t kscope__report_intern(strtab *t, const char *s);

/* trace-args.c: an event's args (event->read's args_json and numbers) as
 * a template, interned, and its numbers, kept (out->tmpl -1: the event had
 * none). 0, or -1 when out of memory. */
int kscope__report_args_take(tparse *p, const kscope__tev_read *r, args_ref *out);

/* Pair the "B" and "E" events of each track into slices (an "E" ends the
 * latest open "B" of its track; their args merge). A "B" never ended runs
 * to the trace's last time and is counted in p->unended. 0 or ENOMEM. */
int kscope__report_pair_be(tparse *p);

#endif /* KSCOPE_REPORT_TRACE_DATA_H */
