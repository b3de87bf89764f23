/*
 * trace-data.h - the timeline as read from a Chrome trace, between the
 * parser (trace-data.c, with trace-args.c for events' args and B/E pairs)
 * and the writer of the page's JSON (trace-out.c).
 */
#ifndef KSCOPE_REPORT_TRACE_DATA_H
#define KSCOPE_REPORT_TRACE_DATA_H

#include "format/jsonw.h"

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

/* The event being read and what has been collected. */
typedef struct tparse {
    int depth, event_depth, args_depth, meta_depth, in_events;
    char key[64], args_key[64], meta_key[64];
    char ph[4], name[512], pid[64], tid[64], id[64], meta_name[512];
    double ts, dur;
    int has_ts, has_dur, has_name;
    sample *args; /* a "C" event's numbers (series: the arg's name) */
    size_t nargs, capargs;
    kscope__jsonw argw, argnum; /* the event's args template and numbers, while read */
    int has_argw, argw_long;
    strtab names, argtab; /* names (and ids) / args templates */
    char *pool;           /* args' numbers */
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
    int failed;
} tparse;

/* Append room for one more element of arr (0 on out of memory). */
#define GROW(arr, n, cap)                                                                          \
    ((n) < (cap) || kscope__report_grow((void **)&(arr), &(cap), sizeof *(arr)))
int kscope__report_grow(void **arr, size_t *cap, size_t size);

/* The index of s in t (added when new); -1 on out of memory. */
int32_t kscope__report_intern(strtab *t, const char *s);

/* Read a trace into p (zeroed by the caller); 0 or a code, err says why. */
int kscope__report_trace_parse(tparse *p, const char *buf, size_t len, char *err, size_t errlen);
void kscope__report_trace_free(tparse *p);

/* trace-args.c: the args of the event being read, as it is read. At the
 * args object's start, args_begin; each value, key, object or array inside
 * it, args_*; at its end, args_end. args_take interns the template and
 * keeps the numbers (out->tmpl -1: the event had none); 0, or -1 when out
 * of memory. */
enum { KSCOPE__ARG_STR, KSCOPE__ARG_NUM, KSCOPE__ARG_LITERAL };
void kscope__report_args_begin(tparse *p);
void kscope__report_args_key(tparse *p, const unsigned char *k, size_t l);
void kscope__report_args_value(tparse *p, const unsigned char *s, size_t l, int kind);
void kscope__report_args_open(tparse *p, char c);
void kscope__report_args_close(tparse *p, char c);
void kscope__report_args_end(tparse *p);
int kscope__report_args_take(tparse *p, args_ref *out);

/* Pair the "B" and "E" events of each track into slices (an "E" ends the
 * latest open "B" of its track; their args merge). A "B" never ended runs
 * to the trace's last time and is counted in p->unended. 0 or ENOMEM. */
int kscope__report_pair_be(tparse *p);

#endif /* KSCOPE_REPORT_TRACE_DATA_H */
