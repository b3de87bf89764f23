/*
 * devscope.c - device-side scopes in the CUPTI backend: each context's
 * buffer, each module's kscope_device_buffer symbol, and the records read
 * as CUPTI reports launches finished.
 *
 * A module is attached at the first launch of one of its functions (the
 * launch's API-enter callback; modules load lazily, often inside that very
 * launch, and CUPTI's module callback names no CUmodule): the function's
 * module has the symbol or not (cuModuleGetGlobal); if it has, the
 * context's buffer is made once (cuMemAlloc for the control block,
 * cuMemHostAlloc for the records, mapped) and the symbol set with an
 * 8-byte copy on a stream of kscope's own (non-blocking: no ordering with
 * the program's streams), waited for on that stream alone. None of this
 * happens while a stream of the process captures a graph (allocations and
 * copies may be refused then, or end the capture): the function waits
 * until the capture ends. Its launch, being captured, runs no earlier than
 * the graph, which is launched after the capture ended.
 *
 * Reading needs no copy: when a batch of CUPTI records arrives, the grids
 * of the kernels it reports are noted, every context's buffer is read for
 * them, and each kernel's records go to the core with the kernel's own
 * record. Only a flush (already a synchronisation point, never during a
 * capture) copies the 8-byte claim counter back, to count keep-first's
 * records past the end.
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

typedef struct driver_fns {
    CUresult (*func_module)(CUmodule *, CUfunction);
    CUresult (*kernel_function)(CUfunction *, CUkernel);
    CUresult (*global)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*host_alloc)(void **, size_t, unsigned int);
    CUresult (*host_dptr)(CUdeviceptr *, void *, unsigned int);
    CUresult (*htod)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*stream_create)(CUstream *, unsigned int);
    CUresult (*stream_sync)(CUstream);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*ctx_device)(CUdevice *);
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
    CUptiResult (*stream_id)(CUcontext, CUstream, uint32_t *);
    int (*func_by_symbol)(void **, const void *); /* cudaGetFuncBySymbol, optional */
} driver_fns;

typedef struct ds_ctx {
    CUcontext ctx;
    uint32_t uid, stream_id; /* CUPTI's ids of the context and of kscope's stream */
    CUstream stream;
    CUdeviceptr ctl;
    kscope_device_ctl *host; /* pinned: the control block's first copy, the symbol's value */
    uint64_t *value;         /* pinned: 8 bytes copied in or out */
    void *recs;              /* pinned, mapped: `room` records */
    CUdeviceptr recs_dev;
    uint64_t room;
    kscope__dsbuf buf;
    double ns_per_cycle;
} ds_ctx;

/* Record buffers outgrown: a kernel that read the old control block may
 * still write one, so they are kept for the process. */
static void *retired[MAX_CTX * 8];
static int nretired;

typedef struct ds_mod {
    CUmodule mod;
    CUdeviceptr symbol; /* 0: the module has no device scopes */
    int ctx;            /* index in ctxs */
} ds_mod;

static driver_fns fn;
static int loaded;
static pthread_mutex_t ds_lock = PTHREAD_MUTEX_INITIALIZER; /* everything below */
static _Atomic int on;
static kscope__devscope_opts opts;
static ds_ctx ctxs[MAX_CTX];
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
static int restart;           /* turned on during a capture: restart_all at its end */
static kscope__dsgrids grids; /* buffer thread (cupti.c's buffer lock) */

int kscope__ds_on(void)
{
    return atomic_load_explicit(&on, memory_order_relaxed);
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
    int ok = LOAD(fn.func_module, "cuFuncGetModule") & LOAD(fn.global, "cuModuleGetGlobal_v2") &
             LOAD(fn.mem_alloc, "cuMemAlloc_v2") & LOAD(fn.host_alloc, "cuMemHostAlloc") &
             LOAD(fn.host_dptr, "cuMemHostGetDevicePointer_v2") &
             LOAD(fn.htod, "cuMemcpyHtoDAsync_v2") & LOAD(fn.dtoh, "cuMemcpyDtoHAsync_v2") &
             LOAD(fn.stream_create, "cuStreamCreate") &
             LOAD(fn.stream_sync, "cuStreamSynchronize") &
             LOAD(fn.ctx_push, "cuCtxPushCurrent_v2") & LOAD(fn.ctx_pop, "cuCtxPopCurrent_v2") &
             LOAD(fn.ctx_device, "cuCtxGetDevice") & LOAD(fn.attribute, "cuDeviceGetAttribute");
    (void)LOAD(fn.kernel_function, "cuKernelGetFunction"); /* optional: CUDA 12 */
    dlclose(lib);
    lib = RTLD_DEFAULT;
    (void)LOAD(fn.stream_id, "cuptiGetStreamId");
    (void)LOAD(fn.func_by_symbol, "cudaGetFuncBySymbol"); /* a program's shared cudart */
    if (!ok || !fn.stream_id)
        return kscope__fail(KSCOPE_ENOGPU,
                            "device scopes: this CUDA driver or CUPTI lacks a call they need");
    loaded = 1;
    return 0;
}

/* ------------------------------------------------------------- contexts */

/* Copy 8 bytes to device address dst on kscope's stream and wait for that
 * stream alone. */
static int put_value(ds_ctx *c, CUdeviceptr dst, uint64_t v)
{
    *c->value = v;
    kscope__graphs_hide(1); /* kscope's own copy: not the program's work */
    int rc = fn.htod(dst, c->value, sizeof v, c->stream) == CUDA_SUCCESS &&
                     fn.stream_sync(c->stream) == CUDA_SUCCESS
                 ? 0
                 : -1;
    kscope__graphs_hide(0);
    return rc;
}

/* (Re)start c's buffer with the options now: empty, claims from 0, in a
 * buffer that fits (ctx current, no capture open). */
static int ctx_config(ds_ctx *c)
{
    size_t bytes = (size_t)opts.records * sizeof(kscope_device_record);
    if (c->room < opts.records) {
        void *recs = NULL;
        CUdeviceptr dev = 0;
        if (fn.host_alloc(&recs, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) !=
                CUDA_SUCCESS ||
            fn.host_dptr(&dev, recs, 0) != CUDA_SUCCESS)
            return kscope__fail(KSCOPE_ENOMEM, "device scopes: cannot allocate a %zu-byte buffer",
                                bytes);
        if (c->recs && nretired < (int)(sizeof retired / sizeof retired[0]))
            retired[nretired++] = c->recs;
        c->recs = recs, c->recs_dev = dev, c->room = opts.records;
    }
    memset(c->recs, 0, bytes);
    memset(c->host, 0, sizeof *c->host);
    c->host->records = (kscope_device_record *)(uintptr_t)c->recs_dev;
    c->host->capacity = opts.records;
    c->host->flags = opts.flags;
    c->host->every = opts.every;
    kscope__graphs_hide(1);
    int ok = fn.htod(c->ctl, c->host, sizeof *c->host, c->stream) == CUDA_SUCCESS &&
             fn.stream_sync(c->stream) == CUDA_SUCCESS;
    kscope__graphs_hide(0);
    if (!ok)
        return kscope__fail(KSCOPE_ENOGPU, "device scopes: cannot set up the control block");
    kscope__dsbuf_free(&c->buf);
    return kscope__dsbuf_init(&c->buf, c->recs, opts.records, opts.flags, c->uid);
}

/* Make ctx's state (ctx current, no capture open). */
static int ctx_make(ds_ctx *c, CUcontext ctx, uint32_t uid)
{
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->uid = uid;
    CUdevice dev;
    int khz = 0;
    if (fn.stream_create(&c->stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        fn.stream_id(ctx, c->stream, &c->stream_id) != CUPTI_SUCCESS ||
        fn.mem_alloc(&c->ctl, sizeof(kscope_device_ctl)) != CUDA_SUCCESS ||
        fn.host_alloc((void **)&c->host, sizeof(kscope_device_ctl) + 64,
                      CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS)
        return kscope__fail(KSCOPE_ENOMEM, "device scopes: cannot set up a context");
    c->value = (uint64_t *)((char *)c->host + sizeof(kscope_device_ctl));
    if (fn.ctx_device(&dev) == CUDA_SUCCESS &&
        fn.attribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) == CUDA_SUCCESS && khz > 0)
        c->ns_per_cycle = 1e6 / khz;
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
    if (fn.func_module(&m, f) == CUDA_SUCCESS && m)
        return m;
    CUfunction g = NULL; /* a CUkernel, as the runtime launches them */
    if (fn.kernel_function && fn.kernel_function(&g, (CUkernel)f) == CUDA_SUCCESS && g &&
        fn.func_module(&m, g) == CUDA_SUCCESS)
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
    if (fn.global(&sym, &size, m, SYMBOL) != CUDA_SUCCESS || size != sizeof(void *))
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

static void attach_waiting(void)
{
    if (kscope__graphs_capturing(0))
        return;
    if (restart)
        restart_all();
    int n = atomic_load(&nwaiting);
    for (int i = 0; i < n; i++) {
        CUcontext popped;
        int pushed = fn.ctx_push(waiting[i].ctx) == CUDA_SUCCESS;
        attach(waiting[i].f, waiting[i].ctx, waiting[i].uid);
        if (pushed)
            fn.ctx_pop(&popped);
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
    if (func && fn.func_by_symbol && fn.func_by_symbol(&f, func) != 0)
        f = NULL;
    return f;
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
    if (!f || seen_has(f))
        return; /* the steady state: a few loads */
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
        int pushed = fn.ctx_push(ctxs[i].ctx) == CUDA_SUCCESS;
        if (ctx_config(&ctxs[i]) != 0)
            kscope__warn_once("dscope-alloc", "%s", kscope_last_error());
        if (pushed)
            fn.ctx_pop(&popped);
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
        ds_ctx *c = &ctxs[m->ctx];
        CUcontext popped;
        int pushed = fn.ctx_push(c->ctx) == CUDA_SUCCESS;
        put_value(c, m->symbol, v ? (uint64_t)c->ctl : 0);
        if (pushed)
            fn.ctx_pop(&popped);
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
        if ((rc = load()) == 0) {
            if (subscriber)
                enable(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED);
            if (kscope__graphs_capturing(0)) { /* the buffers as they were */
                kscope__warn_once("dscope-capture", "device scopes began while a graph capture "
                                                    "was open: they record from its end");
                opts = *o;
                restart = 1;
            } else {
                opts = *o;
                restart_all();
            }
            atomic_store(&on, 1);
        }
    } else if (!turn_on && kscope__ds_on()) {
        atomic_store(&on, 0);
        if (!kscope__graphs_capturing(0)) /* else kernels go on writing: harmless */
            point_all(0);
    }
    pthread_mutex_unlock(&ds_lock);
    return rc;
}

/* -------------------------------------------------------------- reading */

/* KSCOPE_DSCOPE_DEBUG=1: a line per buffer read (claims read, the last
 * launch reported, the grid id at the first claim not read). */
static void debug_line(const char *when, const kscope__dsbuf *b)
{
    static int debug = -1;
    if (debug < 0) {
        const char *e = getenv("KSCOPE_DSCOPE_DEBUG");
        debug = e && *e && strcmp(e, "0") != 0;
    }
    if (!debug)
        return;
    const volatile kscope_device_record *r = &b->recs[b->w & (b->cap - 1)];
    fprintf(stderr,
            "kscope: device scopes %s: context %u, claims read %llu of %llu seen, last grid "
            "%u, next slot tag %u grid %u\n",
            when, b->context_id, (unsigned long long)b->w, (unsigned long long)b->hi, b->max_grid,
            r->tag, r->grid);
}

void kscope__ds_buffer_begin(uint8_t *buffer, size_t valid, kscope__ds_next_fn next)
{
    if (!kscope__ds_on() && !__atomic_load_n(&nctx, __ATOMIC_ACQUIRE))
        return;
    CUpti_Activity *rec = NULL;
    int any = 0;
    while (next(buffer, valid, &rec) == CUPTI_SUCCESS) {
        kscope__gpu_record r;
        memset(&r, 0, sizeof r);
        if (kscope__gpu_decode(rec, &r) && r.kind == KSCOPE__GPU_KERNEL) {
            any |= kscope__dsgrids_expect(&grids, r.context_id, (uint32_t)r.grid_id) == 0;
            pthread_mutex_lock(&ds_lock);
            for (int i = 0; i < nctx; i++) {
                kscope__dsbuf *b = &ctxs[i].buf;
                if (b->context_id == r.context_id &&
                    (!b->any_grid || (int32_t)((uint32_t)r.grid_id - b->max_grid) > 0))
                    b->max_grid = (uint32_t)r.grid_id, b->any_grid = 1;
            }
            pthread_mutex_unlock(&ds_lock);
        }
    }
    if (!any)
        return;
    pthread_mutex_lock(&ds_lock);
    int64_t lost = 0;
    for (int i = 0; i < nctx; i++) {
        lost += kscope__dsbuf_scan(&ctxs[i].buf, &grids, 0);
        debug_line("read", &ctxs[i].buf);
    }
    pthread_mutex_unlock(&ds_lock);
    if (lost)
        kscope__add_devscope_lost(lost);
}

int kscope__ds_delivered(uint64_t ctx, const kscope__gpu_record *r)
{
    int n_ctx = __atomic_load_n(&nctx, __ATOMIC_ACQUIRE);
    if (!n_ctx)
        return 0;
    if (r->kind != KSCOPE__GPU_KERNEL) {
        for (int i = 0; i < n_ctx; i++) /* kscope's own copies */
            if (ctxs[i].uid == r->context_id && ctxs[i].stream_id == r->stream)
                return 1;
        return 0;
    }
    size_t n = 0;
    const kscope__devscope_rec *recs =
        kscope__dsgrids_take(&grids, r->context_id, (uint32_t)r->grid_id, &n);
    if (!n)
        return 0;
    double ns = 0;
    for (int i = 0; i < n_ctx; i++)
        if (ctxs[i].uid == r->context_id)
            ns = ctxs[i].ns_per_cycle;
    kscope__record_devscopes(ctx, r, recs, n, (opts.flags & KSCOPE_DEVICE_CLOCK64) != 0, ns);
    return 0;
}

void kscope__ds_buffer_end(void)
{
    size_t left = grids.used ? kscope__dsgrids_clear(&grids) : 0;
    if (left)
        kscope__add_devscope_lost((int64_t)left);
}

void kscope__ds_flush(int final)
{
    pthread_mutex_lock(&ds_lock);
    int64_t lost = 0;
    kscope__dsgrids none = {0};
    for (int i = 0; i < nctx; i++) {
        ds_ctx *c = &ctxs[i];
        lost += kscope__dsbuf_scan(&c->buf, &none, final);
        debug_line(final >= 2 ? "stop" : "flush", &c->buf);
        CUcontext popped;
        int pushed = fn.ctx_push(c->ctx) == CUDA_SUCCESS;
        kscope__graphs_hide(1);
        if (!(c->buf.flags & KSCOPE_DEVICE_RING) &&
            fn.dtoh(c->value, c->ctl + offsetof(kscope_device_ctl, next), 8, c->stream) ==
                CUDA_SUCCESS &&
            fn.stream_sync(c->stream) == CUDA_SUCCESS)
            lost += kscope__dsbuf_overflow(&c->buf, *c->value);
        kscope__graphs_hide(0);
        if (pushed)
            fn.ctx_pop(&popped);
    }
    pthread_mutex_unlock(&ds_lock);
    if (lost)
        kscope__add_devscope_lost(lost);
}
