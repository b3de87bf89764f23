/*
 * rollup.c - the one definition of what a metric's numbers are, for every
 * reader of a profile: `view`, `top`, `diff`, `merge`, `report` and the
 * HTML page's data (report/tree-data.c), which hands the page these very
 * numbers so the page decides nothing itself.
 *
 *   - A metric rolls up when the profile says so: its inclusive list
 *     (ROOT's 0 placeholders, or ROOT's "kscope" member), kept in the tree
 *     by the readers. A node then shows the sum over its subtree; any
 *     other metric (wall_time, cpu_time, calls, min_/max_, (exc), (pty))
 *     shows the node's own value, or none.
 *   - The total of a metric over a subtree: its value there for one that
 *     rolls up; for a per-node one, the sum over the outermost nodes that
 *     hold it (a node inside another that holds it is part of that one's
 *     value: nested scopes' wall time counts once). The total at ROOT is
 *     the metric's total ("host wall time"), the share `NAME/%` divides
 *     by, and the width the flame graph gives a node.
 *   - The frames shown leave out what proton-viewer leaves out (Triton's
 *     launch-metadata scopes, frames without metrics or children): `view`
 *     and the page roll up over the same nodes.
 */
#include "read/read.h"
#include "kscope.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kscope__metric_rolls_up(const kscope__ptree *t, const char *key)
{
    /* Interning into a const tree only ever adds a string to its table. */
    const char *k = kscope__ptree_intern_cstr((kscope__ptree *)t, key);
    return k && kscope__ptree_is_inclusive(t, k);
}

int kscope__metric_values(const kscope__ptree *t, const kscope__pflat *f, const char *key,
                          double *vals)
{
    int up = kscope__metric_rolls_up(t, key);
    kscope__pflat_values(t, f, key, up, vals);
    return up;
}

double kscope__metric_total(const kscope__pflat *f, const double *vals, int rolls_up)
{
    if (f->n == 0)
        return 0;
    if (rolls_up)
        return vals[0];
    /* Preorder: a subtree is the run of nodes after its root that are
     * deeper than it, so the outermost holder open is one depth. */
    double total = 0;
    int open = 0;
    uint32_t depth = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (open && f->depth[i] > depth)
            continue;
        open = !isnan(vals[i]);
        if (open) {
            total += vals[i];
            depth = f->depth[i];
        }
    }
    return total;
}

void kscope__metric_spans(const kscope__pflat *f, const double *vals, int rolls_up, double *spans)
{
    for (size_t i = 0; i < f->n; i++)
        spans[i] = rolls_up ? vals[i] : isnan(vals[i]) ? 0 : vals[i];
    if (rolls_up)
        return;
    /* Children after parents: a node without a value of its own spans
     * what its children span. */
    for (size_t i = f->n; i-- > 1;)
        if (isnan(vals[f->parent[i]]))
            spans[f->parent[i]] += spans[i];
}

/* ------------------------------------------------ the frames views show */

void kscope__prune_frames(const kscope__pflat *f, unsigned char *keep)
{
    static const char meta[] = "__proton_launch_metadata";
    unsigned char *kept_child = calloc(f->n, 1);
    if (!kept_child)
        return; /* nothing pruned: the view is still right, only busier */
    for (size_t i = 1; i < f->n; i++) {
        const char *name = f->node[i]->name;
        if (strncmp(name, meta, sizeof meta - 1) == 0 &&
            (name[sizeof meta - 1] == '\0' || name[sizeof meta - 1] == ':'))
            keep[i] = 0;
        else if (!keep[f->parent[i]])
            keep[i] = 0;
    }
    for (size_t i = f->n; i-- > 1;) {
        const kscope__pnode *n = f->node[i];
        if (keep[i] && n->nchildren > 0 && !kept_child[i])
            keep[i] = 0; /* every child was left out */
        if (keep[i] && n->nchildren == 0 && n->nmetrics == 0)
            keep[i] = 0;
        if (keep[i])
            kept_child[f->parent[i]] = 1;
    }
    free(kept_child);
}

int kscope__pflat_keep(kscope__pflat *f, const unsigned char *keep)
{
    int32_t *map = malloc(f->n * sizeof *map);
    if (!map)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (!keep[i]) {
            map[i] = -1;
            continue;
        }
        map[i] = (int32_t)k;
        f->node[k] = f->node[i];
        f->parent[k] = f->parent[i] < 0 ? -1 : map[f->parent[i]];
        f->depth[k] = f->depth[i];
        k++;
    }
    f->n = k;
    free(map);
    return 0;
}

int kscope__pflat_build_shown(const kscope__ptree *t, kscope__pflat *f)
{
    if (kscope__pflat_build(t, f) != 0)
        return KSCOPE_ENOMEM;
    unsigned char *keep = malloc(f->n ? f->n : 1);
    if (!keep) {
        kscope__pflat_free(f);
        return KSCOPE_ENOMEM;
    }
    memset(keep, 1, f->n);
    kscope__prune_frames(f, keep);
    int rc = kscope__pflat_keep(f, keep);
    free(keep);
    if (rc < 0) {
        kscope__pflat_free(f);
        return KSCOPE_ENOMEM;
    }
    return 0;
}

/* The metric views show first: GPU time (any unit), else host wall time
 * (a run without GPU work), else the file's first metric. NULL when t
 * holds none; *list is malloc'd (free it), or NULL when out of memory. */
static const char *default_name(const kscope__ptree *t, kscope__metric_info **list, int *n,
                                int *which)
{
    *n = kscope__metric_list(t, list);
    if (*n < 0) {
        *list = NULL;
        return NULL;
    }
    for (int pass = 0; pass < 2; pass++) {
        const char *prefix = pass == 0 ? "time (" : "wall_time (";
        for (int i = 0; i < *n; i++)
            if (strncmp((*list)[i].name, prefix, strlen(prefix)) == 0) {
                *which = pass;
                return (*list)[i].name;
            }
    }
    *which = 2;
    return *n > 0 ? (*list)[0].name : NULL;
}

/* The default metric into buf: as the commands' options spell it
 * ("time/ms", `spelled`) or its stored name. 1, 0 when t holds no metric,
 * or KSCOPE_ENOMEM. */
static int default_metric(const kscope__ptree *t, int spelled, char *buf, size_t size)
{
    kscope__metric_info *list;
    int n, which;
    const char *name = default_name(t, &list, &n, &which);
    if (n < 0)
        return n;
    if (name && spelled && which < 2)
        snprintf(buf, size, "%s", which == 0 ? "time/ms" : "wall_time/ms");
    else if (name)
        snprintf(buf, size, "%s", name);
    free(list);
    return name != NULL;
}

int kscope__default_metric(const kscope__ptree *t, char *buf, size_t size)
{
    return default_metric(t, 1, buf, size);
}

int kscope__default_metric_name(const kscope__ptree *t, char *buf, size_t size)
{
    return default_metric(t, 0, buf, size);
}
