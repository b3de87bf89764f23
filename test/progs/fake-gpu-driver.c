/*
 * fake-gpu-driver.c - a stand-in libcuda.so.1 for a pretend GPU, with
 * fake-gpu-cupti.c (the stand-in libcupti): the driver calls kscope's CUPTI
 * backend makes, and the calls of a CUDA program that kscope follows, so
 * that a test program (or kscope run on one) profiles "GPU work" where no
 * GPU is. Built with the CUDA headers, whose prototypes it follows.
 *
 * As the driver does:
 *  - cuInit loads the library CUDA_INJECTION64_PATH names and calls its
 *    InitializeInjection (how kscope run attaches);
 *  - each call below runs CUPTI's callbacks at its begin and end with a
 *    new correlation id, which its work carries; the runtime's calls
 *    (fake-gpu-runtime.c, in the same library) do their work through the
 *    driver's internals (fake-gpu.h), so no driver callback runs under
 *    them;
 *  - the work of a launch, copy or set is one activity record, stamped on
 *    CUPTI's clock: a kernel starts 500 ns after its launch and runs
 *    gridDimX microseconds; a copy or set takes 1 us;
 *  - contexts: a device's primary context (active once retained) and
 *    contexts made by cuCtxCreate; CUPTI's resource callbacks say when one
 *    is made and before one is destroyed;
 *  - it tears itself down at exit (a handler registered as cuInit ends):
 *    a device or context call after that aborts, as the real one crashes.
 * CUPTI is reached through the fake_cupti_* functions, found among the
 * loaded objects: with no CUPTI loaded, calls run without callbacks or
 * records, as with the real driver.
 *
 * Conventions of the pretend GPU: a CUfunction comes from
 * cuModuleGetFunction (any module, NULL too) and is named by its name;
 * cudaLaunchKernel takes the kernel's name as its `func`; cuModuleLoadData
 * takes a fake_image (size, bytes: the "cubin" CUPTI's module callback
 * gets), and a module whose bytes name kscope_device_buffer has that
 * symbol (8 bytes of host memory: "device" memory is host memory, a
 * device pointer its address); cuFuncGetModule knows a function got from
 * a module; kernels get increasing grid ids (fake_cuda_next_grid); a stream is any
 * small number cast to CUstream (its CUPTI stream id; NULL is 7); device
 * pointers are numbers, never dereferenced. FAKE_CUDA_DEVICES sets the
 * device count (default 1). cuModuleLoadData also takes PTX text (it
 * starts with ".version"), as the real driver does. fake_cuda_count("sync")
 * counts context synchronisations ("stream_sync" stream ones),
 * fake_cuda_static_profiler(1|0) runs the profiler API's callbacks as a
 * program linked with the static runtime does (no exported function is
 * called). The runtime's calls, stream captures and cuStreamQuery are in
 * fake-gpu-runtime.c.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake-gpu.h"

#define API         __attribute__((visibility("default")))
#define MAX_DEVICES 8
#define STACK_MAX   8

typedef struct fake_ctx {
    int device;
    uint32_t uid;
    int retained; /* primary contexts: retain count */
} fake_ctx;

typedef struct fake_module {
    uint32_t id;
    int has_symbol;  /* its image names kscope_device_buffer */
    uint64_t symbol; /* that symbol's "device" memory */
} fake_module;

typedef struct fake_function {
    char *name;
    fake_module *module; /* set when got from a module */
    struct fake_function *next;
} fake_function;

static fake_ctx primary[MAX_DEVICES];
static _Atomic uint32_t next_corr = 1, next_uid = 1, next_module = 1, next_stream = 100;
static _Atomic uint64_t next_grid = 1;
static _Atomic long syncs, stream_syncs;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread fake_ctx *stack[STACK_MAX]; /* [0]: current */
static __thread int depth;                  /* calls open on this thread */
static __thread uint32_t outer_corr;        /* the outermost call's id */
static __thread const void *tl_params;      /* the next call's parameters */

static int device_count(void)
{
    const char *v = getenv("FAKE_CUDA_DEVICES");
    int n = v ? atoi(v) : 1;
    return n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : n;
}

/* ---------------------------------------------------------------- CUPTI */

typedef void (*callback_fn)(CUpti_CallbackDomain, CUpti_CallbackId, const void *);
typedef void (*record_fn)(const void *);
typedef uint64_t (*now_fn)(void);

/* The fake_cupti_* functions, NULL while no CUPTI is loaded. They are
 * looked up again only after objects were loaded or unloaded: a dlsym
 * on every call would cost a launch more than CUPTI's work on it, and
 * `kscope bench` compares the two. */
static _Atomic(callback_fn) cupti_callback;
static _Atomic(record_fn) cupti_record;
static _Atomic(now_fn) cupti_now;

static int loads_of(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    *(unsigned long long *)out = info->dlpi_adds + info->dlpi_subs;
    return 1; /* the counts are the same for every object */
}

static void find_cupti(void)
{
    static _Atomic unsigned long long seen = ~0ull;
    unsigned long long loads = 0;
    dl_iterate_phdr(loads_of, &loads);
    if (loads == atomic_load(&seen))
        return;
    atomic_store(&cupti_callback,
                 (callback_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "fake_cupti_callback"));
    atomic_store(&cupti_record, (record_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "fake_cupti_record"));
    atomic_store(&cupti_now, (now_fn)(uintptr_t)dlsym(RTLD_DEFAULT, "fake_cupti_now"));
    atomic_store(&seen, loads);
}

static void callback(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    find_cupti();
    callback_fn fn = atomic_load(&cupti_callback);
    if (fn)
        fn(d, id, data);
}

static void record(const void *rec)
{
    find_cupti();
    record_fn fn = atomic_load(&cupti_record);
    if (fn)
        fn(rec);
}

static uint64_t now(void)
{
    find_cupti();
    now_fn fn = atomic_load(&cupti_now);
    return fn ? fn() : 0;
}

typedef fake_gpu_call call;

static void call_begin(call *c, CUpti_CallbackDomain d, CUpti_CallbackId cbid, const char *name,
                       const char *symbol)
{
    memset(c, 0, sizeof *c);
    c->domain = d;
    c->cbid = cbid;
    c->data.functionName = name;
    c->data.symbolName = symbol;
    c->data.functionReturnValue = &c->rc;
    c->data.correlationData = &c->corr_data;
    c->data.functionParams = tl_params;
    tl_params = NULL;
    c->data.context = (CUcontext)stack[0];
    c->data.contextUid = stack[0] ? stack[0]->uid : 0;
    c->data.correlationId = atomic_fetch_add(&next_corr, 1);
    if (depth++ == 0)
        outer_corr = c->data.correlationId;
    c->data.callbackSite = CUPTI_API_ENTER;
    callback(d, cbid, &c->data);
}

/* The id the work of this call carries: the outermost call's. */
static uint32_t work_corr(void)
{
    return outer_corr;
}

static void call_end(call *c, int rc)
{
    c->rc = rc;
    c->data.callbackSite = CUPTI_API_EXIT;
    callback(c->domain, c->cbid, &c->data);
    depth--;
}

static void resource(CUpti_CallbackId id, fake_ctx *ctx)
{
    CUpti_ResourceData rd = {.context = (CUcontext)ctx};
    callback(CUPTI_CB_DOMAIN_RESOURCE, id, &rd);
}

static uint32_t stream_id(CUstream s)
{
    return s ? (uint32_t)(uintptr_t)s : 7;
}

/* ------------------------------------------------------------ injection */

/* Set by a handler registered as cuInit ends: see the header. */
static _Atomic int torn_down, teardown_set;
static void teardown(void)
{
    atomic_store(&torn_down, 1);
}

static void alive(const char *call)
{
    if (atomic_load(&torn_down) && fprintf(stderr, "fake driver: %s after exit teardown\n", call))
        abort();
}

API CUresult cuInit(unsigned flags)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    static void (*inject)(void);
    (void)flags;
    if (!device_count())
        return CUDA_ERROR_NO_DEVICE;
    const char *path = getenv("CUDA_INJECTION64_PATH");
    if (path && *path) {
        void *h = dlopen(path, RTLD_NOW);
        int (*init)(void) = h ? (int (*)(void))(uintptr_t)dlsym(h, "InitializeInjection") : NULL;
        inject = (void (*)(void))(uintptr_t)init;
    }
    if (inject)
        pthread_once(&once, inject);
    if (!atomic_exchange(&teardown_set, 1)) /* after the injection's entry ran */
        atexit(teardown);
    return CUDA_SUCCESS;
}

/* --------------------------------------------------------------- devices */

API CUresult cuDeviceGetCount(int *n)
{
    alive("cuDeviceGetCount");
    *n = device_count();
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGet(CUdevice *d, int i)
{
    if (i < 0 || i >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *d = i;
    return CUDA_SUCCESS;
}

API CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    if (d < 0 || d >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    strncpy(name, "Pretend GPU", (size_t)len);
    name[len - 1] = '\0';
    return CUDA_SUCCESS;
}

/* An H100 SXM's figures. */
API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    if (d < 0 || d >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *v = 9;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *v = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *v = 132;
        break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        *v = 1980000;
        break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
        *v = 2619000;
        break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
        *v = 5120;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* -------------------------------------------------------------- contexts */

API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    alive("cuDevicePrimaryCtxRetain");
    if (d < 0 || d >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    fake_ctx *p = &primary[d];
    int made = p->retained++ == 0;
    if (made) {
        p->device = d;
        p->uid = atomic_fetch_add(&next_uid, 1);
    }
    pthread_mutex_unlock(&mu);
    if (made)
        resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, p);
    *c = (CUcontext)p;
    return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    if (d < 0 || d >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    int last = primary[d].retained > 0 && --primary[d].retained == 0;
    pthread_mutex_unlock(&mu);
    if (last)
        resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &primary[d]);
    return CUDA_SUCCESS;
}

API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
    alive("cuDevicePrimaryCtxGetState");
    if (d < 0 || d >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&mu);
    *flags = 0;
    *active = primary[d].retained > 0;
    pthread_mutex_unlock(&mu);
    return CUDA_SUCCESS;
}

API CUresult cuCtxCreate_v4(CUcontext *c, CUctxCreateParams *params, unsigned flags, CUdevice d)
{
    (void)params;
    (void)flags;
    if (d < 0 || d >= device_count())
        return CUDA_ERROR_INVALID_DEVICE;
    fake_ctx *x = calloc(1, sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->device = d;
    x->uid = atomic_fetch_add(&next_uid, 1);
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, x);
    memmove(stack + 1, stack, (STACK_MAX - 1) * sizeof *stack);
    stack[0] = x;
    *c = (CUcontext)x;
    return CUDA_SUCCESS;
}

API CUresult cuCtxDestroy_v2(CUcontext c)
{
    fake_ctx *x = (fake_ctx *)c;
    if (!x || (x >= primary && x < primary + MAX_DEVICES))
        return CUDA_ERROR_INVALID_CONTEXT;
    resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, x);
    for (int i = 0; i < STACK_MAX; i++)
        if (stack[i] == x)
            stack[i] = NULL;
    free(x);
    return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(CUcontext *c)
{
    alive("cuCtxGetCurrent");
    *c = (CUcontext)stack[0];
    return CUDA_SUCCESS;
}

API CUresult cuCtxSetCurrent(CUcontext c)
{
    stack[0] = (fake_ctx *)c;
    return CUDA_SUCCESS;
}

API CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    memmove(stack + 1, stack, (STACK_MAX - 1) * sizeof *stack);
    stack[0] = (fake_ctx *)c;
    return CUDA_SUCCESS;
}

API CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    if (!stack[0])
        return CUDA_ERROR_INVALID_CONTEXT;
    if (c)
        *c = (CUcontext)stack[0];
    memmove(stack, stack + 1, (STACK_MAX - 1) * sizeof *stack);
    stack[STACK_MAX - 1] = NULL;
    return CUDA_SUCCESS;
}

API CUresult cuCtxSynchronize(void)
{
    alive("cuCtxSynchronize");
    if (!stack[0])
        return CUDA_ERROR_INVALID_CONTEXT;
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
               "cuCtxSynchronize", NULL);
    atomic_fetch_add(&syncs, 1);
    call_end(&c, CUDA_SUCCESS);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ work */

/* One handle per name, kept for the process (as a module keeps its
 * functions). */
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    static fake_function *functions;
    pthread_mutex_lock(&mu);
    fake_function *fn = functions;
    while (fn && strcmp(fn->name, name) != 0)
        fn = fn->next;
    if (!fn && (fn = calloc(1, sizeof *fn))) {
        if ((fn->name = strdup(name))) {
            fn->next = functions;
            functions = fn;
        } else {
            free(fn);
            fn = NULL;
        }
    }
    if (fn && m)
        fn->module = (fake_module *)m;
    pthread_mutex_unlock(&mu);
    if (!fn)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *f = (CUfunction)fn;
    return CUDA_SUCCESS;
}

void fake_gpu_kernel_record(const char *name, unsigned grid_x, CUstream s)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.start = now() + 500;
    k.end = k.start + (uint64_t)grid_x * 1000;
    k.deviceId = (uint32_t)stack[0]->device;
    k.contextId = stack[0]->uid;
    k.streamId = stream_id(s);
    k.correlationId = work_corr();
    k.gridId = (int64_t)atomic_fetch_add(&next_grid, 1);
    k.gridX = (int32_t)grid_x;
    k.gridY = k.gridZ = k.blockX = k.blockY = k.blockZ = 1;
    record(&k);
}

API CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                            void **extra)
{
    (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem, (void)params, (void)extra;
    if (!stack[0])
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    const char *name = ((fake_function *)f)->name;
    cuLaunchKernel_params p = {f, gx, gy, gz, bx, by, bz, shmem, s, params, extra};
    tl_params = &p;
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
               "cuLaunchKernel", name);
    fake_gpu_kernel_record(name, gx, s);
    call_end(&c, CUDA_SUCCESS);
    return CUDA_SUCCESS;
}

/* The record of a copy of `bytes` from device src to dst on stream id
 * `stream`, done at once. */
static void copy_record(uint8_t copy_kind, size_t bytes, int src, int dst, uint32_t stream)
{
    uint64_t t = now();
    if (copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) {
        CUpti_ActivityMemcpyPtoP4 p;
        memset(&p, 0, sizeof p);
        p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
        p.copyKind = copy_kind;
        p.bytes = bytes;
        p.start = t + 500;
        p.end = p.start + 1000;
        p.deviceId = p.srcDeviceId = (uint32_t)src;
        p.dstDeviceId = (uint32_t)dst;
        p.streamId = stream;
        p.correlationId = work_corr();
        record(&p);
        return;
    }
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = copy_kind;
    m.bytes = bytes;
    m.start = t + 500;
    m.end = m.start + 1000;
    m.deviceId = (uint32_t)src;
    m.contextId = stack[0]->uid;
    m.streamId = stream;
    m.correlationId = work_corr();
    record(&m);
}

/* A driver call: its callbacks around its record (a runtime call passes
 * cbid 0: it runs its own callbacks). */
CUresult fake_gpu_copy(CUpti_CallbackId cbid, const char *name, uint8_t kind, size_t bytes)
{
    if (!stack[0])
        return CUDA_ERROR_INVALID_CONTEXT;
    call c;
    if (cbid)
        call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, NULL);
    copy_record(kind, bytes, stack[0]->device, stack[0]->device, stream_id(NULL));
    if (cbid)
        call_end(&c, CUDA_SUCCESS);
    return CUDA_SUCCESS;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
    (void)dst, (void)src;
    return fake_gpu_copy(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2",
                         CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, bytes);
}

API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    (void)dst, (void)src;
    return fake_gpu_copy(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2",
                         CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, bytes);
}

API CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                          size_t bytes)
{
    (void)dst, (void)src;
    if (!dst_ctx || !src_ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, "cuMemcpyPeer",
               NULL);
    copy_record(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, bytes, ((fake_ctx *)src_ctx)->device,
                ((fake_ctx *)dst_ctx)->device, stream_id(NULL));
    call_end(&c, CUDA_SUCCESS);
    return CUDA_SUCCESS;
}

void fake_gpu_memset_record(unsigned char v, size_t n)
{
    CUpti_ActivityMemset4 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = v;
    m.bytes = n;
    m.start = now() + 500;
    m.end = m.start + 1000;
    m.deviceId = (uint32_t)stack[0]->device;
    m.contextId = stack[0]->uid;
    m.streamId = 7;
    m.correlationId = work_corr();
    record(&m);
}

API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n)
{
    (void)dst;
    if (!stack[0])
        return CUDA_ERROR_INVALID_CONTEXT;
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
               "cuMemsetD8_v2", NULL);
    fake_gpu_memset_record(v, n);
    call_end(&c, CUDA_SUCCESS);
    return CUDA_SUCCESS;
}

/* --------------------------------------------------------- profiler API */

static CUresult profiler(int start)
{
    call c;
    CUpti_CallbackId id =
        start ? CUPTI_DRIVER_TRACE_CBID_cuProfilerStart : CUPTI_DRIVER_TRACE_CBID_cuProfilerStop;
    call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, id, start ? "cuProfilerStart" : "cuProfilerStop",
               NULL);
    call_end(&c, CUDA_SUCCESS);
    return CUDA_SUCCESS;
}

API CUresult cuProfilerStart(void)
{
    return profiler(1);
}

API CUresult cuProfilerStop(void)
{
    return profiler(0);
}

API void fake_cuda_static_profiler(int start)
{
    profiler(start);
}

/* -------------------------------------------------------------- runtime */

/* The primary context of device 0, as the runtime makes it current;
 * whether this thread has a current context. */
int fake_gpu_runtime_context(void)
{
    if (!stack[0]) {
        CUcontext c;
        cuInit(0);
        if (cuDevicePrimaryCtxRetain(&c, 0) == CUDA_SUCCESS)
            stack[0] = (fake_ctx *)c;
    }
    return stack[0] != NULL;
}

void fake_gpu_call_begin(fake_gpu_call *c, CUpti_CallbackDomain d, CUpti_CallbackId cbid,
                         const char *name, const char *symbol, const void *params)
{
    tl_params = params;
    call_begin(c, d, cbid, name, symbol);
}

void fake_gpu_call_end(fake_gpu_call *c, int rc)
{
    call_end(c, rc);
}

/* ------------------------------------------------- modules, memory, streams */

/* A module: `image` points to a fake_image (size, bytes), which stands
 * for a cubin, or to PTX text; CUPTI's module callback gets its bytes. */
typedef struct fake_image {
    size_t size;
    const char *bytes;
} fake_image;

API CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    if (!image)
        return CUDA_ERROR_INVALID_IMAGE;
    fake_image im;
    if (memcmp(image, ".version", 8) == 0) /* PTX: NUL-terminated text */
        im = (fake_image){strlen(image), image};
    else
        im = *(const fake_image *)image;
    fake_module *fm = calloc(1, sizeof *fm);
    if (!fm)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fm->id = atomic_fetch_add(&next_module, 1);
    fm->has_symbol = memmem(im.bytes, im.size, "kscope_device_buffer", 20) != NULL;
    CUpti_ModuleResourceData md = {fm->id, im.size, im.bytes};
    CUpti_ResourceData rd = {.context = (CUcontext)stack[0], .resourceDescriptor = &md};
    callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED, &rd);
    *m = (CUmodule)fm;
    return CUDA_SUCCESS;
}

API CUresult cuFuncGetModule(CUmodule *m, CUfunction f)
{
    fake_function *fn = (fake_function *)f;
    if (!fn || !fn->module)
        return CUDA_ERROR_NOT_FOUND;
    *m = (CUmodule)fn->module;
    return CUDA_SUCCESS;
}

API CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name)
{
    fake_module *fm = (fake_module *)m;
    if (!fm || !fm->has_symbol || strcmp(name, "kscope_device_buffer") != 0)
        return CUDA_ERROR_NOT_FOUND;
    *p = (CUdeviceptr)(uintptr_t)&fm->symbol;
    *bytes = sizeof fm->symbol;
    return CUDA_SUCCESS;
}

/* "Device" memory is host memory here; a device pointer is its address. */
API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    void *m = calloc(1, bytes);
    *p = (CUdeviceptr)(uintptr_t)m;
    return m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags)
{
    (void)flags;
    *p = calloc(1, bytes);
    return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

API CUresult cuMemFreeHost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
    (void)flags;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

/* An async copy on stream s: done at once, with its callbacks and its
 * record on s, as a copy of the program's would have. */
static CUresult copy_on(CUpti_CallbackId cbid, const char *name, uint8_t kind, void *dst,
                        const void *src, size_t bytes, CUstream s)
{
    call c;
    call_begin(&c, CUPTI_CB_DOMAIN_DRIVER_API, cbid, name, NULL);
    fake_gpu_copy_words(dst, src, bytes);
    copy_record(kind, bytes, stack[0]->device, stack[0]->device, stream_id(s));
    call_end(&c, CUDA_SUCCESS);
    return CUDA_SUCCESS;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes, CUstream s)
{
    return copy_on(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2",
                   CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, (void *)(uintptr_t)dst, src, bytes, s);
}

API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream s)
{
    return copy_on(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2",
                   CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, dst, (const void *)(uintptr_t)src, bytes, s);
}

API CUresult cuStreamCreate(CUstream *s, unsigned flags)
{
    (void)flags;
    *s = (CUstream)(uintptr_t)atomic_fetch_add(&next_stream, 1);
    return CUDA_SUCCESS;
}

API CUresult cuStreamSynchronize(CUstream s)
{
    (void)s;
    atomic_fetch_add(&stream_syncs, 1);
    return CUDA_SUCCESS;
}

API CUresult cuCtxGetDevice(CUdevice *d)
{
    if (!stack[0])
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = stack[0]->device;
    return CUDA_SUCCESS;
}

/* The grid id the next kernel launched gets. */
API uint64_t fake_cuda_next_grid(void)
{
    return atomic_load(&next_grid);
}

/* ---------------------------------------------------------------- tests */

/* "sync": context synchronisations so far, "stream_sync": stream ones;
 * -1 for other names. */
API long fake_cuda_count(const char *what)
{
    if (strcmp(what, "stream_sync") == 0)
        return atomic_load(&stream_syncs);
    return strcmp(what, "sync") == 0 ? atomic_load(&syncs) : -1;
}
