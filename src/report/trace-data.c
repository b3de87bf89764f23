/*
 * trace-data.c - a Chrome trace's timeline as the page's compact JSON:
 *
 *   {"strings": [...], "tracks": [{"pid", "tid", "name", "sort", "n",
 *     "ts": [gaps in ns], "dur": [ns], "name_i": [string index],
 *     "args_i": [args template, -1: none]}], "marks": [track, ts, name,
 *    args template, ...], "flows": [from, from_ts, to, to_ts, ...],
 *    "counters": [{"name", "pid", "ts", "v"}], "t0": ns, "unended": count,
 *    "unplaced": count of events with times beyond PLACEABLE_US,
 *    "metadata": {key: value}}
 *
 * and, as a document of its own that the page parses at the first hover,
 * the args: {"tracks": ["numbers of track 0's slices", ...], "marks":
 * "numbers of the marks", "templates": [args JSON with '#' for numbers]}.
 *
 * Slices ("X", and "B"/"E" pairs, trace-args.c) go on their (pid, tid)
 * track, time-sorted; a track with more than lim->max_track_events keeps
 * its longest ones (n says how many there were). Instants ("i", "I") are
 * marks, "s"/"f" pairs with one id are flow arrows, "C" events are counter
 * series (one per arg), and "M" metadata names processes and threads.
 * Each slice's and mark's args are kept (trace-args.c), for the page to show
 * on hover. The scalars of the top-level "metadata" object (the run's
 * facts in kscope's traces) are kept for the header. Times are in ns from
 * the first event. yajl's streaming parser reads the file; events are kept
 * only as numbers and string-table indices.
 */
#include "report/trace-data.h"
#include "kscope.h"

#include <yajl/yajl_parse.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kscope__report_grow(void **arr, size_t *cap, size_t size)
{
    size_t c = *cap ? *cap * 2 : 256;
    void *p = realloc(*arr, c * size);
    if (!p)
        return 0;
    *arr = p;
    *cap = c;
    return 1;
}

static uint32_t hash_text(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int rehash(strtab *t)
{
    size_t cap = t->hcap ? t->hcap * 2 : 1024;
    int32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return 0;
    memset(h, -1, cap * sizeof *h);
    for (size_t i = 0; i < t->n; i++) {
        size_t k = hash_text(t->str[i], strlen(t->str[i])) & (cap - 1);
        while (h[k] >= 0)
            k = (k + 1) & (cap - 1);
        h[k] = (int32_t)i;
    }
    free(t->hash);
    t->hash = h;
    t->hcap = cap;
    return 1;
}

int32_t kscope__report_intern(strtab *t, const char *s)
{
    size_t n = strlen(s);
    if (2 * (t->n + 1) > t->hcap && !rehash(t))
        return -1;
    size_t k = hash_text(s, n) & (t->hcap - 1);
    for (; t->hash[k] >= 0; k = (k + 1) & (t->hcap - 1))
        if (strcmp(t->str[t->hash[k]], s) == 0)
            return t->hash[k];
    char *copy = strdup(s);
    if (!copy || !GROW(t->str, t->n, t->cap)) {
        free(copy);
        return -1;
    }
    t->str[t->n] = copy;
    t->hash[k] = (int32_t)t->n;
    return (int32_t)t->n++;
}

static void strtab_free(strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->str[i]);
    free(t->str), free(t->hash);
}

/* A name's (or id's) index in the string table; -1 on out of memory. */
static int32_t intern(tparse *p, const char *s)
{
    return kscope__report_intern(&p->names, s);
}

static int32_t find_or_add(track **arr, size_t *n, size_t *cap, int32_t pid, int32_t tid)
{
    for (size_t i = *n; i-- > 0;)
        if ((*arr)[i].pid == pid && (*arr)[i].tid == tid)
            return (int32_t)i;
    if (!GROW(*arr, *n, *cap))
        return -1;
    (*arr)[*n] = (track){pid, tid, -1, INT32_MAX};
    return (int32_t)(*n)++;
}

static int32_t track_of(tparse *p, int32_t pid, int32_t tid)
{
    return find_or_add(&p->tracks, &p->ntracks, &p->captracks, pid, tid);
}

/* The timeline places times in int64 nanoseconds; |ts| and dur beyond
 * this many microseconds (about 127 years) could not be subtracted, and
 * their events are counted as unplaced instead. */
#define PLACEABLE_US 4e15

static int64_t ns(double us)
{
    return (int64_t)llround(us * 1000.0);
}

/* A "M" event: a process or thread name, or a thread's sort index. */
static int end_meta(tparse *p, int32_t pid, int32_t tid)
{
    int process = strcmp(p->name, "process_name") == 0;
    int32_t t = process ? find_or_add(&p->pnames, &p->npnames, &p->cappnames, pid, -1)
                        : track_of(p, pid, tid);
    if (t < 0)
        return 0;
    track *k = process ? &p->pnames[t] : &p->tracks[t];
    if (process || strcmp(p->name, "thread_name") == 0)
        k->name = intern(p, p->meta_name);
    else if (strcmp(p->name, "thread_sort_index") == 0)
        k->sort = atoi(p->meta_name);
    return 1;
}

/* A "C" event: each numeric arg a sample of series "NAME ARG". */
static int end_counter(tparse *p, int32_t pid)
{
    for (size_t i = 0; i < p->nargs; i++) {
        char full[700];
        const char *arg = p->names.str[p->args[i].series];
        snprintf(full, sizeof full, "%s%s%s", p->name, strcmp(arg, "value") ? " " : "",
                 strcmp(arg, "value") ? arg : "");
        int32_t s = find_or_add(&p->series, &p->nseries, &p->capseries, pid, intern(p, full));
        if (s < 0 || !GROW(p->samples, p->nsamples, p->capsamples))
            return 0;
        p->samples[p->nsamples++] = (sample){s, ns(p->ts), p->args[i].v};
    }
    return 1;
}

/* A slice or mark ("X", "B", "E", "i"), with its args. */
static int end_placed(tparse *p, int32_t track, int32_t name, char ph)
{
    args_ref args;
    if (kscope__report_args_take(p, &args) != 0)
        return 0;
    if (ph == 'X' && p->has_dur && isfinite(p->dur) && p->dur >= 0) {
        if (!GROW(p->slices, p->nslices, p->capslices))
            return 0;
        p->slices[p->nslices++] = (slice){ns(p->ts), ns(p->dur), track, name, args};
    } else if (ph == 'B' || ph == 'E') {
        if (!GROW(p->be, p->nbe, p->capbe))
            return 0;
        p->be[p->nbe] = (be_event){ns(p->ts), track, name, (uint32_t)p->nbe, ph == 'B', args};
        p->nbe++;
    } else if (ph == 'i' || ph == 'I') {
        if (!GROW(p->marks, p->nmarks, p->capmarks))
            return 0;
        p->marks[p->nmarks++] = (slice){ns(p->ts), 0, track, name, args};
    }
    return 1;
}

static int end_event(tparse *p)
{
    int32_t pid = intern(p, p->pid), tid = intern(p, p->tid);
    char ph = p->ph[1] ? 0 : p->ph[0]; /* one letter, as the tree reads it: "XY" is no "X" */
    if (pid < 0 || tid < 0)
        return 0;
    if (ph == 'M')
        return end_meta(p, pid, tid);
    if (!p->has_ts || !isfinite(p->ts))
        return 1; /* nothing to place */
    if (!(fabs(p->ts) <= PLACEABLE_US) || (p->has_dur && !(fabs(p->dur) <= PLACEABLE_US))) {
        p->unplaced++;
        return 1;
    }
    if (ph == 'C')
        return end_counter(p, pid);
    int32_t track = track_of(p, pid, tid), name = intern(p, p->has_name ? p->name : "");
    if (track < 0 || name < 0)
        return 0;
    if ((ph == 's' || ph == 'f') && p->id[0]) {
        int32_t id = intern(p, p->id);
        if (id < 0 || !GROW(p->flows, p->nflows, p->capflows))
            return 0;
        p->flows[p->nflows++] = (flow_end){id, track, ns(p->ts), ph == 's'};
        return 1;
    }
    return end_placed(p, track, name, ph);
}

/* One scalar of the top-level "metadata" object (at most 64 kept). */
static int meta_value(tparse *p, const unsigned char *s, size_t l, int is_num)
{
    if (p->nmeta >= 64)
        return 1;
    if (!GROW(p->meta, p->nmeta, p->capmeta))
        return 0;
    size_t n = l < 16384 ? l : 16384;
    meta_field *m = &p->meta[p->nmeta];
    m->key = strdup(p->meta_key);
    m->value = malloc(n + 1);
    m->is_num = is_num;
    if (m->value)
        memcpy(m->value, s, n), m->value[n] = 0;
    p->nmeta++;
    return m->key && m->value;
}

/* ------------------------------------------------------ parse callbacks */

static void begin_event(tparse *p)
{
    p->ph[0] = p->name[0] = p->id[0] = p->meta_name[0] = 0;
    strcpy(p->pid, "0");
    strcpy(p->tid, "0");
    p->has_ts = p->has_dur = p->has_name = 0;
    p->nargs = 0;
    p->has_argw = 0;
}

static void copy_text(char *dst, size_t size, const unsigned char *s, size_t l)
{
    size_t n = l < size - 1 ? l : size - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

/* A scalar value: its text (strings and numbers alike) at the current key. */
static int on_value(tparse *p, const unsigned char *s, size_t l, int is_num)
{
    if (p->meta_depth && p->depth == p->meta_depth)
        return meta_value(p, s, l, is_num);
    if (p->args_depth && p->depth >= p->args_depth)
        kscope__report_args_value(p, s, l, is_num ? KSCOPE__ARG_NUM : KSCOPE__ARG_STR);
    char text[512];
    copy_text(text, sizeof text, s, l);
    if (p->event_depth && p->depth == p->event_depth) {
        if (strcmp(p->key, "ph") == 0)
            copy_text(p->ph, sizeof p->ph, is_num ? (const unsigned char *)"" : s, is_num ? 0 : l);
        else if (strcmp(p->key, "name") == 0)
            copy_text(p->name, sizeof p->name, s, l), p->has_name = 1;
        else if (strcmp(p->key, "pid") == 0)
            copy_text(p->pid, sizeof p->pid, s, l);
        else if (strcmp(p->key, "tid") == 0)
            copy_text(p->tid, sizeof p->tid, s, l);
        else if (strcmp(p->key, "id") == 0 || strcmp(p->key, "bind_id") == 0)
            copy_text(p->id, sizeof p->id, s, l);
        else if (is_num && strcmp(p->key, "ts") == 0)
            p->ts = strtod(text, NULL), p->has_ts = 1;
        else if (is_num && strcmp(p->key, "dur") == 0)
            p->dur = strtod(text, NULL), p->has_dur = 1;
    } else if (p->args_depth && p->depth == p->args_depth) {
        if (strcmp(p->args_key, "name") == 0 || strcmp(p->args_key, "sort_index") == 0)
            snprintf(p->meta_name, sizeof p->meta_name, "%s", text);
        if (is_num) {
            int32_t k = intern(p, p->args_key);
            if (k < 0 || !GROW(p->args, p->nargs, p->capargs))
                return 0;
            p->args[p->nargs++] = (sample){k, 0, strtod(text, NULL)};
        }
    }
    return 1;
}

static int cb_number(void *ctx, const char *s, size_t l)
{
    return on_value(ctx, (const unsigned char *)s, l, 1);
}

static int cb_string(void *ctx, const unsigned char *s, size_t l)
{
    return on_value(ctx, s, l, 0);
}

/* null, true and false: only args keep them. */
static int cb_null(void *ctx)
{
    tparse *p = ctx;
    if (p->args_depth && p->depth >= p->args_depth)
        kscope__report_args_value(p, (const unsigned char *)"null", 4, KSCOPE__ARG_LITERAL);
    return 1;
}

static int cb_bool(void *ctx, int b)
{
    tparse *p = ctx;
    if (p->args_depth && p->depth >= p->args_depth)
        kscope__report_args_value(p, (const unsigned char *)(b ? "true" : "false"), b ? 4 : 5,
                                  KSCOPE__ARG_LITERAL);
    return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t l)
{
    tparse *p = ctx;
    if (p->args_depth && p->depth >= p->args_depth)
        kscope__report_args_key(p, k, l);
    if (p->meta_depth && p->depth == p->meta_depth)
        copy_text(p->meta_key, sizeof p->meta_key, k, l);
    else if (p->args_depth && p->depth == p->args_depth)
        copy_text(p->args_key, sizeof p->args_key, k, l);
    else
        copy_text(p->key, sizeof p->key, k, l);
    if (p->depth == 1 && !p->event_depth)
        p->in_events = strcmp(p->key, "traceEvents") == 0;
    return 1;
}

/* Where we are: the events' array is the document (depth 1) or
 * traceEvents (depth 2); an event is an object directly inside it. */
static int cb_start_map(void *ctx)
{
    tparse *p = ctx;
    p->depth++;
    if (!p->event_depth && p->in_events && p->depth == 3)
        p->event_depth = 3;
    else if (!p->event_depth && p->in_events == 2 && p->depth == 2)
        p->event_depth = 2;
    else
        goto nested;
    begin_event(p);
    return 1;
nested:
    if (p->args_depth && p->depth > p->args_depth) {
        kscope__report_args_open(p, '{');
    } else if (p->event_depth && p->depth == p->event_depth + 1 && strcmp(p->key, "args") == 0) {
        p->args_depth = p->depth;
        kscope__report_args_begin(p);
    } else if (!p->event_depth && p->depth == 2 && p->in_events != 2 &&
               strcmp(p->key, "metadata") == 0) {
        p->meta_depth = 2;
    }
    return 1;
}

static int cb_end_map(void *ctx)
{
    tparse *p = ctx;
    int ok = 1;
    if (p->args_depth && p->depth > p->args_depth)
        kscope__report_args_close(p, '}');
    if (p->depth == p->args_depth) {
        kscope__report_args_end(p);
        p->args_depth = 0;
    }
    if (p->depth == p->meta_depth)
        p->meta_depth = 0;
    if (p->event_depth && p->depth == p->event_depth) {
        ok = end_event(p);
        p->event_depth = 0;
    }
    p->depth--;
    p->failed |= !ok;
    return ok;
}

static int cb_start_array(void *ctx)
{
    tparse *p = ctx;
    p->depth++;
    if (p->depth == 1)
        p->in_events = 2; /* the bare-array form */
    if (p->args_depth && p->depth > p->args_depth)
        kscope__report_args_open(p, '[');
    return 1;
}

static int cb_end_array(void *ctx)
{
    tparse *p = ctx;
    if (p->args_depth && p->depth > p->args_depth)
        kscope__report_args_close(p, ']');
    p->depth--;
    return 1;
}

static const yajl_callbacks callbacks = {cb_null,    cb_bool,        NULL,         NULL,
                                         cb_number,  cb_string,      cb_start_map, cb_key,
                                         cb_end_map, cb_start_array, cb_end_array};

int kscope__report_trace_parse(tparse *p, const char *buf, size_t len, char *err, size_t errlen)
{
    yajl_handle h = yajl_alloc(&callbacks, NULL, p);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    yajl_config(h, yajl_allow_multiple_values, 0);
    yajl_status st = yajl_parse(h, (const unsigned char *)buf, len);
    if (st == yajl_status_ok)
        st = yajl_complete_parse(h);
    int rc = 0;
    if (!p->failed && st == yajl_status_ok && kscope__report_pair_be(p) != 0)
        p->failed = 1;
    if (p->failed) {
        snprintf(err, errlen, "out of memory reading the timeline");
        rc = KSCOPE_ENOMEM;
    } else if (st != yajl_status_ok) {
        unsigned char *msg = yajl_get_error(h, 0, (const unsigned char *)buf, len);
        snprintf(err, errlen, "not a Chrome trace: %s", msg ? (const char *)msg : "parse error");
        char *nl = strchr(err, '\n');
        if (nl)
            *nl = 0;
        yajl_free_error(h, msg);
        rc = KSCOPE_EPARSE;
    }
    yajl_free(h);
    return rc;
}

void kscope__report_trace_free(tparse *p)
{
    strtab_free(&p->names);
    strtab_free(&p->argtab);
    kscope__jw_free(&p->argw);
    kscope__jw_free(&p->argnum);
    free(p->pool);
    for (size_t i = 0; i < p->nmeta; i++)
        free(p->meta[i].key), free(p->meta[i].value);
    free(p->meta), free(p->args), free(p->be);
    free(p->tracks), free(p->pnames), free(p->series);
    free(p->slices), free(p->marks), free(p->flows), free(p->samples);
}
