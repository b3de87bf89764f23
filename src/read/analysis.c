/*
 * analysis.c - what the reading commands compute from a tree: the preorder
 * flattening, inclusive roll-up (stored values are exclusive per node, as in
 * hatchet), the list of metrics a file holds, and the derived metrics of
 * proton-viewer (time units, averages, FLOP/s, byte/s, util, percentages)
 * plus kscope's host metrics (wall_time, calls).
 */
#include "gpu/devices/devices.h"
#include "util/util.h"
#include "read/read.h"
#include "kscope.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ flatten */

int kscope__pflat_build(const kscope__ptree *t, kscope__pflat *f)
{
    memset(f, 0, sizeof *f);
    size_t cap = 1024, n = 0, scap = 256, sn = 0;
    f->node = malloc(cap * sizeof *f->node);
    f->parent = malloc(cap * sizeof *f->parent);
    f->depth = malloc(cap * sizeof *f->depth);
    /* explicit stack of (node, parent index, depth) still to visit */
    struct item {
        kscope__pnode *n;
        int32_t parent;
        uint32_t depth;
    } *stack = malloc(scap * sizeof *stack);
    if (!f->node || !f->parent || !f->depth || !stack)
        goto nomem;
    stack[sn++] = (struct item){t->root, -1, 0};
    while (sn) {
        struct item it = stack[--sn];
        if (n == cap) {
            cap *= 2;
            kscope__pnode **a = realloc(f->node, cap * sizeof *a);
            if (a)
                f->node = a;
            int32_t *b = realloc(f->parent, cap * sizeof *b);
            if (b)
                f->parent = b;
            uint32_t *c = realloc(f->depth, cap * sizeof *c);
            if (c)
                f->depth = c;
            if (!a || !b || !c)
                goto nomem;
        }
        f->node[n] = it.n;
        f->parent[n] = it.parent;
        f->depth[n] = it.depth;
        int32_t me = (int32_t)n++;
        if (sn + it.n->nchildren > scap) {
            while (sn + it.n->nchildren > scap)
                scap *= 2;
            void *s = realloc(stack, scap * sizeof *stack);
            if (!s)
                goto nomem;
            stack = s;
        }
        for (uint32_t i = it.n->nchildren; i-- > 0;)
            stack[sn++] = (struct item){it.n->children[i], me, it.depth + 1};
    }
    free(stack);
    f->n = n;
    return 0;
nomem:
    free(stack);
    kscope__pflat_free(f);
    return KSCOPE_ENOMEM;
}

void kscope__pflat_free(kscope__pflat *f)
{
    free(f->node);
    free(f->parent);
    free(f->depth);
    memset(f, 0, sizeof *f);
}

/* The tree's interned pointer for a key, or NULL when no node can have it. */
static const char *lookup_key(const kscope__ptree *t, const char *key)
{
    /* Interning into a const tree only ever adds a string to its table. */
    return kscope__ptree_intern_cstr((kscope__ptree *)t, key);
}

void kscope__pflat_values(const kscope__ptree *t, const kscope__pflat *f, const char *key,
                          int rollup, double *vals)
{
    const char *k = lookup_key(t, key);
    for (size_t i = 0; i < f->n; i++) {
        const kscope__pmetric *m = k ? kscope__pnode_metric(f->node[i], k) : NULL;
        vals[i] = m && m->type != KSCOPE__V_STRING ? kscope__pmetric_number(m) : rollup ? 0.0 : NAN;
    }
    if (rollup)
        for (size_t i = f->n; i-- > 1;)
            vals[f->parent[i]] += vals[i];
}

int kscope__pnode_is_device(const kscope__pnode *n)
{
    for (uint32_t i = 0; i < n->nmetrics; i++) {
        const char *k = n->metrics[i].key;
        if (k[0] == 'd' && strcmp(k, "device_id") == 0)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------- metric lists */

int kscope__metric_list(const kscope__ptree *t, kscope__metric_info **out)
{
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) < 0)
        return KSCOPE_ENOMEM;
    int n = kscope__metric_list_flat(t, &f, out);
    kscope__pflat_free(&f);
    return n;
}

int kscope__device_scope_metric(const kscope__ptree *t, char *buf, size_t size)
{
    static const char *const averages[] = {"device_avg_time (ns)", "device_avg_cycles"};
    kscope__metric_info *list;
    int n = kscope__metric_list(t, &list);
    if (n < 0)
        return n;
    int found = 0;
    for (size_t a = 0; a < 2 && !found; a++)
        for (int i = 0; i < n && !found; i++)
            if (strcmp(list[i].name, averages[a]) == 0) {
                snprintf(buf, size, "%s", a == 0 ? "device_avg_time" : "device_avg_cycles");
                found = 1;
            }
    free(list);
    return found;
}

/* The metric list being built, with a hash set of its names (interned
 * pointers) so a tree naming many metrics is listed in linear time. */
typedef struct mlist {
    kscope__metric_info *list;
    size_t n, cap;
    const char **set;
    size_t setcap;
} mlist;

static size_t key_slot(const mlist *l, const char *k)
{
    uint64_t x = (uintptr_t)k * 0x9e3779b97f4a7c15ULL;
    size_t j = (size_t)(x >> 32) & (l->setcap - 1);
    while (l->set[j] && l->set[j] != k)
        j = (j + 1) & (l->setcap - 1);
    return j;
}

/* Add name k unless listed: 0, or -1 on out of memory. */
static int mlist_add(mlist *l, const char *k, int inclusive)
{
    if ((l->n + 1) * 2 > l->setcap) {
        mlist grown = *l;
        grown.setcap = l->setcap ? l->setcap * 2 : 64;
        grown.set = calloc(grown.setcap, sizeof *grown.set);
        if (!grown.set)
            return -1;
        for (size_t i = 0; i < l->n; i++)
            grown.set[key_slot(&grown, l->list[i].name)] = l->list[i].name;
        free(l->set);
        *l = grown;
    }
    size_t j = key_slot(l, k);
    if (l->set[j])
        return 0;
    if (l->n == l->cap && KSCOPE__ROOM(l->list, l->cap, l->n + 1, 16) != 0)
        return -1;
    l->set[j] = k;
    l->list[l->n++] = (kscope__metric_info){k, inclusive};
    return 0;
}

int kscope__metric_list_flat(const kscope__ptree *t, const kscope__pflat *fl,
                             kscope__metric_info **out)
{
    mlist l = {0};
    int rc = 0;
    for (uint32_t i = 0; i < t->ninclusive && rc == 0; i++)
        rc = mlist_add(&l, t->inclusive[i], 1);
    for (size_t i = 0; i < fl->n && rc == 0; i++) {
        const kscope__pnode *node = fl->node[i];
        for (uint32_t j = 0; j < node->nmetrics && rc == 0; j++)
            if (node->metrics[j].type != KSCOPE__V_STRING)
                rc = mlist_add(&l, node->metrics[j].key, 0); /* keys are interned */
    }
    free(l.set);
    if (rc < 0 || (!l.list && !(l.list = malloc(sizeof *l.list)))) {
        free(l.list);
        return KSCOPE_ENOMEM;
    }
    *out = l.list;
    return (int)l.n;
}

/* ---------------------------------------------------------- devices */

double kscope__peak_flops(const kscope__pdevice *d, int width)
{
    return kscope__device_peak_flops(d->type, d->arch, d->num_sms, d->clock_rate, width);
}

double kscope__peak_bytes(const kscope__pdevice *d)
{
    /* memory_clock_rate in kHz, bus_width in bits, double data rate */
    return 2.0 * (double)d->bus_width * (double)d->memory_clock_rate * 1e3 / 8.0;
}

/* ---------------------------------------------------------- columns */

typedef struct found {
    const char *name;
    int inclusive;
} found;

/* "time (ns)" -> "time" (lower case, unit and spaces dropped). */
static void no_unit(const char *raw, char *buf, size_t size)
{
    size_t i = 0;
    for (; raw[i] && raw[i] != '(' && i + 1 < size; i++)
        buf[i] = (char)tolower((unsigned char)raw[i]);
    while (i && buf[i - 1] == ' ')
        i--;
    buf[i] = '\0';
}

static int same_ci(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* A metric of the file named `want` as stored (with or without its unit). */
static int match_stored(const kscope__metric_info *list, int n, const char *want, found *out)
{
    char base[128];
    for (int i = 0; i < n; i++) {
        no_unit(list[i].name, base, sizeof base);
        if (same_ci(list[i].name, want) || same_ci(base, want)) {
            out->name = list[i].name;
            out->inclusive = list[i].inclusive;
            return 1;
        }
    }
    return 0;
}

/* The length of a metric's name before the kind it ends with as written
 * in code, " (inc)", " (exc)" or " (pty)", which the recorder and Proton
 * store the name without; 0 when it has none. */
static size_t before_kind(const char *want)
{
    static const char *const kinds[3] = {"(inc)", "(exc)", "(pty)"};
    size_t l = strlen(want);
    for (int k = 0; k < 3; k++) {
        if (l <= 5 || !same_ci(want + l - 5, kinds[k]))
            continue;
        l -= 5;
        while (l && want[l - 1] == ' ')
            l--;
        return l;
    }
    return 0;
}

/* A metric of the file named `want`, as stored or as written in code
 * (NAME (inc|exc|pty), units kept as the file has them). What rolls up is
 * the file's to say (Proton's files keep a (pty) metric like step_idx
 * among the summed ones), so the kind written is not checked against it. */
static int match_metric(const kscope__metric_info *list, int n, const char *want, found *out)
{
    if (match_stored(list, n, want, out))
        return 1;
    size_t len = before_kind(want);
    char base[128];
    if (len == 0 || len >= sizeof base)
        return 0;
    memcpy(base, want, len);
    base[len] = '\0';
    return match_stored(list, n, base, out);
}

/* Seconds per unit named inside a metric's parentheses; 0 if none. */
static double unit_seconds(const char *unit)
{
    if (strcmp(unit, "s") == 0)
        return 1;
    if (strcmp(unit, "ms") == 0)
        return 1e-3;
    if (strcmp(unit, "us") == 0)
        return 1e-6;
    if (strcmp(unit, "ns") == 0)
        return 1e-9;
    return 0;
}

static double metric_unit_seconds(const char *name)
{
    const char *o = strchr(name, '(');
    const char *c = o ? strchr(o, ')') : NULL;
    if (!o || !c || c - o > 8)
        return 0;
    char u[8];
    memcpy(u, o + 1, (size_t)(c - o - 1));
    u[c - o - 1] = '\0';
    return unit_seconds(u);
}

typedef struct ctx {
    const kscope__ptree *t;
    const kscope__pflat *f;
    kscope__metric_info *list;
    int nlist;
    char *err;
    size_t errlen;
    int missing; /* a metric asked for is not in the file */
} ctx;

/* Values of a named metric; rollup when it is inclusive. NULL if absent
 * (c->missing set when no metric has the name). */
static double *values_of(ctx *c, const char *want, found *fo)
{
    if (!match_metric(c->list, c->nlist, want, fo)) {
        snprintf(c->err, c->errlen,
                 "metric '%s' is not in this file (see `kscope view -l` for its metrics)", want);
        c->missing = 1;
        return NULL;
    }
    double *v = malloc((c->f->n ? c->f->n : 1) * sizeof *v);
    if (!v) {
        snprintf(c->err, c->errlen, "out of memory");
        return NULL;
    }
    fo->inclusive = kscope__metric_values(c->t, c->f, fo->name, v);
    return v;
}

/* A time metric in seconds (time, cpu_time, wall_time). */
static double *seconds_of(ctx *c, const char *want, found *fo)
{
    double *v = values_of(c, want, fo);
    if (!v)
        return NULL;
    double s = metric_unit_seconds(fo->name);
    if (s == 0) {
        snprintf(c->err, c->errlen, "metric '%s' has no time unit (s, ms, us or ns)", fo->name);
        free(v);
        return NULL;
    }
    for (size_t i = 0; i < c->f->n; i++)
        v[i] *= s;
    return v;
}

static int all_int(ctx *c, const char *key)
{
    const char *k = lookup_key(c->t, key);
    for (size_t i = 0; i < c->f->n; i++) {
        const kscope__pmetric *m = kscope__pnode_metric(c->f->node[i], k);
        if (m && m->type != KSCOPE__V_INT && m->type != KSCOPE__V_INTVEC)
            return 0;
    }
    return 1;
}

/* time/ms, avg_cpu_time/us, wall_time/s ... ; 1 handled, 0 not this kind, -1 error. */
static int time_column(ctx *c, const char *spec, kscope__column *col)
{
    static const char *const bases[] = {"time",      "avg_time",      "cpu_time", "avg_cpu_time",
                                        "wall_time", "avg_wall_time", "est_time"};
    const char *slash = strchr(spec, '/');
    if (!slash)
        return 0;
    size_t bl = (size_t)(slash - spec);
    int b = -1;
    for (int i = 0; i < 7; i++)
        if (strlen(bases[i]) == bl && strncmp(spec, bases[i], bl) == 0)
            b = i;
    double per = unit_seconds(slash + 1);
    if (b < 0 || per == 0)
        return 0;
    int avg = b % 2 == 1;
    const char *raw = b < 2 ? "time" : b < 4 ? "cpu_time" : b < 6 ? "wall_time" : "est_time";
    found fo;
    double *v = seconds_of(c, raw, &fo);
    if (!v)
        return -1;
    col->inclusive = fo.inclusive && !avg;
    if (avg) {
        found fc, fk;
        double *count = NULL, *calls = NULL;
        int nomem = 0; /* values_of said so in c->err */
        if (match_metric(c->list, c->nlist, "count", &fc))
            nomem |= !(count = values_of(c, "count", &fc));
        if (match_metric(c->list, c->nlist, "calls", &fk))
            nomem |= !(calls = values_of(c, "calls", &fk));
        if (nomem || (!count && !calls)) {
            if (!nomem)
                snprintf(c->err, c->errlen,
                         "%s needs a 'count' or 'calls' metric, which this file lacks", spec);
            free(count);
            free(calls);
            free(v);
            return -1;
        }
        for (size_t i = 0; i < c->f->n; i++) {
            /* kernels count launches; host scopes count calls */
            double d = b < 2 && count && count[i] > 0 ? count[i]
                       : calls && calls[i] > 0        ? calls[i]
                       : count && count[i] > 0        ? count[i]
                                                      : NAN;
            v[i] = v[i] / d;
        }
        free(count);
        free(calls);
    }
    for (size_t i = 0; i < c->f->n; i++)
        v[i] /= per;
    col->vals = v;
    return 1;
}

/* [g|t]flop[8|16|32|64]/s and [g|t]byte/s. */
static int rate_column(ctx *c, const char *spec, kscope__column *col)
{
    double scale = 1;
    const char *p = spec;
    if (*p == 'g' || *p == 't') {
        scale = *p == 'g' ? 1e9 : 1e12;
        p++;
    }
    char numer[16];
    int width = 0;
    if (strcmp(p, "byte/s") == 0) {
        snprintf(numer, sizeof numer, "bytes");
    } else if (strncmp(p, "flop", 4) == 0) {
        p += 4;
        if (strcmp(p, "/s") != 0) {
            char *end;
            long w = strtol(p, &end, 10);
            if (strcmp(end, "/s") != 0 || (w != 8 && w != 16 && w != 32 && w != 64))
                return 0;
            width = (int)w;
        }
        snprintf(numer, sizeof numer, width ? "flops%d" : "flops", width);
    } else {
        return 0;
    }
    found ft, fn;
    double *secs = seconds_of(c, "time", &ft);
    if (!secs)
        return -1;
    double *num = NULL;
    if (match_metric(c->list, c->nlist, numer, &fn)) {
        num = values_of(c, numer, &fn);
    } else if (!width && strcmp(numer, "flops") == 0) {
        /* no plain "flops": all widths together */
        num = calloc(c->f->n ? c->f->n : 1, sizeof *num);
        int any = 0;
        for (int w = 8; w <= 64 && num; w *= 2) {
            char name[24];
            snprintf(name, sizeof name, "flops%d", w);
            if (!match_metric(c->list, c->nlist, name, &fn))
                continue;
            double *part = values_of(c, name, &fn);
            if (!part) {
                free(num);
                num = NULL;
                break;
            }
            for (size_t i = 0; i < c->f->n; i++)
                num[i] += isnan(part[i]) ? 0 : part[i];
            free(part);
            any = 1;
        }
        if (num && !any) {
            free(num);
            num = NULL;
            snprintf(c->err, c->errlen,
                     "%s needs flops metrics (flops, flops8/16/32/64), which "
                     "this file lacks",
                     spec);
        }
    } else {
        snprintf(c->err, c->errlen, "%s needs a '%s' metric, which this file lacks", spec, numer);
    }
    if (!num) {
        free(secs);
        return -1;
    }
    for (size_t i = 0; i < c->f->n; i++)
        num[i] = num[i] / secs[i] / scale;
    free(secs);
    col->vals = num;
    col->inclusive = 0;
    return 1;
}

static const kscope__pdevice *node_device(const kscope__ptree *t, const kscope__pnode *n)
{
    const char *type = kscope__device_default_type();
    long long did = -1;
    for (uint32_t i = 0; i < n->nmetrics; i++) {
        const kscope__pmetric *m = &n->metrics[i];
        if (strcmp(m->key, "device_id") == 0) {
            char *end;
            if (m->type == KSCOPE__V_STRING) {
                did = strtoll(m->v.s, &end, 10);
                if (*end || end == m->v.s)
                    did = -1;
            } else if (m->type == KSCOPE__V_INT) {
                did = m->v.i;
            }
        } else if (strcmp(m->key, "device_type") == 0 && m->type == KSCOPE__V_STRING) {
            type = m->v.s;
        }
    }
    for (uint32_t i = 0; did >= 0 && i < t->ndevices; i++)
        if (strcmp(t->devices[i].type, type) == 0 && t->devices[i].id == (uint64_t)did)
            return &t->devices[i];
    return NULL;
}

/* util = max(sum_w flops_w / peak_w, bytes / peak bandwidth) / time, on GPU
 * activities only (as proton-viewer: other frames have none). */
static int util_column(ctx *c, kscope__column *col)
{
    found ft;
    double *secs = seconds_of(c, "time", &ft);
    if (!secs)
        return -1;
    const kscope__ptree *t = c->t;
    const char *kb = lookup_key(t, "bytes");
    const char *kf[4];
    for (int w = 0; w < 4; w++) {
        char name[24];
        snprintf(name, sizeof name, "flops%d", 8 << w);
        kf[w] = lookup_key(t, name);
    }
    for (size_t i = 0; i < c->f->n; i++) {
        const kscope__pnode *n = c->f->node[i];
        const kscope__pdevice *d = kscope__pnode_is_device(n) ? node_device(t, n) : NULL;
        if (!d) {
            secs[i] = NAN;
            continue;
        }
        double tf = 0;
        for (int w = 0; w < 4; w++) {
            double peak = kscope__peak_flops(d, 8 << w);
            const kscope__pmetric *m = kf[w] ? kscope__pnode_metric(n, kf[w]) : NULL;
            if (m && peak > 0)
                tf += kscope__pmetric_number(m) / peak;
        }
        const kscope__pmetric *mb = kb ? kscope__pnode_metric(n, kb) : NULL;
        double bw = kscope__peak_bytes(d);
        double tb = mb && bw > 0 ? kscope__pmetric_number(mb) / bw : 0;
        secs[i] = (tf > tb ? tf : tb) / secs[i];
    }
    col->vals = secs;
    col->inclusive = 0;
    return 1;
}

static int percent_column(ctx *c, const char *name, kscope__column *col)
{
    found fo;
    double *v = values_of(c, name, &fo);
    if (!v)
        return -1;
    double total = kscope__metric_total(c->f, v, fo.inclusive);
    for (size_t i = 0; i < c->f->n; i++)
        v[i] = total != 0 ? v[i] / total * 100.0 : NAN;
    col->vals = v;
    col->inclusive = fo.inclusive;
    return 1;
}

/* A column with no value on any node: what any metric of a profile that
 * holds none is, so an empty profile reads as empty rather than as bad. */
static int empty_column(const kscope__pflat *f, kscope__column *col, char *err, size_t errlen)
{
    col->vals = malloc((f->n ? f->n : 1) * sizeof *col->vals);
    if (!col->vals) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    for (size_t i = 0; i < f->n; i++)
        col->vals[i] = NAN;
    return 0;
}

int kscope__column_compute(const kscope__ptree *t, const kscope__pflat *f, const char *spec,
                           kscope__column *col, char *err, size_t errlen)
{
    memset(col, 0, sizeof *col);
    char s[96];
    size_t l = strlen(spec);
    while (l && isspace((unsigned char)spec[l - 1]))
        l--;
    while (l && isspace((unsigned char)*spec)) {
        spec++;
        l--;
    }
    if (l == 0 || l >= sizeof s) {
        snprintf(err, errlen, "metric name '%.40s' is %s", spec, l ? "too long" : "empty");
        return KSCOPE_EINVAL;
    }
    for (size_t i = 0; i < l; i++)
        s[i] = (char)tolower((unsigned char)spec[i]);
    s[l] = '\0';
    kscope__escape(s, col->title, sizeof col->title); /* printed as a header */
    ctx c = {.t = t, .f = f, .err = err, .errlen = errlen};
    c.nlist = kscope__metric_list_flat(t, f, &c.list);
    if (c.nlist < 0) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    if (c.nlist == 0) { /* an empty profile (nothing recorded): every column is empty */
        free(c.list);
        return empty_column(f, col, err, errlen);
    }
    int r = 0;
    size_t sl = strlen(s);
    if (strcmp(s, "util") == 0) {
        r = util_column(&c, col);
    } else if (sl > 2 && strcmp(s + sl - 2, "/%") == 0) {
        s[sl - 2] = '\0';
        r = percent_column(&c, s, col);
    } else {
        r = time_column(&c, s, col);
        if (r == 0)
            r = rate_column(&c, s, col);
        if (r == 0) {
            found fo;
            col->vals = values_of(&c, s, &fo);
            if (col->vals) {
                r = 1;
                col->inclusive = fo.inclusive;
                col->integral = all_int(&c, fo.name);
                kscope__escape(fo.name, col->title, sizeof col->title);
            } else {
                r = -1;
            }
        }
    }
    free(c.list);
    if (r < 0) {
        free(col->vals);
        col->vals = NULL;
        col->missing = c.missing;
        return strstr(err, "out of memory") ? KSCOPE_ENOMEM : KSCOPE_EINVAL;
    }
    return 0;
}

void kscope__column_free(kscope__column *col)
{
    free(col->vals);
    col->vals = NULL;
}

/* ------------------------------------------------------- sampled runs */

/* A number at ROOT: 1 with *v set when ROOT holds it, or held 0 (which
 * readers take as "this metric rolls up" and keep in the inclusive list). */
static int root_number(const kscope__ptree *t, const char *key, double *v)
{
    const char *k = lookup_key(t, key);
    const kscope__pmetric *m = k ? kscope__pnode_metric(t->root, k) : NULL;
    if (m && (m->type == KSCOPE__V_INT || m->type == KSCOPE__V_DOUBLE)) {
        *v = kscope__pmetric_number(m);
        return 1;
    }
    *v = 0;
    return k && !m && kscope__ptree_is_inclusive(t, k);
}

int kscope__sampled_note(const kscope__ptree *t, char *buf, size_t size)
{
    double fraction, steps, sampled, windows;
    if (!root_number(t, "sampled_fraction", &fraction))
        return 0;
    root_number(t, "sample_windows", &windows);
    if (root_number(t, "steps", &steps) && root_number(t, "sampled_steps", &sampled))
        snprintf(buf, size,
                 "sampled: GPU work recorded in %.0f of %.0f steps (%.2f%%); est_ metrics are "
                 "the recorded ones over that fraction (-m est_time/ms)",
                 sampled, steps, fraction * 100.0);
    else
        snprintf(buf, size,
                 "sampled: GPU work recorded in %.0f windows, %.2f%% of the run; est_ metrics "
                 "are the recorded ones over that fraction (-m est_time/ms)",
                 windows, fraction * 100.0);
    return 1;
}
