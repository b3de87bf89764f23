/*
 * top.c - the top-kernels table: every GPU activity (a node carrying a
 * "device_id") aggregated by name across calling contexts, heaviest first.
 * `kscope top FILE` prints it, and `kscope run` prints it at exit.
 */
#include "read/read.h"
#include "kscope.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct krow {
    const char *name;
    double total_ns, calls, min_ns, max_ns;
} krow;

/* A metric's value in ns, for a time metric named with any unit. */
static double ns_of(const kscope__pnode *n, const char *base, int *found)
{
    size_t bl = strlen(base);
    for (uint32_t i = 0; i < n->nmetrics; i++) {
        const kscope__pmetric *m = &n->metrics[i];
        if (strncmp(m->key, base, bl) != 0 || m->type == KSCOPE__V_STRING)
            continue;
        const char *rest = m->key + bl;
        double scale = strcmp(rest, " (ns)") == 0   ? 1
                       : strcmp(rest, " (us)") == 0 ? 1e3
                       : strcmp(rest, " (ms)") == 0 ? 1e6
                       : strcmp(rest, " (s)") == 0  ? 1e9
                                                    : 0;
        if (scale == 0)
            continue;
        *found = 1;
        return kscope__pmetric_number(m) * scale;
    }
    *found = 0;
    return 0;
}

/* A metric's number on n (the first of that name), or dflt. */
static double number_of(const kscope__pnode *n, const char *key, double dflt)
{
    for (uint32_t i = 0; i < n->nmetrics; i++)
        if (strcmp(n->metrics[i].key, key) == 0 && n->metrics[i].type != KSCOPE__V_STRING)
            return kscope__pmetric_number(&n->metrics[i]);
    return dflt;
}

/* Launches of a GPU activity: its count, 1 for a context without one. */
static double count_of(const kscope__pnode *n)
{
    return number_of(n, "count", 1);
}

int kscope__is_copy(const char *name)
{
    return strncmp(name, "Memcpy", 6) == 0 || strncmp(name, "Memset", 6) == 0 ||
           strncmp(name, "[memcpy", 7) == 0 || strncmp(name, "[memset", 7) == 0;
}

int kscope__gpu_split_of(const kscope__ptree *t, kscope__gpu_split *s)
{
    memset(s, 0, sizeof *s);
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) < 0)
        return KSCOPE_ENOMEM;
    for (size_t i = 0; i < f.n; i++) {
        const kscope__pnode *n = f.node[i];
        int has;
        double ns = kscope__pnode_is_device(n) ? ns_of(n, "time", &has) : 0;
        if (!kscope__pnode_is_device(n) || !has)
            continue;
        if (kscope__is_copy(n->name)) {
            s->copy_ns += ns;
            s->copies += count_of(n);
            s->copied_bytes += number_of(n, "bytes", 0);
        } else {
            s->kernel_ns += ns;
            s->launches += count_of(n);
        }
    }
    kscope__pflat_free(&f);
    return 0;
}

static int by_total(const void *a, const void *b)
{
    const krow *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* Aggregate GPU activities by name (names are interned: compare pointers
 * through an open-addressing table). */
static int collect(const kscope__ptree *t, krow **rows_out, size_t *nrows)
{
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) < 0)
        return KSCOPE_ENOMEM;
    size_t cap = 64, n = 0, hcap = 128;
    krow *rows = malloc(cap * sizeof *rows);
    int32_t *hash = malloc(hcap * sizeof *hash);
    int rc = 0;
    if (!rows || !hash)
        goto nomem;
    memset(hash, -1, hcap * sizeof *hash);
    for (size_t i = 0; i < f.n; i++) {
        const kscope__pnode *node = f.node[i];
        if (!kscope__pnode_is_device(node))
            continue;
        int has;
        double total = ns_of(node, "time", &has);
        double calls = count_of(node);
        double avg = calls > 0 ? total / calls : total;
        int hmin, hmax;
        double mn = ns_of(node, "min_time", &hmin), mx = ns_of(node, "max_time", &hmax);
        if (!hmin)
            mn = avg;
        if (!hmax)
            mx = avg;
        size_t h = ((uintptr_t)node->name >> 4) * 2654435761u & (hcap - 1);
        while (hash[h] >= 0 && rows[hash[h]].name != node->name)
            h = (h + 1) & (hcap - 1);
        if (hash[h] >= 0) {
            krow *r = &rows[hash[h]];
            r->total_ns += total;
            r->calls += calls;
            r->min_ns = mn < r->min_ns ? mn : r->min_ns;
            r->max_ns = mx > r->max_ns ? mx : r->max_ns;
            continue;
        }
        if (n == cap) {
            cap *= 2;
            krow *p = realloc(rows, cap * sizeof *rows);
            if (!p)
                goto nomem;
            rows = p;
        }
        rows[n] = (krow){node->name, total, calls, mn, mx};
        hash[h] = (int32_t)n++;
        if (n * 2 > hcap) { /* rehash */
            size_t ncap = hcap * 2;
            int32_t *nh = malloc(ncap * sizeof *nh);
            if (!nh)
                goto nomem;
            memset(nh, -1, ncap * sizeof *nh);
            for (size_t k = 0; k < n; k++) {
                size_t j = ((uintptr_t)rows[k].name >> 4) * 2654435761u & (ncap - 1);
                while (nh[j] >= 0)
                    j = (j + 1) & (ncap - 1);
                nh[j] = (int32_t)k;
            }
            free(hash);
            hash = nh;
            hcap = ncap;
        }
    }
    qsort(rows, n, sizeof *rows, by_total);
    *rows_out = rows;
    *nrows = n;
    goto done;
nomem:
    free(rows);
    rc = KSCOPE_ENOMEM;
done:
    free(hash);
    kscope__pflat_free(&f);
    return rc;
}

int kscope__top_print(FILE *out, const kscope__ptree *t, int top_n, int flags)
{
    int color = flags & KSCOPE__TOP_COLOR;
    krow *rows = NULL;
    size_t n = 0;
    int rc = collect(t, &rows, &n);
    if (rc < 0)
        return rc;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += rows[i].total_ns;
    const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
    if (n == 0) {
        fprintf(out, "no GPU kernels or copies in this profile\n");
        free(rows);
        return 0;
    }
    fprintf(out, "%s%7s %12s %10s %12s %12s %12s  %s%s\n", bold, "%", "total", "calls", "avg",
            "min", "max", "name", reset);
    size_t shown = top_n > 0 && (size_t)top_n < n ? (size_t)top_n : n;
    for (size_t i = 0; i < shown; i++) {
        const krow *r = &rows[i];
        char tot[32], avg[32], mn[32], mx[32];
        double pct = sum > 0 ? r->total_ns / sum * 100.0 : 0;
        kscope__format_ns(r->total_ns, tot, sizeof tot);
        kscope__format_ns(r->calls > 0 ? r->total_ns / r->calls : NAN, avg, sizeof avg);
        kscope__format_ns(r->min_ns, mn, sizeof mn);
        kscope__format_ns(r->max_ns, mx, sizeof mx);
        const char *hot = !color ? "" : pct >= 40 ? "\033[31m" : pct >= 10 ? "\033[33m" : "";
        fprintf(out, "%s%6.2f%%%s %12s %10.0f %12s %12s %12s  ", hot, pct, *hot ? reset : "", tot,
                r->calls, avg, mn, mx);
        kscope__print_name(out, r->name, flags & KSCOPE__TOP_FULL_NAMES);
        fputc('\n', out);
    }
    if (shown < n)
        fprintf(out, "(%zu more; -n 0 shows all)\n", n - shown);
    free(rows);
    return (int)n;
}

int kscope__top_json(kscope__jsonw *w, const char *key, const kscope__ptree *t)
{
    krow *rows = NULL;
    size_t n = 0;
    kscope__gpu_split s;
    int rc = collect(t, &rows, &n);
    if (rc == 0)
        rc = kscope__gpu_split_of(t, &s);
    if (rc < 0) {
        free(rows);
        return rc;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += rows[i].total_ns;
    kscope__jw_key(w, key);
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "rows");
    kscope__jw_open(w, '[');
    for (size_t i = 0; i < n; i++) {
        const krow *r = &rows[i];
        kscope__jw_open(w, '[');
        kscope__jw_str(w, r->name);
        double cells[] = {sum > 0 ? r->total_ns / sum * 100.0 : 0,     r->total_ns, r->calls,
                          r->calls > 0 ? r->total_ns / r->calls : NAN, r->min_ns,   r->max_ns};
        for (size_t c = 0; c < sizeof cells / sizeof *cells; c++)
            kscope__jw_js_number(w, cells[c]);
        kscope__jw_close(w, ']');
    }
    kscope__jw_close(w, ']');
    double split[] = {s.kernel_ns, s.launches, s.copy_ns, s.copies, s.copied_bytes};
    const char *names[] = {"kernel_ns", "launches", "copy_ns", "copies", "copied_bytes"};
    for (size_t k = 0; k < sizeof split / sizeof *split; k++) {
        kscope__jw_key(w, names[k]);
        kscope__jw_js_number(w, split[k]);
    }
    kscope__jw_close(w, '}');
    free(rows);
    return (int)n;
}
