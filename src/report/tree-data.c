/*
 * tree-data.c - a calling-context tree as the page's compact JSON:
 *
 *   {"strings": [...], "name": [string index per node],
 *    "up": [node index minus its parent's], "device": [gaps between the
 *    indices of GPU activities], "metrics": [{"name", "inc", "i": [index
 *    gaps], "v": [own values]}], "devices": [...], "facts": {...},
 *    "lod": {"of", "kept", "share", "metric"} when aggregated}
 *
 * Parents come before children, so the page rolls values up in one
 * backward pass. Values are the nodes' own (as stored); sparse metrics
 * cost only the nodes that have them. Past lim->max_nodes, nodes whose
 * subtree holds less than lim->other_share of the total merge into one
 * "(other)" node under their nearest kept ancestor.
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
    if (v == floor(v) && fabs(v) < 9e15)
        snprintf(buf, sizeof buf, "%.0f", v);
    else
        snprintf(buf, sizeof buf, "%.9g", v);
    kscope__jw_literal(w, buf);
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
    double *incl = malloc(f->n * sizeof *incl);
    if (!m->to || !m->out_up || !m->out_first || !m->other || !incl) {
        free(incl);
        return KSCOPE_ENOMEM;
    }
    int aggregate = f->n > lim->max_nodes && metric;
    if (aggregate)
        kscope__pflat_values(t, f, metric, 1, incl);
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

/* One metric: own values summed per output node, written sparsely. */
static int write_metric(kscope__report_out *o, const kscope__ptree *t, const kscope__pflat *f,
                        const tree_map *m, const kscope__metric_info *info, double *own,
                        double *sum)
{
    kscope__pflat_values(t, f, info->name, 0, own);
    for (size_t k = 0; k < m->nout; k++)
        sum[k] = NAN;
    for (size_t i = 0; i < f->n; i++)
        if (!isnan(own[i]))
            sum[m->to[i]] = isnan(sum[m->to[i]]) ? own[i] : sum[m->to[i]] + own[i];
    kscope__jsonw *w = &o->w;
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "name");
    kscope__jw_str(w, info->name);
    kscope__jw_key(w, "inc");
    kscope__jw_int(w, info->inclusive);
    kscope__jw_key(w, "i");
    kscope__jw_open(w, '[');
    int64_t last = 0;
    for (size_t k = 0; k < m->nout; k++)
        if (!isnan(sum[k])) {
            kscope__jw_int(w, (int64_t)k - last);
            last = (int64_t)k;
        }
    kscope__jw_close(w, ']');
    kscope__jw_key(w, "v");
    kscope__jw_open(w, '[');
    for (size_t k = 0; k < m->nout; k++)
        if (!isnan(sum[k]))
            number(w, sum[k]);
    kscope__jw_close(w, ']');
    kscope__jw_close(w, '}');
    kscope__report_flush(o);
    return 0;
}

static int write_metrics(kscope__report_out *o, const kscope__ptree *t, const kscope__pflat *f,
                         const tree_map *m, const kscope__metric_info *info, int nm)
{
    double *own = malloc(f->n * sizeof *own), *sum = malloc((m->nout + 1) * sizeof *sum);
    if (!own || !sum) {
        free(own), free(sum);
        return KSCOPE_ENOMEM;
    }
    kscope__jw_key(&o->w, "metrics");
    kscope__jw_open(&o->w, '[');
    for (int k = 0; k < nm; k++)
        write_metric(o, t, f, m, &info[k], own, sum);
    kscope__jw_close(&o->w, ']');
    free(own), free(sum);
    return 0;
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
        kscope__jw_key(w, "type");
        kscope__jw_str(w, d->type);
        kscope__jw_key(w, "id");
        kscope__jw_uint(w, d->id);
        kscope__jw_key(w, "arch");
        kscope__jw_str(w, d->arch ? d->arch : "");
        kscope__jw_key(w, "sms");
        kscope__jw_int(w, d->num_sms);
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
            kscope__jw_key(w, m->key);
            kscope__jw_str(w, m->v.s);
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
    kscope__jw_key(w, "of");
    kscope__jw_uint(w, f->n);
    kscope__jw_key(w, "kept");
    kscope__jw_uint(w, m->nout);
    kscope__jw_key(w, "share");
    number(w, lim->other_share);
    kscope__jw_key(w, "metric");
    kscope__jw_str(w, m->lod_metric);
    kscope__jw_close(w, '}');
}

int kscope__report_tree(kscope__report_out *o, const kscope__ptree *t,
                        const kscope__report_limits *lim)
{
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) != 0)
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
