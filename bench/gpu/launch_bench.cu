/*
 * launch_bench.cu - per-launch cost of a loop of empty kernels, under one
 * profiler configuration per process (CUPTI allows one subscriber per
 * process, so tools/gpu-run.sh runs the modes in alternation):
 *
 *   none       no profiler
 *   floor      a bare CUPTI activity injection: CONCURRENT_KERNEL records
 *              into reused buffers, walked and dropped (the floor)
 *   floor_cb   the floor plus what kscope's attribution needs from CUPTI:
 *              a callback at the begin and end of each launch call (runtime
 *              and driver) that notes the call's id and time in a table
 *   floor_ext  the floor plus what an attribution through CUPTI's external
 *              correlation needs: RUNTIME, DRIVER and EXTERNAL_CORRELATION
 *              records, one id pushed (kscope's earlier design)
 *   floor_api  the floor plus API records of the launch calls alone (the
 *              RUNTIME and DRIVER kinds on, every other call off by id), no
 *              callback: what an attribution from the launches' records needs
 *   floor_ts   the floor with a timestamp callback (CLOCK_MONOTONIC), as
 *              kscope registers to put records on its clock
 *   floor_api_ts  floor_api with the timestamp callback
 *   tree       kscope, tree session, the loop inside one scope
 *   tree_early kscope tree, started before CUDA is initialised (as a
 *              launcher that started capture before the program's cuInit)
 *   trace      kscope, trace session, the loop inside one scope
 *   tree_scoped kscope tree, a scope around every launch
 *   scoped     no session of its own, the loop inside one kscope scope:
 *              under `kscope run`, an annotated program (mode none is an
 *              unannotated one, whose launches kscope does not follow)
 *
 * Two modes alternate states within one process, ALT_ROUNDS rounds
 * (default 30) of ALT_BLOCK launches (default 5000) per state, and print a
 * table of their own (the rounds' paired ratios: the shared machine's
 * drift between processes, larger than what is measured, cancels):
 *   alt_floor  CUPTI attached doing nothing, the floor, floor_cb, floor_cb
 *              whose callback reads no clock (cb_bare), floor_api, and
 *              cb_bare on every call kscope follows (cb_wide)
 *   alt_kscope kscope sampled one step in three, the loop in a scope:
 *              shut (no capture), quiet (activity only), open (attributed);
 *              ALT_DATA=trace for a trace session
 *
 * STEP_EVERY=N calls kscope_step() after every N launches in every mode
 * (a no-op of one load unless a session samples by steps), so that
 * `kscope run --sample step:...` around mode none samples the loop.
 *
 * Prints one line: mode, launches, microseconds per launch (loop plus the
 * final synchronise, divided by launches), peak RSS in KiB, records seen
 * (floor modes) or dropped (kscope modes), and the launching thread's CPU
 * microseconds per launch in the loop alone (what the launches cost that
 * thread; a neighbour's load on the shared machine shows less in it).
 *
 * Built with -DLAUNCH_BENCH_NO_CUPTI (and without -lcupti) it has no floor
 * modes: `kscope run` refuses a program that links CUPTI itself, since
 * only one CUPTI client can profile a process.
 *
 * usage: launch_bench MODE [LAUNCHES] [OUTDIR]
 */
#include <cuda_runtime.h>
#ifndef LAUNCH_BENCH_NO_CUPTI
#include <cupti.h>

#include "launch-records.h"
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "kscope.h"

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__global__ void empty_kernel() {}

static double clock_s(clockid_t which)
{
    struct timespec ts;
    clock_gettime(which, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* ------------------------------------------------------- the bare floor */

#ifndef LAUNCH_BENCH_NO_CUPTI

#define FLOOR_BUF (4u << 20)
static void *floor_free;
static unsigned long long floor_records;

static void CUPTIAPI floor_request(uint8_t **buf, size_t *size, size_t *max)
{
    void *b = floor_free; /* single buffer thread in practice; no lock needed */
    floor_free = NULL;
    *buf = (uint8_t *)(b ? b : aligned_alloc(8, FLOOR_BUF));
    *size = FLOOR_BUF;
    *max = 0;
}

static void CUPTIAPI floor_complete(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid)
{
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
        floor_records++;
    if (!floor_free)
        floor_free = buf;
    else
        free(buf);
}

/* floor_cb's callback: the work kscope's does (a table slot per id). */
static struct {
    unsigned long long corr, start, end;
} floor_table[1 << 16];

static unsigned long long floor_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int floor_clock = 1; /* 0: the callback notes the id alone (alt_floor's cb_bare) */

static void CUPTIAPI floor_callback(void *, CUpti_CallbackDomain, CUpti_CallbackId,
                                    const void *data)
{
    const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
    unsigned slot = cb->correlationId & 0xFFFFu;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        floor_table[slot].corr = cb->correlationId;
        if (floor_clock)
            floor_table[slot].start = floor_now();
    } else if (floor_clock) {
        floor_table[slot].end = floor_now();
    }
}

static CUpti_SubscriberHandle floor_sub;

/* The launch calls' callbacks on or off (subscribing the first time). */
static void floor_follow(int on)
{
    if (!floor_sub && cuptiSubscribe(&floor_sub, floor_callback, NULL) != CUPTI_SUCCESS) {
        fprintf(stderr, "floor_cb: cuptiSubscribe failed\n");
        exit(1);
    }
    cuptiEnableCallback(on, floor_sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    cuptiEnableCallback(on, floor_sub, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
}

static void floor_callbacks(void)
{
    floor_follow(1);
}

/* Whether CUPTI's call named n launches, copies or sets (kscope's rule). */
static int wide_call(const char *n)
{
    const char *p = !strncmp(n, "cuda", 4) ? n + 4 : !strncmp(n, "cu", 2) ? n + 2 : NULL;
    return p && (!strncmp(p, "Memcpy", 6) || !strncmp(p, "Memset", 6) ||
                 ((!strncmp(p, "Launch", 6) || !strncmp(p, "GraphLaunch", 11)) &&
                  !strstr(p, "HostFunc")));
}

/* The callbacks of every launch, copy and set call on or off, as kscope
 * enables them (cb_wide). */
static void floor_follow_wide(int on)
{
    static const CUpti_CallbackDomain d[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                              CUPTI_CB_DOMAIN_DRIVER_API};
    static const uint32_t size[2] = {CUPTI_RUNTIME_TRACE_CBID_SIZE, CUPTI_DRIVER_TRACE_CBID_SIZE};
    floor_follow(on);
    for (int k = 0; k < 2; k++)
        for (uint32_t id = 1; id < size[k]; id++) {
            const char *n = NULL;
            if (cuptiGetCallbackName(d[k], id, &n) == CUPTI_SUCCESS && n && wide_call(n))
                cuptiEnableCallback(on, floor_sub, d[k], id);
        }
}

static uint64_t CUPTIAPI floor_timestamp(void)
{
    return floor_now();
}

/* API records of the launch calls alone, no callback (launch-records.h). */
static void floor_api_records(void)
{
    if (launch_records_only() < 0) {
        fprintf(stderr, "floor_api: cuptiActivityEnable(RUNTIME/DRIVER) failed\n");
        exit(1);
    }
}

/* alt_floor's states: CUPTI attached with nothing on, the floor, the
 * floor with the launch callbacks (as floor_cb: the id and two clock
 * reads; cb_bare: the id alone; cb_wide: cb_bare's on every launch, copy
 * and set call, as kscope follows them), the floor with the launches' API
 * records. */
static const char *const alt_floor_names[] = {"off",     "floor",     "floor_cb",
                                              "cb_bare", "floor_api", "cb_wide"};

static void alt_floor_set(int state)
{
    static int api_on;
    if (state == 0)
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    else
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    static int wide_on;
    if (wide_on != (state == 5))
        floor_follow_wide(state == 5);
    wide_on = state == 5;
    floor_follow(state == 2 || state == 3 || state == 5);
    floor_clock = state == 2;
    if (state == 4 && !api_on)
        floor_api_records();
    if (state != 4 && api_on) {
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_RUNTIME);
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);
    }
    api_on = state == 4;
}

static void floor_start(int with_ext, int with_driver, int with_ts)
{
    if (with_ts)
        cuptiActivityRegisterTimestampCallback(floor_timestamp);
    cuptiActivityRegisterCallbacks(floor_request, floor_complete);
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
        fprintf(stderr, "floor: cuptiActivityEnable failed\n");
        exit(1);
    }
    if (with_ext) {
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
        if (with_driver)
            cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1);
    }
}

static void floor_stop(void)
{
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (getenv("FLOOR_VERBOSE")) /* and the table is read: its writes stay */
        fprintf(stderr, "floor: last call %llu\n", floor_table[1].corr);
}
#else
static unsigned long long floor_records;
static void floor_start(int, int, int)
{
    fprintf(stderr, "launch_bench: built without CUPTI (LAUNCH_BENCH_NO_CUPTI): no floor modes\n");
    exit(2);
}
static void floor_callbacks(void) {}
static void floor_api_records(void) {}
static const char *const alt_floor_names[] = {"off",     "floor",     "floor_cb",
                                              "cb_bare", "floor_api", "cb_wide"};
static void alt_floor_set(int) {}
static void floor_stop(void) {}
#endif

/* ------------------------------------------------------ alternating modes */

static long env_long(const char *name, long dflt)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : dflt;
}

/* Microseconds per launch of n launches and their synchronise, after a
 * few untimed ones (the state's first launches). */
static double timed_block(long n)
{
    for (int i = 0; i < 200; i++)
        empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    double t0 = now_s();
    for (long i = 0; i < n; i++)
        empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());
    return (now_s() - t0) * 1e6 / (double)n;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v; q[0..2]: first quartile, median, third quartile. */
static void quartiles(double *v, int n, double q[3])
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    for (int k = 0; k < 3; k++) {
        double at = (n - 1) * (k + 1) / 4.0;
        int lo = (int)at;
        q[k] = lo + 1 < n ? v[lo] + (at - lo) * (v[lo + 1] - v[lo]) : v[lo];
    }
}

/* Median of what state s adds over `base`, round by round, over the
 * median of what `ref` adds: rounds r[0..n) (indexes into t). */
static double added(const double *t, int nstates, const int *r, int n, int s, int base, int ref,
                    double *tmp)
{
    double q[3], num, den;
    for (int i = 0; i < n; i++)
        tmp[i] = t[r[i] * nstates + s] - t[r[i] * nstates + base];
    quartiles(tmp, n, q);
    num = q[1];
    for (int i = 0; i < n; i++)
        tmp[i] = t[r[i] * nstates + ref] - t[r[i] * nstates + base];
    quartiles(tmp, n, q);
    den = q[1];
    return den > 0 ? num / den : 0;
}

/* The table of an alternating mode: t[round * nstates + state] in us per
 * launch. Per state its median and quartiles, and what it adds over
 * `base` as a multiple of what `ref` adds: the median of the rounds'
 * differences (the states of one round ran within a second of each other,
 * so the machine's slow stretches cancel) over ref's, with a bootstrap 95%
 * interval (rounds drawn with replacement, 2000 times). Then each round's
 * values, for a second look. */
static void alt_report(const char *mode, const char *const *names, int nstates, int rounds,
                       const double *t, int base, int ref)
{
    enum { DRAWS = 2000 };
    double *v = (double *)malloc(sizeof(double) * (size_t)rounds), q[3];
    double *draws = (double *)malloc(sizeof(double) * DRAWS);
    int *all = (int *)malloc(sizeof(int) * (size_t)rounds);
    int *pick = (int *)malloc(sizeof(int) * (size_t)rounds);
    for (int r = 0; r < rounds; r++)
        all[r] = r;
    printf("%s: %d rounds of each state, interleaved in one process\n", mode, rounds);
    printf("%-10s %9s %9s %9s %12s %16s\n", "state", "median", "q1", "q3", "adds (x ref)",
           "95% interval");
    srand(1);
    for (int s = 0; s < nstates; s++) {
        for (int r = 0; r < rounds; r++)
            v[r] = t[r * nstates + s];
        quartiles(v, rounds, q);
        double ratio = added(t, nstates, all, rounds, s, base, ref, v);
        for (int d = 0; d < DRAWS; d++) {
            for (int r = 0; r < rounds; r++)
                pick[r] = rand() % rounds;
            draws[d] = added(t, nstates, pick, rounds, s, base, ref, v);
        }
        qsort(draws, DRAWS, sizeof *draws, by_value);
        printf("%-10s %9.3f %9.3f %9.3f %12.2f %8.2f - %5.2f\n", names[s], q[1], q[0], q[2], ratio,
               draws[DRAWS * 25 / 1000], draws[DRAWS * 975 / 1000 - 1]);
    }
    printf("(adds: median(state - %s) / median(%s - %s) over the rounds)\n", names[base],
           names[ref], names[base]);
    for (int r = 0; r < rounds; r++) {
        printf("%s_round %d", mode, r);
        for (int s = 0; s < nstates; s++)
            printf(" %s=%.4f", names[s], t[r * nstates + s]);
        printf("\n");
    }
    free(v);
    free(draws);
    free(all);
    free(pick);
}

/* alt_floor: CUPTI's own states (alt_floor_set), one block each per
 * round, the order rotating from round to round. */
static int run_alt_floor(void)
{
    int rounds = (int)env_long("ALT_ROUNDS", 30), ns = 6;
    long block = env_long("ALT_BLOCK", 5000);
    double *t = (double *)calloc((size_t)(rounds * ns), sizeof(double));
    floor_start(0, 1, 1);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < ns; k++) {
            int s = (k + r) % ns;
            alt_floor_set(s);
            t[r * ns + s] = timed_block(block);
        }
    }
    alt_floor_set(0);
    floor_stop();
    alt_report("alt_floor", alt_floor_names, ns, rounds, t, 0, 1);
    free(t);
    return 0;
}

/* alt_kscope: one kscope session sampled by steps, one step in three
 * ("step:on=1,every=3"), the loop inside a scope: the step after a window
 * is quiet (activity on, no launch callback: kscope's floor), the next
 * shut (CUPTI does nothing), then a window (every launch followed). */
static int run_alt_kscope(const char *path)
{
    static const char *const names[] = {"open", "quiet", "shut"};
    int rounds = (int)env_long("ALT_ROUNDS", 30);
    long block = env_long("ALT_BLOCK", 5000);
    double *t = (double *)calloc((size_t)(rounds * 3), sizeof(double));
    kscope_session_opts o;
    memset(&o, 0, sizeof o);
    o.name = path;
    o.sample = "step:on=1,every=3";
    o.data = getenv("ALT_DATA") ? getenv("ALT_DATA") : "tree"; /* or trace */
    int session = kscope_start(&o);
    if (session < 0) {
        fprintf(stderr, "kscope_start: %s\n", kscope_last_error());
        return 1;
    }
    kscope_enter("loop");
    for (int i = 1; i <= rounds * 3; i++) {
        kscope_step(); /* step i: open when i % 3 == 0, then quiet, then shut */
        int s = i % 3 == 0 ? 0 : i % 3;
        t[(i - 1) / 3 * 3 + s] = timed_block(block);
    }
    kscope_exit("loop");
    kscope_deactivate(session, 1);
    if (kscope_finalize(session, NULL) < 0) {
        fprintf(stderr, "kscope_finalize: %s\n", kscope_last_error());
        return 1;
    }
    alt_report(!strcmp(o.data, "trace") ? "alt_kscope_trace" : "alt_kscope", names, 3, rounds, t, 2,
               1);
    free(t);
    return 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "none";
    long n = argc > 2 ? atol(argv[2]) : 20000;
    const char *outdir = argc > 3 ? argv[3] : "/tmp";
    char path[1024];
    snprintf(path, sizeof path, "%s/bench-%s-%ld", outdir, mode, n);

    int session = -1;
    int early = !strcmp(mode, "tree_early");
    int kscope_mode =
        !strcmp(mode, "tree") || !strcmp(mode, "trace") || !strcmp(mode, "tree_scoped") || early;
    const char *step_env = getenv("STEP_EVERY");
    long step_every = step_env ? atol(step_env) : 0;
    if (early) { /* before the CUDA runtime or driver is initialised */
        kscope_session_opts o;
        memset(&o, 0, sizeof o);
        o.name = path;
        session = kscope_start(&o);
        if (session < 0) {
            fprintf(stderr, "kscope_start: %s\n", kscope_last_error());
            return 1;
        }
    }
    CK(cudaFree(0));
    for (int i = 0; i < 2000; i++) /* warm the launch path */
        empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());

    if (!strcmp(mode, "alt_floor"))
        return run_alt_floor();
    if (!strcmp(mode, "alt_kscope"))
        return run_alt_kscope(path);

    int floor_mode = !strncmp(mode, "floor", 5);
    if (floor_mode) {
        floor_start(!strcmp(mode, "floor_ext"), 1, strstr(mode, "_ts") != NULL);
        if (!strcmp(mode, "floor_cb"))
            floor_callbacks();
        else if (!strncmp(mode, "floor_api", 9))
            floor_api_records();
        else if (strcmp(mode, "floor") && strcmp(mode, "floor_ext") && strcmp(mode, "floor_ts")) {
            fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
    } else if (kscope_mode && !early) {
        kscope_session_opts o;
        memset(&o, 0, sizeof o);
        o.name = path;
        o.data = !strncmp(mode, "trace", 5) ? "trace" : "tree";
        session = kscope_start(&o);
        if (session < 0) {
            fprintf(stderr, "kscope_start: %s\n", kscope_last_error());
            return 1;
        }
    } else if (!early && strcmp(mode, "none") != 0 && strcmp(mode, "scoped") != 0) {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    /* a short warm-up under the profiler, then the timed loop */
    for (int i = 0; i < 1000; i++)
        empty_kernel<<<1, 1>>>();
    CK(cudaDeviceSynchronize());

    double t0 = now_s(), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    if (!strcmp(mode, "tree_scoped")) {
        for (long i = 0; i < n; i++) {
            kscope_enter("launch");
            empty_kernel<<<1, 1>>>();
            kscope_exit("launch");
        }
    } else {
        int scoped = kscope_mode || !strcmp(mode, "scoped");
        if (scoped)
            kscope_enter("loop");
        for (long i = 0; i < n; i++) {
            empty_kernel<<<1, 1>>>();
            if (step_every > 0 && (i + 1) % step_every == 0)
                kscope_step();
        }
        if (scoped)
            kscope_exit("loop");
    }
    double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0; /* the launches, not the wait */
    CK(cudaDeviceSynchronize());
    double dt = now_s() - t0;

    long long extra = 0;
    if (session >= 0) {
        kscope_deactivate(session, 1);
        extra = (long long)kscope_dropped(session);
        if (kscope_finalize(session, NULL) < 0) {
            fprintf(stderr, "kscope_finalize: %s\n", kscope_last_error());
            return 1;
        }
    } else if (floor_mode) {
        floor_stop();
        extra = (long long)floor_records;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%s %ld %.4f %ld %lld %.4f\n", mode, n, dt * 1e6 / (double)n, ru.ru_maxrss, extra,
           cpu * 1e6 / (double)n);
    return 0;
}
