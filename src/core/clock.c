/*
 * clock.c - the one monotonic clock for host scopes and GPU records.
 *
 * The hot path reads raw ticks: the TSC on x86-64 when the CPU says it is
 * invariant (about 7 ns, against about 20 ns for clock_gettime), otherwise
 * CLOCK_MONOTONIC in ns. Ticks become nanoseconds of CLOCK_MONOTONIC through
 * a linear map fitted between two (tsc, ns) pairs; the second pair is
 * refreshed as the run grows longer, so the slope sharpens as it goes on.
 * It is refreshed at the sessions' own steps (start, activate, deactivate,
 * a phase's end, finalize) and when an active session is read, never by
 * reading a paused one: two reads of the same data convert alike (Proton's
 * test_get_data compares data.get with get_msgpack).
 */
#include "kscope-internal.h"

#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

int kscope__use_tsc;
static uint64_t base_tsc, base_ns;
static double ns_per_tick = 1.0;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t fit_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t fit_tsc, fit_ns; /* latest second point */

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t kscope_now_ns(void)
{
    return monotonic_ns();
}

/* The TSC runs at one rate in every power state (what Linux calls
 * constant_tsc and nonstop_tsc): CPUID leaf 0x80000007, EDX bit 8. Asked
 * of the CPU, not read from /proc/cpuinfo, which takes the kernel tens of
 * microseconds to write, in every process of a run. */
static int cpu_has_invariant_tsc(void)
{
#if defined(__x86_64__)
    if (getenv("KSCOPE_NO_TSC"))
        return 0;
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
        return 0;
    return (d >> 8) & 1;
#else
    return 0;
#endif
}

static uint64_t read_tsc(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return monotonic_ns();
#endif
}

/* Sample (tsc, ns) close together: take the pair with the shortest gap. */
static void sample_pair(uint64_t *tsc, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = read_tsc(), n = monotonic_ns(), b = read_tsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
}

/* The span of the first fit and the least time between refits: short, as
 * every process of a `kscope run` starts the clock (a wait here is paid by
 * each exec of a shell script or a make); the slope sharpens at the
 * session's steps as the run grows (kscope__clock_refresh). */
#define FIRST_SPAN_NS 20000ull

static void clock_setup(void)
{
    kscope__use_tsc = cpu_has_invariant_tsc();
    if (!kscope__use_tsc)
        return;
    sample_pair(&base_tsc, &base_ns);
    uint64_t t, n;
    do
        sample_pair(&t, &n);
    while (n - base_ns < FIRST_SPAN_NS);
    ns_per_tick = (double)(n - base_ns) / (double)(t - base_tsc);
    atomic_store(&fit_tsc, t);
    atomic_store(&fit_ns, n);
}

void kscope__clock_init(void)
{
    pthread_once(&clock_once, clock_setup);
}

uint64_t kscope__ticks_slow(void)
{
    return monotonic_ns();
}

/* Has the span since the base grown by a quarter since the last fit? The
 * slope's error is the sampling jitter over the span, so refitting as the
 * span grows keeps the drift of converted times at a few ns. */
static int fit_is_stale(uint64_t now_ns)
{
    uint64_t last = atomic_load(&fit_ns);
    uint64_t since = now_ns - last, span = last - base_ns;
    return since > FIRST_SPAN_NS && since > span / 4;
}

static void refit(void)
{
    uint64_t t, n;
    sample_pair(&t, &n);
    pthread_mutex_lock(&fit_lock);
    ns_per_tick = (double)(n - base_ns) / (double)(t - base_tsc);
    atomic_store(&fit_tsc, t);
    atomic_store(&fit_ns, n);
    pthread_mutex_unlock(&fit_lock);
}

uint64_t kscope__refits;

void kscope__clock_refresh(void)
{
    if (kscope__use_tsc && fit_is_stale(monotonic_ns())) {
        refit();
        __atomic_fetch_add(&kscope__refits, 1, __ATOMIC_RELAXED);
    }
}

uint64_t kscope__ticks_to_ns(uint64_t ticks)
{
    if (!kscope__use_tsc)
        return ticks;
    int64_t dt = (int64_t)(ticks - base_tsc);
    return base_ns + (uint64_t)(int64_t)((double)dt * ns_per_tick);
}

uint64_t kscope__ticks_delta_ns(uint64_t dt)
{
    if (!kscope__use_tsc)
        return dt;
    return (uint64_t)((double)dt * ns_per_tick + 0.5);
}
