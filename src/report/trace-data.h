/*
 * trace-data.h - the timeline as read from a Chrome trace, between the
 * parser (trace-data.c) and the writer of the page's JSON (trace-out.c).
 */
#ifndef KSCOPE_REPORT_TRACE_DATA_H
#define KSCOPE_REPORT_TRACE_DATA_H

#include <stddef.h>
#include <stdint.h>

typedef struct slice {
    int64_t ts, dur;
    int32_t track, name;
} slice;

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

/* The event being read and what has been collected. */
typedef struct tparse {
    int depth, event_depth, args_depth, in_events;
    char key[64], args_key[64];
    char ph[4], name[512], pid[64], tid[64], id[64], meta_name[512];
    double ts, dur;
    int has_ts, has_dur, has_name;
    sample *args; /* a "C" event's numbers (series: the arg's name) */
    size_t nargs, capargs;
    char **str;
    size_t nstr, capstr, hcap;
    int32_t *hash;
    track *tracks, *pnames, *series;
    size_t ntracks, captracks, npnames, cappnames, nseries, capseries;
    slice *slices, *marks; /* marks: dur unused */
    size_t nslices, capslices, nmarks, capmarks;
    flow_end *flows;
    size_t nflows, capflows;
    sample *samples;
    size_t nsamples, capsamples;
    int failed;
} tparse;

/* Append room for one more element of arr (0 on out of memory). */
#define GROW(arr, n, cap)                                                                          \
    ((n) < (cap) || kscope__report_grow((void **)&(arr), &(cap), sizeof *(arr)))
int kscope__report_grow(void **arr, size_t *cap, size_t size);

/* Read a trace into p (zeroed by the caller); 0 or a code, err says why. */
int kscope__report_trace_parse(tparse *p, const char *buf, size_t len, char *err, size_t errlen);
void kscope__report_trace_free(tparse *p);

#endif /* KSCOPE_REPORT_TRACE_DATA_H */
