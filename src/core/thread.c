/*
 * thread.c - per-thread state: found through TLS, registered once, kept
 * after the thread ends so that finalize still sees what it recorded.
 * Its calling-context tree's nodes are nodes.c's.
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
    t->root.kind = KSCOPE__NODE_ROOT;
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
