/*
 * memory_bench.c - what a profiled process holds, and what it writes, per
 * million scopes (tree sessions) or events (trace sessions).
 *
 *   memory_bench tree N [DIR]          N distinct sibling scopes under one
 *                                      parent, then finalize
 *   memory_bench trace N [DIR] [FORMAT]  N/2 host scopes, each launching
 *                                      one kernel (N events: a slice and a
 *                                      kernel each), then finalize in
 *                                      FORMAT (default: chrome_trace)
 *
 * Kernels are delivered as a GPU backend's buffer thread delivers them
 * (kscope__record_gpu, from a thread of their own, after their launch's
 * scope closed), so no GPU is needed. Prints one line of "key=value"
 * fields: the process's resident memory before the session started, its
 * peak (VmHWM, finalize included), the file's size, and the seconds the
 * recording and the finalize took. bench/memory/run.sh makes the table.
 */
#define _GNU_SOURCE
#include "kscope-internal.h"
#include "kscope.h"
#include "../../test/support/proc-status.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int start(const char *name, const char *data)
{
    kscope_session_opts o = {.name = name, .data = data, .backend = "none"};
    int s = kscope_start(&o);
    if (s < 0) {
        fprintf(stderr, "memory_bench: %s\n", kscope_last_error());
        exit(2);
    }
    return s;
}

static long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

static void report(const char *mode, long n, long base_kb, long recorded_kb, const char *path,
                   double rec_s, double fin_s)
{
    long peak = status_kb("VmHWM:");
    printf("mode=%s n=%ld base_kb=%ld recorded_kb=%ld peak_kb=%ld file=%s file_bytes=%lld "
           "record_s=%.2f finalize_s=%.2f\n",
           mode, n, base_kb, recorded_kb, peak, path, file_size(path), rec_s, fin_s);
}

/* N distinct scopes under one parent: names made in one reused buffer, so
 * the driver itself holds nothing per scope. */
static int tree(long n, const char *dir)
{
    char base[900], path[1000], name[32];
    snprintf(base, sizeof base, "%s/kscope-memory-tree", dir);
    snprintf(path, sizeof path, "%s.hatchet", base);
    long base_kb = status_kb("VmRSS:");
    int s = start(base, "tree");
    double t0 = now_s();
    kscope_enter("parent");
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "scope_%ld", i);
        if (kscope_enter(name) != 0) {
            fprintf(stderr, "memory_bench: scope %ld: %s\n", i, kscope_last_error());
            return 2;
        }
        kscope_exit(name);
    }
    kscope_exit("parent");
    double t1 = now_s();
    long recorded_kb = status_kb("VmRSS:");
    if (kscope_finalize(s, NULL) != 0) {
        fprintf(stderr, "memory_bench: %s\n", kscope_last_error());
        return 2;
    }
    report("tree", n, base_kb, recorded_kb, path, t1 - t0, now_s() - t1);
    return 0;
}

/* Kernel records wait here until the delivering thread takes them, as a
 * GPU's records reach the buffer thread after their launches. */
#define RING 4096
typedef struct launch {
    uint64_t ctx, launch_ns, launch_end_ns;
    uint32_t correlation, tid;
} launch;

static launch ring[RING];
static _Atomic long produced, consumed;
static _Atomic int done;

static void *deliver(void *arg)
{
    (void)arg;
    for (;;) {
        long c = atomic_load(&consumed);
        if (c == atomic_load(&produced)) {
            if (atomic_load(&done) && c == atomic_load(&produced))
                return NULL;
            sched_yield();
            continue;
        }
        const launch *l = &ring[c % RING];
        kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = "memory_bench_kernel"};
        r.launch_ns = l->launch_ns;
        r.launch_end_ns = l->launch_end_ns;
        r.start_ns = l->launch_end_ns + 2000;
        r.end_ns = r.start_ns + 3000;
        r.launch_tid = l->tid;
        r.stream = 7;
        r.correlation = l->correlation;
        kscope__record_gpu(l->ctx, &r);
        atomic_store(&consumed, c + 1);
    }
}

static int trace(long n, const char *dir, const char *format)
{
    char base[900], path[1000];
    snprintf(base, sizeof base, "%s/kscope-memory-trace", dir);
    long base_kb = status_kb("VmRSS:");
    int s = start(base, "trace");
    pthread_t th;
    pthread_create(&th, NULL, deliver, NULL);
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    double t0 = now_s();
    for (long i = 0; i < n / 2; i++) {
        while (atomic_load(&produced) - atomic_load(&consumed) >= RING)
            sched_yield();
        kscope_enter("step");
        launch *l = &ring[i % RING];
        l->ctx = kscope__current_ctx();
        l->launch_ns = kscope_now_ns(); /* a launch call inside the step */
        l->correlation = (uint32_t)i + 1;
        l->tid = tid;
        l->launch_end_ns = kscope_now_ns();
        kscope_exit("step");
        atomic_store(&produced, i + 1);
    }
    atomic_store(&done, 1);
    pthread_join(th, NULL);
    double t1 = now_s();
    long recorded_kb = status_kb("VmRSS:");
    kscope_output_path(s, format, path, sizeof path);
    if (kscope_finalize(s, format) != 0) {
        fprintf(stderr, "memory_bench: %s\n", kscope_last_error());
        return 2;
    }
    int64_t dropped = kscope_dropped(s);
    report("trace", n, base_kb, recorded_kb, path, t1 - t0, now_s() - t1);
    if (dropped > 0)
        printf("dropped=%lld\n", (long long)dropped);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: memory_bench tree|trace N [DIR] [FORMAT]\n");
        return 2;
    }
    long n = atol(argv[2]);
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    if (strcmp(argv[1], "tree") == 0)
        return tree(n, dir);
    if (strcmp(argv[1], "trace") == 0)
        return trace(n, dir, argc > 4 ? argv[4] : NULL);
    fprintf(stderr, "memory_bench: unknown mode '%s'\n", argv[1]);
    return 2;
}
