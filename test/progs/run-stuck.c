/*
 * run-stuck.c - a program whose allocator a thread can close, for
 * test/cli-run-sig.sh: it records a scope (so under `kscope run` a finisher
 * thread would write its profile on a signal), closes its allocator to
 * every other thread and raises SIGTERM on the thread holding it. The
 * finisher then blocks in malloc for good: the handler must give up
 * waiting for it, and the process end by SIGTERM, as it does bare.
 */
#define _GNU_SOURCE
#include "kscope.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static pthread_t closer;
static volatile int closed;

/* Every other thread waits (blocked, using no CPU) while the gate is closed. */
static void pass_gate(void)
{
    if (closed && !pthread_equal(pthread_self(), closer)) {
        pthread_mutex_lock(&gate);
        pthread_mutex_unlock(&gate);
    }
}

void *malloc(size_t n)
{
    pass_gate();
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    pass_gate();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    pass_gate();
    return __libc_realloc(p, n);
}

int main(void)
{
    kscope_enter("main");
    printf("before\n");
    fflush(stdout);
    closer = pthread_self();
    pthread_mutex_lock(&gate);
    closed = 1;
    raise(SIGTERM);
    printf("after\n");
    return 0;
}
