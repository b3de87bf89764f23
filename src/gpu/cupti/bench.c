/*
 * bench.c - the launch loop of `kscope bench`: N empty kernels launched
 * through the CUDA driver and timed, in the process that calls it (the
 * command runs one process per way of profiling). The kernel is PTX that
 * the driver compiles, so the machine needs no compiler; the driver and
 * CUPTI are loaded at run time, like the backend's.
 *
 * The loop is one timed run, or timed blocks with a hook before each (the
 * interleaved way switches kscope's state there). With floor = 1 it runs
 * under the bare activity capture any CUPTI tracer pays at least:
 * concurrent-kernel records into reused buffers, walked and counted, no
 * callbacks (as bench/gpu/cupti_floor.c, enabled before the driver
 * initialises, as an injection would be).
 */
#include "gpu/cupti/cupti-internal.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WARMUP       2000
#define BLOCK_WARMUP 200
#define FLOOR_BUF    (8u << 20)
#define FLOOR_BUFS   8

static const char empty_ptx[] = ".version 6.0\n"
                                ".target sm_50\n"
                                ".address_size 64\n"
                                ".visible .entry kscope_empty()\n"
                                "{\n"
                                "\tret;\n"
                                "}\n";

typedef struct bench_driver {
    CUresult (*init)(unsigned);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*name)(char *, int, CUdevice);
    CUresult (*retain)(CUcontext *, CUdevice);
    CUresult (*set_current)(CUcontext);
    CUresult (*load)(CUmodule *, const void *);
    CUresult (*function)(CUfunction *, CUmodule, const char *);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **);
    CUresult (*sync)(void);
} bench_driver;

/* ---------------------------------------------------------------- floor */

static _Atomic uint64_t floor_records;
static pthread_mutex_t floor_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *floor_free[FLOOR_BUFS];
static int floor_nfree;
static CUptiResult (*floor_next)(uint8_t *, size_t, CUpti_Activity **);

static void CUPTIAPI floor_request(uint8_t **buf, size_t *size, size_t *max)
{
    pthread_mutex_lock(&floor_lock);
    uint8_t *b = floor_nfree ? floor_free[--floor_nfree] : NULL;
    pthread_mutex_unlock(&floor_lock);
    *buf = b ? b : aligned_alloc(8, FLOOR_BUF);
    *size = *buf ? FLOOR_BUF : 0;
    *max = 0;
}

static void CUPTIAPI floor_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                    size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    uint64_t n = 0;
    while (floor_next(buf, valid, &r) == CUPTI_SUCCESS)
        n++;
    atomic_fetch_add(&floor_records, n);
    pthread_mutex_lock(&floor_lock);
    int kept = floor_nfree < FLOOR_BUFS;
    if (kept)
        floor_free[floor_nfree++] = buf;
    pthread_mutex_unlock(&floor_lock);
    if (!kept)
        free(buf);
}

/* Turn the floor on; *flush is what delivers its last records. */
static int floor_start(CUptiResult (**flush)(uint32_t))
{
    char tried[2048];
    void *lib = kscope__cupti_open(tried, sizeof tried);
    if (!lib)
        return kscope__fail(
            KSCOPE_ENOGPUTOOL,
            "CUPTI library not found (tried %s); set KSCOPE_CUPTI_LIBRARY to its path", tried);
    CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    *(void **)&reg = dlsym(lib, "cuptiActivityRegisterCallbacks");
    *(void **)&enable = dlsym(lib, "cuptiActivityEnable");
    *(void **)&floor_next = dlsym(lib, "cuptiActivityGetNextRecord");
    *(void **)flush = dlsym(lib, "cuptiActivityFlushAll");
    if (!reg || !enable || !floor_next || !*flush)
        return kscope__fail(KSCOPE_ENOGPUTOOL, "the CUPTI library lacks the activity API");
    if (reg(floor_request, floor_complete) != CUPTI_SUCCESS ||
        enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
        return kscope__fail(KSCOPE_ENOGPUTOOL, "CUPTI refused the concurrent-kernel activity");
    return 0;
}

/* ----------------------------------------------------------------- loop */

static int load_driver(bench_driver *d)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
        return kscope__fail(KSCOPE_ENOGPU, "no CUDA driver (cannot load libcuda.so.1)");
    struct {
        void **dst;
        const char *name;
    } syms[] = {
        {(void **)&d->init, "cuInit"},
        {(void **)&d->device_get, "cuDeviceGet"},
        {(void **)&d->name, "cuDeviceGetName"},
        {(void **)&d->retain, "cuDevicePrimaryCtxRetain"},
        {(void **)&d->set_current, "cuCtxSetCurrent"},
        {(void **)&d->load, "cuModuleLoadData"},
        {(void **)&d->function, "cuModuleGetFunction"},
        {(void **)&d->launch, "cuLaunchKernel"},
        {(void **)&d->sync, "cuCtxSynchronize"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (!(*syms[i].dst = dlsym(lib, syms[i].name)))
            return kscope__fail(KSCOPE_ENOGPU, "the CUDA driver lacks %s", syms[i].name);
    return 0;
}

/* The driver's first device, current, and the empty kernel on it. */
static int setup(bench_driver *d, CUfunction *fn, char *device, size_t size)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUresult rc = d->init(0);
    if (rc != CUDA_SUCCESS || (rc = d->device_get(&dev, 0)) != CUDA_SUCCESS)
        return kscope__fail(KSCOPE_ENOGPU, "no usable GPU (CUDA error %d)", (int)rc);
    if (d->name(device, (int)size, dev) != CUDA_SUCCESS)
        snprintf(device, size, "GPU 0");
    if ((rc = d->retain(&ctx, dev)) != CUDA_SUCCESS || (rc = d->set_current(ctx)) != CUDA_SUCCESS ||
        (rc = d->load(&mod, empty_ptx)) != CUDA_SUCCESS ||
        (rc = d->function(fn, mod, "kscope_empty")) != CUDA_SUCCESS)
        return kscope__fail(KSCOPE_ENOGPU, "cannot load the empty kernel (CUDA error %d)", (int)rc);
    return 0;
}

static int launches(bench_driver *d, CUfunction fn, long n)
{
    for (long i = 0; i < n; i++)
        if (d->launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
            return kscope__fail(KSCOPE_ENOGPU, "a launch failed");
    return d->sync() == CUDA_SUCCESS ? 0 : kscope__fail(KSCOPE_ENOGPU, "synchronize failed");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The timed blocks of `loop` after the warm-up; their mean microseconds
 * per launch into *us. */
static int timed_blocks(bench_driver *d, CUfunction fn, const kscope__bench_loop *loop, double *us)
{
    int rc = 0, blocks = loop->blocks > 0 ? loop->blocks : 1;
    long n = loop->launches > 0 ? loop->launches : 1;
    double seconds = 0;
    for (int b = 0; b < blocks && rc == 0; b++) {
        if (loop->before)
            loop->before(b, loop->arg);
        if (blocks > 1) /* the block's state begins: its first launches untimed */
            rc = launches(d, fn, BLOCK_WARMUP);
        double t0 = now_s();
        if (rc == 0)
            rc = launches(d, fn, n);
        double dt = now_s() - t0;
        seconds += dt;
        if (loop->block_us)
            loop->block_us[b] = dt * 1e6 / (double)n;
    }
    *us = seconds * 1e6 / ((double)n * blocks);
    return rc;
}

int kscope__cupti_bench(const kscope__bench_loop *loop, kscope__bench_result *out)
{
    memset(out, 0, sizeof *out);
    bench_driver d;
    CUptiResult (*flush)(uint32_t) = NULL;
    CUfunction fn;
    int rc = load_driver(&d);
    if (rc == 0 && loop->floor)
        rc = floor_start(&flush);
    if (rc == 0)
        rc = setup(&d, &fn, out->device, sizeof out->device);
    if (rc == 0)
        rc = launches(&d, fn, WARMUP);
    if (rc == 0)
        rc = timed_blocks(&d, fn, loop, &out->us_per_launch);
    if (rc == 0 && flush) {
        flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        out->records = atomic_load(&floor_records);
    }
    return rc;
}
