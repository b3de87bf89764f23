/*
 * scopes.c - the heaviest scopes of a profile by one metric, each with its
 * calling context: the tables of `kscope report` (by GPU time under them,
 * by host wall time) and of the run summary of a run without GPU work.
 */
#define _GNU_SOURCE
#include "read/read.h"
#include "kscope.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kscope__print_ns(FILE *out, double ns)
{
    if (ns >= 1e9)
        fprintf(out, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        fprintf(out, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        fprintf(out, "%.3f us", ns / 1e3);
    else
        fprintf(out, "%.0f ns", ns);
}

/* The calling context of node i as "a > b > c" (ROOT left out). */
static void node_path(const kscope__pflat *f, size_t i, char *buf, size_t size)
{
    const kscope__pnode *chain[64];
    int n = 0;
    for (int32_t j = (int32_t)i; j > 0 && n < 64; j = f->parent[j])
        chain[n++] = f->node[j];
    size_t len = 0;
    buf[0] = 0;
    char name[256];
    while (n-- > 0 && len + 4 < size)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " > " : "",
                                kscope__escape(chain[n]->name, name, sizeof name));
}

typedef struct ranked {
    size_t node;
    double value;
} ranked;

static int by_value_desc(const void *a, const void *b)
{
    double x = ((const ranked *)a)->value, y = ((const ranked *)b)->value;
    return x < y ? 1 : x > y ? -1 : 0;
}

int kscope__scopes_print(FILE *out, const kscope__pflat *f, const double *vals, const double *calls,
                         const char *title, double total, long n)
{
    ranked *r = malloc(f->n * sizeof *r);
    size_t m = 0;
    for (size_t i = 1; r && i < f->n; i++)
        if (!kscope__pnode_is_device(f->node[i]) && !isnan(vals[i]) && vals[i] > 0)
            r[m++] = (ranked){i, vals[i]};
    if (!r || m == 0) {
        free(r);
        return 0;
    }
    qsort(r, m, sizeof *r, by_value_desc);
    fprintf(out, "\n%s\n%7s  %12s  %8s  %s\n", title, "%", "time", "calls", "scope");
    int rows = 0;
    for (size_t k = 0; k < m && (n <= 0 || (long)k < n); k++, rows++) {
        char path[1024], t[32];
        node_path(f, r[k].node, path, sizeof path);
        FILE *mem = fmemopen(t, sizeof t, "w");
        if (mem) {
            kscope__print_ns(mem, r[k].value);
            fclose(mem);
        } else {
            t[0] = 0;
        }
        double c = calls && !isnan(calls[r[k].node]) ? calls[r[k].node] : NAN;
        fprintf(out, "%6.2f%%  %12s  ", total > 0 ? 100.0 * r[k].value / total : 0, t);
        if (isnan(c))
            fprintf(out, "%8s  %s\n", "-", path);
        else
            fprintf(out, "%8.0f  %s\n", c, path);
    }
    free(r);
    return rows;
}

int kscope__scopes_by_wall(FILE *out, const kscope__ptree *t, const kscope__pflat *f, long n)
{
    double *wall = malloc((f->n ? f->n : 1) * sizeof *wall);
    double *calls = malloc((f->n ? f->n : 1) * sizeof *calls);
    if (!wall || !calls) {
        free(wall);
        free(calls);
        return KSCOPE_ENOMEM;
    }
    int up = kscope__metric_values(t, f, "wall_time (ns)", wall);
    kscope__pflat_values(t, f, "calls", 0, calls);
    /* the share is of all host time: the metric's total as every view
     * takes it (read/rollup.c) */
    double total = kscope__metric_total(f, wall, up);
    int rows = kscope__scopes_print(out, f, wall, calls, "scopes by host wall time:", total, n);
    free(wall);
    free(calls);
    return rows;
}
