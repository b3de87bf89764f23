/*
 * lines.c - the hottest source lines of a profile recorded with PC
 * sampling, with their main stall reasons (`kscope top --lines`, and per
 * kernel `kscope view --lines`).
 *
 * A profile holds the samples below each kernel's node, one frame per
 * source line ("file:line@function", or "function+0xOFFSET" for code
 * without line information), and on the kernel's own node when it has no
 * line information at all. Lines are added up across calling contexts by
 * (kernel, line); their "stalled_<reason>" counts say why the warps there
 * waited. The HTML report gets the same rows as JSON (kscope__lines_json).
 */
#include "kscope.h"
#include "util/util.h"
#include "read/read.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REASONS 64

typedef struct lrow {
    const char *kernel, *line; /* interned in the tree; line NULL: the kernel itself */
    double samples;
    double reason[MAX_REASONS];
} lrow;

typedef struct lset {
    lrow *rows;
    size_t n, cap;
    const char *reason[MAX_REASONS]; /* "stalled_..." keys, interned */
    size_t nreasons;
    double total;
} lset;

static double metric_of(const kscope__pnode *n, const char *key)
{
    for (uint32_t i = 0; i < n->nmetrics; i++)
        if (n->metrics[i].type != KSCOPE__V_STRING && strcmp(n->metrics[i].key, key) == 0)
            return kscope__pmetric_number(&n->metrics[i]);
    return 0;
}

/* A frame of samples below a kernel, not a kernel or a scope. */
static int is_line(const kscope__pnode *n, const kscope__pnode *parent)
{
    if (!parent || kscope__pnode_is_device(n))
        return 0;
    return kscope__pnode_is_device(parent) || strchr(n->name, '@') || strstr(n->name, "+0x");
}

static lrow *row_of(lset *s, const char *kernel, const char *line)
{
    for (size_t i = 0; i < s->n; i++) /* lines are few: hundreds */
        if (s->rows[i].kernel == kernel && s->rows[i].line == line)
            return &s->rows[i];
    if (s->n == s->cap && KSCOPE__ROOM(s->rows, s->cap, s->n + 1, 64) != 0)
        return NULL;
    lrow *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    r->kernel = kernel;
    r->line = line;
    return r;
}

static void add_reasons(lset *s, lrow *r, const kscope__pnode *n)
{
    for (uint32_t i = 0; i < n->nmetrics; i++) {
        const kscope__pmetric *m = &n->metrics[i];
        if (m->type == KSCOPE__V_STRING || strncmp(m->key, "stalled_", 8) != 0)
            continue;
        size_t k = 0;
        while (k < s->nreasons && s->reason[k] != m->key)
            k++;
        if (k == s->nreasons) {
            if (k == MAX_REASONS)
                continue;
            s->reason[s->nreasons++] = m->key;
        }
        r->reason[k] += kscope__pmetric_number(m);
    }
}

static int collect(const kscope__ptree *t, lset *s)
{
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) < 0)
        return KSCOPE_ENOMEM;
    int rc = 0;
    for (size_t i = 1; i < f.n && rc == 0; i++) {
        const kscope__pnode *n = f.node[i];
        double samples = metric_of(n, "num_samples");
        if (samples <= 0)
            continue;
        const kscope__pnode *p = f.parent[i] > 0 ? f.node[f.parent[i]] : NULL;
        int line = is_line(n, p);
        lrow *r = row_of(s, line ? p->name : n->name, line ? n->name : NULL);
        if (!r) {
            rc = KSCOPE_ENOMEM;
            break;
        }
        r->samples += samples;
        s->total += samples;
        add_reasons(s, r, n);
    }
    kscope__pflat_free(&f);
    return rc;
}

static int by_samples(const void *a, const void *b)
{
    const lrow *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples < y->samples ? 1 : -1;
    return strcmp(x->line ? x->line : "", y->line ? y->line : "");
}

/* "long_scoreboard 81%, wait 9%, ..." : the three largest reasons. */
static void reasons_text(const lset *s, const double *reason, double samples, char *buf,
                         size_t size)
{
    int used[MAX_REASONS] = {0};
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < 3 && samples > 0; k++) {
        int best = -1;
        for (size_t i = 0; i < s->nreasons; i++)
            if (!used[i] && reason[i] > 0 && (best < 0 || reason[i] > reason[best]))
                best = (int)i;
        if (best < 0)
            break;
        used[best] = 1;
        int n = snprintf(buf + len, size - len, "%s%s %.0f%%", len ? ", " : "", s->reason[best] + 8,
                         100.0 * reason[best] / samples);
        if (n < 0 || (size_t)n >= size - len)
            break;
        len += (size_t)n;
    }
    if (!buf[0])
        snprintf(buf, size, "-");
}

static void print_row(FILE *out, const lset *s, const lrow *r, int flags, const char *indent,
                      int with_kernel)
{
    char reasons[160];
    reasons_text(s, r->reason, r->samples, reasons, sizeof reasons);
    fprintf(out, "%s%10.0f %6.1f%%  %-44s  ", indent, r->samples,
            s->total > 0 ? 100.0 * r->samples / s->total : 0.0, reasons);
    int full = flags & KSCOPE__TOP_FULL_NAMES;
    if (r->line)
        kscope__print_name(out, r->line, full);
    else
        fputs("(no line information)", out);
    if (with_kernel) {
        fputs("  [", out);
        kscope__print_name(out, r->kernel, full);
        fputc(']', out);
    }
    fputc('\n', out);
}

static void header(FILE *out, int flags, const char *indent, const char *last)
{
    const char *b = flags & KSCOPE__TOP_COLOR ? "\033[1m" : "", *e = *b ? "\033[0m" : "";
    fprintf(out, "%s%s%10s %7s  %-44s  %s%s\n", b, indent, "samples", "%", "main stall reasons",
            last, e);
}

/* Per kernel: its total and reasons, then its hottest lines. */
static void print_by_kernel(FILE *out, const lset *s, int top_n, int flags)
{
    const char *b = flags & KSCOPE__TOP_COLOR ? "\033[1m" : "", *e = *b ? "\033[0m" : "";
    lrow k;
    for (size_t i = 0; i < s->n; i++) {
        const char *kernel = s->rows[i].kernel;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = s->rows[j].kernel == kernel;
        if (seen)
            continue; /* printed with its hottest line */
        memset(&k, 0, sizeof k);
        for (size_t j = i; j < s->n; j++) {
            if (s->rows[j].kernel != kernel)
                continue;
            k.samples += s->rows[j].samples;
            for (size_t r = 0; r < s->nreasons; r++)
                k.reason[r] += s->rows[j].reason[r];
        }
        char reasons[160];
        reasons_text(s, k.reason, k.samples, reasons, sizeof reasons);
        fprintf(out, "%s", b);
        kscope__print_name(out, kernel, flags & KSCOPE__TOP_FULL_NAMES);
        fprintf(out, "%s: %.0f samples (%.1f%%); %s\n", e, k.samples,
                s->total > 0 ? 100.0 * k.samples / s->total : 0.0, reasons);
        header(out, flags, "  ", "source line");
        int shown = 0;
        for (size_t j = i; j < s->n && (top_n <= 0 || shown < top_n); j++) {
            if (s->rows[j].kernel != kernel)
                continue;
            print_row(out, s, &s->rows[j], flags, "  ", 0);
            shown++;
        }
        fputc('\n', out);
    }
}

int kscope__lines_print(FILE *out, const kscope__ptree *t, int top_n, int flags)
{
    lset s = {0};
    int rc = collect(t, &s);
    if (rc == 0 && s.n) {
        qsort(s.rows, s.n, sizeof *s.rows, by_samples);
        if (flags & KSCOPE__LINES_BY_KERNEL) {
            print_by_kernel(out, &s, top_n, flags);
        } else {
            header(out, flags, "", "source line  [kernel]");
            for (size_t i = 0; i < s.n && (top_n <= 0 || (int)i < top_n); i++)
                print_row(out, &s, &s.rows[i], flags, "", 1);
        }
    }
    free(s.rows);
    return rc ? rc : (int)s.n;
}

/* ------------------------------------------------------ the report's JSON */

/* One kernel's rows added up: its samples and reasons. */
typedef struct kgroup {
    const char *kernel;
    lrow sum;
} kgroup;

static int by_group_samples(const void *a, const void *b)
{
    const kgroup *x = a, *y = b;
    if (x->sum.samples != y->sum.samples)
        return x->sum.samples < y->sum.samples ? 1 : -1;
    return strcmp(x->kernel, y->kernel);
}

/* The kernels of s (rows sorted), heaviest first, into *out; their count,
 * or -1 when out of memory. */
static long group_kernels(const lset *s, kgroup **out)
{
    kgroup *g = malloc(s->n * sizeof *g);
    if (!g)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        size_t k = 0;
        while (k < n && g[k].kernel != s->rows[i].kernel)
            k++;
        if (k == n) {
            memset(&g[n], 0, sizeof g[n]);
            g[n++].kernel = s->rows[i].kernel;
        }
        g[k].sum.samples += s->rows[i].samples;
        for (size_t r = 0; r < s->nreasons; r++)
            g[k].sum.reason[r] += s->rows[i].reason[r];
    }
    qsort(g, n, sizeof *g, by_group_samples);
    *out = g;
    return (long)n;
}

/* A count: whole numbers as integers (samples are), others as doubles. */
static void write_count(kscope__jsonw *w, double v)
{
    if (v > -9e15 && v < 9e15 && v == (double)(int64_t)v)
        kscope__jw_int(w, (int64_t)v);
    else
        kscope__jw_double(w, v);
}

/* "samples": n, "r": [samples per reason, in s->reason's order] */
static void write_counts(kscope__jsonw *w, const lset *s, const lrow *r)
{
    kscope__jw_key(w, "samples");
    write_count(w, r->samples);
    kscope__jw_key(w, "r");
    kscope__jw_open(w, '[');
    for (size_t k = 0; k < s->nreasons; k++)
        write_count(w, r->reason[k]);
    kscope__jw_close(w, ']');
}

static void write_kernel(kscope__jsonw *w, const lset *s, const kgroup *g, int top_n)
{
    kscope__jw_open(w, '{');
    kscope__jw_member_str(w, "name", g->kernel);
    write_counts(w, s, &g->sum);
    int shown = 0, more = 0;
    kscope__jw_key(w, "lines");
    kscope__jw_open(w, '[');
    for (size_t i = 0; i < s->n; i++) {
        if (s->rows[i].kernel != g->kernel)
            continue;
        if (top_n > 0 && shown == top_n) {
            more++;
            continue;
        }
        kscope__jw_open(w, '{');
        kscope__jw_key(w, "line");
        if (s->rows[i].line)
            kscope__jw_str(w, s->rows[i].line);
        else
            kscope__jw_literal(w, "null");
        write_counts(w, s, &s->rows[i]);
        kscope__jw_close(w, '}');
        shown++;
    }
    kscope__jw_close(w, ']');
    kscope__jw_member_int(w, "more", more);
    kscope__jw_close(w, '}');
}

int kscope__lines_json(kscope__jsonw *w, const char *key, const kscope__ptree *t, int top_n)
{
    lset s = {0};
    kgroup *g = NULL;
    long ng = 0;
    int rc = collect(t, &s);
    if (rc == 0 && s.n) {
        qsort(s.rows, s.n, sizeof *s.rows, by_samples);
        ng = group_kernels(&s, &g);
        rc = ng < 0 ? KSCOPE_ENOMEM : 0;
    }
    if (rc == 0 && s.n) {
        kscope__jw_key(w, key);
        kscope__jw_open(w, '{');
        kscope__jw_key(w, "total");
        write_count(w, s.total);
        kscope__jw_key(w, "reasons"); /* without "stalled_" */
        kscope__jw_open(w, '[');
        for (size_t k = 0; k < s.nreasons; k++)
            kscope__jw_str(w, s.reason[k] + 8);
        kscope__jw_close(w, ']');
        kscope__jw_key(w, "kernels");
        kscope__jw_open(w, '[');
        for (long k = 0; k < ng; k++)
            write_kernel(w, &s, &g[k], top_n);
        kscope__jw_close(w, ']');
        kscope__jw_close(w, '}');
    }
    free(g);
    free(s.rows);
    return rc ? rc : (int)s.n;
}
