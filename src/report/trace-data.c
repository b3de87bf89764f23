/*
 * trace-data.c - a Chrome trace's timeline as the page's compact JSON:
 *
 *   {"strings": [...], "tracks": [{"pid", "tid", "name", "sort", "n",
 *     "shown", "ts": [gaps in ns], "dur": [ns], "name_i": [string index]}],
 *    "marks": {"track", "ts", "name"}, "flows": {"from", "from_ts", "to",
 *    "to_ts"}, "counters": [{"name", "pid", "ts", "v"}], "t0": ns}
 *
 * Slices ("X") go on their (pid, tid) track, time-sorted; a track with
 * more than lim->max_track_events keeps its longest ones (n says how many
 * there were). Instants ("i", "I") are marks, "s"/"f" pairs with one id
 * are flow arrows, "C" events are counter series (one per arg), and "M"
 * metadata names processes and threads. Times are in ns from the first
 * event. yajl's streaming parser reads the file; events are kept only as
 * numbers and string-table indices.
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

static int rehash(tparse *p)
{
    size_t cap = p->hcap ? p->hcap * 2 : 1024;
    int32_t *h = malloc(cap * sizeof *h);
    if (!h)
        return 0;
    memset(h, -1, cap * sizeof *h);
    for (size_t i = 0; i < p->nstr; i++) {
        size_t k = hash_text(p->str[i], strlen(p->str[i])) & (cap - 1);
        while (h[k] >= 0)
            k = (k + 1) & (cap - 1);
        h[k] = (int32_t)i;
    }
    free(p->hash);
    p->hash = h;
    p->hcap = cap;
    return 1;
}

/* The string table index of s (added when new); -1 on out of memory. */
static int32_t intern(tparse *p, const char *s)
{
    size_t n = strlen(s);
    if (2 * (p->nstr + 1) > p->hcap && !rehash(p))
        return -1;
    size_t k = hash_text(s, n) & (p->hcap - 1);
    for (; p->hash[k] >= 0; k = (k + 1) & (p->hcap - 1))
        if (strcmp(p->str[p->hash[k]], s) == 0)
            return p->hash[k];
    char *copy = strdup(s);
    if (!copy || !GROW(p->str, p->nstr, p->capstr)) {
        free(copy);
        return -1;
    }
    p->str[p->nstr] = copy;
    p->hash[k] = (int32_t)p->nstr;
    return (int32_t)p->nstr++;
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
        const char *arg = p->str[p->args[i].series];
        snprintf(full, sizeof full, "%s%s%s", p->name, strcmp(arg, "value") ? " " : "",
                 strcmp(arg, "value") ? arg : "");
        int32_t s = find_or_add(&p->series, &p->nseries, &p->capseries, pid, intern(p, full));
        if (s < 0 || !GROW(p->samples, p->nsamples, p->capsamples))
            return 0;
        p->samples[p->nsamples++] = (sample){s, ns(p->ts), p->args[i].v};
    }
    return 1;
}

static int end_event(tparse *p)
{
    int32_t pid = intern(p, p->pid), tid = intern(p, p->tid);
    char ph = p->ph[0];
    if (pid < 0 || tid < 0)
        return 0;
    if (ph == 'M')
        return end_meta(p, pid, tid);
    if (!p->has_ts || !isfinite(p->ts))
        return 1; /* nothing to place */
    if (ph == 'C')
        return end_counter(p, pid);
    int32_t track = track_of(p, pid, tid), name = intern(p, p->has_name ? p->name : "");
    if (track < 0 || name < 0)
        return 0;
    if (ph == 'X' && p->has_dur && isfinite(p->dur) && p->dur >= 0) {
        if (!GROW(p->slices, p->nslices, p->capslices))
            return 0;
        p->slices[p->nslices++] = (slice){ns(p->ts), ns(p->dur), track, name};
    } else if (ph == 'i' || ph == 'I') {
        if (!GROW(p->marks, p->nmarks, p->capmarks))
            return 0;
        p->marks[p->nmarks++] = (slice){ns(p->ts), 0, track, name};
    } else if ((ph == 's' || ph == 'f') && p->id[0]) {
        int32_t id = intern(p, p->id);
        if (id < 0 || !GROW(p->flows, p->nflows, p->capflows))
            return 0;
        p->flows[p->nflows++] = (flow_end){id, track, ns(p->ts), ph == 's'};
    }
    return 1;
}

/* ------------------------------------------------------ parse callbacks */

static void begin_event(tparse *p)
{
    p->ph[0] = p->name[0] = p->id[0] = p->meta_name[0] = 0;
    strcpy(p->pid, "0");
    strcpy(p->tid, "0");
    p->has_ts = p->has_dur = p->has_name = 0;
    p->nargs = 0;
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
    char text[512];
    copy_text(text, sizeof text, s, l);
    if (p->event_depth && p->depth == p->event_depth) {
        if (strcmp(p->key, "ph") == 0)
            copy_text(p->ph, sizeof p->ph, s, l);
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

static int cb_other(void *ctx)
{
    (void)ctx;
    return 1;
}

static int cb_bool(void *ctx, int b)
{
    (void)ctx, (void)b;
    return 1;
}

static int cb_key(void *ctx, const unsigned char *k, size_t l)
{
    tparse *p = ctx;
    if (p->args_depth && p->depth == p->args_depth)
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
    if (p->event_depth && p->depth == p->event_depth + 1 && strcmp(p->key, "args") == 0)
        p->args_depth = p->depth;
    return 1;
}

static int cb_end_map(void *ctx)
{
    tparse *p = ctx;
    int ok = 1;
    if (p->depth == p->args_depth)
        p->args_depth = 0;
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
    return 1;
}

static int cb_end_array(void *ctx)
{
    tparse *p = ctx;
    p->depth--;
    return 1;
}

static const yajl_callbacks callbacks = {cb_other,   cb_bool,        NULL,         NULL,
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
    for (size_t i = 0; i < p->nstr; i++)
        free(p->str[i]);
    free(p->str), free(p->hash), free(p->args);
    free(p->tracks), free(p->pnames), free(p->series);
    free(p->slices), free(p->marks), free(p->flows), free(p->samples);
}
