/*
 * bench_scope.c - what annotating costs, from C.
 *
 * Prints ns per scope enter+exit (KSCOPE_SCOPE, a static call site) with no
 * session, a tree session and a trace session; the same with 8 threads at
 * once (per-thread cost should not grow: the hot path writes no shared
 * cache line); tree memory after 1k and 1M entries (flat); trace bytes per
 * event; and how long writing 1M trace events as Chrome JSON takes.
 * Figures go to stdout as "name value unit" lines, then a table.
 */
#include "kscope.h"

#include <stdint.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

__attribute__((noinline)) static void loop(long n)
{
    for (long i = 0; i < n; i++) {
        KSCOPE_SCOPE("bench");
        __asm__ volatile("" ::: "memory");
    }
}

/* The clock's own cost: two timestamps per scope are the floor of any
 * scope that measures its wall time (rdtsc costs 7-16 ns by CPU). */
__attribute__((noinline)) static double clock_floor(long n)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        uint64_t sink = 0;
        for (long i = 0; i < n; i++) {
            uint32_t lo, hi;
            __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
            sink += lo;
            __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
            sink -= lo;
        }
        __asm__ volatile("" ::"r"(sink));
        double dt = (now_s() - t0) / (double)n * 1e9;
        best = dt < best ? dt : best;
    }
    return best;
}

/* Best of 5 runs of n iterations, in ns per iteration. */
static double ns_per_scope(long n)
{
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        loop(n);
        double dt = (now_s() - t0) / (double)n * 1e9;
        best = dt < best ? dt : best;
    }
    return best;
}

static void *thread_body(void *arg)
{
    double *out = arg;
    *out = ns_per_scope(2000000);
    return NULL;
}

static double threaded(int nthreads)
{
    pthread_t th[64];
    double per[64], sum = 0;
    for (int i = 0; i < nthreads; i++)
        pthread_create(&th[i], NULL, thread_body, &per[i]);
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        sum += per[i];
    }
    return sum / nthreads;
}

static int start(const char *data)
{
    kscope_session_opts o = {.name = "/tmp/kscope-bench", .data = data, .backend = "none"};
    int s = kscope_start(&o);
    if (s < 0) {
        fprintf(stderr, "bench: %s\n", kscope_last_error());
        exit(1);
    }
    return s;
}

int main(void)
{
    long n = 10000000;
    double off = ns_per_scope(n);
    double floor2 = clock_floor(n);

    /* Trace memory first, on fresh buffers. */
    int s = start("trace");
    long before = rss_kb();
    loop(500000); /* 1M events: 500k begin + 500k end */
    long after = rss_kb();
    double t0 = now_s();
    kscope_finalize(s, NULL);
    double write_s = now_s() - t0;
    double bytes_per_event = (double)(after - before) * 1024.0 / 1e6;

    s = start("tree");
    double tree = ns_per_scope(n);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = cpus >= 8 ? 8 : (int)(cpus > 1 ? cpus : 2);
    double tree_mt = threaded(nthreads);
    loop(1000);
    long rss_1k = rss_kb();
    loop(1000000);
    long rss_1m = rss_kb();
    kscope_finalize(s, NULL);

    s = start("trace");
    double trace = ns_per_scope(2000000);
    kscope_finalize(s, NULL);

    printf("clock_floor_2_timestamps %.2f ns\n", floor2);
    printf("scope_no_session %.2f ns\n", off);
    printf("scope_tree %.2f ns\n", tree);
    printf("scope_tree_%dthreads %.2f ns\n", nthreads, tree_mt);
    printf("scope_trace %.2f ns\n", trace);
    printf("tree_rss_after_1k %ld kB\n", rss_1k);
    printf("tree_rss_after_1M %ld kB\n", rss_1m);
    printf("trace_bytes_per_event %.1f B\n", bytes_per_event);
    printf("trace_write_1M_events %.3f s\n", write_s);
    printf("\n%-34s %10s %10s\n", "what", "measured", "goal");
    printf("%-34s %7.2f ns %7s\n", "two rdtsc (the floor)", floor2, "-");
    printf("%-34s %7.2f ns %7s ns\n", "enter+exit, no session", off, "<= 2");
    printf("%-34s %7.2f ns %7s ns\n", "enter+exit, tree session", tree, "<= 20");
    printf("%-34s %7.2f ns %7s ns\n", "enter+exit, tree, threads", tree_mt, "= 1 thr");
    printf("%-34s %7.2f ns %7s ns\n", "enter+exit, trace session", trace, "<= 40");
    printf("%-34s %7ld kB %7s\n", "tree RSS growth 1k -> 1M entries", rss_1m - rss_1k, "~0");
    printf("%-34s %7.1f B  %7s B\n", "trace memory per event", bytes_per_event, "<= 32");
    printf("%-34s %7.3f s  %7s s\n", "write 1M trace events (JSON)", write_s, "<= 1");
    return 0;
}
