/*
 * report.h - `kscope report --html`: one self-contained HTML page per
 * profile (or pair of profiles): flame graph, timeline, top kernels, diff.
 *
 * The page is the template of page/ (embedded into the binary at build
 * time, see cmake/embed.cmake) with the profiles' data between its parts,
 * as JSON inside <script type="application/json"> elements. The data is
 * compact (a string table and arrays, not one object per node) and, past
 * what a browser can draw, aggregated; the page says where it was.
 */
#ifndef KSCOPE_REPORT_H
#define KSCOPE_REPORT_H

#include "format/jsonw.h"
#include "profile/ptree.h"
#include "read/read.h"

#include <stddef.h>
#include <stdio.h>

/* Limits of what one page holds; beyond them the data is aggregated. */
typedef struct kscope__report_limits {
    size_t max_nodes;        /* tree nodes before small ones merge into "(other)" */
    double other_share;      /* the share of the total below which a node merges */
    size_t max_track_events; /* slices per timeline track (the longest are kept) */
} kscope__report_limits;

/* The defaults: 200,000 nodes, 0.01%, 250,000 slices per track. */
kscope__report_limits kscope__report_default_limits(void);

/* Write the page for profile a (and b, for a diff; NULL for none) to f
 * (the caller makes the file and puts it in place: format/file-out.h).
 * 0, or a negative KSCOPE_E* code with one line in err when a profile
 * cannot be read (KSCOPE_ENOMEM: out of memory); a failed write to f is
 * the stream's error. A problem that leaves the page whole but without
 * something (a run's facts file beside a profile that cannot be read) is
 * one line in warn ("" when none); the page says it too. */
int kscope__report_page(FILE *f, const char *a, const char *b, const kscope__report_limits *lim,
                        char *err, size_t errlen, char *warn, size_t warnlen);

/* Where the page goes: JSON text is written into w, then flushed to the
 * file with the characters that could end a <script> element or a line in
 * JavaScript (<, >, &, U+2028, U+2029) escaped as \uXXXX. */
typedef struct kscope__report_out {
    FILE *f;
    kscope__jsonw w;
} kscope__report_out;

/* Escape and write what w holds, then empty it (called as data grows). */
void kscope__report_flush(kscope__report_out *o);

/* The tree of a profile as the page's JSON object (into o->w). */
int kscope__report_tree(kscope__report_out *o, const kscope__ptree *t,
                        const kscope__report_limits *lim);

/* A trace's timeline as the page shows it, built from its events as a
 * trace reader hands them over (read/read.h), whatever the trace's format. */
typedef struct kscope__timeline kscope__timeline;
kscope__timeline *kscope__timeline_new(void);
void kscope__timeline_free(kscope__timeline *tl);
/* Where a reader hands the events: into tl (keeping the events' args). */
kscope__tev_sink kscope__timeline_sink(kscope__timeline *tl);

/* The timeline as the page's JSON object (into o->w), and its events'
 * args as a JSON document of their own (written out through args, which
 * the page parses only when needed). 0, or a negative code with err
 * naming the problem. */
int kscope__report_timeline(kscope__report_out *o, kscope__report_out *args, kscope__timeline *tl,
                            const kscope__report_limits *lim, char *err, size_t errlen);

/* The same for a Chrome trace in a buffer (the file's bytes). */
int kscope__report_trace(kscope__report_out *o, kscope__report_out *args, const char *buf,
                         size_t len, const kscope__report_limits *lim, char *err, size_t errlen);

#endif /* KSCOPE_REPORT_H */
