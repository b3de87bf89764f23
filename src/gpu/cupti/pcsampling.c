/*
 * pcsampling.c - CUPTI's PC Sampling API: which source lines of each
 * kernel the GPU's warps were at, and why they stalled.
 *
 * Sampling is continuous: each context is set up once, on a thread where
 * it is current: when it is created (CUPTI's resource callback) or, for
 * one that existed before sampling started, when sampling starts (the
 * starting thread's current context, pcs-load.c) or at its first launch
 * after (the launch callback; after that, a launch costs one compare with
 * a thread-local); from then on every SM is sampled until sampling stops
 * or the context goes. No synchronisation and no range per kernel. The
 * setup, in
 * the order CUPTI wants it: cuptiPCSamplingEnable, the stall reasons
 * (cuptiPCSamplingGetNumStallReasons, cuptiPCSamplingGetStallReasons),
 * then one cuptiPCSamplingSetConfigurationAttribute call with the reasons
 * to collect, the period, the scratch and hardware buffer sizes, the
 * continuous collection mode, the parsed output format and the buffer
 * CUPTI leaves its last records in.
 *
 * CUPTI's own thread decodes the hardware buffer every WORKER_MS; ours
 * (the drain thread) empties the decoded records every DRAIN_MS with
 * cuptiPCSamplingGetData into pcs-data.c's tables, so no buffer fills
 * while the program runs long. A flush waits one of CUPTI's periods, so
 * the samples of the work done are decoded, and delivers. Samples the
 * hardware dropped are counted for the sessions; a full hardware buffer
 * is said once.
 *
 * Source lines come from cuptiGetSassToSourceCorrelation on the cubin of
 * the PC's module, which CUPTI's module-loaded callback hands over: valid
 * during the callback only, so the cubins with line information are
 * copied there (the others give no line anyway). A PC's module is found by
 * the CRC each PC record carries (cuptiGetCubinCrc on the copies, computed
 * the first time a PC of an unknown CRC shows up, on the drain thread).
 *
 * Locks: `lock` guards the contexts, the tables and the thread; mod_lock
 * the modules (taken under `lock` when a PC's line is looked up, alone in
 * the module callbacks). KSCOPE_PCS_DEBUG=1 prints the reasons, the
 * configuration and one line per non-empty drain on stderr.
 */
#define _GNU_SOURCE /* memmem */
#include "gpu/cupti/pcs.h"
#include "util/util.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CONTEXTS  64
#define COLLECT_PCS   4096         /* PC records per cuptiPCSamplingGetData */
#define SCRATCH_BYTES (16u << 20)  /* CUPTI's buffer of decoded records */
#define HW_BYTES      (256u << 20) /* device memory for the raw samples */
#define WORKER_MS     10           /* CUPTI's decoding thread wakes this often */
#define DRAIN_MS      10           /* and ours, to take what it decoded */
#define CUPTI_12_4    22           /* cuptiGetVersion of the record layout used */

typedef struct pcs_ctx {
    CUcontext ctx;
    uint32_t device;
    kscope__pcs_reasons reasons;
    uint32_t *index; /* CUPTI's indices of the reasons collected */
    size_t nindex;
    size_t nall;              /* reasons the GPU has: room per PC record */
    CUpti_PCSamplingData get; /* what cuptiPCSamplingGetData fills */
    CUpti_PCSamplingData cfg; /* CUPTI's: its last records at disable */
} pcs_ctx;

typedef struct module {
    uint32_t id;
    void *copy; /* ours: CUPTI's is valid during its callback only */
    size_t size;
    uint64_t crc;
    int crc_state; /* 0 not computed, 1 known, 2 failed */
} module;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;
static const kscope__pcs_api *api;
static _Atomic uint32_t generation;    /* bumped at each start */
static CUcontext failed[MAX_CONTEXTS]; /* contexts that refused: not retried */
static size_t nfailed;
static __thread CUcontext tl_ctx; /* the context this thread saw set up last */
static __thread uint32_t tl_gen;
static _Atomic int active;
static uint32_t period; /* cycles */
static pcs_ctx *ctxs[MAX_CONTEXTS];
static size_t nctxs;
static kscope__pcs_tab *tab;
static module *mods;
static size_t nmods, capmods;
static pthread_t drainer;
static int drainer_on, quit;
static int debug;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static const char *err(CUptiResult rc)
{
    const char *s = api && api->error ? api->error(rc) : NULL;
    return s ? s : "CUPTI error";
}

/* ------------------------------------------------------------- modules */

/* Whether a cubin has line information (a .debug_line or
 * .nv_debug_line_sass section): without it no PC of it has a line, and it
 * is not kept. */
static int has_lines(const void *cubin, size_t size)
{
    return memmem(cubin, size, "debug_line", 10) != NULL;
}

/* CUPTI's cubin is valid during the callback only: keep a copy of those
 * with lines, for the PCs sampled in them (also after an unload). */
static void module_loaded(const CUpti_ModuleResourceData *m)
{
    if (!m || !m->pCubin || !m->cubinSize || !has_lines(m->pCubin, m->cubinSize))
        return;
    void *copy = malloc(m->cubinSize);
    if (!copy)
        return; /* no lines for its PCs */
    memcpy(copy, m->pCubin, m->cubinSize);
    pthread_mutex_lock(&mod_lock);
    if (nmods < capmods || KSCOPE__ROOM(mods, capmods, nmods + 1, 64) == 0)
        mods[nmods++] = (module){m->moduleId, copy, m->cubinSize, 0, 0};
    else
        free(copy);
    pthread_mutex_unlock(&mod_lock);
}

/* The module whose cubin has this CRC (mod_lock held). */
static module *module_of(uint64_t crc)
{
    for (size_t i = 0; i < nmods; i++)
        if (mods[i].crc_state == 1 && mods[i].crc == crc)
            return &mods[i];
    for (size_t i = 0; i < nmods; i++) {
        module *m = &mods[i];
        if (m->crc_state)
            continue;
        CUpti_GetCubinCrcParams cp = {
            .size = CUpti_GetCubinCrcParamsSize, .cubinSize = m->size, .cubin = m->copy};
        m->crc_state = api->cubin_crc(&cp) == CUPTI_SUCCESS ? 1 : 2;
        m->crc = cp.cubinCrc;
        if (m->crc_state == 1 && m->crc == crc)
            return m;
    }
    return NULL;
}

static int where(void *arg, uint64_t crc, const char *function, uint64_t pc, char *file,
                 size_t size, uint32_t *line)
{
    (void)arg;
    CUpti_GetSassToSourceCorrelationParams sp = {.size = CUpti_GetSassToSourceCorrelationParamsSize,
                                                 .functionName = function,
                                                 .pcOffset = pc};
    CUptiResult rc = CUPTI_ERROR_UNKNOWN;
    pthread_mutex_lock(&mod_lock);
    module *m = module_of(crc);
    if (m) {
        sp.cubin = m->copy;
        sp.cubinSize = m->size;
        rc = api->sass_to_source(&sp);
    }
    pthread_mutex_unlock(&mod_lock);
    int ok = rc == CUPTI_SUCCESS && sp.fileName && sp.fileName[0];
    if (ok && (sp.fileName[0] == '/' || !sp.dirName || !sp.dirName[0]))
        snprintf(file, size, "%s", sp.fileName);
    else if (ok)
        snprintf(file, size, "%s/%s", sp.dirName, sp.fileName);
    *line = ok ? sp.lineNumber : 0;
    free(sp.fileName); /* CUPTI's, ours to free */
    free(sp.dirName);
    return ok;
}

/* ------------------------------------------------------------- contexts */

static int alloc_data(CUpti_PCSamplingData *d, size_t nreasons)
{
    memset(d, 0, sizeof *d);
    d->size = sizeof *d;
    d->collectNumPcs = COLLECT_PCS;
    d->pPcData = calloc(COLLECT_PCS, sizeof *d->pPcData);
    for (size_t i = 0; d->pPcData && i < COLLECT_PCS; i++) {
        d->pPcData[i].size = sizeof d->pPcData[i];
        d->pPcData[i].stallReason = calloc(nreasons, sizeof(CUpti_PCSamplingStallReason));
        if (!d->pPcData[i].stallReason)
            return -1;
    }
    return d->pPcData ? 0 : -1;
}

static void free_data(CUpti_PCSamplingData *d)
{
    for (size_t i = 0; d->pPcData && i < COLLECT_PCS; i++)
        free(d->pPcData[i].stallReason);
    free(d->pPcData);
    d->pPcData = NULL;
}

static void free_ctx(pcs_ctx *p)
{
    if (!p)
        return;
    free_data(&p->get);
    free_data(&p->cfg);
    free(p->index);
    free(p);
}

static void disable(CUcontext c)
{
    CUpti_PCSamplingDisableParams dp = {.size = CUpti_PCSamplingDisableParamsSize, .ctx = c};
    api->disable(&dp);
}

/* Choose the reasons to collect: all but the "_not_issued" variants. */
static int pick_reasons(pcs_ctx *p, char *why, size_t size)
{
    size_t n = 0;
    CUpti_PCSamplingGetNumStallReasonsParams np = {
        .size = CUpti_PCSamplingGetNumStallReasonsParamsSize, .ctx = p->ctx, .numStallReasons = &n};
    CUptiResult rc = api->num_stall_reasons(&np);
    if (rc != CUPTI_SUCCESS || n == 0)
        return snprintf(why, size, "cuptiPCSamplingGetNumStallReasons: %s",
                        rc ? err(rc) : "no stall reasons"),
               -1;
    char **names = calloc(n, sizeof *names);
    char *text = calloc(n, CUPTI_STALL_REASON_STRING_SIZE);
    uint32_t *index = calloc(n, sizeof *index);
    p->index = calloc(n, sizeof *p->index);
    p->nall = n;
    rc = CUPTI_ERROR_OUT_OF_MEMORY;
    if (names && text && index && p->index) {
        for (size_t i = 0; i < n; i++)
            names[i] = text + i * CUPTI_STALL_REASON_STRING_SIZE;
        CUpti_PCSamplingGetStallReasonsParams sp = {.size =
                                                        CUpti_PCSamplingGetStallReasonsParamsSize,
                                                    .ctx = p->ctx,
                                                    .numStallReasons = n,
                                                    .stallReasonIndex = index,
                                                    .stallReasons = names};
        rc = api->stall_reasons(&sp);
    }
    for (size_t i = 0; rc == CUPTI_SUCCESS && i < n; i++) {
        char metric[CUPTI_STALL_REASON_STRING_SIZE + 16];
        names[i][CUPTI_STALL_REASON_STRING_SIZE - 1] = '\0';
        int kind = kscope__pcs_reason_name(names[i], metric, sizeof metric);
        if (debug)
            fprintf(stderr, "kscope: pc sampling: reason %u %s -> %s\n", index[i], names[i],
                    kind < 0 || index[i] >= KSCOPE__PCS_REASONS ? "(not collected)" : metric);
        if (kind < 0 || index[i] >= KSCOPE__PCS_REASONS)
            continue;
        p->reasons.metric[index[i]] = kscope__intern(metric);
        p->reasons.stall[index[i]] = kind == 1;
        p->index[p->nindex++] = index[i];
    }
    free(names);
    free(text);
    free(index);
    if (rc != CUPTI_SUCCESS)
        return snprintf(why, size, "cuptiPCSamplingGetStallReasons: %s", err(rc)), -1;
    if (!p->nindex)
        return snprintf(why, size, "no stall reason this kscope collects"), -1;
    return 0;
}

static const char *attribute_name(CUpti_PCSamplingConfigurationAttributeType t)
{
    switch (t) {
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON:
        return "stall reasons";
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
        return "sampling period";
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE:
        return "scratch buffer size";
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE:
        return "hardware buffer size";
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
        return "collection mode";
    case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT:
        return "output data format";
    default:
        return "sampling data buffer";
    }
}

static uint32_t log2_of(uint32_t v)
{
    uint32_t k = 0;
    while (k < 31 && (1u << (k + 1)) <= v)
        k++;
    return k;
}

static int configure(pcs_ctx *p, char *why, size_t size)
{
    CUpti_PCSamplingConfigurationInfo info[7];
    memset(info, 0, sizeof info);
    info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
    info[0].attributeData.stallReasonData.stallReasonCount = p->nindex;
    info[0].attributeData.stallReasonData.pStallReasonIndex = p->index;
    info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
    info[1].attributeData.samplingPeriodData.samplingPeriod = log2_of(period);
    info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
    info[2].attributeData.scratchBufferSizeData.scratchBufferSize = SCRATCH_BYTES;
    info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
    info[3].attributeData.hardwareBufferSizeData.hardwareBufferSize = HW_BYTES;
    info[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
    info[4].attributeData.collectionModeData.collectionMode =
        CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
    info[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
    info[5].attributeData.outputDataFormatData.outputDataFormat =
        CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
    info[6].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
    info[6].attributeData.samplingDataBufferData.samplingDataBuffer = &p->cfg;
    CUpti_PCSamplingConfigurationInfoParams cp = {.size =
                                                      CUpti_PCSamplingConfigurationInfoParamsSize,
                                                  .ctx = p->ctx,
                                                  .numAttributes = 7,
                                                  .pPCSamplingConfigurationInfo = info};
    CUptiResult rc = api->set_config(&cp);
    if (rc != CUPTI_SUCCESS) {
        const char *which = "configuration";
        for (int i = 6; i >= 0; i--)
            if (info[i].attributeStatus != CUPTI_SUCCESS)
                which = attribute_name(info[i].attributeType);
        return snprintf(why, size, "cuptiPCSamplingSetConfigurationAttribute (%s): %s", which,
                        err(rc)),
               -1;
    }
    /* Wake CUPTI's decoding thread more often than its default (best
     * effort: older CUPTI lacks the attribute). */
    CUpti_PCSamplingConfigurationInfo sleep = {
        .attributeType =
            CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN};
    sleep.attributeData.workerThreadPeriodicSleepSpanData.workerThreadPeriodicSleepSpan = WORKER_MS;
    cp.numAttributes = 1;
    cp.pPCSamplingConfigurationInfo = &sleep;
    api->set_config(&cp);
    return 0;
}

static pcs_ctx *find_ctx(CUcontext c)
{
    for (size_t i = 0; i < nctxs; i++)
        if (ctxs[i]->ctx == c)
            return ctxs[i];
    return NULL;
}

/* Start sampling on context c (lock held). A failure is said once and
 * leaves the context unsampled; the program goes on. */
static void setup(CUcontext c)
{
    char why[512] = "";
    if (!c || find_ctx(c))
        return;
    for (size_t i = 0; i < nfailed; i++)
        if (failed[i] == c)
            return;
    if (nfailed < MAX_CONTEXTS) /* until it succeeds below */
        failed[nfailed++] = c;
    if (nctxs == MAX_CONTEXTS) {
        kscope__warn_once("pcs-contexts",
                          "PC sampling: more than %d GPU contexts; the others "
                          "are not sampled",
                          MAX_CONTEXTS);
        return;
    }
    CUpti_PCSamplingEnableParams ep = {.size = CUpti_PCSamplingEnableParamsSize, .ctx = c};
    CUptiResult rc = api->enable(&ep);
    if (rc != CUPTI_SUCCESS) {
        kscope__warn_once("pcs-enable",
                          "PC sampling cannot start on a GPU context: "
                          "cuptiPCSamplingEnable: %s",
                          err(rc));
        return;
    }
    pcs_ctx *p = calloc(1, sizeof *p);
    int bad = !p;
    if (bad)
        snprintf(why, sizeof why, "out of memory");
    if (!bad) {
        p->ctx = c;
        if (api->device_id(c, &p->device) != CUPTI_SUCCESS)
            p->device = 0;
        bad = pick_reasons(p, why, sizeof why) != 0;
    }
    if (!bad && (alloc_data(&p->get, p->nall) || alloc_data(&p->cfg, p->nall)))
        bad = snprintf(why, sizeof why, "out of memory for the sample buffers") > 0;
    if (!bad)
        bad = configure(p, why, sizeof why) != 0;
    if (bad) {
        disable(c);
        free_ctx(p);
        kscope__warn_once("pcs-context", "PC sampling cannot start on a GPU context: %s", why);
        return;
    }
    ctxs[nctxs++] = p;
    nfailed--;
    if (debug)
        fprintf(stderr,
                "kscope: pc sampling: context %p (device %u): %zu reasons, every %u cycles, "
                "continuous\n",
                (void *)c, p->device, p->nindex, period);
}

static void drain_current(pcs_ctx *p);

/* Add one buffer's records (lock held). */
static void take(pcs_ctx *p, CUpti_PCSamplingData *d, const char *what)
{
    uint64_t kept = kscope__pcs_tab_add(tab, d, &p->reasons, p->device, where, NULL);
    if (d->droppedSamples)
        kscope__add_dropped_samples(kscope__pcs_sessions(), (int64_t)d->droppedSamples);
    if (debug && (d->totalNumPcs || d->droppedSamples))
        fprintf(stderr,
                "kscope: pc sampling: %s: %zu PCs, %llu samples kept of %llu (dropped %llu, "
                "not user code %llu), %zu PCs left\n",
                what, d->totalNumPcs, (unsigned long long)kept, (unsigned long long)d->totalSamples,
                (unsigned long long)d->droppedSamples,
                (unsigned long long)d->nonUsrKernelsTotalSamples, d->remainingNumPcs);
    d->totalNumPcs = 0;
}

/* Take every record CUPTI has decoded for p (lock held), with p's
 * context current on this thread meanwhile. */
static void drain(pcs_ctx *p)
{
    CUcontext was = NULL;
    int pushed = api->ctx_push && api->ctx_push(p->ctx) == CUDA_SUCCESS;
    drain_current(p);
    if (pushed)
        api->ctx_pop(&was);
}

static void drain_current(pcs_ctx *p)
{
    for (int round = 0; round < 4096; round++) {
        CUpti_PCSamplingData *d = &p->get;
        d->totalNumPcs = d->remainingNumPcs = 0;
        d->totalSamples = d->droppedSamples = d->nonUsrKernelsTotalSamples = 0;
        d->hardwareBufferFull = 0;
        CUpti_PCSamplingGetDataParams gp = {
            .size = CUpti_PCSamplingGetDataParamsSize, .ctx = p->ctx, .pcSamplingData = d};
        CUptiResult rc = api->get_data(&gp);
        if (rc == CUPTI_ERROR_OUT_OF_MEMORY || d->hardwareBufferFull)
            kscope__warn_once("pcs-full", "PC sampling: the GPU's sample buffer filled up; "
                                          "samples were lost (a longer interval takes fewer)");
        else if (rc != CUPTI_SUCCESS) {
            kscope__warn_once("pcs-data", "PC sampling: cuptiPCSamplingGetData: %s", err(rc));
            return;
        }
        int more = d->remainingNumPcs > 0 && d->totalNumPcs > 0;
        take(p, d, "drain");
        if (!more)
            return;
    }
}

/* End sampling on p: its last records land in its configuration buffer. */
static void retire(pcs_ctx *p)
{
    drain(p);
    p->cfg.totalNumPcs = 0;
    disable(p->ctx);
    if (p->cfg.totalNumPcs)
        take(p, &p->cfg, "disable");
    free_ctx(p);
}

static void drop_ctx(CUcontext c)
{
    for (size_t i = 0; i < nctxs; i++) {
        if (ctxs[i]->ctx != c)
            continue;
        retire(ctxs[i]);
        ctxs[i] = ctxs[--nctxs];
        return;
    }
}

/* ---------------------------------------------------------- drain thread */

static void *drain_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the program's signals are not ours */
    pthread_mutex_lock(&lock);
    while (!quit) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_nsec += DRAIN_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&wake, &lock, &ts);
        for (size_t i = 0; !quit && i < nctxs; i++)
            drain(ctxs[i]);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* In a child forked while sampling, CUPTI's and our threads are gone. */
static void after_fork_child(void)
{
    active = 0;
    drainer_on = 0;
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&mod_lock, NULL);
}

static void init(void)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* ------------------------------------------------------------------ API */

int kscope__pcs_on(void)
{
    return active;
}

int kscope__pcs_start(const kscope__pcs_api *a, uint32_t interval)
{
    pthread_once(&init_once, init);
    pthread_mutex_lock(&lock);
    int rc = 0;
    uint32_t version = 0;
    if (active) {
        if (interval != period)
            kscope__warn_once("pcs-interval",
                              "PC sampling already runs every %u cycles; a session asking for "
                              "%u gets that",
                              period, interval);
    } else if (a->version && a->version(&version) == CUPTI_SUCCESS && version < CUPTI_12_4) {
        rc = kscope__fail(KSCOPE_ENOGPUTOOL,
                          "PC sampling needs CUPTI from CUDA 12.4 or later (this one is API "
                          "version %u)",
                          version);
    } else if (!(tab = kscope__pcs_tab_new())) {
        rc = kscope__fail(KSCOPE_ENOMEM, "PC sampling: out of memory");
    } else {
        api = a;
        period = interval;
        nfailed = 0;
        atomic_fetch_add(&generation, 1);
        const char *d = getenv("KSCOPE_PCS_DEBUG");
        debug = d && *d && strcmp(d, "0") != 0;
        quit = 0;
        active = 1;
        drainer_on = pthread_create(&drainer, NULL, drain_main, NULL) == 0;
        if (!drainer_on) {
            active = 0;
            kscope__pcs_tab_free(tab);
            tab = NULL;
            rc = kscope__fail(KSCOPE_ENOMEM, "PC sampling: cannot start its drain thread");
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

void kscope__pcs_context(CUcontext ctx)
{
    pthread_mutex_lock(&lock);
    if (active)
        setup(ctx);
    pthread_mutex_unlock(&lock);
}

void kscope__pcs_launch(CUcontext ctx)
{
    uint32_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
    if (tl_ctx == ctx && tl_gen == gen)
        return;
    kscope__pcs_context(ctx);
    tl_ctx = ctx;
    tl_gen = gen;
}

void kscope__pcs_resource(CUpti_CallbackId cbid, const void *data)
{
    const CUpti_ResourceData *rd = data;
    if (!rd)
        return;
    switch (cbid) { /* modules are followed also between samplings */
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
        if (active)
            kscope__pcs_context(rd->context);
        break;
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
        if (!active)
            break;
        pthread_mutex_lock(&lock);
        if (active)
            drop_ctx(rd->context);
        pthread_mutex_unlock(&lock);
        break;
    case CUPTI_CBID_RESOURCE_MODULE_LOADED:
        module_loaded(rd->resourceDescriptor);
        break;
    default:
        break;
    }
}

void kscope__pcs_kernel(const kscope__gpu_record *r, uint64_t ctx, uint32_t sessions)
{
    if (!active || r->kind != KSCOPE__GPU_KERNEL)
        return;
    uint64_t ns = r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
    const char *fn = r->function ? r->function : r->name;
    pthread_mutex_lock(&lock);
    if (active && tab)
        kscope__pcs_tab_kernel(tab, fn, r->name, ctx, r->device, sessions, ns);
    pthread_mutex_unlock(&lock);
}

static void drain_all_and_deliver(int deliver)
{
    for (size_t i = 0; i < nctxs; i++)
        drain(ctxs[i]);
    if (deliver && tab) {
        uint32_t want = kscope__pcs_sessions();
        uint64_t n = kscope__pcs_tab_deliver(tab, want, want, NULL);
        if (debug)
            fprintf(stderr, "kscope: pc sampling: %llu samples delivered\n", (unsigned long long)n);
    }
}

void kscope__pcs_flush(void)
{
    pthread_mutex_lock(&lock);
    int on = active;
    if (on)
        drain_all_and_deliver(0);
    pthread_mutex_unlock(&lock);
    if (!on)
        return;
    /* CUPTI's thread decodes what the GPU wrote at its next wake-up. */
    struct timespec ts = {0, (WORKER_MS + 5) * 1000000L};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&lock);
    if (active)
        drain_all_and_deliver(1);
    pthread_mutex_unlock(&lock);
}

void kscope__pcs_stop(int forget_modules)
{
    kscope__pcs_flush();
    pthread_mutex_lock(&lock);
    if (active) {
        active = 0;
        quit = 1;
        pthread_cond_signal(&wake);
        pthread_mutex_unlock(&lock);
        if (drainer_on)
            pthread_join(drainer, NULL);
        drainer_on = 0;
        pthread_mutex_lock(&lock);
        for (size_t i = 0; i < nctxs; i++)
            retire(ctxs[i]);
        nctxs = 0;
        uint32_t want = kscope__pcs_sessions();
        kscope__pcs_tab_deliver(tab, want, want, NULL);
        kscope__pcs_tab_free(tab);
        tab = NULL;
    }
    pthread_mutex_unlock(&lock);
    if (!forget_modules)
        return;
    pthread_mutex_lock(&mod_lock);
    for (size_t i = 0; i < nmods; i++)
        free(mods[i].copy);
    free(mods);
    mods = NULL;
    nmods = capmods = 0;
    pthread_mutex_unlock(&mod_lock);
}
