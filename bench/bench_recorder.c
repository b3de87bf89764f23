/*
 * bench_recorder.c - what the background recorder costs: the CPU it takes
 * at the default 100 ms interval (target: under 1% of one core), the time
 * of one process reading, and of one GPU sample (target: at most 1 ms).
 *
 * usage: bench_recorder [SECONDS]   (default 5)
 * Prints one line per figure and a PASS/FAIL line per target. Without NVML
 * or a GPU it says "no GPU" and measures the CPU part alone.
 */
#include "diag/diag.h"
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of n timings of fn(arg), in microseconds. */
static double median_us(int n, int (*fn)(void *), void *arg)
{
    double *t = malloc((size_t)n * sizeof *t);
    if (!t)
        return -1;
    for (int i = 0; i < n; i++) {
        double t0 = now_s(CLOCK_MONOTONIC);
        fn(arg);
        t[i] = (now_s(CLOCK_MONOTONIC) - t0) * 1e6;
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double m = t[n / 2];
    free(t);
    return m;
}

static int read_self(void *arg)
{
    kscope_cpu_reading r;
    return kscope_cpu_read(*(int *)arg, &r);
}

static int read_gpu0(void *arg)
{
    (void)arg;
    kscope_gpu_stats g;
    return kscope_gpu_get_stats(0, &g);
}

static void print_call_cost(const char *call, double us, void *arg)
{
    (void)arg;
    printf("  %-42s %9.1f us\n", call, us);
}

static void sleep_s(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* CPU share of one core the recorder took while this thread slept, in the
 * steady state (starting it, with NVML's initialisation, is left out). */
static int recorder_cost(double seconds, double *share, size_t *samples, int *gpus)
{
    int self = getpid();
    kscope_recorder_opts o = {.interval_ms = 100, .pids = &self, .npids = 1};
    kscope_recorder *r = NULL;
    if (kscope_recorder_start(&o, &r) != 0) {
        fprintf(stderr, "bench_recorder: %s\n", kscope_last_error());
        return -1;
    }
    sleep_s(0.5);
    size_t n0 = kscope_recorder_count(r);
    double c0 = now_s(CLOCK_PROCESS_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
    sleep_s(seconds);
    double c1 = now_s(CLOCK_PROCESS_CPUTIME_ID), w1 = now_s(CLOCK_MONOTONIC);
    *samples = kscope_recorder_count(r) - n0;
    kscope_recorder_stop(r);
    *share = (c1 - c0) / (w1 - w0);
    *gpus = kscope_recorder_gpus(r);
    kscope_recorder_free(r);
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    if (!(seconds > 0)) {
        fprintf(stderr, "usage: bench_recorder [SECONDS]\n");
        return 2;
    }
    setenv("KSCOPE_QUIET", "1", 0);
    int self = getpid(), failed = 0;
    printf("cpu reading: %.1f us per process (median of 1000)\n",
           median_us(1000, read_self, &self));

    int ngpu = kscope_gpu_init();
    if (ngpu <= 0) {
        printf("no GPU (%s)\n", ngpu < 0 ? kscope_last_error() : "NVML found none");
    } else {
        char name[96];
        kscope_gpu_name(0, name, sizeof name);
        read_gpu0(NULL); /* first calls warm NVML up */
        double us = median_us(200, read_gpu0, NULL);
        printf("gpu sample: %.3f ms per device (median of 200, %d GPUs, %s)\n", us / 1000, ngpu,
               name);
        printf("%s  one GPU sample <= 1 ms (%.3f ms)\n", us <= 1000 ? "PASS" : "FAIL", us / 1000);
        failed |= us > 1000;
        printf("NVML calls of one sample (mean of 50 each):\n");
        kscope__gpu_call_costs(0, 50, print_call_cost, NULL);
    }

    double share;
    size_t samples;
    int gpus;
    if (recorder_cost(seconds, &share, &samples, &gpus) != 0)
        return 1;
    printf("recorder at 100 ms: %.3f%% of one core over %.1f s (%zu samples, 1 process, %d "
           "GPUs)\n",
           100 * share, seconds, samples, gpus);
    printf("%s  recorder at 100 ms < 1%% of one core (%.3f%%)\n", share < 0.01 ? "PASS" : "FAIL",
           100 * share);
    failed |= share >= 0.01;
    if (ngpu > 0)
        kscope_gpu_shutdown();
    return failed;
}
