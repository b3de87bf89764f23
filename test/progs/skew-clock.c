/*
 * skew-clock.c - an LD_PRELOAD shim for tests: CLOCK_MONOTONIC runs ahead
 * of the CPU's time stamp counter by an amount that grows with the square
 * of the time since its first read (SKEW_PER_S2 seconds per second
 * squared), as a clock slewed by NTP drifts from the TSC. A timeline whose
 * parts come from both clocks then shows the drift; one that keeps each
 * track on one clock does not.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <time.h>

#define SKEW_PER_S2 5e-3

static int (*real_gettime)(clockid_t, struct timespec *);
static _Atomic int64_t first_ns;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    if (!real_gettime)
        *(void **)&real_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real_gettime(id, ts);
    if (rc != 0 || id != CLOCK_MONOTONIC)
        return rc;
    int64_t ns = (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec, none = 0;
    __atomic_compare_exchange_n(&first_ns, &none, ns, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    double t = (double)(ns - __atomic_load_n(&first_ns, __ATOMIC_RELAXED)) / 1e9;
    ns += (int64_t)(SKEW_PER_S2 * t * t * 1e9);
    ts->tv_sec = ns / 1000000000;
    ts->tv_nsec = ns % 1000000000;
    return 0;
}
