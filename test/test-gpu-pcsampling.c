/*
 * test-gpu-pcsampling.c - the CUPTI backend's PC sampling without a GPU:
 * stand-ins for CUPTI's PC Sampling calls (the kscope__pcs_api table)
 * script what CUPTI reports, and the tests check the order of the setup
 * calls and the configuration, stall reason names, source lines from the
 * modules' cubins (copied in their callback, kept after an unload),
 * samples shared among the
 * contexts a kernel ran under, dropped samples, the buffer loop, the
 * records left at disable, and that each failure is said plainly.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "gpu/cupti/pcs.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"
#include "support/capture.h"

/* ------------------------------------------------------------ stand-ins */

#define CTX    ((CUcontext)(uintptr_t)0x1000)
#define CTX2   ((CUcontext)(uintptr_t)0x2000)
#define CRC    0xC0FFEEull
#define MAXPCS 8

typedef struct fake_pc {
    const char *fn;
    uint64_t pc;
    uint32_t reason[3], samples[3];
    size_t nreasons;
} fake_pc;

typedef struct batch {
    fake_pc pcs[MAXPCS];
    size_t n, remaining;
    uint64_t dropped;
    int full;
} batch;

static struct {
    pthread_mutex_t lock;
    char calls[512]; /* the setup calls in order, get_data left out */
    CUptiResult enable_rc, config_rc;
    int bad_attribute; /* index whose attributeStatus fails, -1 none */
    uint32_t period, nreasons, reasons[8], mode, format;
    size_t scratch, hw;
    int sleep_span;
    CUpti_PCSamplingData *cfg;
    batch queue[8];
    size_t nqueue, get_calls;
    int pushed;       /* contexts made current and not yet popped */
    fake_pc leftover; /* written into the configuration buffer at disable */
    int has_leftover;
    char cubin[64];
    uint32_t version;
} F;

static void note(const char *what)
{
    pthread_mutex_lock(&F.lock);
    strcat(F.calls, what);
    strcat(F.calls, " ");
    pthread_mutex_unlock(&F.lock);
}

static CUptiResult f_enable(CUpti_PCSamplingEnableParams *p)
{
    assert_true(p->ctx == CTX || p->ctx == CTX2);
    note("enable");
    return F.enable_rc;
}

static CUptiResult f_disable(CUpti_PCSamplingDisableParams *p)
{
    (void)p;
    note("disable");
    if (F.has_leftover && F.cfg) {
        CUpti_PCSamplingPCData *d = &F.cfg->pPcData[0];
        d->cubinCrc = CRC;
        d->functionName = (char *)F.leftover.fn;
        d->pcOffset = F.leftover.pc;
        d->stallReasonCount = 1;
        d->stallReason[0].pcSamplingStallReasonIndex = F.leftover.reason[0];
        d->stallReason[0].samples = F.leftover.samples[0];
        F.cfg->totalNumPcs = 1;
    }
    return CUPTI_SUCCESS;
}

static CUptiResult f_num(CUpti_PCSamplingGetNumStallReasonsParams *p)
{
    note("num_stall_reasons");
    *p->numStallReasons = 4;
    return CUPTI_SUCCESS;
}

static CUptiResult f_reasons(CUpti_PCSamplingGetStallReasonsParams *p)
{
    static const char *const names[] = {
        "smsp__pcsamp_warps_issue_stalled_long_scoreboard",
        "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued",
        "smsp__pcsamp_warps_issue_stalled_selected",
        "smsp__pcsamp_warps_issue_stalled_math_pipe_throttle"};
    note("stall_reasons");
    assert_int_equal(p->numStallReasons, 4);
    for (int i = 0; i < 4; i++) {
        p->stallReasonIndex[i] = 10 + (uint32_t)i;
        snprintf(p->stallReasons[i], CUPTI_STALL_REASON_STRING_SIZE, "%s", names[i]);
    }
    return CUPTI_SUCCESS;
}

static CUptiResult f_config(CUpti_PCSamplingConfigurationInfoParams *p)
{
    if (p->numAttributes == 1) { /* the decoding thread's period, apart */
        assert_int_equal(
            p->pPCSamplingConfigurationInfo[0].attributeType,
            CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN);
        F.sleep_span =
            (int)p->pPCSamplingConfigurationInfo[0]
                .attributeData.workerThreadPeriodicSleepSpanData.workerThreadPeriodicSleepSpan;
        note("sleep_span");
        return CUPTI_SUCCESS;
    }
    note("set_config");
    for (size_t i = 0; i < p->numAttributes; i++) {
        CUpti_PCSamplingConfigurationInfo *a = &p->pPCSamplingConfigurationInfo[i];
        a->attributeStatus = (int)i == F.bad_attribute ? F.config_rc : CUPTI_SUCCESS;
        switch (a->attributeType) {
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON:
            F.nreasons = (uint32_t)a->attributeData.stallReasonData.stallReasonCount;
            memcpy(F.reasons, a->attributeData.stallReasonData.pStallReasonIndex,
                   F.nreasons * sizeof(uint32_t));
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD:
            F.period = a->attributeData.samplingPeriodData.samplingPeriod;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE:
            F.scratch = a->attributeData.scratchBufferSizeData.scratchBufferSize;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE:
            F.hw = a->attributeData.hardwareBufferSizeData.hardwareBufferSize;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE:
            F.mode = a->attributeData.collectionModeData.collectionMode;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT:
            F.format = a->attributeData.outputDataFormatData.outputDataFormat;
            break;
        case CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER:
            F.cfg = a->attributeData.samplingDataBufferData.samplingDataBuffer;
            break;
        default:
            fail_msg("unexpected attribute %d", (int)a->attributeType);
        }
    }
    return F.config_rc;
}

static void fill(CUpti_PCSamplingPCData *d, const fake_pc *f)
{
    d->cubinCrc = CRC;
    d->functionName = (char *)f->fn;
    d->functionIndex = 1;
    d->pcOffset = f->pc;
    d->stallReasonCount = f->nreasons;
    for (size_t k = 0; k < f->nreasons; k++) {
        d->stallReason[k].pcSamplingStallReasonIndex = f->reason[k];
        d->stallReason[k].samples = f->samples[k];
    }
}

/* Called by the drain thread and by flushes: hands out the queue. */
static CUptiResult f_get(CUpti_PCSamplingGetDataParams *p)
{
    CUpti_PCSamplingData *d = p->pcSamplingData;
    assert_true(d != F.cfg); /* CUPTI's own buffer is never asked to be filled */
    pthread_mutex_lock(&F.lock);
    F.get_calls++;
    CUptiResult rc = CUPTI_SUCCESS;
    if (F.nqueue) {
        batch *b = &F.queue[0];
        for (size_t i = 0; i < b->n; i++)
            fill(&d->pPcData[i], &b->pcs[i]);
        d->totalNumPcs = b->n;
        d->remainingNumPcs = b->remaining;
        d->droppedSamples = b->dropped;
        d->hardwareBufferFull = (uint8_t)b->full;
        rc = b->full ? CUPTI_ERROR_OUT_OF_MEMORY : CUPTI_SUCCESS;
        memmove(F.queue, F.queue + 1, --F.nqueue * sizeof F.queue[0]);
    }
    pthread_mutex_unlock(&F.lock);
    return rc;
}

/* Lines for "chain" and part of "helper", in the fake cubin only. */
static CUptiResult f_sass(CUpti_GetSassToSourceCorrelationParams *p)
{
    if (!p->cubin || memcmp(p->cubin, "CUBIN", 5) != 0)
        return CUPTI_ERROR_INVALID_MODULE;
    uint32_t line = 0;
    if (strcmp(p->functionName, "chain") == 0)
        line = p->pcOffset == 0x10 ? 12 : 20;
    else if (strcmp(p->functionName, "helper") == 0 && p->pcOffset == 0x50)
        line = 7;
    if (!line)
        return CUPTI_ERROR_UNKNOWN;
    p->lineNumber = line;
    p->fileName = strdup("k.cu");
    p->dirName = strdup("/src");
    return CUPTI_SUCCESS;
}

static CUptiResult f_crc(CUpti_GetCubinCrcParams *p)
{
    p->cubinCrc = memcmp(p->cubin, "CUBIN", 5) == 0 ? CRC : 1;
    return CUPTI_SUCCESS;
}

static CUptiResult f_device(CUcontext c, uint32_t *id)
{
    *id = c == CTX2 ? 1 : 0;
    return CUPTI_SUCCESS;
}

static CUptiResult f_version(uint32_t *v)
{
    *v = F.version;
    return CUPTI_SUCCESS;
}

static CUresult f_push(CUcontext c)
{
    assert_true(c == CTX || c == CTX2);
    __atomic_fetch_add(&F.pushed, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

static CUresult f_pop(CUcontext *c)
{
    *c = NULL;
    __atomic_fetch_sub(&F.pushed, 1, __ATOMIC_RELAXED);
    return CUDA_SUCCESS;
}

static const char *f_error(CUptiResult rc)
{
    return rc == CUPTI_ERROR_NOT_SUPPORTED ? "fake: not supported" : "fake: invalid parameter";
}

static const kscope__pcs_api fake = {f_enable, f_disable, f_num,  f_reasons, f_config,
                                     f_get,    f_sass,    f_crc,  f_device,  f_version,
                                     f_push,   f_pop,     f_error};

/* ------------------------------------------------------------- helpers */

static int setup(void **state)
{
    (void)state;
    pthread_mutex_t lock = F.lock;
    memset(&F, 0, sizeof F);
    F.lock = lock;
    F.bad_attribute = -1;
    F.version = 130001;
    memcpy(F.cubin, "CUBIN-image.debug_line", 23);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kscope__pcs_stop(1);
    while (kscope_depth() > 0)
        kscope_exit(NULL);
    kscope_finalize(KSCOPE_ALL, NULL);
    return 0;
}

static int start_session(const char *name)
{
    return tu_start_opts(
        (kscope_session_opts){.name = name, .backend = "none", .mode = "pcsampling"});
}

static void resource(CUpti_CallbackId cbid, CUcontext ctx, CUpti_ModuleResourceData *m)
{
    CUpti_ResourceData rd = {.context = ctx, .resourceDescriptor = m};
    kscope__pcs_resource(cbid, &rd);
}

static CUpti_ModuleResourceData module_data = {7, 0, NULL};

static void load_module(void)
{
    module_data.cubinSize = sizeof F.cubin;
    module_data.pCubin = F.cubin;
    resource(CUPTI_CBID_RESOURCE_MODULE_LOADED, CTX, &module_data);
}

static void queue(batch b)
{
    pthread_mutex_lock(&F.lock);
    F.queue[F.nqueue++] = b;
    pthread_mutex_unlock(&F.lock);
}

/* A kernel record of `fn` that ran `ns` under ctx, as the backend hands it. */
/* The slot bit of session `id` (the backend names sessions by slot; ids
 * count up and are never reused). */
static uint32_t bit(int id)
{
    kscope__session *s = kscope__session_find(id);
    assert_non_null(s);
    return 1u << s->slot;
}

static void kernel(const char *fn, uint64_t ctx, uint64_t ns, int session)
{
    kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = fn, .function = fn};
    r.start_ns = 1000;
    r.end_ns = 1000 + ns;
    kscope__pcs_kernel(&r, ctx, bit(session));
}

/* A sampling session, with PC sampling started every 1024 cycles. */
static int start_sampling(const char *name)
{
    int s = start_session(name);
    assert_int_equal(kscope__pcs_start(&fake, 1024), 0);
    return s;
}

/* CUPTI hands one batch holding the one record pc; the sessions take it. */
static void flush_one(fake_pc pc)
{
    batch b = {.n = 1};
    b.pcs[0] = pc;
    queue(b);
    kscope__pcs_flush();
}

/* num_samples of chain's line node `line` in session s (-1: none). */
static long long line_samples(int s, const char *line)
{
    yajl_val doc, root = tu_session_tree(s, &doc);
    long long n = tu_metric_int(TU_PATH(root, "chain", line), "num_samples");
    yajl_tree_free(doc);
    return n;
}

/* Session s's chain node holds `samples` samples and no line node. */
static void assert_chain_without_lines(int s, long long samples)
{
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "chain"), "num_samples"), samples);
    assert_int_equal(tu_nchildren(TU_PATH(root, "chain")), 0);
    yajl_tree_free(doc);
}

#define FN_LONG 10 /* CUPTI's reason indices in f_reasons */
#define FN_SEL  12
#define FN_MATH 13

/* --------------------------------------------------------------- tests */

static void test_reason_names(void **state)
{
    (void)state;
    char buf[160];
    assert_int_equal(
        kscope__pcs_reason_name("smsp__pcsamp_warps_issue_stalled_long_scoreboard", buf, 160), 1);
    assert_string_equal(buf, "stalled_long_scoreboard");
    assert_int_equal(kscope__pcs_reason_name("smsp__pcsamp_warps_issue_stalled_selected", buf, 160),
                     0);
    assert_string_equal(buf, "stalled_selected");
    assert_int_equal(
        kscope__pcs_reason_name("smsp__pcsamp_warps_issue_stalled_barrier_not_issued", buf, 160),
        -1);
    assert_int_equal(kscope__pcs_reason_name("smsp__pcsamp_warps_issue_gmma", buf, 160), 1);
    assert_string_equal(buf, "stalled_gmma");
}

/* Enable, the reasons, one configuration call, in CUPTI's order. */
static void test_context_setup(void **state)
{
    (void)state;
    assert_int_equal(kscope__pcs_start(&fake, 1024), 0);
    assert_true(kscope__pcs_on());
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL); /* once per context */
    assert_string_equal(F.calls, "enable num_stall_reasons stall_reasons set_config sleep_span ");
    assert_int_equal(F.period, 10); /* 2^10 cycles */
    assert_int_equal(F.mode, CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS);
    assert_int_equal(F.format, CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED);
    assert_true(F.scratch >= (1u << 20));
    assert_true(F.hw >= (64u << 20));
    assert_true(F.sleep_span > 0 && F.sleep_span <= 100);
    assert_non_null(F.cfg);
    /* every reason but the "_not_issued" one */
    assert_int_equal(F.nreasons, 3);
    assert_int_equal(F.reasons[0], FN_LONG);
    assert_int_equal(F.reasons[1], FN_SEL);
    assert_int_equal(F.reasons[2], FN_MATH);
    resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, CTX, NULL);
    assert_non_null(strstr(F.calls, "set_config sleep_span disable "));
    kscope__pcs_stop(1);
    assert_false(kscope__pcs_on());
}

static void *launch_on_thread(void *arg)
{
    kscope__pcs_launch((CUcontext)arg);
    return NULL;
}

/* A context that existed before sampling: set up at its first launch, on
 * the launching thread, once; later launches do nothing. */
static void test_first_launch_sets_up_a_context(void **state)
{
    (void)state;
    assert_int_equal(kscope__pcs_start(&fake, 1024), 0);
    kscope__pcs_launch(CTX);
    kscope__pcs_launch(CTX);
    pthread_t t;
    pthread_create(&t, NULL, launch_on_thread, CTX);
    pthread_join(t, NULL);
    assert_string_equal(F.calls, "enable num_stall_reasons stall_reasons set_config sleep_span ");
    kscope__pcs_flush(); /* drains with the context current */
    assert_true(F.get_calls > 0);
    assert_int_equal(F.pushed, 0);
}

static void enable_fails(void)
{
    F.enable_rc = CUPTI_ERROR_NOT_SUPPORTED;
    assert_int_equal(kscope__pcs_start(&fake, 1024), 0);
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
}

static void test_enable_failure_is_said(void **state)
{
    (void)state;
    const char *captured = tu_capture_stderr(enable_fails);
    assert_non_null(strstr(captured, "PC sampling cannot start on a GPU context: "
                                     "cuptiPCSamplingEnable: fake: not supported"));
    assert_string_equal(F.calls, "enable "); /* nothing more on that context */
    kscope__pcs_flush();
    assert_int_equal(F.get_calls, 0);
    kscope__pcs_launch(CTX); /* it refused: not asked again */
    pthread_t t;
    pthread_create(&t, NULL, launch_on_thread, CTX);
    pthread_join(t, NULL);
    assert_string_equal(F.calls, "enable ");
}

static void config_fails(void)
{
    F.config_rc = CUPTI_ERROR_INVALID_PARAMETER;
    F.bad_attribute = 1; /* the sampling period */
    assert_int_equal(kscope__pcs_start(&fake, 64), 0);
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
}

static void test_config_failure_names_the_attribute(void **state)
{
    (void)state;
    const char *captured = tu_capture_stderr(config_fails);
    assert_non_null(strstr(captured, "cuptiPCSamplingSetConfigurationAttribute (sampling period): "
                                     "fake: invalid parameter"));
    assert_string_equal(F.calls, "enable num_stall_reasons stall_reasons set_config disable ");
}

static void test_old_cupti_is_refused(void **state)
{
    (void)state;
    F.version = 21;
    assert_int_equal(kscope__pcs_start(&fake, 1024), KSCOPE_ENOCUPTI);
    assert_non_null(strstr(kscope_last_error(), "CUDA 12.4 or later"));
    assert_false(kscope__pcs_on());
}

static void second_start(void)
{
    assert_int_equal(kscope__pcs_start(&fake, 1024), 0);
    assert_int_equal(kscope__pcs_start(&fake, 4096), 0);
}

static void test_second_interval_is_said(void **state)
{
    (void)state;
    const char *captured = tu_capture_stderr(second_start);
    assert_non_null(strstr(captured, "already runs every 1024 cycles; a session asking for 4096"));
}

/* Lines, kernels without lines, and a function never seen as a kernel. */
static void test_samples_to_lines_and_contexts(void **state)
{
    (void)state;
    int s = start_session("t_pcs_backend");
    kscope_enter("A");
    uint64_t a = kscope__current_ctx();
    kscope_exit("A");
    kscope_enter("B");
    uint64_t b = kscope__current_ctx();
    kscope_exit("B");
    assert_int_equal(kscope__pcs_start(&fake, 1024), 0);
    load_module();
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    kernel("chain", a, 300, s);
    kernel("chain", b, 100, s);
    kernel("elementwise", a, 50, s);
    batch one = {.n = 4};
    one.pcs[0] = (fake_pc){"chain", 0x10, {FN_LONG, FN_SEL}, {80, 20}, 2};
    one.pcs[1] = (fake_pc){"chain", 0x20, {FN_MATH}, {40}, 1};
    one.pcs[2] = (fake_pc){"elementwise", 0x30, {FN_LONG}, {10}, 1};
    one.pcs[3] = (fake_pc){"helper", 0x50, {FN_SEL}, {4}, 1};
    queue(one);
    batch two = {.n = 1};
    two.pcs[0] = (fake_pc){"helper", 0x60, {FN_LONG}, {6}, 1};
    queue(two);
    kscope__pcs_flush();
    yajl_val doc, root = tu_session_tree(s, &doc);
    /* chain ran 3:1 under A and B: its samples split so */
    yajl_val la = TU_PATH(root, "A", "chain", "/src/k.cu:12@chain");
    yajl_val lb = TU_PATH(root, "B", "chain", "/src/k.cu:12@chain");
    assert_int_equal(tu_metric_int(la, "num_samples"), 75);
    assert_int_equal(tu_metric_int(lb, "num_samples"), 25);
    assert_int_equal(tu_metric_int(la, "stalled_long_scoreboard") +
                         tu_metric_int(lb, "stalled_long_scoreboard"),
                     80);
    assert_int_equal(tu_metric_int(la, "num_stalled_samples") +
                         tu_metric_int(lb, "num_stalled_samples"),
                     80); /* selected is not a stall */
    yajl_val math = TU_PATH(root, "A", "chain", "/src/k.cu:20@chain");
    assert_int_equal(tu_metric_int(math, "stalled_math_pipe_throttle"), 30);
    /* no line information at all: on the kernel's own node, as Proton */
    yajl_val ew = TU_PATH(root, "A", "elementwise");
    assert_int_equal(tu_metric_int(ew, "num_samples"), 10);
    assert_int_equal(tu_nchildren(ew), 0);
    /* never launched as a kernel here: a node of its name; its PC without
     * a line next to its line */
    assert_int_equal(tu_metric_int(TU_PATH(root, "helper", "/src/k.cu:7@helper"), "num_samples"),
                     4);
    assert_int_equal(tu_metric_int(TU_PATH(root, "helper", "helper+0x60"), "num_samples"), 6);
    assert_true(tu_metric_num(root, "num_samples") == 0);
    yajl_tree_free(doc);
    /* a later flush with no new kernel: shared as all time was */
    batch three = {.n = 1};
    three.pcs[0] = (fake_pc){"chain", 0x10, {FN_LONG}, {8}, 1};
    queue(three);
    kscope__pcs_flush();
    root = tu_session_tree(s, &doc);
    assert_int_equal(
        tu_metric_int(TU_PATH(root, "A", "chain", "/src/k.cu:12@chain"), "num_samples"), 81);
    assert_int_equal(
        tu_metric_int(TU_PATH(root, "B", "chain", "/src/k.cu:12@chain"), "num_samples"), 27);
    yajl_tree_free(doc);
}

/* The buffer is emptied until CUPTI says nothing remains. */
static void test_remaining_records_are_taken(void **state)
{
    (void)state;
    int s = start_sampling("t_pcs_remaining");
    load_module();
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    kernel("chain", 0, 10, s);
    for (int i = 0; i < 3; i++) {
        batch b = {.n = 1, .remaining = i < 2 ? 5 : 0};
        b.pcs[0] = (fake_pc){"chain", 0x10, {FN_LONG}, {1}, 1};
        queue(b);
    }
    kscope__pcs_flush();
    assert_int_equal(F.nqueue, 0);
    assert_int_equal(line_samples(s, "/src/k.cu:12@chain"), 3);
}

static void full_buffer(void)
{
    int s = start_sampling("t_pcs_drops");
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    batch b = {.n = 0, .dropped = 7};
    queue(b);
    batch full = {.n = 0, .dropped = 5, .full = 1};
    queue(full);
    kscope__pcs_flush();
    assert_int_equal(kscope_dropped_samples(s), 12);
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_true(tu_metric_num(root, "dropped_samples") == 12);
    yajl_tree_free(doc);
}

static void test_drops_are_counted_and_said(void **state)
{
    (void)state;
    const char *captured = tu_capture_stderr(full_buffer);
    assert_non_null(strstr(captured, "the GPU's sample buffer filled up; samples were lost"));
}

/* A module's lines are still found after it unloaded (from a copy). */
static void test_unloaded_module_keeps_its_lines(void **state)
{
    (void)state;
    int s = start_sampling("t_pcs_unload");
    load_module();
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    kernel("chain", 0, 10, s);
    resource(CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, CTX, &module_data);
    memset(F.cubin, 0, sizeof F.cubin); /* the driver's copy is gone */
    flush_one((fake_pc){"chain", 0x20, {FN_MATH}, {9}, 1});
    assert_int_equal(line_samples(s, "/src/k.cu:20@chain"), 9);
}

/* CUPTI's cubin is valid during its callback only: the lines come from
 * kscope's copy, whatever becomes of CUPTI's memory after the callback. */
static void test_cubin_kept_past_its_callback(void **state)
{
    (void)state;
    int s = start_sampling("t_pcs_callback");
    load_module();
    memset(F.cubin, 0xAB, sizeof F.cubin); /* CUPTI reused its memory */
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    kernel("chain", 0, 10, s);
    flush_one((fake_pc){"chain", 0x10, {FN_LONG}, {5}, 1});
    assert_int_equal(line_samples(s, "/src/k.cu:12@chain"), 5);
}

/* A cubin without line information is not kept: its PCs have no line. */
static void test_cubin_without_lines_not_kept(void **state)
{
    (void)state;
    int s = start_sampling("t_pcs_nolines");
    memset(F.cubin, 0, sizeof F.cubin);
    memcpy(F.cubin, "CUBIN-image", 12); /* no line section */
    load_module();
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    kernel("chain", 0, 10, s);
    flush_one((fake_pc){"chain", 0x10, {FN_LONG}, {4}, 1});
    assert_chain_without_lines(s, 4);
}

/* Without the module (loaded before sampling began): no lines. */
static void test_unknown_cubin_has_no_lines(void **state)
{
    (void)state;
    int s = start_sampling("t_pcs_nocubin");
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    kernel("chain", 0, 10, s);
    flush_one((fake_pc){"chain", 0x20, {FN_MATH}, {3}, 1});
    assert_chain_without_lines(s, 3);
}

/* Records CUPTI leaves in its own buffer at disable are taken at stop. */
static void test_records_left_at_disable(void **state)
{
    (void)state;
    int s = start_sampling("t_pcs_disable");
    load_module();
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX, NULL);
    kernel("chain", 0, 10, s);
    F.leftover = (fake_pc){"chain", 0x10, {FN_LONG}, {11}, 1};
    F.has_leftover = 1;
    kscope__pcs_stop(0);
    assert_int_equal(line_samples(s, "/src/k.cu:12@chain"), 11);
}

/* Kernels on another device do not take this device's samples. */
static void test_devices_apart(void **state)
{
    (void)state;
    int s = start_sampling("t_pcs_devices");
    load_module();
    resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CTX2, NULL); /* device 1 */
    kscope_enter("on0");
    uint64_t c0 = kscope__current_ctx();
    kscope_exit("on0");
    kernel("chain", c0, 100, s); /* device 0 */
    kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = "chain", .function = "chain"};
    r.end_ns = 100;
    r.device = 1;
    kscope__pcs_kernel(&r, 0, bit(s));
    flush_one((fake_pc){"chain", 0x10, {FN_LONG}, {6}, 1});
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_null(TU_PATH(root, "on0", "chain"));
    assert_int_equal(tu_metric_int(TU_PATH(root, "chain", "/src/k.cu:12@chain"), "num_samples"), 6);
    yajl_tree_free(doc);
}

int main(void)
{
    pthread_mutex_init(&F.lock, NULL);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reason_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_context_setup, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_launch_sets_up_a_context, setup, teardown),
        cmocka_unit_test_setup_teardown(test_enable_failure_is_said, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_failure_names_the_attribute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_cupti_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_second_interval_is_said, setup, teardown),
        cmocka_unit_test_setup_teardown(test_samples_to_lines_and_contexts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remaining_records_are_taken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drops_are_counted_and_said, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unloaded_module_keeps_its_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_cubin_has_no_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cubin_kept_past_its_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cubin_without_lines_not_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_left_at_disable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_devices_apart, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
