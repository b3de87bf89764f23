/*
 * merge.c - per-rank profile trees into one (merge-trace.c does traces).
 *
 * Calling contexts are matched by path through a hash keyed by (merged
 * parent, interned name); every numeric metric is summed, and for the time
 * metrics (time, wall_time, cpu_time, in any unit) each node also gets the
 * minimum, maximum and mean across ranks of the rank's value there
 * (inclusive where the metric rolls up; a rank without the node counts 0)
 * and the imbalance max/mean.
 */
#include "read/read.h"
#include "kscope.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STATS 8

typedef struct stat_acc {
    double min, max, sum;
    uint32_t seen;
} stat_acc;

typedef struct merger {
    kscope__ptree *r;
    kscope__pnode **nodes; /* merged nodes by index */
    int32_t *parent;
    size_t n, cap;
    int32_t *slot; /* hash: merged index or -1 */
    size_t hcap;
    const char *stat_key[MAX_STATS]; /* interned in r */
    stat_acc *stat[MAX_STATS];       /* per merged node */
    int nstats;
    /* this rank's names (interned there) and their copies in r: a small
     * pointer-keyed table, since kernel names repeat through a tree */
    kscope__table names; /* kscope__ptr_pair */
    /* this rank's metric keys and their interned copies in r */
    const char *kfrom[64], *kto[64];
    signed char kext[64]; /* -1 min_*, +1 max_*, 0 summed */
    int nkeys;
} merger;

static const kscope__table_kind names_kind = KSCOPE__PTR_TABLE_KIND(kscope__ptr_pair, 4096);

/* r's interned copy of a node name interned in the rank being merged. */
static const char *merged_name(merger *m, const char *name)
{
    const kscope__ptr_pair *met =
        kscope__table_find(&m->names, &names_kind, kscope__ptr_hash(name), name);
    if (met)
        return met->value;
    const char *k = kscope__ptree_intern_cstr(m->r, name);
    kscope__ptr_pair pair = {name, k};
    if (k && !kscope__table_add(&m->names, &names_kind, kscope__ptr_hash(name), &pair))
        return NULL;
    return k;
}

/* r's interned copy of a key interned in the rank being merged, and how
 * it merges: *ext is -1 for per-call minima ("min_time (ns)"), +1 for
 * maxima, 0 for sums. */
static const char *merged_key(merger *m, const char *key, int *ext)
{
    for (int i = 0; i < m->nkeys; i++)
        if (m->kfrom[i] == key) {
            *ext = m->kext[i];
            return m->kto[i];
        }
    /* sampled_fraction: the smallest of the ranks' (their est_ metrics
     * are each scaled by their own). */
    *ext = strncmp(key, "min_", 4) == 0 || strcmp(key, "sampled_fraction") == 0 ? -1
           : strncmp(key, "max_", 4) == 0                                       ? 1
                                                                                : 0;
    const char *k = kscope__ptree_intern_cstr(m->r, key);
    if (k && m->nkeys < 64) {
        m->kfrom[m->nkeys] = key;
        m->kext[m->nkeys] = (signed char)*ext;
        m->kto[m->nkeys++] = k;
    }
    return k;
}

static size_t hslot(const merger *m, int32_t parent, const char *name)
{
    size_t h = (((uintptr_t)name >> 4) * 0x9e3779b97f4a7c15ull) ^ ((size_t)parent * 2654435761u);
    size_t j = h & (m->hcap - 1);
    while (m->slot[j] >= 0) {
        int32_t k = m->slot[j];
        if (m->parent[k] == parent && m->nodes[k]->name == name)
            return j;
        j = (j + 1) & (m->hcap - 1);
    }
    return j;
}

static int grow_nodes(merger *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    kscope__pnode **nodes = realloc(m->nodes, cap * sizeof *nodes);
    if (!nodes)
        return -1;
    m->nodes = nodes;
    int32_t *parent = realloc(m->parent, cap * sizeof *parent);
    if (!parent)
        return -1;
    m->parent = parent;
    for (int s = 0; s < m->nstats; s++) {
        stat_acc *a = realloc(m->stat[s], cap * sizeof *a);
        if (!a)
            return -1;
        memset(a + m->cap, 0, (cap - m->cap) * sizeof *a);
        m->stat[s] = a;
    }
    m->cap = cap;
    /* rehash at half load */
    size_t hcap = m->hcap ? m->hcap : 2048;
    while (hcap < cap * 2)
        hcap *= 2;
    if (hcap != m->hcap) {
        int32_t *slot = malloc(hcap * sizeof *slot);
        if (!slot)
            return -1;
        memset(slot, -1, hcap * sizeof *slot);
        free(m->slot);
        m->slot = slot;
        m->hcap = hcap;
        for (size_t k = 1; k < m->n; k++)
            m->slot[hslot(m, m->parent[k], m->nodes[k]->name)] = (int32_t)k;
    }
    return 0;
}

/* The merged child of merged node `parent` named `name` (interned in r). */
static int32_t merged_child(merger *m, int32_t parent, const char *name)
{
    size_t j = hslot(m, parent, name);
    if (m->slot[j] >= 0)
        return m->slot[j];
    if (m->n == m->cap) {
        if (grow_nodes(m) < 0)
            return -1;
        j = hslot(m, parent, name);
    }
    kscope__pnode *n = kscope__pnode_add(m->r, m->nodes[parent], name);
    if (!n)
        return -1;
    int32_t k = (int32_t)m->n++;
    m->nodes[k] = n;
    m->parent[k] = parent;
    m->slot[j] = k;
    return k;
}

static int is_stat_metric(const char *key)
{
    static const char *const bases[] = {"time (", "wall_time (", "cpu_time ("};
    for (int i = 0; i < 3; i++)
        if (strncmp(key, bases[i], strlen(bases[i])) == 0)
            return 1;
    return 0;
}

static int stat_index(merger *m, const char *key)
{
    for (int s = 0; s < m->nstats; s++)
        if (m->stat_key[s] == key)
            return s;
    if (m->nstats == MAX_STATS)
        return -1;
    stat_acc *a = calloc(m->cap ? m->cap : 1, sizeof *a);
    if (!a)
        return -2;
    m->stat_key[m->nstats] = key;
    m->stat[m->nstats] = a;
    return m->nstats++;
}

/* The metric `key` (interned in r) of dst, appended (zeroed) when missing. */
static kscope__pmetric *slot_of(kscope__ptree *r, kscope__pnode *dst, const char *key, int *fresh)
{
    return kscope__pnode_metric_slot(r, dst, key, fresh);
}

/* Fold src into dst under `key` (interned in r): numbers add up, except
 * per-call extremes ("min_time (ns)", "max_time (ns)"), which keep the
 * extreme; strings and vectors are kept from the first rank that has them.
 * KSCOPE_EINVAL when the sum passes the largest double. */
static int add_metric(kscope__ptree *r, kscope__pnode *dst, const char *key, int ext,
                      const kscope__pmetric *src)
{
    int fresh;
    kscope__pmetric *m = slot_of(r, dst, key, &fresh);
    if (!m)
        return KSCOPE_ENOMEM;
    int numeric = src->type == KSCOPE__V_INT || src->type == KSCOPE__V_DOUBLE;
    if (fresh || !numeric || (m->type != KSCOPE__V_INT && m->type != KSCOPE__V_DOUBLE)) {
        if (!fresh)
            return 0;
        m->type = src->type;
        m->n = src->n;
        if (src->type == KSCOPE__V_STRING)
            m->v.s = kscope__ptree_intern_cstr(r, src->v.s);
        else if (src->type == KSCOPE__V_INTVEC || src->type == KSCOPE__V_DOUBLEVEC)
            return kscope__pmetric_put_vec(r, m, src->type,
                                           src->type == KSCOPE__V_INTVEC ? (const void *)src->v.iv
                                                                         : (const void *)src->v.dv,
                                           src->n);
        else
            m->v = src->v;
        return src->type == KSCOPE__V_STRING && !m->v.s ? KSCOPE_ENOMEM : 0;
    }
    int is_min = ext<0, is_max = ext> 0;
    if (m->type == KSCOPE__V_INT && src->type == KSCOPE__V_INT) {
        int64_t sum;
        if (is_min)
            m->v.i = src->v.i < m->v.i ? src->v.i : m->v.i;
        else if (is_max)
            m->v.i = src->v.i > m->v.i ? src->v.i : m->v.i;
        else if (!__builtin_add_overflow(m->v.i, src->v.i, &sum))
            m->v.i = sum;
        else {
            /* past int64: the sum goes on in floating point, never wrapped */
            m->type = KSCOPE__V_DOUBLE;
            m->v.d = (double)m->v.i + (double)src->v.i;
        }
        return 0;
    }
    double a = kscope__pmetric_number(m), b = kscope__pmetric_number(src);
    double v = is_min ? (b < a ? b : a) : is_max ? (b > a ? b : a) : a + b;
    if (!isfinite(v))
        return KSCOPE_EINVAL; /* past the largest double: refused, never written changed */
    m->type = KSCOPE__V_DOUBLE;
    m->v.d = v;
    return 0;
}

/* What merging needs from one rank that depends on that rank alone (so it
 * can be computed on the thread that parsed it). */
struct kscope__merge_prep {
    const kscope__ptree *t;
    kscope__pflat f;
    int nstats;
    const char *stat_name[MAX_STATS]; /* interned in t */
    double *stat_vals[MAX_STATS];     /* per node of f; NaN: none */
};

void kscope__merge_prep_free(kscope__merge_prep *p)
{
    if (!p)
        return;
    kscope__pflat_free(&p->f);
    for (int s = 0; s < p->nstats; s++)
        free(p->stat_vals[s]);
    free(p);
}

kscope__merge_prep *kscope__merge_prepare(const kscope__ptree *t)
{
    kscope__merge_prep *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->t = t;
    kscope__metric_info *list = NULL;
    int nl = -1;
    if (kscope__pflat_build(t, &p->f) == 0)
        nl = kscope__metric_list_flat(t, &p->f, &list);
    for (int l = 0; l < nl && p->nstats < MAX_STATS; l++) {
        if (!is_stat_metric(list[l].name))
            continue;
        double *v = malloc((p->f.n ? p->f.n : 1) * sizeof *v);
        if (!v) {
            nl = -1;
            break;
        }
        /* the rank's value at each node: inclusive where the metric rolls up */
        kscope__metric_values(t, &p->f, list[l].name, v);
        p->stat_name[p->nstats] = list[l].name;
        p->stat_vals[p->nstats++] = v;
    }
    free(list);
    if (nl < 0) {
        kscope__merge_prep_free(p);
        return NULL;
    }
    return p;
}

static int merge_devices(merger *m, const kscope__ptree *t)
{
    for (uint32_t i = 0; i < t->ninclusive; i++)
        if (kscope__ptree_add_inclusive(m->r, t->inclusive[i]) < 0)
            return KSCOPE_ENOMEM;
    for (uint32_t i = 0; i < t->ndevices; i++) {
        const kscope__pdevice *d = &t->devices[i];
        uint32_t before = m->r->ndevices;
        kscope__pdevice *nd = kscope__ptree_device(m->r, d->type, d->id);
        if (!nd)
            return KSCOPE_ENOMEM;
        if (m->r->ndevices != before) {
            nd->arch = kscope__ptree_intern_cstr(m->r, d->arch ? d->arch : "");
            nd->num_sms = d->num_sms;
            nd->clock_rate = d->clock_rate;
            nd->memory_clock_rate = d->memory_clock_rate;
            nd->bus_width = d->bus_width;
        }
    }
    return 0;
}

/* A sum past the largest double: refused, naming the metric and node. */
static int too_large(char *err, size_t errlen, const char *key, const char *node)
{
    char k[128], n[128];
    return kscope__read_fail(err, errlen, KSCOPE_EINVAL,
                             "metric '%s' of '%s' sums past the largest number (%.4g); not merged",
                             kscope__escape(key, k, sizeof k), kscope__escape(node, n, sizeof n),
                             DBL_MAX);
}

static int merge_one(merger *m, const kscope__merge_prep *p, char *err, size_t errlen)
{
    const kscope__pflat *f = &p->f;
    int32_t *map = malloc((f->n ? f->n : 1) * sizeof *map);
    m->nkeys = 0; /* keys and names are per rank tree */
    kscope__table_clear(&m->names, &names_kind);
    int rc = map ? 0 : KSCOPE_ENOMEM;
    for (size_t i = 0; rc == 0 && i < f->n; i++) {
        if (i == 0) {
            map[0] = 0;
        } else {
            const char *name = merged_name(m, f->node[i]->name);
            map[i] = name ? merged_child(m, map[f->parent[i]], name) : -1;
            if (map[i] < 0) {
                rc = KSCOPE_ENOMEM;
                break;
            }
        }
        const kscope__pnode *src = f->node[i];
        for (uint32_t k = 0; rc == 0 && k < src->nmetrics; k++) {
            int ext;
            const char *key = merged_key(m, src->metrics[k].key, &ext);
            rc = key ? add_metric(m->r, m->nodes[map[i]], key, ext, &src->metrics[k])
                     : KSCOPE_ENOMEM;
            if (rc == KSCOPE_EINVAL)
                rc = too_large(err, errlen, src->metrics[k].key, src->name);
        }
    }
    for (int ps = 0; rc == 0 && ps < p->nstats; ps++) {
        const char *key = kscope__ptree_intern_cstr(m->r, p->stat_name[ps]);
        int s = key ? stat_index(m, key) : -2;
        if (s == -1)
            continue; /* more time metrics than MAX_STATS: the rest get none */
        if (s < 0) {
            rc = KSCOPE_ENOMEM;
            break;
        }
        const double *vals = p->stat_vals[ps];
        for (size_t i = 0; rc == 0 && i < f->n; i++) {
            if (isnan(vals[i]))
                continue;
            stat_acc *a = &m->stat[s][map[i]];
            if (!isfinite(vals[i]) || !isfinite(a->sum + vals[i])) {
                rc = too_large(err, errlen, p->stat_name[ps], f->node[i]->name);
                break;
            }
            if (a->seen == 0 || vals[i] < a->min)
                a->min = vals[i];
            if (a->seen == 0 || vals[i] > a->max)
                a->max = vals[i];
            a->sum += vals[i];
            a->seen++;
        }
    }
    if (rc == 0)
        rc = merge_devices(m, p->t);
    free(map);
    if (rc == KSCOPE_ENOMEM)
        return kscope__read_fail(err, errlen, rc, "out of memory");
    return rc; /* too_large said why */
}

/* "time (ns)" + "_rank_min" -> "time_rank_min (ns)" (no unit: "time_imbalance") */
static void stat_name(const char *key, const char *suffix, int with_unit, char *buf, size_t size)
{
    const char *paren = strstr(key, " (");
    size_t bl = paren ? (size_t)(paren - key) : strlen(key);
    snprintf(buf, size, "%.*s%s%s", (int)bl, key, suffix, with_unit && paren ? paren : "");
}

static int write_stats(merger *m, size_t nranks)
{
    for (int s = 0; s < m->nstats; s++) {
        char kmin[128], kmax[128], kmean[128], kimb[128];
        stat_name(m->stat_key[s], "_rank_min", 1, kmin, sizeof kmin);
        stat_name(m->stat_key[s], "_rank_max", 1, kmax, sizeof kmax);
        stat_name(m->stat_key[s], "_rank_mean", 1, kmean, sizeof kmean);
        stat_name(m->stat_key[s], "_imbalance", 0, kimb, sizeof kimb);
        for (size_t i = 0; i < m->n; i++) {
            const stat_acc *a = &m->stat[s][i];
            if (a->seen == 0)
                continue;
            double mn = a->seen < nranks && a->min > 0 ? 0 : a->min;
            double mean = a->sum / (double)nranks;
            kscope__pnode *n = m->nodes[i];
            /* In ROOT a 0 would read back as "this metric is inclusive"
             * (that is how .hatchet marks them), so ROOT gets no zeros. */
            int root = i == 0, rc = 0;
            if (!(root && mn == 0))
                rc = kscope__pnode_set_double(m->r, n, kmin, mn);
            if (rc == 0 && !(root && a->max == 0))
                rc = kscope__pnode_set_double(m->r, n, kmax, a->max);
            if (rc == 0 && !(root && mean == 0))
                rc = kscope__pnode_set_double(m->r, n, kmean, mean);
            if (rc == 0 && mean > 0)
                rc = kscope__pnode_set_double(m->r, n, kimb, a->max / mean);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

struct kscope__merger {
    merger m;
    size_t nranks;
};

kscope__merger *kscope__merger_new(void)
{
    kscope__merger *mg = calloc(1, sizeof *mg);
    if (!mg)
        return NULL;
    merger *m = &mg->m;
    m->r = kscope__ptree_new();
    if (!m->r || grow_nodes(m) < 0) {
        kscope__merger_free(mg);
        return NULL;
    }
    m->nodes[0] = m->r->root;
    m->parent[0] = -1;
    m->n = 1;
    return mg;
}

int kscope__merger_add_prepared(kscope__merger *mg, const kscope__merge_prep *p, char *err,
                                size_t errlen)
{
    int rc = merge_one(&mg->m, p, err, errlen);
    if (rc == 0)
        mg->nranks++;
    return rc;
}

int kscope__merger_add(kscope__merger *mg, const kscope__ptree *rank, char *err, size_t errlen)
{
    kscope__merge_prep *p = kscope__merge_prepare(rank);
    if (!p)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = kscope__merger_add_prepared(mg, p, err, errlen);
    kscope__merge_prep_free(p);
    return rc;
}

int kscope__merger_finish(kscope__merger *mg, kscope__ptree **out, char *err, size_t errlen)
{
    *out = NULL;
    if (write_stats(&mg->m, mg->nranks) < 0)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    *out = mg->m.r;
    mg->m.r = NULL;
    return 0;
}

void kscope__merger_free(kscope__merger *mg)
{
    if (!mg)
        return;
    merger *m = &mg->m;
    kscope__ptree_free(m->r);
    free(m->nodes);
    free(m->parent);
    free(m->slot);
    kscope__table_free(&m->names);
    for (int s = 0; s < m->nstats; s++)
        free(m->stat[s]);
    free(mg);
}

int kscope__merge_trees(kscope__ptree *const *ranks, size_t nranks, kscope__ptree **out, char *err,
                        size_t errlen)
{
    *out = NULL;
    kscope__merger *mg = kscope__merger_new();
    if (!mg)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nranks; i++)
        rc = kscope__merger_add(mg, ranks[i], err, errlen);
    if (rc == 0)
        rc = kscope__merger_finish(mg, out, err, errlen);
    kscope__merger_free(mg);
    return rc;
}
