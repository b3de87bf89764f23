/*
 * tree-data.c - a calling-context tree as the page's compact JSON:
 *
 *   {"strings": [...], "name": [string index per node],
 *    "up": [node index minus its parent's], "device": [gaps between the
 *    indices of GPU activities], "default": the metric shown first,
 *    "metrics": [{"name", "inc", "total", "i": [index gaps], "v": [values],
 *                 "oi"/"ov": own values, "wi"/"wv": widths}],
 *    "devices": [...], "facts": {...},
 *    "lod": {"of", "kept", "share", "metric"} when aggregated}
 *
 * Every number is decided here, by the readers' one definition
 * (read/rollup.c), never by the page: "v" is what `kscope view` shows for
 * the node (the subtree's sum for a metric that rolls up, "inc": 1, which
 * is 0 where none is written; else the node's own value, none where none
 * is written); "ov" the own values of a metric that rolls up; "wv" the
 * width the flame graph gives a node where it differs from "v" (a node
 * without a value of a per-node metric spans what is below it); "total"
 * the metric's total, ROOT's width. Derived rates ("flop/s", "byte/s",
 * "rate": 1) are `kscope view -m`'s columns. Sparse arrays cost only the
 * nodes that have values. Past lim->max_nodes, nodes whose subtree holds
 * less than lim->other_share of the total merge into one "(other)" node
 * under their nearest kept ancestor.
 */
#include "report/report.h"
#include "read/read.h"
#include "kscope.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Which output node each input node lands on, and the output's shape. */
typedef struct tree_map {
    int32_t *to;        /* per input node: output node */
    int32_t *out_up;    /* per output node: its parent (-1 for ROOT) */
    int32_t *out_first; /* per output node: an input node on it (its name) */
    int32_t *other;     /* per input node: its "(other)" output child, or -1 */
    size_t nout;
    const char *lod_metric;
} tree_map;

static void number(kscope__jsonw *w, double v)
{
    char buf[40];
    if (!isfinite(v))
        kscope__jw_js_number(w, v);
    else {
        if (v == floor(v) && fabs(v) < 9e15)
            snprintf(buf, sizeof buf, "%.0f", v);
        else
            snprintf(buf, sizeof buf, "%.17g", v);
        kscope__jw_literal(w, buf);
    }
}

/* The metric that decides what is small: GPU time, else the first
 * inclusive one, else host wall time. */
static const char *lod_metric(const kscope__metric_info *m, int nm)
{
    for (int i = 0; i < nm; i++)
        if (strcmp(m[i].name, "time (ns)") == 0)
            return m[i].name;
    for (int i = 0; i < nm; i++)
        if (m[i].inclusive)
            return m[i].name;
    for (int i = 0; i < nm; i++)
        if (strcmp(m[i].name, "wall_time (ns)") == 0)
            return m[i].name;
    return NULL;
}

/* Fill map: every node kept, or (past the limit) the small ones merged. */
static int map_nodes(const kscope__ptree *t, const kscope__pflat *f, const char *metric,
                     const kscope__report_limits *lim, tree_map *m)
{
    m->to = malloc(f->n * sizeof *m->to);
    m->out_up = malloc(f->n * sizeof *m->out_up);
    m->out_first = malloc(f->n * sizeof *m->out_first);
    m->other = malloc(f->n * sizeof *m->other);
    double *incl = malloc(f->n * sizeof *incl), *vals = malloc(f->n * sizeof *vals);
    if (!m->to || !m->out_up || !m->out_first || !m->other || !incl || !vals) {
        free(incl), free(vals);
        return KSCOPE_ENOMEM;
    }
    int aggregate = f->n > lim->max_nodes && metric;
    if (aggregate) /* each subtree's total: the width its node gets */
        kscope__metric_spans(f, vals, kscope__metric_values(t, f, metric, vals), incl);
    free(vals);
    double floor_value = aggregate ? incl[0] * lim->other_share : 0;
    m->lod_metric = aggregate && incl[0] > 0 ? metric : NULL;
    m->nout = 0;
    for (size_t i = 0; i < f->n; i++) {
        m->other[i] = -1;
        int32_t p = f->parent[i];
        int parent_kept = p < 0 || m->out_first[m->to[p]] == p;
        int small = m->lod_metric && i > 0 && !(incl[i] >= floor_value);
        if (!small && parent_kept) {
            m->to[i] = (int32_t)m->nout;
            m->out_up[m->nout] = p < 0 ? -1 : m->to[p];
            m->out_first[m->nout++] = (int32_t)i;
        } else if (parent_kept) {
            if (m->other[p] < 0) {
                m->other[p] = (int32_t)m->nout;
                m->out_up[m->nout] = m->to[p];
                m->out_first[m->nout++] = -1; /* named "(other)" */
            }
            m->to[i] = m->other[p];
        } else {
            m->to[i] = m->to[p];
        }
    }
    free(incl);
    return 0;
}

/* Names: a string table, interned pointers found through a hash. */
static int write_names(kscope__jsonw *w, const kscope__pflat *f, const tree_map *m)
{
    size_t cap = 64;
    while (cap < 2 * m->nout + 2)
        cap *= 2;
    const char **keys = calloc(cap, sizeof *keys);
    int32_t *ids = malloc(cap * sizeof *ids);
    int32_t *name_id = malloc((m->nout + 1) * sizeof *name_id);
    if (!keys || !ids || !name_id) {
        free(keys), free(ids), free(name_id);
        return KSCOPE_ENOMEM;
    }
    int32_t nstr = 0;
    kscope__jw_key(w, "strings");
    kscope__jw_open(w, '[');
    for (size_t o = 0; o < m->nout; o++) {
        const char *s = m->out_first[o] < 0 ? "(other)" : f->node[m->out_first[o]]->name;
        size_t h = ((uintptr_t)s >> 3) * 2654435761u & (cap - 1);
        while (keys[h] && keys[h] != s)
            h = (h + 1) & (cap - 1);
        if (!keys[h]) {
            keys[h] = s;
            ids[h] = nstr++;
            kscope__jw_str(w, s);
        }
        name_id[o] = ids[h];
    }
    kscope__jw_close(w, ']');
    kscope__jw_key(w, "name");
    kscope__jw_open(w, '[');
    for (size_t o = 0; o < m->nout; o++)
        kscope__jw_int(w, name_id[o]);
    kscope__jw_close(w, ']');
    free(keys), free(ids), free(name_id);
    return 0;
}

static void write_shape(kscope__jsonw *w, const kscope__pflat *f, const tree_map *m)
{
    kscope__jw_key(w, "up");
    kscope__jw_open(w, '[');
    for (size_t o = 0; o < m->nout; o++)
        kscope__jw_int(w, m->out_up[o] < 0 ? 0 : (int64_t)o - m->out_up[o]);
    kscope__jw_close(w, ']');
    kscope__jw_key(w, "device");
    kscope__jw_open(w, '[');
    int64_t last = 0;
    for (size_t o = 0; o < m->nout; o++)
        if (m->out_first[o] >= 0 && kscope__pnode_is_device(f->node[m->out_first[o]])) {
            kscope__jw_int(w, (int64_t)o - last);
            last = (int64_t)o;
        }
    kscope__jw_close(w, ']');
}

/* Per-node work arrays: over the input nodes (own, vals, spans) and over
 * the output nodes (the three as written). */
typedef struct metric_arrays {
    double *own, *vals, *spans;
    double *out_own, *out_val, *out_width;
} metric_arrays;

/* One sparse array, "ki": [index gaps], "kv": [values], of the output
 * nodes where want(k) holds. */
static void write_sparse(kscope__jsonw *w, const char *ki, const char *kv, const double *v,
                         size_t n, const unsigned char *want)
{
    kscope__jw_key(w, ki);
    kscope__jw_open(w, '[');
    int64_t last = 0;
    for (size_t k = 0; k < n; k++)
        if (want[k]) {
            kscope__jw_int(w, (int64_t)k - last);
            last = (int64_t)k;
        }
    kscope__jw_close(w, ']');
    kscope__jw_key(w, kv);
    kscope__jw_open(w, '[');
    for (size_t k = 0; k < n; k++)
        if (want[k])
            number(w, v[k]);
    kscope__jw_close(w, ']');
}

/* The output nodes' values: a kept node's are its input node's; an
 * "(other)" node holds the totals of the subtrees merged into it (and
 * the sum of their own values). */
static void fold_values(const kscope__pflat *f, const tree_map *m, metric_arrays *a)
{
    for (size_t k = 0; k < m->nout; k++) {
        int32_t i = m->out_first[k];
        a->out_own[k] = i >= 0 ? a->own[i] : NAN;
        a->out_val[k] = i >= 0 ? a->vals[i] : NAN;
        a->out_width[k] = i >= 0 ? a->spans[i] : 0;
    }
    for (size_t i = 1; i < f->n; i++) {
        int32_t k = m->to[i];
        if (m->out_first[k] >= 0)
            continue;
        if (!isnan(a->own[i]))
            a->out_own[k] = isnan(a->out_own[k]) ? a->own[i] : a->out_own[k] + a->own[i];
        if (m->to[f->parent[i]] != k) { /* the top of a merged subtree */
            a->out_width[k] += a->spans[i];
            a->out_val[k] = a->out_width[k];
        }
    }
}

/* One metric of the file: values, own values, widths and its total. */
static void write_metric(kscope__report_out *o, const kscope__ptree *t, const kscope__pflat *f,
                         const tree_map *m, const char *name, metric_arrays *a, unsigned char *want)
{
    kscope__pflat_values(t, f, name, 0, a->own);
    int inc = kscope__metric_values(t, f, name, a->vals);
    kscope__metric_spans(f, a->vals, inc, a->spans);
    fold_values(f, m, a);
    kscope__jsonw *w = &o->w;
    kscope__jw_open(w, '{');
    kscope__jw_member_str(w, "name", name);
    kscope__jw_member_int(w, "inc", inc);
    kscope__jw_key(w, "total");
    number(w, f->n ? a->spans[0] : 0);
    for (size_t k = 0; k < m->nout; k++) /* a metric that rolls up: 0 is left out */
        want[k] = !isnan(a->out_val[k]) && (!inc || a->out_val[k] != 0 || !isnan(a->out_own[k]));
    write_sparse(w, "i", "v", a->out_val, m->nout, want);
    if (inc) {
        for (size_t k = 0; k < m->nout; k++)
            want[k] = !isnan(a->out_own[k]);
        write_sparse(w, "oi", "ov", a->out_own, m->nout, want);
    } else {
        for (size_t k = 0; k < m->nout; k++)
            want[k] = a->out_width[k] != (isnan(a->out_val[k]) ? 0 : a->out_val[k]);
        write_sparse(w, "wi", "wv", a->out_width, m->nout, want);
    }
    kscope__jw_close(w, '}');
    kscope__report_flush(o);
}

/* A rate `kscope view -m` computes (flop/s, byte/s), on kept nodes. */
static void write_rate(kscope__report_out *o, const kscope__ptree *t, const kscope__pflat *f,
                       const tree_map *m, const char *spec, metric_arrays *a, unsigned char *want)
{
    kscope__column col;
    char err[KSCOPE__READ_ERRLEN];
    if (kscope__column_compute(t, f, spec, &col, err, sizeof err) != 0)
        return; /* the file lacks what the rate needs */
    for (size_t k = 0; k < m->nout; k++) {
        int32_t i = m->out_first[k];
        a->out_val[k] = i >= 0 ? col.vals[i] : NAN;
        want[k] = !isnan(a->out_val[k]);
    }
    kscope__column_free(&col);
    kscope__jsonw *w = &o->w;
    kscope__jw_open(w, '{');
    kscope__jw_member_str(w, "name", spec);
    kscope__jw_member_int(w, "rate", 1);
    write_sparse(w, "i", "v", a->out_val, m->nout, want);
    kscope__jw_close(w, '}');
    kscope__report_flush(o);
}

static int write_metrics(kscope__report_out *o, const kscope__ptree *t, const kscope__pflat *f,
                         const tree_map *m, const kscope__metric_info *info, int nm)
{
    size_t n = f->n ? f->n : 1, nout = m->nout + 1;
    metric_arrays a = {malloc(n * sizeof(double)),    malloc(n * sizeof(double)),
                       malloc(n * sizeof(double)),    malloc(nout * sizeof(double)),
                       malloc(nout * sizeof(double)), malloc(nout * sizeof(double))};
    unsigned char *want = malloc(nout);
    int rc = a.own && a.vals && a.spans && a.out_own && a.out_val && a.out_width && want
                 ? 0
                 : KSCOPE_ENOMEM;
    if (rc == 0) {
        kscope__jw_key(&o->w, "metrics");
        kscope__jw_open(&o->w, '[');
        for (int k = 0; k < nm; k++)
            write_metric(o, t, f, m, info[k].name, &a, want);
        write_rate(o, t, f, m, "flop/s", &a, want);
        write_rate(o, t, f, m, "byte/s", &a, want);
        kscope__jw_close(&o->w, ']');
    }
    free(a.own), free(a.vals), free(a.spans);
    free(a.out_own), free(a.out_val), free(a.out_width), free(want);
    return rc;
}

/* The devices, with their peaks, and ROOT's string metrics (the command,
 * when a run recorded it) and dropped records. */
static void write_facts(kscope__jsonw *w, const kscope__ptree *t)
{
    kscope__jw_key(w, "devices");
    kscope__jw_open(w, '[');
    for (uint32_t i = 0; i < t->ndevices; i++) {
        const kscope__pdevice *d = &t->devices[i];
        kscope__jw_open(w, '{');
        kscope__jw_member_str(w, "type", d->type);
        kscope__jw_member_uint(w, "id", d->id);
        kscope__jw_member_str(w, "arch", d->arch ? d->arch : "");
        kscope__jw_member_int(w, "sms", d->num_sms);
        kscope__jw_key(w, "flops16");
        number(w, kscope__peak_flops(d, 16));
        kscope__jw_key(w, "bytes");
        number(w, kscope__peak_bytes(d));
        kscope__jw_close(w, '}');
    }
    kscope__jw_close(w, ']');
    kscope__jw_key(w, "facts");
    kscope__jw_open(w, '{');
    for (uint32_t i = 0; i < t->root->nmetrics; i++) {
        const kscope__pmetric *m = &t->root->metrics[i];
        if (m->type == KSCOPE__V_STRING) {
            kscope__jw_member_str(w, m->key, m->v.s);
        } else if (strcmp(m->key, "dropped_records") == 0) {
            kscope__jw_key(w, m->key);
            number(w, kscope__pmetric_number(m));
        }
    }
    kscope__jw_close(w, '}');
}

static void write_lod(kscope__jsonw *w, const kscope__pflat *f, const tree_map *m,
                      const kscope__report_limits *lim)
{
    if (!m->lod_metric)
        return;
    kscope__jw_key(w, "lod");
    kscope__jw_open(w, '{');
    kscope__jw_member_uint(w, "of", f->n);
    kscope__jw_member_uint(w, "kept", m->nout);
    kscope__jw_key(w, "share");
    number(w, lim->other_share);
    kscope__jw_member_str(w, "metric", m->lod_metric);
    kscope__jw_close(w, '}');
}

int kscope__report_tree(kscope__report_out *o, const kscope__ptree *t,
                        const kscope__report_limits *lim)
{
    kscope__pflat f; /* the frames `kscope view` shows */
    if (kscope__pflat_build_shown(t, &f) != 0)
        return KSCOPE_ENOMEM;
    kscope__metric_info *info = NULL;
    int nm = kscope__metric_list_flat(t, &f, &info);
    tree_map m = {0};
    int rc = nm < 0 ? nm : map_nodes(t, &f, lod_metric(info, nm), lim, &m);
    if (rc == 0) {
        kscope__jw_open(&o->w, '{');
        rc = write_names(&o->w, &f, &m);
    }
    if (rc == 0) {
        write_shape(&o->w, &f, &m);
        char dflt[256];
        if (kscope__default_metric_name(t, dflt, sizeof dflt) > 0) {
            kscope__jw_member_str(&o->w, "default", dflt);
        }
        kscope__report_flush(o);
        rc = write_metrics(o, t, &f, &m, info, nm);
    }
    if (rc == 0) {
        write_facts(&o->w, t);
        write_lod(&o->w, &f, &m, lim);
        kscope__jw_close(&o->w, '}');
    }
    free(m.to), free(m.out_up), free(m.out_first), free(m.other);
    free(info);
    kscope__pflat_free(&f);
    return rc;
}
