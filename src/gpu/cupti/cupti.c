/*
 * cupti.c - the CUPTI backend: every kernel, copy and set, attributed to
 * the calling context that launched it.
 *
 * CUPTI and the CUDA driver are loaded at run time, so libkscope loads and
 * records host scopes on machines with neither. What is enabled, and why:
 *
 *   CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET  the GPU work itself (never
 *       the KERNEL kind, which serialises kernels); no API records.
 *   Callbacks on the runtime's and the driver's launch, copy and set calls
 *       (and on no other call): at each call's begin the launching thread
 *       notes its calling context, thread and time under the call's
 *       correlation id (correlate.c), the id its kernels carry; the same
 *       callback hands launch metadata to the call. Scope boundaries tell
 *       CUPTI nothing, so a scope costs the same with or without capture.
 *
 * KSCOPE_CUPTI_DEBUG=1 prints one line per activity buffer (records, how
 * many were delivered and attributed) and the number of calls followed.
 *
 * Activity buffers come from a free list and go back to it, so the steady
 * state allocates nothing. Record timestamps are on kscope's clock (CUPTI's
 * timestamp callback), so a kernel never starts before its launch.
 */
#include "gpu/cupti/cupti-about.h"
#include "gpu/cupti/cupti-internal.h"
#include "gpu/cupti/devscope.h"
#include "gpu/cupti/pcs.h"

#include <cuda.h>
#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BUFFER_SIZE       (4u << 20)
#define DS_BUFFER_SIZE    (64u << 10) /* while device scopes are on: */
#define DS_BUFFER_RECORDS 64          /* at most this many records each */
#define BUFFER_ALIGN      8

/* ------------------------------------------------------- loaded functions */

typedef struct cupti_api {
    CUptiResult (*activity_enable)(CUpti_ActivityKind);
    CUptiResult (*activity_disable)(CUpti_ActivityKind);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*get_next_record)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*get_dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*register_timestamp)(CUpti_TimestampCallbackFunc);
    CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                   CUpti_CallbackId);
    CUptiResult (*result_string)(CUptiResult, const char **);
    CUptiResult (*callback_name)(CUpti_CallbackDomain, uint32_t, const char **); /* optional */
} cupti_api;

typedef struct driver_api {
    CUresult (*device_count)(int *);
    CUresult (*device_get)(CUdevice *, int);
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*ctx_current)(CUcontext *);
    CUresult (*ctx_synchronize)(void);
    CUresult (*primary_state)(CUdevice, unsigned *, int *);
    CUresult (*primary_retain)(CUcontext *, CUdevice);
    CUresult (*primary_release)(CUdevice);
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
} driver_api;

static cupti_api cu;
static driver_api drv;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_err;
static char load_msg[512];

/* ------------------------------------------------------------------ state */

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;  /* start/stop */
static pthread_mutex_t buffer_lock = PTHREAD_MUTEX_INITIALIZER; /* corr, decode */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;   /* the free lists */
static int started;
static CUpti_SubscriberHandle subscriber;
static kscope__corr corr;
static int corr_ready;
static void *free_buffers; /* each buffer's first word links the next */
static void *free_small;   /* the same, of DS_BUFFER_SIZE */
static int forked_child;   /* a fork() child of a process that was capturing */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

/* Metadata for the next launch on this thread, and the capture_gen it
 * was given in (metadata from before the gate last opened is stale). */
static __thread kscope__gpu_meta *tl_meta;
static __thread uint32_t tl_meta_gen;
/* Sampled sessions: KSCOPE__GATE_OPEN, or QUIET/SHUT between windows. */
static _Atomic int gate_state = KSCOPE__GATE_OPEN;
/* Launch metadata was given once: launches are followed from then on. */
static _Atomic int meta_given;
/* This thread's OS id (0: not yet read), and how many followed calls it
 * is inside (a driver call made by a runtime call is the second). */
static __thread uint32_t tl_tid;
static __thread int tl_call_depth;
static __thread uint64_t tl_call_start; /* of the outermost followed call */
static __thread uint64_t tl_call_ticks; /* the same, on the host scopes' clock */
static __thread uint64_t tl_call_ctx;   /* its context */
/* Bumped at each start: a call still open when capture stopped (its exit
 * never came) must not count in a later capture. */
static _Atomic uint32_t capture_gen;
static __thread uint32_t tl_gen;

static int debug;                       /* KSCOPE_CUPTI_DEBUG=1: one stderr line per buffer */
static _Atomic uint64_t calls_followed; /* counted only with debug on */
static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,
};

/* The row of kscope__call_class a runtime or driver domain has. */
static int domain_index(CUpti_CallbackDomain domain)
{
    return domain == CUPTI_CB_DOMAIN_DRIVER_API;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- loading */

static int load_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Remember why the backend cannot run (reported at each start). */
static int load_fail(int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_msg, sizeof load_msg, fmt, ap);
    va_end(ap);
    load_err = err;
    return err;
}

#define SYM(lib, dst, name)                                                                        \
    do {                                                                                           \
        *(void **)&(dst) = dlsym((lib), (name));                                                   \
        if (!(dst))                                                                                \
            missing = (name);                                                                      \
    } while (0)

static int load_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
        return load_fail(KSCOPE_ENOGPU, "no CUDA driver: cannot load libcuda.so.1 (%s)", dlerror());
    const char *missing = NULL;
    SYM(lib, drv.device_count, "cuDeviceGetCount");
    SYM(lib, drv.device_get, "cuDeviceGet");
    SYM(lib, drv.attribute, "cuDeviceGetAttribute");
    SYM(lib, drv.ctx_current, "cuCtxGetCurrent");
    SYM(lib, drv.ctx_synchronize, "cuCtxSynchronize");
    SYM(lib, drv.primary_state, "cuDevicePrimaryCtxGetState");
    SYM(lib, drv.primary_retain, "cuDevicePrimaryCtxRetain");
    SYM(lib, drv.primary_release, "cuDevicePrimaryCtxRelease_v2");
    SYM(lib, drv.ctx_push, "cuCtxPushCurrent_v2");
    /* Graph capture's (optional: without them kscope cannot tell whether a
     * capture is open, nor copy a graph's values back). */
    *(void **)&kscope__graph_fns.is_capturing = dlsym(lib, "cuStreamIsCapturing");
    *(void **)&kscope__graph_fns.host_alloc = dlsym(lib, "cuMemHostAlloc");
    *(void **)&kscope__graph_fns.host_free = dlsym(lib, "cuMemFreeHost");
    *(void **)&kscope__graph_fns.copy_dtoh = dlsym(lib, "cuMemcpyDtoHAsync_v2");
    SYM(lib, drv.ctx_pop, "cuCtxPopCurrent_v2");
    if (missing)
        return load_fail(KSCOPE_ENOGPU, "CUDA driver libcuda.so.1 lacks %s (driver too old)",
                         missing);
    /* No driver call here: start() may run inside cuInit (kscope run's
     * CUDA injection), where calling back into the driver deadlocks. The
     * device nodes say whether a GPU is there (KSCOPE_GPU_DEVICE_GLOB
     * replaces their pattern: tests with a stand-in driver). */
    const char *nodes = getenv("KSCOPE_GPU_DEVICE_GLOB");
    glob_t g;
    int rc = glob(nodes && *nodes ? nodes : "/dev/nvidia[0-9]*", 0, NULL, &g);
    int found = rc == 0 && g.gl_pathc > 0;
    if (rc == 0)
        globfree(&g);
    if (!found)
        return load_fail(KSCOPE_ENOGPU,
                         "no NVIDIA GPU found (libcuda.so.1 is there, but no /dev/nvidia<N>)");
    return 0;
}

static int load_cupti(void)
{
    char tried[2048];
    void *lib = kscope__cupti_open(tried, sizeof tried);
    if (!lib)
        return load_fail(KSCOPE_ENOGPUTOOL,
                         "CUPTI library not found (tried %s); set KSCOPE_CUPTI_LIBRARY to its path",
                         tried);
    const char *missing = NULL;
    SYM(lib, cu.activity_enable, "cuptiActivityEnable");
    SYM(lib, cu.activity_disable, "cuptiActivityDisable");
    SYM(lib, cu.register_callbacks, "cuptiActivityRegisterCallbacks");
    SYM(lib, cu.get_next_record, "cuptiActivityGetNextRecord");
    SYM(lib, cu.get_dropped, "cuptiActivityGetNumDroppedRecords");
    SYM(lib, cu.flush_all, "cuptiActivityFlushAll");
    SYM(lib, cu.register_timestamp, "cuptiActivityRegisterTimestampCallback");
    SYM(lib, cu.subscribe, "cuptiSubscribe");
    SYM(lib, cu.unsubscribe, "cuptiUnsubscribe");
    SYM(lib, cu.enable_callback, "cuptiEnableCallback");
    SYM(lib, cu.result_string, "cuptiGetResultString");
    if (missing)
        return load_fail(KSCOPE_ENOGPUTOOL,
                         "CUPTI library lacks %s (CUPTI from CUDA 12 or later is needed)", missing);
    *(void **)&cu.callback_name = dlsym(lib, "cuptiGetCallbackName");
    kscope__pcs_load(lib); /* PC sampling's calls: optional */
    /* All three or none: without them graph work goes to its launch. */
    kscope__graph_api *g = &kscope__graph_fns;
    *(void **)&g->node_id = dlsym(lib, "cuptiGetGraphNodeId");
    *(void **)&g->graph_id = dlsym(lib, "cuptiGetGraphId");
    *(void **)&g->exec_id = dlsym(lib, "cuptiGetGraphExecId");
    if (!g->node_id || !g->graph_id || !g->exec_id)
        g->node_id = NULL, g->graph_id = NULL, g->exec_id = NULL;
    return 0;
}

static void load_all(void)
{
    if (load_driver() == 0)
        load_cupti();
}

static const char *cupti_error(CUptiResult rc)
{
    const char *s = NULL;
    if (cu.result_string && cu.result_string(rc, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

static void cupti_stop(void);

/* Stop capture at exit, before the driver tears itself down (this handler
 * is registered after cuInit's, so it runs first: at the first activity
 * buffer CUPTI asks for, or the first context made, whichever comes
 * first); a finalize that comes later (a destructor) then finds everything
 * delivered. Without it, a capture whose gate stayed shut was stopped by
 * that destructor, after the driver was gone, and the program crashed at
 * exit. */
static void stop_at_exit(void)
{
    cupti_stop();
}

static void register_exit(void)
{
    atexit(stop_at_exit);
}

/* ---------------------------------------------------------------- buffers */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    /* CUPTI asks for a buffer once CUDA is in use: cuInit has run. */
    pthread_once(&exit_once, register_exit);
    /* Device scopes' records wait on the host for their launch's record:
     * small buffers of a few records report launches soon (devscope-read.c). */
    int small = kscope__ds_on();
    void **list = small ? &free_small : &free_buffers;
    size_t bytes = small ? DS_BUFFER_SIZE : BUFFER_SIZE;
    pthread_mutex_lock(&free_lock);
    void *b = *list;
    if (b)
        *list = *(void **)b;
    pthread_mutex_unlock(&free_lock);
    if (!b)
        b = aligned_alloc(BUFFER_ALIGN, bytes);
    /* NULL makes CUPTI drop records, which it counts: reported at finalize. */
    *buffer = b;
    *size = b ? bytes : 0;
    *max_records = small ? DS_BUFFER_RECORDS : 0;
}

static void buffer_release(uint8_t *b, size_t size)
{
    void **list = size == DS_BUFFER_SIZE ? &free_small : &free_buffers;
    pthread_mutex_lock(&free_lock);
    *(void **)b = *list;
    *list = b;
    pthread_mutex_unlock(&free_lock);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                      size_t valid)
{
    pthread_mutex_lock(&buffer_lock);
    size_t n = 0;
    CUpti_Activity *rec = NULL;
    while (cu.get_next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
        kscope__corr_feed(&corr, rec);
        n++;
    }
    if (debug)
        fprintf(stderr,
                "kscope: cupti buffer: %zu records, %zu bytes; delivered %llu, unattributed "
                "%llu; calls followed %llu\n",
                n, valid, (unsigned long long)corr.delivered, (unsigned long long)corr.unattributed,
                (unsigned long long)atomic_load(&calls_followed));
    size_t dropped = 0;
    if (cu.get_dropped(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        kscope__add_dropped((int64_t)dropped);
    pthread_mutex_unlock(&buffer_lock);
    if (buffer)
        buffer_release(buffer, size);
}

static void deliver_to_core(void *arg, uint64_t ctx, const kscope__gpu_record *r)
{
    (void)arg;
    if (r->kind != KSCOPE__GPU_KERNEL && kscope__ds_delivered(ctx, r)) /* device scopes' copy */
        return;
    kscope__cupti_note_device(r->device, drv.device_get, drv.attribute);
    uint32_t sessions = kscope__record_gpu(ctx, r);
    if (r->kind == KSCOPE__GPU_KERNEL)
        kscope__ds_delivered(ctx, r);
    if (r->kind == KSCOPE__GPU_KERNEL && kscope__pcs_on())
        kscope__pcs_kernel(r, ctx, sessions); /* where its PC samples go */
}

/* ------------------------------------------------------ launch callbacks */

/* cuProfilerStart/Stop reach the driver from every cudart, the static one
 * too (whose cudaProfilerStart no preload can wrap): recording starts when
 * Start returns and stops when Stop is called. */
static int profiler_api_callback(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) {
        if (cb->callbackSite == CUPTI_API_EXIT)
            kscope__capture_range(1);
        return 1;
    }
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
        if (cb->callbackSite == CUPTI_API_ENTER)
            kscope__capture_range(0);
        return 1;
    }
    return 0;
}

/* A followed call begins: note who launches, from where, when. The
 * outermost call's id is the one its work carries; it also takes the
 * thread's launch metadata if the call launches kernels (a launch being
 * captured hands it to the node it makes, graphs.c). */
static void call_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const CUpti_CallbackData *cb, int cls)
{
    uint32_t gen = atomic_load_explicit(&capture_gen, memory_order_relaxed);
    if (tl_gen != gen) {
        tl_gen = gen;
        tl_call_depth = 0;
    }
    if (cls == KSCOPE__CALL_LAUNCH)
        kscope__ds_launch(domain, cbid, cb); /* attaches device scopes */
    if (tl_call_depth++ > 0)
        return;
    if (!tl_tid)
        tl_tid = (uint32_t)syscall(SYS_gettid);
    tl_call_start = kscope_now_ns();
    tl_call_ticks = kscope__ticks();
    int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    int graph = cls == KSCOPE__CALL_LAUNCH && kscope__graphs_is_launch(driver, cbid);
    tl_call_ctx = kscope__graphs_own_call() ? KSCOPE__CTX_OWN : kscope__current_ctx();
    kscope__corr_launch_enter(&corr, cb->correlationId,
                              tl_call_ctx | (graph ? KSCOPE__CTX_GRAPH : 0), tl_tid, tl_call_start,
                              tl_call_ticks);
    if (cls == KSCOPE__CALL_LAUNCH && kscope__pcs_on())
        kscope__pcs_launch(cb->context); /* a context that existed before sampling */
    kscope__gpu_meta *m = tl_meta;
    if (m && tl_meta_gen != gen) { /* given before the gate last opened */
        tl_meta = NULL;
        free(m);
        m = NULL;
    }
    if (m && cls == KSCOPE__CALL_LAUNCH) {
        tl_meta = NULL;
        m->correlation = cb->correlationId;
        if (kscope__graphs_capturing(1))
            kscope__graphs_call_meta(m);
        else
            kscope__corr_put_meta(&corr, m);
    }
    if (graph)
        kscope__graphs_launch_enter(driver, cbid, cb->functionParams);
    if (debug)
        atomic_fetch_add_explicit(&calls_followed, 1, memory_order_relaxed);
}

static void call_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                      const CUpti_CallbackData *cb)
{
    if (tl_call_depth == 0 || tl_gen != atomic_load_explicit(&capture_gen, memory_order_relaxed))
        return; /* entered before capture started */
    if (--tl_call_depth > 0)
        return;
    kscope__corr_launch_exit(&corr, cb->correlationId, tl_call_start, kscope_now_ns(),
                             tl_call_ticks, kscope__ticks());
    kscope__graphs_call_done();
    int driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
    if (kscope__graphs_is_launch(driver, cbid))
        kscope__graphs_launch_exit(driver, cbid, cb->functionParams, tl_call_ctx, tl_call_start);
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) /* CUDA is up (see register_exit) */
            pthread_once(&exit_once, register_exit);
        kscope__graphs_resource(cbid, data);
        kscope__pcs_resource(cbid, data); /* when PC sampling is on */
        kscope__ds_resource(cbid, data);  /* when device scopes are on */
        return;
    }
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API)
        return;
    const CUpti_CallbackData *cb = data;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && profiler_api_callback(cbid, cb))
        return;
    int cls = cbid < KSCOPE__CBID_MAX ? kscope__call_class[domain_index(domain)][cbid] : 0;
    if (!cls) {
        kscope__cupti_gate_call(domain, cbid, cb);
        return;
    }
    if (cls == KSCOPE__CALL_BEGIN_CAPTURE || cls == KSCOPE__CALL_END_CAPTURE) {
        kscope__graphs_capture_call(cls == KSCOPE__CALL_BEGIN_CAPTURE, cb);
        kscope__cupti_gate_call(domain, cbid, cb); /* the gate counts captures too */
        if (cls == KSCOPE__CALL_END_CAPTURE && cb->callbackSite == CUPTI_API_EXIT)
            kscope__ds_capture_ended();
    } else if (cb->callbackSite == CUPTI_API_ENTER) {
        call_enter(domain, cbid, cb, cls);
    } else {
        call_exit(domain, cbid, cb);
    }
}

/* Follow the calls one by one (callbacks on) while the gate is open and a
 * launch's host context can differ from the root: annotations or a trace
 * session (the core says), launch metadata, PC sampling (its contexts) or
 * device scopes (they attach at launches). follow.c says why. Graph
 * launches are followed whenever the gate is open (state_lock held). */
static int follow_calls(void)
{
    int open = started && atomic_load(&gate_state) == KSCOPE__GATE_OPEN;
    int need = open && (kscope__calls_wanted() || atomic_load(&meta_given) || kscope__pcs_on() ||
                        kscope__ds_on());
    if (need && !kscope__follow_launches())
        atomic_fetch_add(&capture_gen, 1); /* calls open when it switched never end */
    CUptiResult rc = kscope__follow_set(open, need, subscriber, cu.enable_callback);
    if (rc != CUPTI_SUCCESS)
        return kscope__fail(KSCOPE_ENOGPUTOOL, "cannot %s CUPTI launch callbacks: %s",
                            need ? "enable" : "disable", cupti_error(rc));
    return 0;
}

static int cupti_launch_metadata(const kscope_launch_meta *meta)
{
    if (!meta)
        return kscope__fail(KSCOPE_EINVAL, "launch metadata: NULL");
    kscope__gpu_meta *m = NULL;
    int rc = kscope__gpu_meta_copy(meta, &m);
    if (rc < 0)
        return rc;
    if (!started || atomic_load_explicit(&gate_state, memory_order_relaxed) != KSCOPE__GATE_OPEN) {
        /* nothing records kernels: keep nothing for later */
        free(m);
        return 0;
    }
    if (!atomic_load_explicit(&meta_given, memory_order_relaxed)) { /* once */
        pthread_mutex_lock(&state_lock);
        atomic_store(&meta_given, 1);
        follow_calls(); /* the launch it names must be followed */
        pthread_mutex_unlock(&state_lock);
    }
    free(tl_meta); /* two in a row: the later one wins */
    tl_meta = m;
    tl_meta_gen = atomic_load_explicit(&capture_gen, memory_order_relaxed);
    return 0;
}

/* ------------------------------------------------------------- lifecycle */

static uint64_t CUPTIAPI timestamp_now(void)
{
    return kscope_now_ns();
}

static void disable_kinds(size_t n)
{
    for (size_t i = 0; i < n; i++)
        cu.activity_disable(kinds[i]);
}

static int subscribe(void)
{
    CUptiResult rc = cu.subscribe(&subscriber, on_callback, NULL);
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return kscope__fail(KSCOPE_EBUSY,
                            "another CUPTI subscriber (a profiler such as torch.profiler, Proton "
                            "or Nsight) already holds this process's CUPTI interface");
    if (rc != CUPTI_SUCCESS)
        return kscope__fail(KSCOPE_ENOGPUTOOL, "cuptiSubscribe failed: %s", cupti_error(rc));
    return 0;
}

static int enable_activity(void)
{
    CUptiResult rc = cu.register_timestamp(timestamp_now);
    if (rc != CUPTI_SUCCESS) /* records still come, on CUPTI's own clock */
        kscope__warn_once("cupti-clock",
                          "CUPTI refused kscope's clock (%s): GPU times may not line up with "
                          "host scopes",
                          cupti_error(rc));
    rc = cu.register_callbacks(buffer_requested, buffer_completed);
    if (rc != CUPTI_SUCCESS)
        return kscope__fail(KSCOPE_ENOGPUTOOL, "cuptiActivityRegisterCallbacks failed: %s",
                            cupti_error(rc));
    for (size_t i = 0; i < N_OF(kinds); i++) {
        rc = cu.activity_enable(kinds[i]);
        if (rc != CUPTI_SUCCESS) {
            disable_kinds(i);
            return kscope__fail(KSCOPE_ENOGPUTOOL, "cuptiActivityEnable(kind %d) failed: %s",
                                (int)kinds[i], cupti_error(rc));
        }
    }
    return 0;
}

/* In a child forked while capturing, CUDA and CUPTI's threads are gone:
 * forget the capture, never call them. */
static void after_fork_child(void)
{
    if (started) {
        forked_child = 1;
        started = 0;
    }
    pthread_mutex_init(&state_lock, NULL);
    pthread_mutex_init(&buffer_lock, NULL);
    pthread_mutex_init(&free_lock, NULL);
}

static void register_fork(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

static int start_locked(void)
{
    pthread_once(&load_once, load_all);
    if (load_err)
        return kscope__fail(load_err, "%s", load_msg);
    if (forked_child)
        return kscope__fail(KSCOPE_ENOGPU, "GPU capture does not survive fork() without exec "
                                           "(CUDA and CUPTI cannot be used in the child)");
    pthread_once(&fork_once, register_fork);
    const char *dbg = getenv("KSCOPE_CUPTI_DEBUG");
    debug = dbg && *dbg && strcmp(dbg, "0") != 0;
    if (!corr_ready) {
        int rc = kscope__corr_init(&corr, deliver_to_core, NULL);
        if (rc < 0)
            return rc;
        if (kscope__graph_fns.node_id) {
            corr.graph = kscope__graphs_lookup;
            corr.graph_done = kscope__graphs_lookup_done;
        }
        corr_ready = 1;
    }
    int rc = subscribe();
    if (rc < 0)
        return rc;
    if ((rc = enable_activity()) < 0) {
        cu.unsubscribe(subscriber);
        return rc;
    }
    atomic_fetch_add(&capture_gen, 1);
    kscope__follow_classify(cu.callback_name);
    CUptiResult crc = kscope__follow_start(subscriber, cu.enable_callback);
    if (crc != CUPTI_SUCCESS) {
        rc = kscope__fail(KSCOPE_ENOGPUTOOL, "cannot enable CUPTI launch callbacks: %s",
                          cupti_error(crc));
    } else {
        started = 1;
        atomic_store(&gate_state, KSCOPE__GATE_OPEN);
        started = (rc = follow_calls()) == 0; /* without them nothing is attributed */
    }
    if (rc < 0) {
        disable_kinds(N_OF(kinds));
        cu.unsubscribe(subscriber);
        return rc;
    }
    kscope__cupti_gate_start(subscriber, cu.enable_callback, cu.callback_name);
    /* A context made after cuInit registers the exit handler even when no
     * activity buffer is ever asked for (a sampled run whose first window
     * is later than the program's end). */
    cu.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                       CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    /* kscope run --capture-range=cudaProfilerApi: follow the profiler API
     * (two callbacks, on calls a program makes a handful of times). */
    const char *range = getenv("KSCOPE_RUN_CAPTURE");
    if (range && *range && kscope__run_hooked()) {
        cu.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                           CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
        cu.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                           CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    }
    return 0;
}

/* Start capture. KSCOPE_ENOGPU (no driver, no GPU), KSCOPE_ENOGPUTOOL (no
 * CUPTI, or it refused) or KSCOPE_EBUSY (another subscriber), each with a
 * message naming the cause. */
static int cupti_start(void)
{
    pthread_mutex_lock(&state_lock);
    int rc = started ? 0 : start_locked();
    pthread_mutex_unlock(&state_lock);
    return rc;
}

/* Wait for the work launched so far on every context kscope can reach:
 * the calling thread's, and each device's primary context if active. */
static void synchronize_devices(void)
{
    CUcontext cur = NULL;
    if (drv.ctx_current(&cur) == CUDA_SUCCESS && cur)
        drv.ctx_synchronize();
    int count = 0;
    if (drv.device_count(&count) != CUDA_SUCCESS) /* CUDA never initialised */
        return;
    for (int i = 0; i < count; i++) {
        CUdevice d;
        unsigned flags = 0;
        int active = 0;
        if (drv.device_get(&d, i) != CUDA_SUCCESS ||
            drv.primary_state(d, &flags, &active) != CUDA_SUCCESS || !active)
            continue;
        CUcontext pctx = NULL;
        if (drv.primary_retain(&pctx, d) != CUDA_SUCCESS)
            continue;
        if (pctx != cur && drv.ctx_push(pctx) == CUDA_SUCCESS) {
            drv.ctx_synchronize();
            CUcontext popped;
            drv.ctx_pop(&popped);
        }
        drv.primary_release(d);
    }
}

/* Block until every record of work launched so far was delivered (when a
 * signal is ending the process, of the work done so far), then add the
 * values of the graph launches since the last flush. Nothing while
 * a stream capture is open: synchronising or flushing CUPTI then would end
 * the program's capture (the core puts its flushes off until it closed). */
static void cupti_flush(void)
{
    pthread_mutex_lock(&state_lock);
    if (started && !kscope__graphs_capturing(0)) {
        size_t retired = kscope__graphs_retired();
        if (!kscope__ending()) /* else that work dies with the process */
            synchronize_devices();
        cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        if (kscope__pcs_on()) /* after the kernel records: they say where samples go */
            kscope__pcs_flush();
        kscope__ds_flush(1);
        kscope__graphs_drain();
        kscope__graphs_flushed(retired);
    }
    pthread_mutex_unlock(&state_lock);
}

/* Stop capture after delivering everything launched so far (what is still
 * in flight is lost when a stream capture is open: see cupti_flush). */
static void cupti_stop(void)
{
    cupti_flush();
    pthread_mutex_lock(&state_lock);
    if (started) {
        kscope__pcs_stop(1);
        int capturing = kscope__graphs_capturing(0);
        if (!capturing)
            kscope__ds_flush(2);
        disable_kinds(N_OF(kinds));
        if (!capturing)
            cu.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        cu.unsubscribe(subscriber);
        kscope__graphs_stop(!capturing);
        started = 0;
    }
    pthread_mutex_unlock(&state_lock);
}

int kscope__cupti_switch(int state)
{
    pthread_mutex_lock(&state_lock);
    int rc = 0, was = atomic_load(&gate_state);
    if (started && was != state) {
        if (state == KSCOPE__GATE_OPEN)        /* a kernel with a record has its launch noted */
            atomic_fetch_add(&capture_gen, 1); /* calls open at the shut never end */
        atomic_store(&gate_state, state);
        rc = follow_calls();
        /* activity stays on while quiet: the window's queued work delivers */
        if (rc == 0 && was == KSCOPE__GATE_SHUT) {
            for (size_t i = 0; i < N_OF(kinds) && rc == 0; i++)
                rc = cu.activity_enable(kinds[i]) == CUPTI_SUCCESS ? 0 : KSCOPE_ENOGPUTOOL;
        } else if (rc == 0 && state == KSCOPE__GATE_SHUT) {
            disable_kinds(N_OF(kinds));
        }
    }
    pthread_mutex_unlock(&state_lock);
    return rc;
}

/* PC sampling on or off (pcs-load.c and pcsampling.c do the work). */
static int cupti_pc_sampling(int on, uint32_t interval)
{
    pthread_mutex_lock(&state_lock);
    int rc = kscope__pcs_switch(on, interval, started ? subscriber : NULL, cu.enable_callback);
    follow_calls();
    pthread_mutex_unlock(&state_lock);
    return rc;
}

static int cupti_device_scopes(int on, const kscope__devscope_opts *o)
{
    int rc = kscope__ds_switch(on, o, started ? subscriber : NULL, cu.enable_callback);
    pthread_mutex_lock(&state_lock);
    follow_calls();
    pthread_mutex_unlock(&state_lock);
    return rc;
}

/* A session started or ended, or a thread annotated for the first time:
 * whether launches are followed may change. */
static void cupti_session_changed(void)
{
    pthread_mutex_lock(&state_lock);
    follow_calls();
    pthread_mutex_unlock(&state_lock);
}

static int cupti_capturing(int this_thread)
{
    return started && kscope__graphs_capturing(this_thread);
}

/* Registered in gpu/registry.c. */
const kscope__backend kscope__cupti_backend = {
    KSCOPE__CUPTI_ABOUT,
    .start = cupti_start,
    .stop = cupti_stop,
    .flush = cupti_flush,
    .session_changed = cupti_session_changed,
    .pc_sampling = cupti_pc_sampling,
    .launch_metadata = cupti_launch_metadata,
    .capturing = cupti_capturing,
    .capture_value = kscope__graphs_value,
    .capture_hide = kscope__graphs_hide,
    .capture_released = kscope__graphs_released,
    .gate = kscope__cupti_gate,
    .bench = kscope__cupti_bench,
    .device_scopes = cupti_device_scopes,
};
