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
 * the first event. The events come from a trace reader as it reads
 * (read/read.h: each with what its file wrote); they are kept only as
 * numbers and string-table indices.
 */
#include "report/trace-data.h"
#include "util/util.h"
#include "kscope.h"

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
    return (uint32_t)kscope__fnv1a(s, n);
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

/* The first size - 1 bytes of a string's or number's text ("" for any
 * other value), as the page's tables take them. */
static const char *text_of(kscope__tev_value v, char *buf, size_t size)
{
    size_t n = v.type == KSCOPE__TEV_STRING || v.type == KSCOPE__TEV_NUMBER ? v.len : 0;
    n = n < size - 1 ? n : size - 1;
    if (n)
        memcpy(buf, v.text, n);
    buf[n] = 0;
    return buf;
}

/* The event read, as the page takes it. */
typedef struct event {
    const kscope__tev *e;
    char name[512], meta_name[512];
    int has_name;
} event;

/* A "M" event: a process or thread name, or a thread's sort index. */
static int end_meta(tparse *p, const event *v, int32_t pid, int32_t tid)
{
    int process = v->e->kind == KSCOPE__TEV_PROCESS;
    int32_t t = process ? find_or_add(&p->pnames, &p->npnames, &p->cappnames, pid, -1)
                        : track_of(p, pid, tid);
    if (t < 0)
        return 0;
    track *k = process ? &p->pnames[t] : &p->tracks[t];
    if (process || v->e->kind == KSCOPE__TEV_THREAD)
        k->name = intern(p, v->meta_name);
    else if (v->e->kind == KSCOPE__TEV_THREAD_SORT)
        k->sort = atoi(v->meta_name);
    return 1;
}

/* A "C" event: each numeric arg a sample of series "NAME ARG". */
static int end_counter(tparse *p, const event *v, int32_t pid, double ts)
{
    for (size_t i = 0; i < p->nargs; i++) {
        char full[700];
        const char *arg = p->names.str[p->args[i].series];
        snprintf(full, sizeof full, "%s%s%s", v->name, strcmp(arg, "value") ? " " : "",
                 strcmp(arg, "value") ? arg : "");
        int32_t s = find_or_add(&p->series, &p->nseries, &p->capseries, pid, intern(p, full));
        if (s < 0 || !GROW(p->samples, p->nsamples, p->capsamples))
            return 0;
        p->samples[p->nsamples++] = (sample){s, ns(ts), p->args[i].v};
    }
    return 1;
}

/* A slice or mark ("X", "B", "E", "i"), with its args. */
static int end_placed(tparse *p, const event *v, int32_t track, int32_t name, double ts, double dur,
                      int has_dur)
{
    kscope__tev_kind kind = v->e->kind;
    int x = kind == KSCOPE__TEV_SLICE || kind == KSCOPE__TEV_GPU;
    int be = kind == KSCOPE__TEV_BEGIN || kind == KSCOPE__TEV_END;
    if (!x && !be && kind != KSCOPE__TEV_MARK)
        return 1;
    args_ref args;
    if (kscope__report_args_take(p, v->e->read, &args) != 0)
        return 0;
    if (x && has_dur && isfinite(dur) && dur >= 0) {
        if (!GROW(p->slices, p->nslices, p->capslices))
            return 0;
        p->slices[p->nslices++] = (slice){ns(ts), ns(dur), track, name, args};
    } else if (be) {
        if (!GROW(p->be, p->nbe, p->capbe))
            return 0;
        p->be[p->nbe] =
            (be_event){ns(ts), track, name, (uint32_t)p->nbe, kind == KSCOPE__TEV_BEGIN, args};
        p->nbe++;
    } else if (kind == KSCOPE__TEV_MARK) {
        if (!GROW(p->marks, p->nmarks, p->capmarks))
            return 0;
        p->marks[p->nmarks++] = (slice){ns(ts), 0, track, name, args};
    }
    return 1;
}

/* The scalar args: numbers kept (their names in the string table, as
 * counters name series by them), and the text of "name" or "sort_index"
 * (what metadata events say). */
static int read_args(tparse *p, event *v)
{
    const kscope__tev_read *r = v->e->read;
    p->nargs = 0;
    v->meta_name[0] = 0;
    for (size_t i = 0; i < r->nargs; i++) {
        const kscope__tev_field *a = &r->args[i];
        char key[64], text[512];
        size_t kl = a->keylen < sizeof key - 1 ? a->keylen : sizeof key - 1;
        memcpy(key, a->key, kl);
        key[kl] = 0;
        text_of(a->v, text, sizeof text);
        if (strcmp(key, "name") == 0 || strcmp(key, "sort_index") == 0)
            snprintf(v->meta_name, sizeof v->meta_name, "%s", text);
        if (a->v.type == KSCOPE__TEV_NUMBER) {
            int32_t k = intern(p, key);
            if (k < 0 || !GROW(p->args, p->nargs, p->capargs))
                return 0;
            p->args[p->nargs++] = (sample){k, 0, strtod(text, NULL)};
        }
    }
    return 1;
}

/* A time ("ts", "dur") in µs when it is a number. */
static int read_time(kscope__tev_value v, double *us)
{
    char text[512];
    *us = 0;
    if (v.type != KSCOPE__TEV_NUMBER)
        return 0;
    *us = strtod(text_of(v, text, sizeof text), NULL);
    return 1;
}

static int add_event(tparse *p, event *v)
{
    const kscope__tev_read *r = v->e->read;
    char pid_text[64] = "0", tid_text[64] = "0", id[64];
    if (!read_args(p, v))
        return 0;
    if (r->pid.type == KSCOPE__TEV_STRING || r->pid.type == KSCOPE__TEV_NUMBER)
        text_of(r->pid, pid_text, sizeof pid_text);
    if (r->tid.type == KSCOPE__TEV_STRING || r->tid.type == KSCOPE__TEV_NUMBER)
        text_of(r->tid, tid_text, sizeof tid_text);
    v->has_name = r->name.type == KSCOPE__TEV_STRING || r->name.type == KSCOPE__TEV_NUMBER;
    text_of(r->name, v->name, sizeof v->name);
    int32_t pid = intern(p, pid_text), tid = intern(p, tid_text);
    kscope__tev_kind kind = v->e->kind;
    if (pid < 0 || tid < 0)
        return 0;
    if (kind == KSCOPE__TEV_PROCESS || kind == KSCOPE__TEV_THREAD ||
        kind == KSCOPE__TEV_PROCESS_SORT || kind == KSCOPE__TEV_THREAD_SORT ||
        kind == KSCOPE__TEV_META)
        return end_meta(p, v, pid, tid);
    double ts, dur;
    int has_dur = read_time(r->dur, &dur);
    if (!read_time(r->ts, &ts) || !isfinite(ts))
        return 1; /* nothing to place */
    if (!(fabs(ts) <= PLACEABLE_US) || (has_dur && !(fabs(dur) <= PLACEABLE_US))) {
        p->unplaced++;
        return 1;
    }
    if (kind == KSCOPE__TEV_COUNTER)
        return end_counter(p, v, pid, ts);
    int32_t track = track_of(p, pid, tid), name = intern(p, v->has_name ? v->name : "");
    if (track < 0 || name < 0)
        return 0;
    int flow = kind == KSCOPE__TEV_FLOW_START || kind == KSCOPE__TEV_FLOW_END;
    if (flow && text_of(r->id, id, sizeof id)[0]) {
        int32_t idx = intern(p, id);
        if (idx < 0 || !GROW(p->flows, p->nflows, p->capflows))
            return 0;
        p->flows[p->nflows++] = (flow_end){idx, track, ns(ts), kind == KSCOPE__TEV_FLOW_START};
        return 1;
    }
    return end_placed(p, v, track, name, ts, dur, has_dur);
}

/* The scalars of the trace's "metadata" (at most 64 kept). */
static int add_meta(tparse *p, const kscope__tev_read *r)
{
    for (size_t i = 0; i < r->nfields && p->nmeta < 64; i++) {
        const kscope__tev_field *f = &r->fields[i];
        if (f->v.type != KSCOPE__TEV_STRING && f->v.type != KSCOPE__TEV_NUMBER)
            continue;
        if (!GROW(p->meta, p->nmeta, p->capmeta))
            return 0;
        size_t n = f->v.len < 16384 ? f->v.len : 16384, kl = f->keylen < 63 ? f->keylen : 63;
        meta_field *m = &p->meta[p->nmeta++];
        m->key = malloc(kl + 1);
        m->value = malloc(n + 1);
        m->is_num = f->v.type == KSCOPE__TEV_NUMBER;
        if (!m->key || !m->value)
            return 0;
        memcpy(m->key, f->key, kl), m->key[kl] = 0;
        memcpy(m->value, f->v.text, n), m->value[n] = 0;
    }
    return 1;
}

static int timeline_event(const kscope__tev *e, void *arg)
{
    tparse *p = arg;
    if (!e->read)
        return 0; /* the page's timeline is made from files */
    if (e->kind == KSCOPE__TEV_RUN)
        return add_meta(p, e->read) ? 0 : KSCOPE_ENOMEM;
    event v = {.e = e};
    return add_event(p, &v) ? 0 : KSCOPE_ENOMEM;
}

static const char *timeline_why(void *arg)
{
    (void)arg;
    return "out of memory reading the timeline";
}

kscope__tev_sink kscope__timeline_sink(kscope__timeline *tl)
{
    return (kscope__tev_sink){timeline_event, tl, timeline_why, KSCOPE__TREAD_ARGS};
}

kscope__timeline *kscope__timeline_new(void)
{
    return calloc(1, sizeof(tparse));
}

void kscope__timeline_free(kscope__timeline *p)
{
    if (!p)
        return;
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
    free(p);
}
