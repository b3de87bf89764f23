/*
 * union.c - matching two trees by calling-context path (the names from
 * ROOT down), for `kscope diff` and `kscope view --diff-profile`. The union
 * comes out in preorder, so it prints as a tree like a single profile.
 */
#include "read/read.h"
#include "util/util.h"
#include "kscope.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
    return kscope__fnv1a(s, strlen(s));
}

typedef struct table {
    int32_t *slot; /* union index or -1 */
    size_t cap;
} table;

static size_t slot_of(const table *tb, const kscope__punion *u, int32_t parent, const char *name,
                      uint64_t h)
{
    size_t j = (size_t)(h ^ ((uint64_t)(uint32_t)parent * 0x9e3779b97f4a7c15ull)) & (tb->cap - 1);
    while (tb->slot[j] >= 0) {
        int32_t k = tb->slot[j];
        if (u->parent[k] == parent && strcmp(u->name[k], name) == 0)
            return j;
        j = (j + 1) & (tb->cap - 1);
    }
    return j;
}

/* Put the union into preorder (children after their parent, subtrees
 * contiguous, A's order first). */
static int reorder(kscope__punion *u)
{
    size_t n = u->n;
    int32_t *first = malloc(n * sizeof *first), *next = malloc(n * sizeof *next);
    int32_t *last = malloc(n * sizeof *last), *order = malloc(n * sizeof *order);
    int32_t *stack = malloc(n * sizeof *stack), *newidx = malloc(n * sizeof *newidx);
    int rc = KSCOPE_ENOMEM;
    if (!first || !next || !last || !order || !stack || !newidx)
        goto out;
    for (size_t i = 0; i < n; i++)
        first[i] = last[i] = next[i] = -1;
    for (size_t i = 1; i < n; i++) {
        int32_t p = u->parent[i];
        if (last[p] < 0)
            first[p] = (int32_t)i;
        else
            next[last[p]] = (int32_t)i;
        last[p] = (int32_t)i;
    }
    size_t sn = 0, on = 0;
    stack[sn++] = 0;
    while (sn) {
        int32_t v = stack[--sn];
        order[on++] = v;
        /* push children reversed so the first child is visited first */
        size_t base = sn;
        for (int32_t c = first[v]; c >= 0; c = next[c])
            stack[sn++] = c;
        for (size_t a = base, b = sn ? sn - 1 : 0; a < b; a++, b--) {
            int32_t tmp = stack[a];
            stack[a] = stack[b];
            stack[b] = tmp;
        }
    }
    for (size_t i = 0; i < n; i++)
        newidx[order[i]] = (int32_t)i;
    int32_t *na = malloc(n * sizeof *na), *nb = malloc(n * sizeof *nb);
    int32_t *np = malloc(n * sizeof *np);
    uint32_t *nd = malloc(n * sizeof *nd);
    const char **nn = malloc(n * sizeof *nn);
    if (!na || !nb || !np || !nd || !nn) {
        free(na), free(nb), free(np), free(nd), free(nn);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t o = order[i];
        na[i] = u->a[o];
        nb[i] = u->b[o];
        np[i] = u->parent[o] < 0 ? -1 : newidx[u->parent[o]];
        nd[i] = u->depth[o];
        nn[i] = u->name[o];
    }
    free(u->a), free(u->b), free(u->parent), free(u->depth), free(u->name);
    u->a = na, u->b = nb, u->parent = np, u->depth = nd, u->name = nn;
    rc = 0;
out:
    free(first), free(next), free(last), free(order), free(stack), free(newidx);
    return rc;
}

int kscope__punion_build(const kscope__pflat *fa, const kscope__pflat *fb, kscope__punion *u)
{
    memset(u, 0, sizeof *u);
    size_t cap = fa->n + fb->n;
    u->a = malloc(cap * sizeof *u->a);
    u->b = malloc(cap * sizeof *u->b);
    u->parent = malloc(cap * sizeof *u->parent);
    u->depth = malloc(cap * sizeof *u->depth);
    u->name = malloc(cap * sizeof *u->name);
    int32_t *bmap = malloc((fb->n ? fb->n : 1) * sizeof *bmap);
    table tb = {0};
    tb.cap = 16;
    while (tb.cap < cap * 2)
        tb.cap *= 2;
    tb.slot = malloc(tb.cap * sizeof *tb.slot);
    if (!u->a || !u->b || !u->parent || !u->depth || !u->name || !bmap || !tb.slot)
        goto nomem;
    memset(tb.slot, -1, tb.cap * sizeof *tb.slot);
    /* A's nodes keep their indices; ROOTs always match each other. */
    for (size_t i = 0; i < fa->n; i++) {
        u->a[i] = (int32_t)i;
        u->b[i] = -1;
        u->parent[i] = fa->parent[i];
        u->depth[i] = fa->depth[i];
        u->name[i] = fa->node[i]->name;
        if (i == 0)
            continue;
        size_t j = slot_of(&tb, u, u->parent[i], u->name[i], hash_str(u->name[i]));
        if (tb.slot[j] < 0)
            tb.slot[j] = (int32_t)i;
    }
    u->n = fa->n;
    for (size_t i = 0; i < fb->n; i++) {
        if (i == 0) {
            u->b[0] = 0;
            bmap[0] = 0;
            continue;
        }
        int32_t up = bmap[fb->parent[i]];
        const char *name = fb->node[i]->name;
        size_t j = slot_of(&tb, u, up, name, hash_str(name));
        int32_t k = tb.slot[j];
        if (k >= 0 && u->b[k] < 0) {
            u->b[k] = (int32_t)i;
            bmap[i] = k;
            continue;
        }
        if (k >= 0) { /* a same-named sibling repeated in B: fold into the first */
            bmap[i] = k;
            continue;
        }
        k = (int32_t)u->n++;
        u->a[k] = -1;
        u->b[k] = (int32_t)i;
        u->parent[k] = up;
        u->depth[k] = fb->depth[i];
        u->name[k] = name;
        tb.slot[j] = k;
        bmap[i] = k;
    }
    free(bmap);
    free(tb.slot);
    if (reorder(u) < 0) {
        kscope__punion_free(u);
        return KSCOPE_ENOMEM;
    }
    return 0;
nomem:
    free(bmap);
    free(tb.slot);
    kscope__punion_free(u);
    return KSCOPE_ENOMEM;
}

void kscope__punion_free(kscope__punion *u)
{
    free(u->a);
    free(u->b);
    free(u->parent);
    free(u->depth);
    free(u->name);
    memset(u, 0, sizeof *u);
}
