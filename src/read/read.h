/*
 * read.h - reading profiles back: parsers from .hatchet, .hatchet_msgpack
 * and Chrome trace JSON into a ptree, and the analysis shared by the
 * `view`, `top`, `diff`, `merge` and `convert` commands (flattened trees,
 * inclusive roll-up, derived metrics, the top-kernels table).
 *
 * Every reader reports a failure as a negative KSCOPE_E* code plus one line
 * of text in a caller-owned buffer naming what is wrong (and, for files, the
 * file). Readers never recurse over the input: nesting deeper than
 * KSCOPE__READ_MAX_DEPTH tree levels is rejected.
 */
#ifndef KSCOPE_READ_H
#define KSCOPE_READ_H

#include "format/format.h"
#include "format/jsonw.h"
#include "profile/ptree.h"
#include "util/table.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Deepest calling context accepted by the readers (ROOT is level 0). */
#define KSCOPE__READ_MAX_DEPTH 4096

/* The longest single value (a string, a number, a run of white space)
 * the readers take: past it, input is refused before more is read, so a
 * file that is no profile costs bounded memory whatever its size. */
#define KSCOPE__READ_MAX_TOKEN (16 << 20)

/* Whether a streaming reader has been fed more than KSCOPE__READ_MAX_TOKEN
 * bytes since its parser last finished a value (events counts them; mark
 * and quiet are the reader's, zeroed to start): then it refuses the input,
 * as the parser would hold all of it. */
static inline int kscope__read_too_quiet(size_t events, size_t *mark, size_t *quiet, size_t len)
{
    *quiet = events != *mark ? 0 : *quiet + len;
    *mark = events;
    return *quiet > KSCOPE__READ_MAX_TOKEN;
}

/* Room for one reader error line. */
#define KSCOPE__READ_ERRLEN 512

/* How one format of format.h's table is read: its reader column. Every
 * reader is fed the file in chunks, so a large file is never held whole
 * and what is no profile is refused in bounded memory. A tree format's
 * parser gives the tree at its end; a trace format's hands each event to
 * fn(event, arg) as it is read (format/events.h, with what the file wrote
 * in event->read), keeping what `keep` asks (KSCOPE__TREAD_*). When fn
 * stops the reading (a negative KSCOPE_E*), feed and trace_finish return
 * its code with err empty: the consumer knows why. */
typedef struct kscope__reader {
    /* How sure it is that a file whose first n bytes are head holds its
     * format: 0 not, 1 could be, 2 surely (the surest reader reads it), and
     * what such a file looks like, for the message when none is sure. */
    int (*sniff)(const char *head, size_t n);
    const char *looks;
    void *(*tree_new)(void); /* tree formats */
    int (*tree_finish)(void *p, kscope__ptree **out, char *err, size_t errlen);
    void *(*trace_new)(kscope__tev_fn fn, void *arg, unsigned keep); /* trace formats */
    int (*trace_finish)(void *p, char *err, size_t errlen);
    int (*feed)(void *p, const char *buf, size_t len, char *err, size_t errlen);
    void (*free)(void *p);
} kscope__reader;

/* Where the first byte that is not JSON's white space is in s[0..n) (n
 * when there is none): what the readers' sniffs look at. */
static inline size_t kscope__read_skip_space(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The reader of format id (format.h's reader column); NULL for none. */
const kscope__reader *kscope__reader_of(kscope__format_id id);

/* The format a file holds, told from its first n bytes by the readers'
 * sniffs: UNKNOWN when none fits. */
kscope__format_id kscope__format_sniff(const char *head, size_t n);

/* Read a profile of any supported format (detected from its content) into a
 * new tree. On failure *out is NULL and err holds "PATH: what is wrong". */
int kscope__read_profile(const char *path, kscope__ptree **out, char *err, size_t errlen);

/* Where a trace's events go as they are read: fn(event, arg) for each,
 * keeping what `keep` asks (KSCOPE__TREAD_*); when fn stops the reading
 * (a negative KSCOPE_E*), why(arg) says why in one line. */
typedef struct kscope__tev_sink {
    kscope__tev_fn fn;
    void *arg;
    const char *(*why)(void *arg);
    unsigned keep;
} kscope__tev_sink;

/* kscope__read_profile, and when the profile is a trace, each of its
 * events to `also` as well, in the same reading. *fmt (when given) gets
 * the file's format. */
int kscope__read_profile_events(const char *path, kscope__ptree **out, const kscope__tev_sink *also,
                                const kscope__format **fmt, char *err, size_t errlen);

/* Read the trace at path, each event to `sink` (no tree): files are checked
 * as profiles are; a tree profile is refused (KSCOPE_EFORMAT). err holds
 * "PATH: what is wrong". */
int kscope__read_events(const char *path, const kscope__tev_sink *sink, char *err, size_t errlen);

/* Read len bytes of a trace in format f, each event to `sink`: what the
 * buffer versions of the trace readers share. err holds what is wrong. */
int kscope__read_events_buffer(const kscope__reader *r, const char *buf, size_t len,
                               const kscope__tev_sink *sink, char *err, size_t errlen);

/* Read len bytes of a tree format through its reader r, fed at most
 * `piece` bytes at a time (SIZE_MAX: at once): what the buffer versions of
 * the tree readers share. err holds what is wrong. */
int kscope__read_tree_buffer(const kscope__reader *r, const char *buf, size_t len, size_t piece,
                             kscope__ptree **out, char *err, size_t errlen);

/* Parsers over a whole buffer. err holds the problem without a file name. */
int kscope__read_hatchet_json(const char *buf, size_t len, kscope__ptree **out, char *err,
                              size_t errlen);
int kscope__read_hatchet_msgpack(const char *buf, size_t len, kscope__ptree **out, char *err,
                                 size_t errlen);
int kscope__read_chrome_trace(const char *buf, size_t len, kscope__ptree **out, char *err,
                              size_t errlen);

/* Names as readers take them: a C++ mangled name ("_Z...") becomes its
 * demangled text (read/demangle.c), so profiles that keep kernel names
 * mangled (Proton's) pair with kscope's. A reader holds one demangler
 * (zeroed to start) per tree it builds. */
typedef struct kscope__demangler {
    kscope__table names; /* kscope__ptr_pair: mangled -> readable, both interned in the tree */
} kscope__demangler;

/* The readable form of `name` (interned in t), interned in t: name itself
 * when it is no mangled name or no demangler is found; NULL when out of
 * memory. */
const char *kscope__demangled(kscope__demangler *d, kscope__ptree *t, const char *name);
void kscope__demangler_free(kscope__demangler *d);
/* Whether this process has the C++ runtime's demangler. */
int kscope__demangle_available(void);

/* Streaming .hatchet JSON parser, fed in chunks (its reader column). */
typedef struct kscope__hjson kscope__hjson;
void *kscope__hjson_new(void); /* a kscope__hjson */
/* Feed the next len bytes; 0 or a negative code with the message in err. */
int kscope__hjson_feed(void *p, const char *buf, size_t len, char *err, size_t errlen);
/* End of input: on success hands the tree to *out (the parser keeps none). */
int kscope__hjson_finish(void *p, kscope__ptree **out, char *err, size_t errlen);
void kscope__hjson_free(void *p);

/* A reader's handlers of the events of a streaming parser (yajl for JSON,
 * msgpack-c's template for MessagePack), each called with the reader's
 * ctx: 1 to go on, 0 when the input was refused (the reader says why). A
 * scalar comes as text with its type: KSCOPE__TEV_STRING (the string),
 * KSCOPE__TEV_NUMBER (the number as JSON text) or KSCOPE__TEV_LITERAL
 * (null, true, false). */
typedef struct kscope__hevents {
    int (*start_map)(void *ctx);
    int (*map_key)(void *ctx, const char *key, size_t len);
    int (*end_map)(void *ctx);
    int (*start_array)(void *ctx);
    int (*end_array)(void *ctx);
    int (*scalar)(void *ctx, kscope__tev_type type, const char *s, size_t len);
} kscope__hevents;

/* The tree builder behind the .hatchet reader, driven by those events
 * (ctx: the kscope__hjson), so another encoding of the same shape
 * (MessagePack) shares its checks and messages; after a refusal
 * kscope__hjson_error says why. */
extern const kscope__hevents kscope__hjson_events;
/* Refuse the input with msg (the first refusal wins). Returns 0. */
int kscope__hjson_fail(kscope__hjson *p, int code, const char *msg);
/* The refusal so far (NULL if none), its code in *code. */
const char *kscope__hjson_error(const kscope__hjson *p, int *code);
/* After the last event: the checks on the whole file, then the tree. */
int kscope__hjson_end(kscope__hjson *p, kscope__ptree **out, char *err, size_t errlen);

/* Streaming .hatchet_msgpack parser, fed the same way. */
typedef struct kscope__hmp kscope__hmp;
void *kscope__hmp_new(void); /* a kscope__hmp */
int kscope__hmp_feed(void *p, const char *buf, size_t len, char *err, size_t errlen);
int kscope__hmp_finish(void *p, kscope__ptree **out, char *err, size_t errlen);
void kscope__hmp_free(void *p);

/* The Chrome trace reader (chrome-trace-read.c), its reader column: each
 * event to fn as it is read. */
void *kscope__chrome_read_new(kscope__tev_fn fn, void *arg, unsigned keep);
int kscope__chrome_read_feed(void *p, const char *buf, size_t len, char *err, size_t errlen);
int kscope__chrome_read_finish(void *p, char *err, size_t errlen);
void kscope__chrome_read_free(void *p);

/* A trace's calling-context tree from its events (trace-tree.c): pass
 * kscope__trace_tree_event as a reader's fn (keeping KSCOPE__TREAD_STACK)
 * with the builder as its arg; why says what it refused. */
typedef struct kscope__trace_tree kscope__trace_tree;
kscope__trace_tree *kscope__trace_tree_new(void);
int kscope__trace_tree_event(const kscope__tev *e, void *tree);
const char *kscope__trace_tree_why(void *tree);
/* After the last event: the checks on the whole trace, then the tree. */
int kscope__trace_tree_finish(kscope__trace_tree *p, kscope__ptree **out, char *err, size_t errlen);
void kscope__trace_tree_free(kscope__trace_tree *p);

/* Chrome trace JSON into a tree, fed in chunks (the Chrome trace reader
 * into a trace tree). */
typedef struct kscope__tjson kscope__tjson;
kscope__tjson *kscope__tjson_new(void);
int kscope__tjson_feed(kscope__tjson *p, const char *buf, size_t len, char *err, size_t errlen);
int kscope__tjson_finish(kscope__tjson *p, kscope__ptree **out, char *err, size_t errlen);
void kscope__tjson_free(kscope__tjson *p);

/* Whether a metric name must never be negative (time, counts, bytes, flops). */
int kscope__metric_nonnegative(const char *key);

/* ----------------------------------------------------- flattened trees */

/* A tree in preorder: node i's parent is parent[i] (-1 for ROOT, index 0),
 * so every parent comes before its children. */
typedef struct kscope__pflat {
    kscope__pnode **node;
    int32_t *parent;
    uint32_t *depth;
    size_t n;
} kscope__pflat;

/* Flatten t (iteratively). 0 or KSCOPE_ENOMEM. */
int kscope__pflat_build(const kscope__ptree *t, kscope__pflat *f);
void kscope__pflat_free(kscope__pflat *f);

/* The numeric value of metric `key` (interned in t, or any string) on each
 * node into vals[f->n]: NaN where absent. With rollup, absent counts as 0 and
 * each node also gets the sum over its subtree (the inclusive value). */
void kscope__pflat_values(const kscope__ptree *t, const kscope__pflat *f, const char *key,
                          int rollup, double *vals);

/* Whether a node is a GPU activity (kernel or copy): it has a "device_id". */
int kscope__pnode_is_device(const kscope__pnode *n);

/* ---------------------------------------------------------- metrics */

/* A metric a file holds, as listed by `kscope view -l`. */
typedef struct kscope__metric_info {
    const char *name; /* as stored, e.g. "time (ns)" */
    int inclusive;    /* rolls up to parents */
} kscope__metric_info;

/* The metric names of t (inclusive ones first, each in first-seen order).
 * Returns the count (>= 0) with *out malloc'd, or KSCOPE_ENOMEM. */
int kscope__metric_list(const kscope__ptree *t, kscope__metric_info **out);
/* The same over the nodes of a flattening of t (no second walk). */
int kscope__metric_list_flat(const kscope__ptree *t, const kscope__pflat *f,
                             kscope__metric_info **out);

/* ------------------------------- what rolls up, what a total is (rollup.c) */

/* The one definition every view uses. A metric rolls up when t's
 * inclusive list names it; a node then shows the sum over its subtree, and
 * any other metric the node's own value. The total over a subtree is that
 * value for a metric that rolls up, else the sum over the outermost nodes
 * holding the metric (nested scopes' wall time counts once). */
int kscope__metric_rolls_up(const kscope__ptree *t, const char *key);
/* What each node of f shows for metric `key` (any string) into vals[f->n]:
 * subtree sums (absent counts 0) when it rolls up, else own values (NaN
 * where absent). Returns whether it rolls up. */
int kscope__metric_values(const kscope__ptree *t, const kscope__pflat *f, const char *key,
                          double *vals);
/* The metric's total over the whole of f, from vals as above. */
double kscope__metric_total(const kscope__pflat *f, const double *vals, int rolls_up);
/* The total over each node's subtree into spans[f->n] (0 where none): the
 * width the flame graph gives a node; spans[0] is the metric's total. */
void kscope__metric_spans(const kscope__pflat *f, const double *vals, int rolls_up, double *spans);

/* The frames every view of a tree leaves out, as proton-viewer does:
 * Triton's launch-metadata scopes (with what is under them), frames with
 * no metrics and no children, and frames whose children were all left
 * out. Clears keep[i] for those (ROOT stays). */
void kscope__prune_frames(const kscope__pflat *f, unsigned char *keep);
/* Replace f by the nodes kept (parents remapped). 0, or -1 when out of memory. */
int kscope__pflat_keep(kscope__pflat *f, const unsigned char *keep);
/* Flatten t as the views show it: kscope__pflat_build, less the frames
 * kscope__prune_frames leaves out. 0 or KSCOPE_ENOMEM. */
int kscope__pflat_build_shown(const kscope__ptree *t, kscope__pflat *f);

/* The metric `kscope view` and `kscope diff` show when none is asked for:
 * "time/ms" when t has GPU time, else "wall_time/ms" (host scopes only),
 * else its first metric, copied into buf. Returns 1, 0 when t holds no
 * metric at all, or KSCOPE_ENOMEM. */
int kscope__default_metric(const kscope__ptree *t, char *buf, size_t size);
/* The stored name behind that choice ("time (ns)", "wall_time (ns)", the
 * first metric), for the HTML page. Same returns. */
int kscope__default_metric_name(const kscope__ptree *t, char *buf, size_t size);

/* The device-scope column `kscope view` adds to its default: the average
 * per record ("device_avg_time" or "device_avg_cycles") when t holds
 * device-side scopes, copied into buf. Returns 1, 0 when it holds none,
 * or KSCOPE_ENOMEM. */
int kscope__device_scope_metric(const kscope__ptree *t, char *buf, size_t size);

/* One column of `kscope view`: a metric spec resolved against a tree. */
typedef struct kscope__column {
    char title[96]; /* header, e.g. "time/ms" */
    int integral;   /* print as an integer */
    int inclusive;  /* values roll up (so -t, %, diff act on subtree sums) */
    double *vals;   /* one per node of the pflat; NaN = no value */
    int missing;    /* on failure: a metric the spec names is not in the file */
} kscope__column;

/* Resolve a metric spec (time/ms, avg_time/us, cpu_time/s, wall_time/ms,
 * flop16/s, tflop/s, gbyte/s, util, count, raw names, NAME/%) for t and fill
 * col->vals for f. A raw name may be written as in code, with its kind
 * (NAME (inc), NAME (exc), NAME (pty); units as the file has them). A tree
 * holding no metric at all (an empty profile) gives any spec a column with
 * no values (NaN). Returns 0, or KSCOPE_EINVAL with err naming the problem
 * (and col->missing set when it is a metric the file lacks).
 * col->vals is malloc'd; free with kscope__column_free. */
int kscope__column_compute(const kscope__ptree *t, const kscope__pflat *f, const char *spec,
                           kscope__column *col, char *err, size_t errlen);
void kscope__column_free(kscope__column *col);

/* For a profile of a sampled session (ROOT holds sampled_fraction, or
 * held it as 0): one line saying what was sampled and what est_ metrics
 * are, into buf.
 * Returns 1, or 0 (buf untouched) for a profile that was not sampled. */
int kscope__sampled_note(const kscope__ptree *t, char *buf, size_t size);

/* Peak FLOP/s of one device for operands `width` bits wide, as proton-viewer
 * computes it (gpu/devices); 0 when the arch is not known. */
double kscope__peak_flops(const kscope__pdevice *d, int width);
/* Peak memory bandwidth of one device in bytes/s. */
double kscope__peak_bytes(const kscope__pdevice *d);

/* ----------------------------------------------------- top kernels */

/* kscope__top_print's flags: ANSI colour; names printed whole (else names
 * longer than KSCOPE__NAME_FOLD are folded, see kscope__print_name). */
#define KSCOPE__TOP_COLOR      1
#define KSCOPE__TOP_FULL_NAMES 2

/* Print the top-kernels table (kernels aggregated by name across calling
 * contexts, heaviest first): %, total, calls, avg, min, max, name. At most
 * top_n rows (0: all). Returns the number of kernels found or
 * KSCOPE_ENOMEM. */
int kscope__top_print(FILE *out, const kscope__ptree *t, int top_n, int flags);

/* The same table as JSON, for the HTML page: `key`: {"rows": [[name, %,
 * total ns, calls, avg ns, min ns, max ns], ...heaviest first, every
 * kernel], and the GPU split below: "kernel_ns", "launches", "copy_ns",
 * "copies", "copied_bytes"}. Returns the number of rows or KSCOPE_ENOMEM. */
int kscope__top_json(kscope__jsonw *w, const char *key, const kscope__ptree *t);

/* Whether a GPU activity's name is a copy or set (Memcpy..., [memset...]). */
int kscope__is_copy(const char *name);

/* Where a profile's GPU time went, as `kscope report` and the HTML page's
 * header say it: GPU activities' own time (any unit) split into kernels
 * and copies, with their launches (count, 1 where absent) and the bytes
 * copied. 0 or KSCOPE_ENOMEM. */
typedef struct kscope__gpu_split {
    double kernel_ns, launches, copy_ns, copies, copied_bytes;
} kscope__gpu_split;
int kscope__gpu_split_of(const kscope__ptree *t, kscope__gpu_split *s);

/* ----------------------------------------------------- hot source lines */

/* kscope__lines_print's flag: group the lines by kernel (each kernel's
 * samples and main stall reasons, then its hottest lines). */
#define KSCOPE__LINES_BY_KERNEL 4

/* Print the hottest source lines of a profile recorded with PC sampling,
 * added up across calling contexts by kernel and line: samples, share of
 * all samples, the three main stall reasons, the line (and its kernel).
 * At most top_n rows (per kernel with KSCOPE__LINES_BY_KERNEL; 0: all);
 * flags as kscope__top_print's. Returns the number of lines found (0: the
 * profile has no PC samples) or KSCOPE_ENOMEM. */
int kscope__lines_print(FILE *out, const kscope__ptree *t, int top_n, int flags);

/* The same lines as JSON, for the HTML report: when the profile has PC
 * samples, `key`: {"total": samples, "reasons": [stall reasons, without
 * "stalled_"], "kernels": [{"name", "samples", "r": [samples per reason],
 * "lines": [{"line": "file:line@function" (null: no line information),
 * "samples", "r"}, ...hottest first, at most top_n (0: all)], "more":
 * lines left out}, ...heaviest first]}; nothing when it has none. Returns
 * the number of lines found or KSCOPE_ENOMEM. */
int kscope__lines_json(kscope__jsonw *w, const char *key, const kscope__ptree *t, int top_n);

/* Whether to colour output in "auto" mode: stdout is a terminal, NO_COLOR
 * is unset or empty and TERM is not "dumb". */
int kscope__color_auto(void);

/* ----------------------------------------------------- top scopes (scopes.c) */

/* The top n scopes (not GPU activities, not ROOT; n <= 0: all) by vals
 * (one per node of f), under a title line: share of `total`, the value as
 * a time, calls, calling context ("a > b > c"). Prints nothing when no
 * scope has a value. Returns the rows printed. */
int kscope__scopes_print(FILE *out, const kscope__pflat *f, const double *vals, const double *calls,
                         const char *title, double total, long n);

/* The top n scopes by host wall time ("wall_time (ns)": each scope's time
 * from enter to exit), as shares of all host time (the top-level scopes'
 * sum).
 * Returns the rows printed or KSCOPE_ENOMEM. */
int kscope__scopes_by_wall(FILE *out, const kscope__ptree *t, const kscope__pflat *f, long n);

/* A duration in ns with its unit and three decimals ("1.234 ms"). */
void kscope__print_ns(FILE *out, double ns);

/* A path as every message shows it: control characters escaped as in
 * names (kscope__escape), cut to KSCOPE__READ_ERRLEN bytes, so a path
 * holding ESC or a newline never reaches the terminal raw. The struct is a
 * temporary that lives to the end of the full expression (C11), so
 * KSCOPE__PATH(p) can be passed straight to printf. */
typedef struct kscope__shown {
    char s[KSCOPE__READ_ERRLEN];
} kscope__shown;
kscope__shown kscope__shown_path(const char *path);
#define KSCOPE__PATH(p) (kscope__shown_path(p).s)

/* A duration in ns as text with a unit chosen for it ("1.234 ms"; past
 * 1e6 s as "1.000e+294 s"; "inf", "-" for NaN). */
void kscope__format_ns(double ns, char *buf, size_t size);

/* Write a string with control characters shown as escapes (\t, \n, \r,
 * \xNN), so no control byte of a name reaches the terminal. */
void kscope__print_escaped(FILE *out, const char *s);
/* The same into buf (cut to size); returns buf. */
const char *kscope__escape(const char *s, char *buf, size_t size);
/* Escape a message (at most KSCOPE__READ_ERRLEN bytes) in place. */
void kscope__escape_in_place(char *s, size_t size);

/* A reader's refusal, the first one winning: when *errcode is 0, the
 * message (escaped: names may hold any byte) goes into err and code into
 * *errcode. Returns code. */
int kscope__read_refuse(char *err, size_t size, int *errcode, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The same from a yajl callback: returns 0, which stops the parse. */
int kscope__read_stop(char *err, size_t size, int *errcode, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Names longer than this are folded in tables unless asked whole. */
#define KSCOPE__NAME_FOLD 100

/* A long kernel name as a table shows it: each outermost template argument
 * list and parameter list folded to "<...>" and "(...)" ("foo<...>(...)",
 * as proton-viewer shortens). Names up to KSCOPE__NAME_FOLD characters, and
 * names with no brackets (mangled ones), are kept as they are: the result
 * is s itself, else buf (cut at size). */
const char *kscope__fold_name(const char *s, char *buf, size_t size);

/* kscope__print_escaped of the name, folded unless `full`. */
void kscope__print_name(FILE *out, const char *s, int full);

/* ------------------------------------------------ matching two trees */

/* The union of trees by calling-context path (names from ROOT down): for
 * each union node, its index in a's and b's pflat (-1 where absent). */
typedef struct kscope__punion {
    int32_t *a, *b;  /* per union node */
    int32_t *parent; /* union parent index, -1 for ROOT */
    uint32_t *depth;
    const char **name; /* borrowed from a or b */
    size_t n;
} kscope__punion;

int kscope__punion_build(const kscope__pflat *fa, const kscope__pflat *fb, kscope__punion *u);
void kscope__punion_free(kscope__punion *u);

/* ------------------------------------------------------------ merge */

/* Merge per-rank trees: every metric summed (min_* / max_* metrics keep
 * their extremes), and for time, wall_time and cpu_time (any unit) the
 * min, max and mean across ranks of each node's value ("time_rank_min (ns)",
 * "time_rank_max (ns)", "time_rank_mean (ns)") and the imbalance max/mean
 * ("time_imbalance"). Returns a new tree in *out. */
int kscope__merge_trees(kscope__ptree *const *ranks, size_t nranks, kscope__ptree **out, char *err,
                        size_t errlen);

/* The same, one rank at a time (ranks can be freed after each add). */
typedef struct kscope__merger kscope__merger;
kscope__merger *kscope__merger_new(void);
int kscope__merger_add(kscope__merger *mg, const kscope__ptree *rank, char *err, size_t errlen);
/* The part of adding a rank that needs that rank alone, for another
 * thread: prepare, then add_prepared in rank order (the rank tree must
 * outlive the preparation). */
typedef struct kscope__merge_prep kscope__merge_prep;
kscope__merge_prep *kscope__merge_prepare(const kscope__ptree *rank);
int kscope__merger_add_prepared(kscope__merger *mg, const kscope__merge_prep *p, char *err,
                                size_t errlen);
void kscope__merge_prep_free(kscope__merge_prep *p);
/* Hands the merged tree to *out; free the merger afterwards. */
int kscope__merger_finish(kscope__merger *mg, kscope__ptree **out, char *err, size_t errlen);
void kscope__merger_free(kscope__merger *mg);

/* Merge Chrome traces (whole buffers) into one Chrome trace, one process
 * per rank: each source process gets a new pid and its name prefixed with
 * "rank R". The result is malloc'd. */
int kscope__merge_traces(const char *const *bufs, const size_t *lens, const char *const *names,
                         size_t n, char **out, size_t *outlen, char *err, size_t errlen);

/* Write len bytes to path whole (format/file-out.h: a regular file is
 * replaced atomically, a link written through, a device in place); err
 * names path and problem, escaped. */
int kscope__write_file(const char *path, const char *buf, size_t len, char *err, size_t errlen);

/* The trace at path written again in trace format f, into a malloc'd
 * buffer: each event read (any trace format) and handed to f's writer,
 * which copies what its own format's reader kept as written. err holds
 * "PATH: what is wrong" (KSCOPE_EFORMAT for a tree format or a tree). */
int kscope__encode_trace(const char *path, const kscope__format *f, char **out, size_t *len,
                         char *err, size_t errlen);

/* Write t in tree format f (KSCOPE_EFORMAT for a trace format). */
int kscope__write_profile(const char *path, const kscope__ptree *t, const kscope__format *f,
                          char *err, size_t errlen);

/* The same, one trace at a time, written to `out` as it goes (no input and
 * not the output held whole). add_file reads a trace file of any trace
 * format; add a Chrome trace in a buffer, named `name` in messages.
 * finish ends the JSON; out stays open. */
typedef struct kscope__trace_merger kscope__trace_merger;
kscope__trace_merger *kscope__trace_merger_new(FILE *out);
int kscope__trace_merger_add_file(kscope__trace_merger *m, const char *path, char *err,
                                  size_t errlen);
int kscope__trace_merger_add(kscope__trace_merger *m, const char *buf, size_t len, const char *name,
                             char *err, size_t errlen);
int kscope__trace_merger_finish(kscope__trace_merger *m, char *err, size_t errlen);
void kscope__trace_merger_free(kscope__trace_merger *m);

/* Format one line into err (errlen bytes); returns code: for readers and
 * merge, whose failures are a code plus a caller-owned message. */
int kscope__read_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Slurp a whole profile (a trace, for its events); err names path and
 * problem. Files are checked as profiles are (a regular file, a known
 * format from the first bytes), and JSON is checked as it is read, so
 * what is no JSON is refused at its first bad byte, in bounded memory. */
int kscope__read_whole_file(const char *path, char **buf, size_t *len, char *err, size_t errlen);

/* The format of the profile at path, told from its first bytes (the same
 * checks as kscope__read_profile, reading no more). 0 or an error. */
int kscope__sniff_file(const char *path, kscope__format_id *id, char *err, size_t errlen);

/* Open a file that goes with a profile (its PROFILE.meta.json) under the
 * profiles' rule: a regular file only, opened without blocking (a FIFO
 * there would hang for ever). NULL with msg "" when there is none; NULL
 * with msg saying why when it cannot be read. */
FILE *kscope__open_side_file(const char *path, char *msg, size_t msglen);

#endif /* KSCOPE_READ_H */
