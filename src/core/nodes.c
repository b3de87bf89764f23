/*
 * nodes.c - the calling-context tree's nodes: carved from their owner's
 * pages, found among their siblings (a list, and a hash index once there
 * are many), their host counters by page, and the parts only some carry.
 *
 * A node costs 48 bytes, its counters 16 per session slot that counts it
 * and, under a parent with many children, 10 to 20 bytes of index: a
 * million distinct scopes fit in a little over 100 MB with their names.
 */
#include "core.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The global root's nodes (kernels with no context, graph work under it). */
static kscope__node_pool global_pool;
static pthread_mutex_t global_root_lock = PTHREAD_MUTEX_INITIALIZER;

kscope__thread *kscope__node_owner(const kscope__node *n)
{
    if (n->kind != KSCOPE__NODE_ROOT)
        return kscope__page_of(n)->owner;
    if (n == &kscope__g.root)
        return NULL;
    return (kscope__thread *)((char *)n - offsetof(kscope__thread, root));
}

pthread_mutex_t *kscope__owner_lock(const kscope__node *n)
{
    kscope__thread *t = kscope__node_owner(n);
    return t ? &t->lock : &global_root_lock;
}

static kscope__node_pool *pool_of(kscope__thread *t)
{
    return t ? &t->nodes : &global_pool;
}

kscope__node_page *kscope__node_pages(const kscope__thread *t)
{
    return t ? t->nodes.newest : global_pool.newest;
}

/* Node number i of a pool, through the directory the caller read. */
static kscope__node *numbered(kscope__node_page *const *dir, uint32_t i)
{
    return (kscope__node *)dir[i / KSCOPE__PAGE_NODES] + KSCOPE__PAGE_HEAD + i % KSCOPE__PAGE_NODES;
}

/* Room for more pages in the pool's directory: a new one twice as large,
 * published. The old one stays (the owner may be reading it); the new
 * one's hidden slot before its first keeps it reachable. */
static int pool_grow(kscope__node_pool *p)
{
    uint32_t cap = p->cap ? p->cap * 2 : 16;
    kscope__node_page **mem = calloc((size_t)cap + 1, sizeof *mem);
    if (!mem)
        return -1;
    kscope__node_page **old = atomic_load_explicit(&p->dir, memory_order_relaxed);
    if (old)
        memcpy(mem + 1, old, p->npages * sizeof *old);
    mem[0] = old ? (kscope__node_page *)(old - 1) : NULL;
    atomic_store_explicit(&p->dir, mem + 1, memory_order_release);
    p->cap = cap;
    return 0;
}

/* A zeroed node from the owner's newest page, or a new page; the caller
 * holds the owner's lock. NULL out of memory. */
static kscope__node *node_alloc(kscope__thread *owner)
{
    kscope__node_pool *p = pool_of(owner);
    kscope__node_page *pg = p->newest;
    if (!pg || pg->used == KSCOPE__PAGE_NODES) {
        if (p->npages == p->cap && pool_grow(p) != 0)
            return NULL;
        kscope__node_page *np = aligned_alloc(KSCOPE__PAGE_BYTES, KSCOPE__PAGE_BYTES);
        if (!np)
            return NULL;
        memset(np, 0, sizeof *np);
        np->owner = owner;
        np->next = pg;
        np->number = p->npages;
        atomic_load_explicit(&p->dir, memory_order_relaxed)[p->npages++] = np;
        p->newest = pg = np;
    }
    kscope__node *n = (kscope__node *)pg + KSCOPE__PAGE_HEAD + pg->used;
    memset(n, 0, sizeof *n);
    n->number = pg->number * KSCOPE__PAGE_NODES + pg->used;
    pg->used++;
    return n;
}

/* ----------------------------------------------------------- counters */

/* Where counters go when their array cannot be made: written by any
 * thread, read by none. */
static kscope__stats stats_sink[KSCOPE__PAGE_NODES];
static _Atomic uint64_t cpu_sink[KSCOPE__PAGE_NODES];

/* Publish a zeroed array of n elements of size esz at *slot, unless a
 * thread (an async scope's end) did first; the array that stays. */
static void *publish(void *_Atomic *slot, size_t esz, void *sink)
{
    void *mine = calloc(KSCOPE__PAGE_NODES, esz);
    if (!mine)
        return sink;
    void *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(slot, &none, mine, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(mine);
        return none;
    }
    return mine;
}

kscope__stats *kscope__stats_page(kscope__node_page *pg, int s)
{
    return publish((void *_Atomic *)&pg->stats[s], sizeof(kscope__stats), stats_sink);
}

_Atomic uint64_t *kscope__cpu_page(kscope__node_page *pg, int s)
{
    return publish((void *_Atomic *)&pg->cpu[s], sizeof(uint64_t), cpu_sink);
}

/* ------------------------------------------------------- extra parts */

kscope__node_ext *kscope__node_ext_make(kscope__node *n)
{
    kscope__node_ext *x = atomic_load_explicit(&n->ext, memory_order_acquire);
    if (x)
        return x;
    kscope__node_ext *mine = calloc(1, sizeof *mine);
    if (!mine)
        return NULL;
    if (!atomic_compare_exchange_strong_explicit(&n->ext, &x, mine, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(mine); /* made by a thread holding another lock */
        return x;
    }
    return mine;
}

kscope__gpustats *kscope__node_gpu_make(kscope__node *n, int s)
{
    kscope__node_ext *x = kscope__node_ext_make(n);
    if (x && !x->gpu[s])
        x->gpu[s] = calloc(1, sizeof *x->gpu[s]);
    return x ? x->gpu[s] : NULL;
}

/* ----------------------------------------------------------- children */

/* Nodes with at most this many children are searched in their list. */
#define CHILD_TABLE_MIN 8

static uint32_t child_hash(uint32_t name, uint32_t kind, uint32_t device)
{
    uint32_t h = name * 2654435761u ^ (kind << 24) ^ device * 40503u;
    return h ^ (h >> 15);
}

static int child_is(const kscope__node *c, uint32_t name, uint32_t kind, uint32_t device)
{
    return c->name == name && c->kind == kind && c->device == device;
}

static kscope__child_table *table_of(const kscope__node *n, memory_order mo)
{
    kscope__node_ext *x = kscope__node_ext_get(n);
    return x ? atomic_load_explicit(&x->children, mo) : NULL;
}

static kscope__node *table_find(const kscope__child_table *tb, kscope__node_pool *pool,
                                uint32_t name, uint32_t kind, uint32_t device)
{
    kscope__node_page **dir = NULL;
    uint32_t j = child_hash(name, kind, device) & tb->mask;
    for (;; j = (j + 1) & tb->mask) {
        uint32_t k = atomic_load_explicit(&tb->slot[j].number, memory_order_acquire);
        if (!k)
            return NULL;
        if (tb->slot[j].name != name)
            continue;
        if (!dir) /* after the slot's acquire: the directory holds its page */
            dir = atomic_load_explicit(&pool->dir, memory_order_acquire);
        kscope__node *c = numbered(dir, k - 1);
        if (child_is(c, name, kind, device))
            return c;
    }
}

/* Without the owner's lock only the owner itself may look (a table it
 * replaced is freed at once: see table_rebuild). A child published after
 * the owner looked may be missed, so one that finds nothing looks again
 * under its lock. */
static kscope__node *find_child(kscope__node *parent, uint32_t name, uint32_t kind, uint32_t device)
{
    kscope__child_table *tb = table_of(parent, memory_order_acquire);
    if (tb)
        return table_find(tb, pool_of(kscope__node_owner(parent)), name, kind, device);
    kscope__node *c = atomic_load_explicit(&parent->first_child, memory_order_acquire);
    for (; c; c = c->next_sibling)
        if (child_is(c, name, kind, device))
            return c;
    return NULL;
}

static void table_put(kscope__child_table *tb, const kscope__node *c)
{
    uint32_t j = child_hash(c->name, c->kind, c->device) & tb->mask;
    while (atomic_load_explicit(&tb->slot[j].number, memory_order_relaxed))
        j = (j + 1) & tb->mask;
    tb->slot[j].name = c->name;
    atomic_store_explicit(&tb->slot[j].number, c->number + 1, memory_order_release);
    tb->used++;
}

static void tables_free(kscope__child_table *tb)
{
    while (tb) {
        kscope__child_table *older = tb->older;
        free(tb);
        tb = older;
    }
}

/* Whether the calling thread may free a table of parent's it replaced: it
 * holds the owner's lock, and only the owner looks without it, so when it
 * is the owner (or there is none: the global root's nodes). */
static int may_free_tables(const kscope__node *parent)
{
    kscope__thread *owner = kscope__node_owner(parent);
    return !owner || owner == kscope__tls;
}

/* Index parent's children in a new table, at most half full, and publish
 * it. Tables grow at four fifths full, so one holds 1.25 to 2.5 slots of
 * 8 bytes per child (the name beside each keeps a probe cheap). A replaced table the owner may
 * still be reading (another thread rebuilt it: a buffer thread adding a kernel under a thread's
 * node) waits for the owner's next rebuild. */
static int table_rebuild(kscope__node *parent, kscope__node_ext *x)
{
    kscope__child_table *old = atomic_load_explicit(&x->children, memory_order_relaxed);
    uint32_t cap = 64;
    while (cap < parent->nchildren * 2)
        cap *= 2;
    kscope__child_table *tb = calloc(1, sizeof *tb + cap * sizeof tb->slot[0]);
    if (!tb)
        return -1;
    tb->mask = cap - 1;
    kscope__node *c = atomic_load_explicit(&parent->first_child, memory_order_relaxed);
    for (; c; c = c->next_sibling)
        table_put(tb, c);
    atomic_store_explicit(&x->children, tb, memory_order_release);
    if (may_free_tables(parent))
        tables_free(old);
    else
        tb->older = old;
    return 0;
}

/* Called with the owner's lock held, c already linked: index it. Tables
 * grow only here, when a child is created (which allocates anyway). */
static int table_add(kscope__node *parent, kscope__node *c)
{
    if (++parent->nchildren <= CHILD_TABLE_MIN)
        return 0;
    kscope__node_ext *x = kscope__node_ext_make(parent);
    if (!x)
        return -1;
    kscope__child_table *tb = atomic_load_explicit(&x->children, memory_order_relaxed);
    if (!tb || (tb->used + 1) * 5 > (tb->mask + 1) * 4)
        return table_rebuild(parent, x);
    table_put(tb, c);
    return 0;
}

/* Link a new child under parent; the caller holds the owner's lock. With
 * no memory for a larger index the index is dropped (it would miss the
 * child): the list is searched until the next child rebuilds it. */
static kscope__node *new_child(kscope__node *parent, uint32_t name, uint32_t kind, uint32_t device)
{
    kscope__node *c = node_alloc(kscope__node_owner(parent));
    if (!c)
        return NULL;
    c->name = name;
    c->kind = (uint16_t)kind;
    c->device = (uint16_t)device;
    c->parent = parent;
    c->next_sibling = atomic_load_explicit(&parent->first_child, memory_order_relaxed);
    atomic_store_explicit(&parent->first_child, c, memory_order_release);
    if (table_add(parent, c) != 0) {
        kscope__node_ext *x = kscope__node_ext_get(parent);
        kscope__child_table *tb = x ? atomic_exchange(&x->children, NULL) : NULL;
        if (may_free_tables(parent))
            tables_free(tb); /* else the owner may be in it: left, as memory ran out */
    }
    return c;
}

kscope__node *kscope__node_child(kscope__thread *t, kscope__node *parent, uint32_t name,
                                 uint32_t kind)
{
    uint32_t h = (uint32_t)(((uintptr_t)parent >> 4) ^ (name * 2654435761u) ^ kind) &
                 (KSCOPE__CHILD_CACHE - 1);
    if (t->child_cache[h].parent == parent && t->child_cache[h].name == name &&
        t->child_cache[h].kind == kind)
        return t->child_cache[h].child;
    kscope__node *c = find_child(parent, name, kind, 0);
    if (!c) {
        pthread_mutex_lock(&t->lock);
        c = find_child(parent, name, kind, 0);
        if (!c)
            c = new_child(parent, name, kind, 0);
        pthread_mutex_unlock(&t->lock);
        if (!c) {
            kscope__fail(KSCOPE_ENOMEM, "out of memory adding scope '%s'", kscope__name(name));
            return NULL;
        }
    }
    t->child_cache[h].parent = parent;
    t->child_cache[h].child = c;
    t->child_cache[h].name = name;
    t->child_cache[h].kind = kind;
    return c;
}

kscope__node *kscope__node_child_locked(kscope__node *parent, uint32_t name, uint32_t kind,
                                        uint32_t device)
{
    pthread_mutex_t *lk = kscope__owner_lock(parent);
    pthread_mutex_lock(lk);
    kscope__node *c = find_child(parent, name, kind, device);
    if (!c)
        c = new_child(parent, name, kind, device);
    pthread_mutex_unlock(lk);
    return c;
}
