/*
 * devscope.c - device-side scopes in the CUPTI backend: each context's
 * buffer and each module's kscope_device_buffer symbol (devscope-read.c
 * reads the records).
 *
 * A module is attached at the first launch of one of its functions (the
 * launch's API-enter callback; modules load lazily, often inside that very
 * launch, and CUPTI's module callback names no CUmodule): the function's
 * module has the symbol or not (cuModuleGetGlobal); if it has, the
 * context's buffer is made once (cuMemAlloc for the control block, the
 * records, their drop counts, one claim counter and one limit per SM;
 * cuMemHostAlloc for their host mirrors) and the symbol set with an 8-byte copy on a stream of
 * kscope's own (non-blocking: no ordering with the program's streams), waited for on that stream
 * alone. None of this happens while a stream of the process captures a graph (allocations and
 * copies may be refused then, or end the capture): the function waits until the capture ends. Its
 * launch, being captured, runs no earlier than the graph, which is launched after the capture
 * ended.
 */
#define _GNU_SOURCE
#include "gpu/cupti/devscope.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CTX    16
#define MAX_MODS   1024
#define SEEN_SLOTS 4096 /* functions attached: a lock-free set */
#define MAX_WAIT   256  /* functions waiting for a capture to end */
#define SYMBOL     "kscope_device_buffer"

kscope__ds_driver kscope__ds_fn;
static kscope__ds_driver *const fn = &kscope__ds_fn;

pthread_mutex_t kscope__ds_read_lock = PTHREAD_MUTEX_INITIALIZER;

/* Buffers outgrown: a kernel that read the old control block may still
 * write one, so they are kept for the process. */
static CUdeviceptr retired[MAX_CTX * 8];
static int nretired;

typedef struct ds_mod {
    CUmodule mod;
    CUdeviceptr symbol; /* 0: the module has no device scopes */
    int ctx;            /* index in ctxs */
} ds_mod;

static int loaded;
static pthread_mutex_t ds_lock = PTHREAD_MUTEX_INITIALIZER; /* everything below */
static _Atomic int on;
static kscope__devscope_opts opts;
static kscope__ds_ctx ctxs[MAX_CTX];
static int nctx; /* read without the lock by the buffer thread: grows only */
static ds_mod mods[MAX_MODS];
static int nmods;
static _Atomic(void *) seen[SEEN_SLOTS];
static struct {
    CUfunction f;
    CUcontext ctx;
    uint32_t uid;
} waiting[MAX_WAIT];
static _Atomic int nwaiting;
static int restart; /* turned on during a capture: restart_all at its end */

int kscope__ds_on(void)
{
    return atomic_load_explicit(&on, memory_order_relaxed);
}

const kscope__devscope_opts *kscope__ds_opts(void)
{
    return &opts;
}

kscope__ds_ctx *kscope__ds_contexts(int *n)
{
    *n = __atomic_load_n(&nctx, __ATOMIC_ACQUIRE);
    return ctxs;
}

/* Look name up into dst; whether it was found. */
static int look(void *lib, void **dst, const char *name)
{
    *dst = dlsym(lib, name);
    return *dst != NULL;
}
#define LOAD(dst, name) look(lib, (void **)&(dst), (name))

static int load(void)
{
    if (loaded)
        return 0;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return kscope__fail(KSCOPE_ENOGPU, "device scopes: the CUDA driver is not loaded");
    int ok = LOAD(fn->func_module, "cuFuncGetModule") & LOAD(fn->global, "cuModuleGetGlobal_v2") &
             LOAD(fn->mem_alloc, "cuMemAlloc_v2") & LOAD(fn->host_alloc, "cuMemHostAlloc") &
             LOAD(fn->free_host, "cuMemFreeHost") & LOAD(fn->htod, "cuMemcpyHtoDAsync_v2") &
             LOAD(fn->dtoh, "cuMemcpyDtoHAsync_v2") & LOAD(fn->stream_create, "cuStreamCreate") &
             LOAD(fn->stream_query, "cuStreamQuery") & LOAD(fn->ctx_push, "cuCtxPushCurrent_v2") &
             LOAD(fn->ctx_pop, "cuCtxPopCurrent_v2") & LOAD(fn->ctx_device, "cuCtxGetDevice") &
             LOAD(fn->attribute, "cuDeviceGetAttribute");
    (void)LOAD(fn->kernel_function, "cuKernelGetFunction"); /* optional: CUDA 12 */
    dlclose(lib);
    lib = RTLD_DEFAULT;
    (void)LOAD(fn->stream_id, "cuptiGetStreamId");
    (void)LOAD(fn->func_by_symbol, "cudaGetFuncBySymbol"); /* a program's shared cudart */
    (void)LOAD(fn->flush_all, "cuptiActivityFlushAll");
    if (!ok || !fn->stream_id)
        return kscope__fail(KSCOPE_ENOGPU,
                            "device scopes: this CUDA driver or CUPTI lacks a call they need");
    loaded = 1;
    return 0;
}

/* ------------------------------------------------------------- contexts */

int kscope__ds_wait(const kscope__ds_ctx *c)
{
    struct timespec pause = {0, 20000};
    for (long i = 0; i < 500000; i++) { /* 10 s at most */
        CUresult rc = fn->stream_query(c->stream);
        if (rc != CUDA_ERROR_NOT_READY)
            return rc == CUDA_SUCCESS ? 0 : -1;
        if (i > 16)
            nanosleep(&pause, NULL);
    }
    return -1;
}

/* Copy `bytes` from host to device on kscope's stream and wait for that
 * stream alone. */
static int put(kscope__ds_ctx *c, CUdeviceptr dst, const void *src, size_t bytes)
{
    kscope__graphs_hide(1); /* kscope's own copy: not the program's work */
    int rc = fn->htod(dst, src, bytes, c->stream) == CUDA_SUCCESS ? kscope__ds_wait(c) : -1;
    kscope__graphs_hide(0);
    return rc;
}

static int put_value(kscope__ds_ctx *c, CUdeviceptr dst, uint64_t v)
{
    *c->value = v;
    return put(c, dst, c->value, sizeof v);
}

/* Slots per share for `records` in all: a power of two. */
static uint64_t share_slots(uint64_t records, uint32_t regions)
{
    uint64_t want = (records + regions - 1) / regions, p = 1;
    while (p < want)
        p <<= 1;
    return p;
}

/* Room for `room` records: device memory for them and their drop counts,
 * and pinned mirrors (the old ones retired). */
static int ctx_grow(kscope__ds_ctx *c, uint64_t room)
{
    size_t bytes = (size_t)room * sizeof(kscope_device_record);
    size_t drop_bytes = (size_t)room * sizeof(uint32_t);
    CUdeviceptr recs = 0, drops = 0;
    void *mirror = NULL, *drop_mirror = NULL;
    if (fn->mem_alloc(&recs, bytes) != CUDA_SUCCESS ||
        fn->mem_alloc(&drops, drop_bytes) != CUDA_SUCCESS ||
        fn->host_alloc(&mirror, bytes, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS ||
        fn->host_alloc(&drop_mirror, drop_bytes, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS)
        return kscope__fail(KSCOPE_ENOMEM, "device scopes: cannot allocate a %zu-byte buffer",
                            bytes + drop_bytes);
    if (c->recs && nretired + 2 <= (int)(sizeof retired / sizeof retired[0])) {
        retired[nretired++] = c->recs;
        retired[nretired++] = c->drops;
    }
    if (c->mirror) { /* kscope's alone */
        fn->free_host(c->mirror);
        fn->free_host(c->drop_mirror);
    }
    c->recs = recs, c->drops = drops, c->room = room;
    c->mirror = mirror, c->drop_mirror = drop_mirror;
    return 0;
}

static void shares_free(kscope__ds_ctx *c)
{
    for (uint32_t r = 0; c->shares && r < c->regions; r++)
        kscope__dsbuf_free(&c->shares[r]);
}

/* (Re)start c's buffer with the options now: empty, claims from 0, in a
 * buffer that fits (ctx current, no capture open, read lock held). */
static int ctx_config_locked(kscope__ds_ctx *c)
{
    uint64_t slots = share_slots(opts.records, c->regions);
    uint64_t room = slots * c->regions;
    if (c->room < room && ctx_grow(c, room) != 0)
        return KSCOPE_ENOMEM;
    size_t bytes = (size_t)room * sizeof(kscope_device_record);
    size_t drop_bytes = (size_t)room * sizeof(uint32_t);
    size_t counters = (size_t)c->regions * KSCOPE_DEVICE_COUNTER_STRIDE * 8;
    int first = !(opts.flags & KSCOPE_DEVICE_RING);
    memset(c->mirror, 0, bytes);
    memset(c->drop_mirror, 0, drop_bytes);
    memset(c->counts, 0, counters);
    memset(c->host, 0, sizeof *c->host);
    for (uint32_t r = 0; r < c->regions; r++)
        c->limit_out[r] = slots; /* nothing read yet: one lap */
    c->slots = slots;
    c->host->records = (kscope_device_record *)(uintptr_t)c->recs;
    c->host->counters = (unsigned long long *)(uintptr_t)c->counters;
    c->host->limits = (const unsigned long long *)(uintptr_t)c->limits;
    c->host->drops = (unsigned int *)(uintptr_t)c->drops;
    c->host->slots = slots;
    c->host->regions = c->regions;
    c->host->flags = opts.flags;
    c->host->every = opts.every;
    if (put(c, c->recs, c->mirror, bytes) != 0 ||
        put(c, c->drops, c->drop_mirror, drop_bytes) != 0 ||
        put(c, c->counters, c->counts, counters) != 0 ||
        put(c, c->limits, c->limit_out, (size_t)c->regions * 8) != 0 ||
        put(c, c->ctl, c->host, sizeof *c->host) != 0)
        return kscope__fail(KSCOPE_ENOGPU, "device scopes: cannot set up the control block");
    shares_free(c);
    for (uint32_t r = 0; r < c->regions; r++)
        if (kscope__dsbuf_init(&c->shares[r], c->mirror + r, first ? c->drop_mirror + r : NULL,
                               slots, c->regions, opts.flags, c->uid) != 0)
            return KSCOPE_ENOMEM;
    return 0;
}

static int ctx_config(kscope__ds_ctx *c)
{
    pthread_mutex_lock(&kscope__ds_read_lock);
    int rc = ctx_config_locked(c);
    pthread_mutex_unlock(&kscope__ds_read_lock);
    return rc;
}

/* The device's SMs (132 when it cannot say), and its ns per clock cycle. */
static uint32_t device_sms(kscope__ds_ctx *c)
{
    CUdevice dev;
    int khz = 0, sms = 0;
    if (fn->ctx_device(&dev) != CUDA_SUCCESS)
        return 132;
    if (fn->attribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) == CUDA_SUCCESS && khz > 0)
        c->ns_per_cycle = 1e6 / khz;
    if (fn->attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS ||
        sms <= 0)
        sms = 132;
    return (uint32_t)sms;
}

/* Make ctx's state (ctx current, no capture open). */
static int ctx_make(kscope__ds_ctx *c, CUcontext ctx, uint32_t uid)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->uid = uid;
    c->regions = device_sms(c);
    size_t counters = (size_t)c->regions * KSCOPE_DEVICE_COUNTER_STRIDE * 8;
    if (fn->stream_create(&c->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        fn->stream_id(ctx, c->stream, &c->stream_id) != CUPTI_SUCCESS ||
        fn->mem_alloc(&c->ctl, sizeof(kscope_device_ctl)) != CUDA_SUCCESS ||
        fn->mem_alloc(&c->counters, counters) != CUDA_SUCCESS ||
        fn->mem_alloc(&c->limits, (size_t)c->regions * 8) != CUDA_SUCCESS ||
        fn->host_alloc((void **)&c->host, sizeof(kscope_device_ctl) + 64,
                       CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS ||
        fn->host_alloc((void **)&c->counts, counters, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS ||
        fn->host_alloc((void **)&c->recounts, counters, CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS ||
        fn->host_alloc((void **)&c->limit_out, (size_t)c->regions * 8, CU_MEMHOSTALLOC_PORTABLE) !=
            CUDA_SUCCESS ||
        (c->shares = calloc(c->regions, sizeof *c->shares)) == NULL)
        return kscope__fail(KSCOPE_ENOMEM, "device scopes: cannot set up a context");
    c->value = (uint64_t *)((char *)c->host + sizeof(kscope_device_ctl));
    return ctx_config(c);
}

/* ctx's state, made when missing (-1: cannot). */
static int ctx_index(CUcontext ctx, uint32_t uid)
{
    for (int i = 0; i < nctx; i++)
        if (ctxs[i].uid == uid)
            return i;
    if (nctx == MAX_CTX)
        return -1;
    if (ctx_make(&ctxs[nctx], ctx, uid) != 0) {
        kscope__warn_once("dscope-alloc", "%s; kernels run without device scopes",
                          kscope_last_error());
        return -1;
    }
    __atomic_store_n(&nctx, nctx + 1, __ATOMIC_RELEASE); /* the buffer thread reads it */
    return nctx - 1;
}

/* ------------------------------------------------------------ attaching */

static size_t seen_hash(const void *f)
{
    return (size_t)(((uintptr_t)f * 0x9e3779b97f4a7c15ull) >> 40) & (SEEN_SLOTS - 1);
}

static int seen_has(CUfunction f)
{
    for (size_t j = seen_hash(f), k = 0; k < 8; j = (j + 1) & (SEEN_SLOTS - 1), k++) {
        void *v = atomic_load_explicit(&seen[j], memory_order_acquire);
        if (v == f)
            return 1;
        if (!v)
            return 0;
    }
    return 0; /* crowded: the slow path answers */
}

static void seen_add(CUfunction f)
{
    for (size_t j = seen_hash(f), k = 0; k < 8; j = (j + 1) & (SEEN_SLOTS - 1), k++) {
        void *v = atomic_load(&seen[j]);
        if (v == f)
            return;
        if (!v) {
            atomic_store_explicit(&seen[j], f, memory_order_release);
            return;
        }
    }
}

static CUmodule module_of(CUfunction f)
{
    CUmodule m = NULL;
    if (fn->func_module(&m, f) == CUDA_SUCCESS && m)
        return m;
    CUfunction g = NULL; /* a CUkernel, as the runtime launches them */
    if (fn->kernel_function && fn->kernel_function(&g, (CUkernel)f) == CUDA_SUCCESS && g &&
        fn->func_module(&m, g) == CUDA_SUCCESS)
        return m;
    return NULL;
}

static ds_mod *mod_find(CUmodule m)
{
    for (int i = 0; i < nmods; i++)
        if (mods[i].mod == m)
            return &mods[i];
    return NULL;
}

/* Attach f's module (lock held). 1: done (or nothing to do), 0: wait for
 * the capture to end. */
static int attach(CUfunction f, CUcontext ctx, uint32_t uid)
{
    CUmodule m = module_of(f);
    if (!m || mod_find(m))
        return 1;
    CUdeviceptr sym = 0;
    size_t size = 0;
    if (fn->global(&sym, &size, m, SYMBOL) != CUDA_SUCCESS || size != sizeof(void *))
        sym = 0;
    if (sym && kscope__graphs_capturing(0))
        return 0;
    int ci = sym ? ctx_index(ctx, uid) : -1;
    if (ci >= 0 && put_value(&ctxs[ci], sym, (uint64_t)ctxs[ci].ctl) != 0) {
        kscope__warn_once("dscope-set", "device scopes: cannot set a module's buffer");
        ci = -1;
    }
    if (nmods < MAX_MODS)
        mods[nmods++] = (ds_mod){m, ci >= 0 ? sym : 0, ci};
    return 1;
}

static void restart_all(void);

/* The options now; the reader reads them under the read lock. */
static void set_opts(const kscope__devscope_opts *o)
{
    pthread_mutex_lock(&kscope__ds_read_lock);
    opts = *o;
    pthread_mutex_unlock(&kscope__ds_read_lock);
}

static void attach_waiting(void)
{
    if (kscope__graphs_capturing(0))
        return;
    if (restart)
        restart_all();
    int n = atomic_load(&nwaiting);
    for (int i = 0; i < n; i++) {
        CUcontext popped;
        int pushed = fn->ctx_push(waiting[i].ctx) == CUDA_SUCCESS;
        attach(waiting[i].f, waiting[i].ctx, waiting[i].uid);
        if (pushed)
            fn->ctx_pop(&popped);
        seen_add(waiting[i].f);
    }
    atomic_store(&nwaiting, 0);
}

/* The function a launch call launches (NULL: not one kscope reads). */
static CUfunction launched(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *params)
{
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        switch (cbid) {
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
            return ((const cuLaunchKernel_params *)params)->f;
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
            return ((const cuLaunchKernelEx_params *)params)->f;
        default:
            return NULL;
        }
    }
    const void *func = NULL;
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
        cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000)
        func = ((const cudaLaunchKernel_v7000_params *)params)->func;
    else if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
             cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060)
        func = ((const cudaLaunchKernelExC_v11060_params *)params)->func;
    void *f = NULL;
    if (func && fn->func_by_symbol && fn->func_by_symbol(&f, func) != 0)
        f = NULL;
    return f;
}

/* A function launched for the first time: its module's buffer pointer is
 * set now, or once a graph capture ends. */
static void attach_new(CUfunction f, const CUpti_CallbackData *cb)
{
    pthread_mutex_lock(&ds_lock);
    if (attach(f, cb->context, cb->contextUid)) {
        seen_add(f);
    } else {
        int n = atomic_load(&nwaiting);
        if (n < MAX_WAIT) {
            waiting[n].f = f, waiting[n].ctx = cb->context, waiting[n].uid = cb->contextUid;
            atomic_store(&nwaiting, n + 1);
        }
    }
    pthread_mutex_unlock(&ds_lock);
}

void kscope__ds_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const CUpti_CallbackData *cb)
{
    if (!kscope__ds_on() || cb->callbackSite != CUPTI_API_ENTER || !cb->functionParams)
        return;
    if (atomic_load_explicit(&nwaiting, memory_order_relaxed) || restart) {
        pthread_mutex_lock(&ds_lock);
        attach_waiting();
        pthread_mutex_unlock(&ds_lock);
    }
    CUfunction f = launched(domain, cbid, cb->functionParams);
    if (f && !seen_has(f)) /* else the steady state: a few loads */
        attach_new(f, cb);
    kscope__ds_reader_kick(); /* after attaching: the reader finds the context */
}

void kscope__ds_capture_ended(void)
{
    if (!kscope__ds_on() || (!atomic_load(&nwaiting) && !restart))
        return;
    pthread_mutex_lock(&ds_lock);
    attach_waiting();
    pthread_mutex_unlock(&ds_lock);
}

void kscope__ds_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
    if (!kscope__ds_on())
        return;
    if (cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED && rd->resourceDescriptor) {
        const CUpti_ModuleResourceData *m = rd->resourceDescriptor;
        if (m->pCubin && m->cubinSize)
            kscope__ds_names_cubin(m->pCubin, m->cubinSize);
    }
}

/* --------------------------------------------------------------- on, off */

static void point_all(int v);

/* Every context's buffer restarts with the options, every module is
 * pointed at it (lock held, no capture open). */
static void restart_all(void)
{
    for (int i = 0; i < nctx; i++) {
        CUcontext popped;
        int pushed = fn->ctx_push(ctxs[i].ctx) == CUDA_SUCCESS;
        if (ctx_config(&ctxs[i]) != 0)
            kscope__warn_once("dscope-alloc", "%s", kscope_last_error());
        if (pushed)
            fn->ctx_pop(&popped);
    }
    point_all(1);
    restart = 0;
}

/* Point every attached module's symbol at its buffer (v = 1) or at NULL. */
static void point_all(int v)
{
    for (int i = 0; i < nmods; i++) {
        ds_mod *m = &mods[i];
        if (!m->symbol)
            continue;
        kscope__ds_ctx *c = &ctxs[m->ctx];
        CUcontext popped;
        int pushed = fn->ctx_push(c->ctx) == CUDA_SUCCESS;
        put_value(c, m->symbol, v ? (uint64_t)c->ctl : 0);
        if (pushed)
            fn->ctx_pop(&popped);
    }
}

int kscope__ds_switch(int turn_on, const kscope__devscope_opts *o,
                      CUpti_SubscriberHandle subscriber,
                      CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                            CUpti_CallbackId))
{
    pthread_mutex_lock(&ds_lock);
    int rc = 0;
    if (turn_on && !kscope__ds_on()) {
        if ((rc = load()) == 0 && (rc = kscope__ds_reader_start()) == 0) {
            if (subscriber)
                enable(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
            if (kscope__graphs_capturing(0)) { /* the buffers as they were */
                kscope__warn_once("dscope-capture", "device scopes began while a graph capture "
                                                    "was open: they record from its end");
                set_opts(o);
                restart = 1;
            } else {
                set_opts(o);
                restart_all();
            }
            atomic_store(&on, 1);
            kscope__ds_reader_wake();
        }
    } else if (!turn_on && kscope__ds_on()) {
        atomic_store(&on, 0);
        if (!kscope__graphs_capturing(0)) /* else kernels go on writing: harmless */
            point_all(0);
    }
    pthread_mutex_unlock(&ds_lock);
    return rc;
}
