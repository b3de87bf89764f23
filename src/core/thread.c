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
    kscope__run_recording();
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

/* Lock-free: a child published after the caller looked may be missed, so
 * a caller that finds nothing looks again under the owner's lock. */
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

/* Index parent's children in a new table with room for twice as many, and
 * publish it. The previous table stays reachable (readers may be in it). */
static int table_rebuild(kscope__node *parent)
{
    kscope__child_table *old = atomic_load_explicit(&parent->child_table, memory_order_relaxed);
    uint32_t cap = 64;
    while (cap < parent->nchildren * 4)
        cap *= 2;
    kscope__child_table *tb = calloc(1, sizeof *tb + cap * sizeof tb->slot[0]);
    if (!tb)
        return -1;
    tb->mask = cap - 1;
    tb->older = old;
    kscope__node *c = atomic_load_explicit(&parent->first_child, memory_order_relaxed);
    for (; c; c = c->next_sibling)
        table_put(tb, c);
    atomic_store_explicit(&parent->child_table, tb, memory_order_release);
    return 0;
}

/* Called with the owner's lock held, c already linked: index it. Tables
 * grow only here, when a child is created (which allocates anyway). */
static int table_add(kscope__node *parent, kscope__node *c)
{
    kscope__child_table *tb = atomic_load_explicit(&parent->child_table, memory_order_relaxed);
    if (++parent->nchildren <= CHILD_TABLE_MIN)
        return 0;
    if (!tb || (tb->used + 1) * 2 > tb->mask + 1)
        return table_rebuild(parent);
    table_put(tb, c);
    return 0;
}

/* Link a new child under parent; the caller holds the owner's lock. With
 * no memory for a larger index the index is dropped (it would miss the
 * child): the list is searched until the next child rebuilds it. */
static kscope__node *new_child(kscope__node *parent, uint32_t name, uint32_t kind, uint32_t device)
{
    kscope__node *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->name = name;
    c->kind = (uint16_t)kind;
    c->device = (uint16_t)device;
    c->parent = parent;
    c->owner = parent->owner;
    c->next_sibling = atomic_load_explicit(&parent->first_child, memory_order_relaxed);
    atomic_store_explicit(&parent->first_child, c, memory_order_release);
    if (table_add(parent, c) != 0)
        atomic_store_explicit(&parent->child_table, NULL, memory_order_release);
    return c;
}

static pthread_mutex_t global_root_lock = PTHREAD_MUTEX_INITIALIZER;

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
    kscope__node *c = find_child(parent, name, kind, device);
    if (c)
        return c;
    pthread_mutex_t *lk = kscope__owner_lock(parent);
    pthread_mutex_lock(lk);
    c = find_child(parent, name, kind, device);
    if (!c)
        c = new_child(parent, name, kind, device);
    pthread_mutex_unlock(lk);
    return c;
}
