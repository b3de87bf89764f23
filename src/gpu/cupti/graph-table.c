/*
 * graph-table.c - what the CUPTI backend remembers about CUDA graphs: a
 * map of 64-bit ids (graph node, graph and graph exec ids) to records, the
 * metric values kept for a graph's launches (counted references, shared
 * by a graph and every exec made from it), and the tokens of values that
 * are no longer needed.
 *
 * Plain data structures with no CUDA calls, so tests drive them directly;
 * callers serialise (graphs.c's lock).
 */
#include "gpu/cupti/cupti-internal.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define TOMB UINT64_MAX /* a deleted key */

/* ------------------------------------------------------------------ map */

static size_t slot_of(const kscope__u64map *m, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29)) & (m->cap - 1);
}

/* Rebuild with room for twice the live entries (tombstones dropped). */
static int grow(kscope__u64map *m)
{
    size_t cap = 64;
    while (cap < (m->used + 1) * 4)
        cap *= 2;
    kscope__u64slot *old = m->slot;
    size_t oldcap = m->cap;
    kscope__u64slot *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return KSCOPE_ENOMEM;
    m->slot = slot;
    m->cap = cap;
    m->used = m->tombs = 0;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].key && old[i].key != TOMB)
            kscope__u64map_put(m, old[i].key, old[i].val);
    free(old);
    return 0;
}

void *kscope__u64map_get(const kscope__u64map *m, uint64_t key)
{
    if (!m->cap || !key || key == TOMB)
        return NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->slot[i].key == key)
            return m->slot[i].val;
        if (!m->slot[i].key)
            return NULL;
    }
}

int kscope__u64map_put(kscope__u64map *m, uint64_t key, void *val)
{
    if (!key || key == TOMB)
        return KSCOPE_EINVAL;
    if ((m->used + m->tombs + 1) * 2 > m->cap && grow(m) != 0)
        return KSCOPE_ENOMEM;
    size_t free_at = SIZE_MAX;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->slot[i].key == key) {
            m->slot[i].val = val;
            return 0;
        }
        if (m->slot[i].key == TOMB && free_at == SIZE_MAX)
            free_at = i;
        if (!m->slot[i].key) {
            if (free_at == SIZE_MAX)
                free_at = i;
            else
                m->tombs--;
            m->slot[free_at].key = key;
            m->slot[free_at].val = val;
            m->used++;
            return 0;
        }
    }
}

void *kscope__u64map_del(kscope__u64map *m, uint64_t key)
{
    if (!m->cap || !key || key == TOMB)
        return NULL;
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->slot[i].key == key) {
            void *val = m->slot[i].val;
            m->slot[i].key = TOMB;
            m->slot[i].val = NULL;
            m->used--;
            m->tombs++;
            return val;
        }
        if (!m->slot[i].key)
            return NULL;
    }
}

void kscope__u64map_free(kscope__u64map *m, void (*free_val)(void *))
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].key && m->slot[i].key != TOMB && free_val)
            free_val(m->slot[i].val);
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ----------------------------------------------------------- graph nodes */

void kscope__gnode_free(void *p)
{
    kscope__gnode *n = p;
    if (n)
        free(n->meta);
    free(n);
}

int kscope__gnode_put(kscope__u64map *nodes, uint64_t id, const kscope__gnode *from)
{
    kscope__gnode *n = malloc(sizeof *n);
    if (!n)
        return KSCOPE_ENOMEM;
    *n = *from;
    n->meta = NULL;
    if (from->meta && kscope__gpu_meta_copy(&from->meta->meta, &n->meta) != 0) {
        free(n);
        return KSCOPE_ENOMEM;
    }
    kscope__gnode *old = kscope__u64map_get(nodes, id);
    if (kscope__u64map_put(nodes, id, n) != 0) {
        kscope__gnode_free(n);
        return KSCOPE_ENOMEM;
    }
    kscope__gnode_free(old);
    return 0;
}

/* ---------------------------------------------------------- kept values */

kscope__gvalue *kscope__gvalue_new(const kscope__graph_value *v, int64_t token)
{
    size_t bytes = v->vals ? v->n * 8 : 0;
    kscope__gvalue *g = malloc(sizeof *g + bytes);
    if (!g)
        return NULL;
    g->v = *v;
    g->token = token;
    g->refs = 0; /* each list (and each launch waiting for a flush) holds one */
    if (bytes) {
        memcpy(g + 1, v->vals, bytes);
        g->v.vals = g + 1;
    }
    return g;
}

void kscope__gvalue_unref(kscope__gvalue *g, kscope__released *rel)
{
    if (!g || --g->refs > 0)
        return;
    if (g->token && rel) {
        /* Out of memory: the token is never reported; its memory stays. */
        if (rel->n < rel->cap || KSCOPE__ROOM(rel->tokens, rel->cap, rel->n + 1, 16) == 0)
            rel->tokens[rel->n++] = g->token;
    }
    free(g);
}

int kscope__gvlist_add(kscope__gvlist *l, kscope__gvalue *g)
{
    if (l->n == l->cap && KSCOPE__ROOM(l->items, l->cap, l->n + 1, 8) != 0)
        return KSCOPE_ENOMEM;
    l->items[l->n++] = g;
    g->refs++;
    return 0;
}

kscope__gvlist *kscope__gvlist_copy(const kscope__gvlist *from)
{
    kscope__gvlist *l = calloc(1, sizeof *l);
    for (size_t i = 0; l && i < from->n; i++)
        if (kscope__gvlist_add(l, from->items[i]) != 0) {
            kscope__gvlist_free(l, NULL);
            return NULL;
        }
    return l;
}

void kscope__gvlist_free(kscope__gvlist *l, kscope__released *rel)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        kscope__gvalue_unref(l->items[i], rel);
    free(l->items);
    free(l);
}

void kscope__released_free(kscope__released *rel)
{
    free(rel->tokens);
    memset(rel, 0, sizeof *rel);
}

size_t kscope__released_take(kscope__released *rel, int64_t *out, size_t n)
{
    size_t k = rel->n < n ? rel->n : n;
    if (k)
        memcpy(out, rel->tokens + (rel->n - k), k * sizeof *out);
    rel->n -= k;
    return k;
}
