/*
 * view-print.h - how `kscope view` prints: its options, the tree it shows
 * (one profile, or the difference of two over the union of their trees)
 * and the printer (view-print.c), apart from cmd-view.c, which reads the
 * options and the files and fills the tree.
 */
#ifndef KSCOPE_VIEW_PRINT_H
#define KSCOPE_VIEW_PRINT_H

#include "read/read.h"

#include <stddef.h>
#include <stdint.h>

/* -f: how much of a frame name is shown. */
typedef enum { FMT_FULL, FMT_FILE_FUNCTION_LINE, FMT_FUNCTION_LINE, FMT_FILE_FUNCTION } frame_fmt;

/* `kscope view`'s command line. */
typedef struct view_opts {
    const char *metrics[16];
    int nmetrics;
    long depth;
    double threshold;
    int has_threshold;
    const char *include, *exclude, *diff;
    frame_fmt format;
    int sort, list, color;
    int print_sorted; /* --print-sorted: the tree, then the frames sorted */
    int full_names;   /* --full-names: long kernel names not folded */
    int lines;        /* --lines: each kernel's hottest source lines (PC samples) */
    const char *file;
} view_opts;

/* What gets printed: a tree in preorder with its columns. */
typedef struct view_display {
    size_t n;
    int32_t *parent;
    uint32_t *depth;
    const char **name;
    unsigned char *device; /* GPU activity: shown in another colour */
    kscope__column cols[16];
    int ncols;
} view_display;

/* Print d to stdout as o asks (rows by depth and threshold, the tree,
 * the --sort list or both, colours, frame formats). 0, or -1 when out of memory. */
int kscope__view_print(const view_display *d, const view_opts *o);

/* For a -m spec naming no metric of the tree (kscope__column.missing): the
 * -m spelling of its metric closest in spelling to the spec (a time metric
 * as its view column in the spec's unit, else ms: "wall_time/ms"), into buf. Returns 1, 0 when
 * none is close (or out of memory: no hint). */
int kscope__metric_hint(const kscope__ptree *t, const kscope__pflat *f, const char *spec, char *buf,
                        size_t size);

#endif
