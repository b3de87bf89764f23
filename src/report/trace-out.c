/*
 * trace-out.c - the timeline built by trace-data.c written as the page's
 * JSON (the shape is described there): slices per track in time order with
 * times as gaps (small numbers), flows paired by id, counters per series,
 * and the args of the slices and marks shown, each text once.
 */
#include "report/report.h"
#include "report/trace-data.h"
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_track_ts(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->dur > y->dur ? -1 : x->dur < y->dur;
}

static int by_dur_desc(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    return x->dur > y->dur ? -1 : x->dur < y->dur;
}

static int by_flow(const void *a, const void *b)
{
    const flow_end *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->start != y->start)
        return x->start ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int by_series_ts(const void *a, const void *b)
{
    const sample *x = a, *y = b;
    if (x->series != y->series)
        return x->series < y->series ? -1 : 1;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int64_t first_time(const tparse *p)
{
    int64_t t0 = INT64_MAX;
    for (size_t i = 0; i < p->nslices; i++)
        t0 = p->slices[i].ts < t0 ? p->slices[i].ts : t0;
    for (size_t i = 0; i < p->nmarks; i++)
        t0 = p->marks[i].ts < t0 ? p->marks[i].ts : t0;
    for (size_t i = 0; i < p->nsamples; i++)
        t0 = p->samples[i].ts < t0 ? p->samples[i].ts : t0;
    return t0 == INT64_MAX ? 0 : t0;
}

static void int_array(kscope__jsonw *w, const char *key)
{
    kscope__jw_key(w, key);
    kscope__jw_open(w, '[');
}

/* The args document (trace-data.c): which templates it holds, those of
 * the slices and marks shown, in the order first met (out[i]: the page's
 * index of template i, or -1), and where their numbers go. */
typedef struct args_map {
    int32_t *out;
    int32_t *order; /* the page's index -> template */
    int32_t n;
    kscope__report_out *doc;
    const char *pool;
} args_map;

static int32_t args_out(args_map *m, const args_ref *a)
{
    if (a->tmpl < 0 || !m->out)
        return -1;
    if (m->out[a->tmpl] < 0) {
        m->order[m->n] = a->tmpl;
        m->out[a->tmpl] = m->n++;
    }
    return m->out[a->tmpl];
}

/* The numbers of s[0..n) as one JSON string, comma-separated (a number's
 * text needs no escaping). */
static void numbers(args_map *m, const slice *s, size_t n)
{
    kscope__jsonw *w = &m->doc->w;
    if (w->need_comma)
        kscope__jw_raw(w, ",", 1);
    kscope__jw_raw(w, "\"", 1);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (!s[i].args.len)
            continue;
        if (!first)
            kscope__jw_raw(w, ",", 1);
        kscope__jw_raw(w, m->pool + s[i].args.off, s[i].args.len);
        first = 0;
        if (w->out.len > (1u << 20))
            kscope__report_flush(m->doc);
    }
    kscope__jw_raw(w, "\"", 1);
    w->need_comma = 1;
}

/* One track's slices s[0..n): all, or the `cap` longest, time-sorted. */
static void write_track(kscope__report_out *o, const track *k, slice *s, size_t n, size_t cap,
                        int64_t t0, args_map *am)
{
    kscope__jsonw *w = &o->w;
    size_t shown = n;
    if (n > cap) {
        qsort(s, n, sizeof *s, by_dur_desc);
        qsort(s, cap, sizeof *s, by_track_ts);
        shown = cap;
    }
    kscope__jw_open(w, '{');
    kscope__jw_member_int(w, "pid", k->pid);
    kscope__jw_member_int(w, "tid", k->tid);
    kscope__jw_member_int(w, "name", k->name);
    kscope__jw_member_int(w, "sort", k->sort);
    kscope__jw_member_uint(w, "n", n);
    int_array(w, "ts");
    int64_t last = t0;
    for (size_t i = 0; i < shown; i++, last = s[i - 1].ts)
        kscope__jw_int(w, s[i].ts - last);
    kscope__jw_close(w, ']');
    int_array(w, "dur");
    for (size_t i = 0; i < shown; i++)
        kscope__jw_int(w, s[i].dur);
    kscope__jw_close(w, ']');
    int_array(w, "name_i");
    for (size_t i = 0; i < shown; i++)
        kscope__jw_int(w, s[i].name);
    kscope__jw_close(w, ']');
    size_t with_args = 0;
    for (size_t i = 0; i < shown; i++)
        with_args += s[i].args.tmpl >= 0;
    if (with_args) { /* else left out: most traces of other tools */
        int_array(w, "args_i");
        for (size_t i = 0; i < shown; i++)
            kscope__jw_int(w, args_out(am, &s[i].args));
        kscope__jw_close(w, ']');
    }
    kscope__jw_close(w, '}');
    kscope__report_flush(o);
    numbers(am, s, shown);
    kscope__report_flush(am->doc);
}

static void write_tracks(kscope__report_out *o, tparse *p, size_t cap, int64_t t0, args_map *am)
{
    if (p->nslices)
        qsort(p->slices, p->nslices, sizeof *p->slices, by_track_ts);
    kscope__jw_key(&o->w, "tracks");
    kscope__jw_open(&o->w, '[');
    size_t at = 0;
    for (size_t t = 0; t < p->ntracks; t++) {
        size_t end = at;
        while (end < p->nslices && p->slices[end].track == (int32_t)t)
            end++;
        /* no slice at all (tracks of marks or metadata only): no array */
        slice *first = p->slices ? p->slices + at : NULL;
        write_track(o, &p->tracks[t], first, end - at, cap, t0, am);
        at = end;
    }
    kscope__jw_close(&o->w, ']');
    kscope__jw_key(&o->w, "processes");
    kscope__jw_open(&o->w, '[');
    for (size_t i = 0; i < p->npnames; i++) {
        kscope__jw_int(&o->w, p->pnames[i].pid);
        kscope__jw_int(&o->w, p->pnames[i].name);
    }
    kscope__jw_close(&o->w, ']');
}

static void write_marks(kscope__jsonw *w, const tparse *p, int64_t t0, args_map *am)
{
    kscope__jw_key(w, "marks");
    kscope__jw_open(w, '[');
    for (size_t i = 0; i < p->nmarks; i++) {
        kscope__jw_int(w, p->marks[i].track);
        kscope__jw_int(w, p->marks[i].ts - t0);
        kscope__jw_int(w, p->marks[i].name);
        kscope__jw_int(w, args_out(am, &p->marks[i].args));
    }
    kscope__jw_close(w, ']');
    kscope__jw_key(&am->doc->w, "marks");
    numbers(am, p->marks, p->nmarks);
}

/* The templates the page refers to, ending the args document. */
static void write_templates(args_map *am, const tparse *p)
{
    kscope__report_out *doc = am->doc;
    kscope__jw_key(&doc->w, "templates");
    kscope__jw_open(&doc->w, '[');
    for (int32_t i = 0; i < am->n; i++) {
        kscope__jw_str(&doc->w, p->argtab.str[am->order[i]]);
        if (doc->w.out.len > (1u << 20))
            kscope__report_flush(doc);
    }
    kscope__jw_close(&doc->w, ']');
    kscope__jw_close(&doc->w, '}');
    kscope__report_flush(doc);
}

/* The scalars of the trace's "metadata" (the run's facts), and how many
 * "B" events never ended. */
static void write_meta(kscope__jsonw *w, const tparse *p)
{
    kscope__jw_key(w, "metadata");
    kscope__jw_open(w, '{');
    for (size_t i = 0; i < p->nmeta; i++) {
        kscope__jw_member_str(w, p->meta[i].key, p->meta[i].value);
    }
    kscope__jw_close(w, '}');
    kscope__jw_member_uint(w, "unended", p->unended);
    kscope__jw_member_uint(w, "unplaced", p->unplaced);
}

/* Each "s" with the first "f" of its id: [from track, ts, to track, ts]. */
static void write_flows(kscope__jsonw *w, tparse *p, int64_t t0)
{
    if (p->nflows) /* qsort's array may not be NULL, even when empty */
        qsort(p->flows, p->nflows, sizeof *p->flows, by_flow);
    kscope__jw_key(w, "flows");
    kscope__jw_open(w, '[');
    for (size_t i = 0; i + 1 < p->nflows; i++) {
        const flow_end *s = &p->flows[i], *f = &p->flows[i + 1];
        if (!s->start || f->start || s->id != f->id)
            continue;
        kscope__jw_int(w, s->track);
        kscope__jw_int(w, s->ts - t0);
        kscope__jw_int(w, f->track);
        kscope__jw_int(w, f->ts - t0);
    }
    kscope__jw_close(w, ']');
}

static void write_counters(kscope__report_out *o, tparse *p, size_t cap, int64_t t0)
{
    if (p->nsamples)
        qsort(p->samples, p->nsamples, sizeof *p->samples, by_series_ts);
    kscope__jsonw *w = &o->w;
    kscope__jw_key(w, "counters");
    kscope__jw_open(w, '[');
    size_t at = 0;
    for (size_t s = 0; s < p->nseries; s++) {
        size_t end = at;
        while (end < p->nsamples && p->samples[end].series == (int32_t)s)
            end++;
        size_t n = end - at < cap ? end - at : cap;
        kscope__jw_open(w, '{');
        kscope__jw_member_int(w, "pid", p->series[s].pid);
        kscope__jw_member_int(w, "name", p->series[s].tid);
        kscope__jw_member_uint(w, "n", end - at);
        int_array(w, "ts");
        for (size_t i = 0; i < n; i++)
            kscope__jw_int(w, p->samples[at + i].ts - (i ? p->samples[at + i - 1].ts : t0));
        kscope__jw_close(w, ']');
        int_array(w, "v");
        for (size_t i = 0; i < n; i++)
            kscope__jw_double(w, p->samples[at + i].v);
        kscope__jw_close(w, ']');
        kscope__jw_close(w, '}');
        kscope__report_flush(o);
        at = end;
    }
    kscope__jw_close(w, ']');
}

static void write_strings(kscope__report_out *o, const tparse *p)
{
    kscope__jw_key(&o->w, "strings");
    kscope__jw_open(&o->w, '[');
    for (size_t i = 0; i < p->names.n; i++) {
        kscope__jw_str(&o->w, p->names.str[i]);
        if (o->w.out.len > (1u << 20))
            kscope__report_flush(o);
    }
    kscope__jw_close(&o->w, ']');
}

int kscope__report_timeline(kscope__report_out *o, kscope__report_out *args, kscope__timeline *p,
                            const kscope__report_limits *lim, char *err, size_t errlen)
{
    if (kscope__report_pair_be(p) != 0) {
        snprintf(err, errlen, "out of memory reading the timeline");
        return KSCOPE_ENOMEM;
    }
    int64_t t0 = first_time(p);
    args_map am = {NULL, NULL, 0, args, p->pool};
    if (p->argtab.n) {
        am.out = malloc(p->argtab.n * sizeof *am.out);
        am.order = malloc(p->argtab.n * sizeof *am.order);
        if (!am.out || !am.order) {
            free(am.out), free(am.order);
            snprintf(err, errlen, "out of memory writing the timeline");
            return KSCOPE_ENOMEM;
        }
        memset(am.out, -1, p->argtab.n * sizeof *am.out);
    }
    args->w.need_comma = 0;
    kscope__jw_open(&args->w, '{');
    kscope__jw_key(&args->w, "tracks");
    kscope__jw_open(&args->w, '[');
    kscope__jw_open(&o->w, '{');
    write_strings(o, p);
    write_tracks(o, p, lim->max_track_events, t0, &am);
    kscope__jw_close(&args->w, ']');
    write_marks(&o->w, p, t0, &am);
    write_templates(&am, p);
    free(am.out), free(am.order);
    write_meta(&o->w, p);
    write_flows(&o->w, p, t0);
    write_counters(o, p, lim->max_track_events, t0);
    kscope__jw_member_int(&o->w, "t0", t0);
    kscope__jw_member_uint(&o->w, "cap", lim->max_track_events);
    kscope__jw_close(&o->w, '}');
    kscope__report_flush(o);
    return 0;
}

int kscope__report_trace(kscope__report_out *o, kscope__report_out *args, const char *buf,
                         size_t len, const kscope__report_limits *lim, char *err, size_t errlen)
{
    kscope__timeline *tl = kscope__timeline_new();
    if (!tl) {
        snprintf(err, errlen, "out of memory reading the timeline");
        return KSCOPE_ENOMEM;
    }
    kscope__tev_sink sink = kscope__timeline_sink(tl);
    int rc = kscope__read_events_buffer(&kscope__chrome_trace_reader, buf, len, &sink, err, errlen);
    if (rc == 0)
        rc = kscope__report_timeline(o, args, tl, lim, err, errlen);
    kscope__timeline_free(tl);
    return rc;
}
