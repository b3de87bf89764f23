/*
 * thread.c - per-thread state: found through TLS, registered once, kept
 * after the thread ends so that finalize still sees what it recorded.
 */
#define _GNU_SOURCE
#include "core.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread kscope__thread *kscope__tls;
static kscope__thread *registry;
static uint32_t nthreads;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static kscope__thread *main_thread; /* read by any thread: atomic access */

/* A thread that ends keeps its data; its open scopes close at finalize. */
static void thread_exit(void *p)
{
    kscope__thread *t = p;
    atomic_store(&t->alive, 0);
}

/* After fork() the forking thread is the child's only, hence main, thread. */
static void after_fork_child(void)
{
    KSCOPE__STORE(&main_thread, kscope__tls);
}

static void make_key(void)
{
    pthread_key_create(&exit_key, thread_exit);
    pthread_atfork(NULL, NULL, after_fork_child);
}

static void node_init(kscope__node *n, kscope__thread *owner, uint32_t kind)
{
    n->kind = (uint16_t)kind;
    n->owner = owner;
}

/* ------------------------------------------------------------ node pages */

/* The global root's pages (guarded by global_root_lock). */
static kscope__node_page *global_pages;
static pthread_mutex_t global_root_lock = PTHREAD_MUTEX_INITIALIZER;

/* A zeroed node from the owner's newest page, or a new page; the caller
 * holds the owner's lock. NULL out of memory. */
static kscope__node *node_alloc(kscope__node_page **pages)
{
    kscope__node_page *pg = *pages;
    if (!pg || pg->used == KSCOPE__PAGE_NODES) {
        kscope__node_page *np = aligned_alloc(KSCOPE__PAGE_BYTES, KSCOPE__PAGE_BYTES);
        if (!np)
            return NULL;
        memset(np, 0, sizeof *np);
        np->next = pg;
        *pages = pg = np;
    }
    kscope__node *n = (kscope__node *)pg + KSCOPE__PAGE_HEAD + pg->used;
    memset(n, 0, sizeof *n);
    pg->used++;
    return n;
}

kscope__node_page *kscope__node_pages(const kscope__thread *t)
{
    return t ? t->page : global_pages;
}

/* Where counters go when their array cannot be made: written by any
 * thread, read by none. */
static kscope__stats stats_sink[KSCOPE__PAGE_NODES];

kscope__stats *kscope__stats_page(kscope__node_page *pg, int s)
{
    kscope__stats *st = calloc(KSCOPE__PAGE_NODES, sizeof *st);
    if (!st)
        return stats_sink;
    kscope__stats *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&pg->stats[s], &none, st, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(st); /* another thread (an async scope's end) made it first */
        return none;
    }
    return st;
}

kscope__gpustats *kscope__node_gpu_make(kscope__node *n, int s)
{
    kscope__node_ext *x = kscope__node_ext_make(n);
    if (x && !x->gpu[s])
        x->gpu[s] = calloc(1, sizeof *x->gpu[s]);
    return x ? x->gpu[s] : NULL;
}

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

kscope__thread *kscope__thread_new(void)
{
    kscope__thread *t = kscope__tls;
    if (t)
        return t;
    kscope__clock_init();
    t = calloc(1, sizeof *t);
    if (!t) {
        kscope__fail(KSCOPE_ENOMEM, "out of memory creating thread state");
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    node_init(&t->root, t, KSCOPE__NODE_ROOT);
    t->stack[0].node = &t->root;
    t->tid = (uint32_t)syscall(SYS_gettid);
    atomic_store(&t->alive, 1);
    if (pthread_getname_np(pthread_self(), t->name, sizeof t->name) != 0)
        t->name[0] = 0;
    pthread_once(&key_once, make_key);
    pthread_setspecific(exit_key, t);
    pthread_mutex_lock(&registry_lock);
    t->index = nthreads++;
    t->next = registry;
    registry = t;
    pthread_mutex_unlock(&registry_lock);
    kscope__tls = t;
    if (t->tid == (uint32_t)getpid())
        KSCOPE__STORE(&main_thread, t);
    kscope__gpu_contexts_seen(); /* the GPU backend now follows launches */
    return t;
}

kscope__thread *kscope__main_thread(void)
{
    return KSCOPE__LOAD(&main_thread);
}

kscope__thread *kscope__threads(void)
{
    return registry;
}

void kscope__threads_lock(void)
{
    pthread_mutex_lock(&registry_lock);
}

void kscope__threads_unlock(void)
{
    pthread_mutex_unlock(&registry_lock);
}

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

static kscope__node *table_find(const kscope__child_table *tb, uint32_t name, uint32_t kind,
                                uint32_t device)
{
    /* the name beside each pointer spares a cache miss per probe */
    uint32_t j = child_hash(name, kind, device) & tb->mask;
    for (;; j = (j + 1) & tb->mask) {
        kscope__node *c = atomic_load_explicit(&tb->slot[j].node, memory_order_acquire);
        if (!c || (tb->slot[j].name == name && child_is(c, name, kind, device)))
            return c;
    }
}

/* Without the owner's lock only the owner itself may look (a table it
 * replaced is freed at once: see table_rebuild). A child published after
 * the owner looked may be missed, so one that finds nothing looks again
 * under its lock. */
static kscope__node *find_child(kscope__node *parent, uint32_t name, uint32_t kind, uint32_t device)
{
    kscope__child_table *tb = atomic_load_explicit(&parent->child_table, memory_order_acquire);
    if (tb)
        return table_find(tb, name, kind, device);
    kscope__node *c = atomic_load_explicit(&parent->first_child, memory_order_acquire);
    for (; c; c = c->next_sibling)
        if (child_is(c, name, kind, device))
            return c;
    return NULL;
}

static void table_put(kscope__child_table *tb, kscope__node *c)
{
    uint32_t j = child_hash(c->name, c->kind, c->device) & tb->mask;
    while (atomic_load_explicit(&tb->slot[j].node, memory_order_relaxed))
        j = (j + 1) & tb->mask;
    tb->slot[j].name = c->name;
    atomic_store_explicit(&tb->slot[j].node, c, memory_order_release);
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

/* Index parent's children in a new table, at most half full, and publish
 * it. Tables grow at three quarters full, so one holds 1.33 to 2.67 slots
 * per child. The replaced table is freed when no thread can be in it: the
 * caller holds the owner's lock, and only the owner looks without it, so
 * when the caller is the owner (or there is none: the global root's
 * nodes). A buffer thread adding a kernel under another thread's node
 * leaves the old table to the owner's next rebuild. */
static int table_rebuild(kscope__node *parent)
{
    kscope__child_table *old = atomic_load_explicit(&parent->child_table, memory_order_relaxed);
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
    atomic_store_explicit(&parent->child_table, tb, memory_order_release);
    if (!parent->owner || parent->owner == kscope__tls)
        tables_free(old);
    else
        tb->older = old;
    return 0;
}

/* Called with the owner's lock held, c already linked: index it. Tables
 * grow only here, when a child is created (which allocates anyway). */
static int table_add(kscope__node *parent, kscope__node *c)
{
    kscope__child_table *tb = atomic_load_explicit(&parent->child_table, memory_order_relaxed);
    if (++parent->nchildren <= CHILD_TABLE_MIN)
        return 0;
    if (!tb || (tb->used + 1) * 4 > (tb->mask + 1) * 3)
        return table_rebuild(parent);
    table_put(tb, c);
    return 0;
}

/* Link a new child under parent; the caller holds the owner's lock. With
 * no memory for a larger index the index is dropped (it would miss the
 * child): the list is searched until the next child rebuilds it. */
static kscope__node *new_child(kscope__node *parent, uint32_t name, uint32_t kind, uint32_t device)
{
    kscope__node *c = node_alloc(parent->owner ? &parent->owner->page : &global_pages);
    if (!c)
        return NULL;
    c->name = name;
    c->kind = (uint16_t)kind;
    c->device = (uint16_t)device;
    c->parent = parent;
    c->owner = parent->owner;
    c->next_sibling = atomic_load_explicit(&parent->first_child, memory_order_relaxed);
    atomic_store_explicit(&parent->first_child, c, memory_order_release);
    if (table_add(parent, c) != 0) {
        kscope__child_table *tb = atomic_exchange(&parent->child_table, NULL);
        if (!parent->owner || parent->owner == kscope__tls)
            tables_free(tb); /* else the owner may be in it: left, as memory ran out */
    }
    return c;
}

pthread_mutex_t *kscope__owner_lock(const kscope__node *n)
{
    return n->owner ? &n->owner->lock : &global_root_lock;
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
