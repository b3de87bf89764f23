/*
 * hatchet-root.c - ROOT's layout in a .hatchet (see hatchet-root.h): one
 * pass over the tree finds the metric names some node holds as a string or
 * a vector (Hatchet cannot sum those, so they get no placeholder and ROOT's
 * own values of them go aside), then ROOT's metrics are sorted into the
 * numbers ROOT lists and the values set aside.
 */
#include "format/hatchet-root.h"
#include "util/table.h"
#include "kscope.h"

#include <stdlib.h>
#include <string.h>

/* A set of interned names: slots hold the name's pointer, NULL when empty. */
static const kscope__table_kind name_set = KSCOPE__PTR_TABLE_KIND(const char *, 16);

static int set_has(const kscope__table *s, const char *k)
{
    return kscope__table_find(s, &name_set, kscope__ptr_hash(k), k) != NULL;
}

static int set_add(kscope__table *s, const char *k)
{
    if (set_has(s, k) || kscope__table_add(s, &name_set, kscope__ptr_hash(k), &k))
        return 0;
    return KSCOPE_ENOMEM;
}

typedef struct scan {
    const kscope__pnode *root;
    kscope__table unsummable; /* names some node holds as a string or vector */
    kscope__table below;      /* names nodes under ROOT hold */
    kscope__table doubles;    /* names some node holds as a floating-point number */
    int failed;
} scan;

static int is_number(const kscope__pmetric *m)
{
    return m->type == KSCOPE__V_INT || m->type == KSCOPE__V_DOUBLE;
}

static void scan_node(const kscope__pnode *n, void *arg)
{
    scan *s = arg;
    for (uint32_t i = 0; i < n->nmetrics; i++) {
        const char *k = n->metrics[i].key;
        if (!is_number(&n->metrics[i]) && set_add(&s->unsummable, k) != 0)
            s->failed = 1;
        if (n->metrics[i].type == KSCOPE__V_DOUBLE && set_add(&s->doubles, k) != 0)
            s->failed = 1;
        if (n != s->root && set_add(&s->below, k) != 0)
            s->failed = 1;
    }
}

/* Sort ROOT's own metrics into numbers it lists and values set aside:
 * Hatchet adds ROOT's value of a metric to those below it, right for an
 * inclusive metric and for one only ROOT holds, wrong for a per-node one
 * (a merge's time_imbalance), whose ROOT value goes aside. */
static void place_own(const kscope__ptree *t, const scan *s, kscope__hroot *r)
{
    const kscope__pnode *root = t->root;
    for (uint32_t i = 0; i < root->nmetrics; i++) {
        const kscope__pmetric *m = &root->metrics[i];
        int inclusive = kscope__ptree_is_inclusive(t, m->key);
        if (!is_number(m)) {
            r->aside[r->naside++] = m;
            r->list_inclusive |= inclusive;
            continue;
        }
        if (set_has(&s->unsummable, m->key) || (!inclusive && set_has(&s->below, m->key)))
            r->aside[r->naside++] = m;
        else
            r->own[r->nown++] = m;
        /* The 0 rule would read a 0 as "inclusive", anything else as not. */
        if ((kscope__pmetric_number(m) == 0.0) != inclusive)
            r->list_inclusive = 1;
    }
}

int kscope__hroot_plan(const kscope__ptree *t, kscope__hroot *r)
{
    static const char *const empty_placeholders[] = {"count", "time (ns)"};
    memset(r, 0, sizeof *r);
    scan s = {.root = t->root};
    uint32_t nm = t->root->nmetrics, ni = t->ninclusive + 2;
    r->own = malloc((nm + 1) * sizeof *r->own);
    r->aside = malloc((nm + 1) * sizeof *r->aside);
    r->zeros = malloc(ni * sizeof *r->zeros);
    r->zero_double = malloc(ni);
    r->inclusive = malloc(ni * sizeof *r->inclusive);
    if (!r->own || !r->aside || !r->zeros || !r->zero_double || !r->inclusive ||
        kscope__ptree_walk(t, scan_node, NULL, &s) != 0 || s.failed) {
        kscope__table_free(&s.unsummable);
        kscope__table_free(&s.below);
        kscope__table_free(&s.doubles);
        return KSCOPE_ENOMEM;
    }
    place_own(t, &s, r);
    for (uint32_t i = 0; i < t->ninclusive; i++) {
        const char *k = t->inclusive[i];
        r->inclusive[r->ninclusive++] = k;
        if (set_has(&s.unsummable, k))
            r->list_inclusive = 1; /* no placeholder Hatchet could sum */
        else if (!kscope__pnode_metric(t->root, k)) {
            r->zero_double[r->nzeros] = (unsigned char)set_has(&s.doubles, k);
            r->zeros[r->nzeros++] = k;
        }
    }
    if (r->nown + r->nzeros == 0 && s.below.len == 0) {
        for (size_t i = 0; i < 2; i++) {
            r->zero_double[r->nzeros] = 0;
            r->zeros[r->nzeros++] = empty_placeholders[i];
            r->inclusive[r->ninclusive++] = empty_placeholders[i];
        }
    }
    kscope__table_free(&s.unsummable);
    kscope__table_free(&s.below);
    kscope__table_free(&s.doubles);
    return 0;
}

void kscope__hroot_free(kscope__hroot *r)
{
    free(r->own);
    free(r->aside);
    free(r->zeros);
    free(r->zero_double);
    free(r->inclusive);
    memset(r, 0, sizeof *r);
}
