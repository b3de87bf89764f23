/*
 * finisher.c - writing the profile of a process that a signal ends.
 *
 * The stand-in handler (preload/signals.c) cannot write the profile
 * itself: writing allocates and takes locks, which the thread it
 * interrupted may hold. So a thread of kscope's own, the finisher, writes
 * it, while the interrupted thread waits in the handler with every signal
 * blocked (it runs nothing more of the program); once the file is written
 * the process ends by the signal, with its default action. A process with
 * nothing to write (no scope, no GPU or NVTX use) has no finisher: the
 * stand-in ends it at once. The finisher starts when the process first
 * records something, uses the GPU runtime or NVTX, so a process that does
 * none of these never has a thread of kscope's.
 *
 * The interrupted thread may hold a lock the writer needs: the allocator's,
 * or, inside a GPU runtime call, the driver's or its profiling interface's
 * (a launch loop is interrupted inside one most of the time). Then the
 * finisher makes no progress (uses no CPU):
 *  - a signal sent from outside lets the thread go on after RELEASE_AFTER:
 *    it leaves the lock, the profile is written, and the process ends by
 *    the signal then (a kernel timer ends it TOTAL_LIMIT after the signal
 *    if the writer never finishes). The program runs that much longer than
 *    without kscope, which only a stuck writer costs;
 *  - a signal the program raised itself never lets it go on (nothing after
 *    raise() may run): the handler gives up after IDLE_LIMIT without
 *    progress, or TOTAL_LIMIT in all, and the process ends by the signal
 *    without its profile, as it would have without kscope.
 * Nothing here uses a file descriptor: the handler and the finisher meet on
 * futex words.
 */
#define _GNU_SOURCE
#include "kscope-internal.h"
#include "run/run.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RELEASE_AFTER_NS (100ull * 1000000ull)   /* writer idle: let the thread go on */
#define IDLE_LIMIT_NS    (5ull * 1000000000ull)  /* the writer used no CPU this long: stuck */
#define TOTAL_LIMIT_NS   (60ull * 1000000000ull) /* and never longer than this in all */

static struct {
    pthread_mutex_t lock;  /* starting the thread */
    _Atomic int running;   /* the finisher waits for a signal */
    _Atomic int sig;       /* the signal that ends the process, 0 none yet */
    _Atomic uint32_t wake; /* futex: 1 once a signal asks for the profile */
    _Atomic uint32_t done; /* futex: 1 once it is written */
    _Atomic long owner;    /* the process the finisher belongs to */
    _Atomic long writer;   /* the thread inside kscope__run_finish, 0 none */
    _Atomic int released;  /* a thread stopped by the signal went on */
    _Atomic uint64_t at;   /* when the signal came (CLOCK_MONOTONIC ns) */
    clockid_t cpu;         /* the finisher's CPU-time clock */
} F = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* libkscope.so's signal layer (absent from a static copy, which installs
 * no stand-in and so never gets here with a signal). */
extern void kscope__signals_die(int sig) __attribute__((weak, noreturn));
/* A coverage build's counts, written before the process ends by a signal
 * (weak, unset in other builds). */
extern void __gcov_dump(void) __attribute__((weak));

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait(_Atomic uint32_t *word, const struct timespec *rel)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, 0, rel, NULL, 0);
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *finisher_main(void *arg)
{
    (void)arg;
    /* Bind this thread to its allocator arena now, not in a dying process
     * whose interrupted thread may hold the arena list's lock. */
    free(malloc(64));
    while (!atomic_load(&F.wake))
        futex_wait(&F.wake, NULL);
    kscope__set_ending(); /* no waiting for GPU work that dies with the process */
    kscope__run_finish();
    if (__gcov_dump)
        __gcov_dump();
    atomic_store(&F.done, 1);
    futex_wake(&F.done);
    /* End the process now: the thread the signal stopped may have gone on. */
    if (kscope__signals_die)
        kscope__signals_die(atomic_load(&F.sig));
    for (;;)
        futex_wait(&F.wake, NULL);
    return NULL;
}

void kscope__finisher_need(void)
{
    if (atomic_load_explicit(&F.running, memory_order_acquire))
        return;
    pthread_mutex_lock(&F.lock);
    if (!atomic_load(&F.running) && kscope__run_active()) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old); /* the program's signals are not its */
        pthread_t th;
        if (pthread_create(&th, NULL, finisher_main, NULL) == 0) {
            if (pthread_getcpuclockid(th, &F.cpu) != 0)
                F.cpu = CLOCK_MONOTONIC; /* then only the total limit applies */
            pthread_detach(th);
            atomic_store(&F.owner, (long)getpid());
            atomic_store_explicit(&F.running, 1, memory_order_release);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    pthread_mutex_unlock(&F.lock);
}

enum { WRITTEN, STUCK, RELEASE };

/* Wait for the profile, bounded (see the top of the file); RELEASE once the
 * writer made no progress for RELEASE_AFTER, when may_release. Async-
 * signal-safe. */
static int wait_written(int may_release)
{
    uint64_t start = atomic_load(&F.at), moved = clock_ns(CLOCK_MONOTONIC);
    uint64_t cpu = clock_ns(F.cpu);
    while (!atomic_load(&F.done)) {
        struct timespec slice = {0, 10 * 1000 * 1000};
        futex_wait(&F.done, &slice);
        uint64_t now = clock_ns(CLOCK_MONOTONIC), c = clock_ns(F.cpu);
        if (c != cpu) {
            cpu = c;
            moved = now;
        }
        if (may_release && now - moved > RELEASE_AFTER_NS)
            return RELEASE;
        if (now - moved > IDLE_LIMIT_NS || now - start > TOTAL_LIMIT_NS)
            return STUCK;
    }
    return WRITTEN;
}

/* A kernel timer (no descriptor, no thread) that sends sig to the process
 * TOTAL_LIMIT after the signal came: the stand-in then ends it at once. */
static void arm_deadline(int sig)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = sig;
    int id;
    if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &ev, &id) != 0)
        return;
    uint64_t end = atomic_load(&F.at) + TOTAL_LIMIT_NS;
    struct itimerspec when = {{0, 0}, {(time_t)(end / 1000000000ull), (long)(end % 1000000000ull)}};
    syscall(SYS_timer_settime, id, TIMER_ABSTIME, &when, NULL);
}

int kscope__finisher_fatal(int sig, int from_outside)
{
    int saved = errno, none = 0, end_by = sig;
    long pid = (long)getpid();
    if (atomic_load(&F.owner) == pid && atomic_load(&F.writer) == (long)syscall(SYS_gettid)) {
        /* It lands on the thread writing the profile (at exit): that
         * thread finishes the file, then ends the process by it. */
        atomic_compare_exchange_strong(&F.sig, &none, sig);
        errno = saved;
        return 0;
    }
    if (atomic_load(&F.running) && atomic_load(&F.owner) == pid) {
        if (atomic_compare_exchange_strong(&F.sig, &none, sig)) {
            atomic_store(&F.at, clock_ns(CLOCK_MONOTONIC));
            atomic_store(&F.wake, 1);
            futex_wake(&F.wake);
        }
        end_by = atomic_load(&F.sig); /* the first signal ends the process */
        int past = atomic_load(&F.released) &&
                   clock_ns(CLOCK_MONOTONIC) - atomic_load(&F.at) >= TOTAL_LIMIT_NS;
        if (!past && wait_written(from_outside) == RELEASE) {
            if (!atomic_exchange(&F.released, 1))
                arm_deadline(end_by);
            end_by = 0; /* go on: the finisher ends the process */
        }
    }
    errno = saved;
    return end_by;
}

void kscope__finisher_exit_check(void)
{
    int sig = atomic_load(&F.sig);
    if (!sig || atomic_load(&F.owner) != (long)getpid() || !kscope__signals_die)
        return;
    if (atomic_load(&F.wake)) /* the finisher writes: wait for it */
        wait_written(0);
    kscope__signals_die(sig);
}

void kscope__finisher_writing(int on)
{
    atomic_store(&F.writer, on ? (long)syscall(SYS_gettid) : 0);
}

int kscope__finisher_forked(void)
{
    int had = atomic_load(&F.running);
    pthread_mutex_init(&F.lock, NULL);
    atomic_store(&F.running, 0);
    atomic_store(&F.sig, 0);
    atomic_store(&F.wake, 0);
    atomic_store(&F.done, 0);
    atomic_store(&F.writer, 0);
    atomic_store(&F.released, 0);
    atomic_store(&F.owner, (long)getpid());
    return had;
}
