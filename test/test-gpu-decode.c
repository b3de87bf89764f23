/*
 * test-gpu-decode.c - the CUPTI backend's GPU-free parts, on synthetic
 * CUPTI records: decoding, attribution to calling contexts (the launch
 * table the callbacks fill: scopes, the root, nested calls, reused slots,
 * graph replays, concurrent writers), launch metadata, and kernel name
 * demangling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu/cupti/cupti-internal.h"

/* ------------------------------------------------------------ fixtures */

typedef struct got {
    uint64_t ctx;
    kscope__gpu_record rec;
    char name[256];
    double flops16, meta_bytes, custom0;
    size_t n_custom;
} got;

static got seen[64];
static size_t nseen;

static void collect(void *arg, uint64_t ctx, const kscope__gpu_record *r)
{
    (void)arg;
    assert_true(nseen < 64);
    got *g = &seen[nseen++];
    memset(g, 0, sizeof *g);
    g->ctx = ctx;
    g->rec = *r;
    snprintf(g->name, sizeof g->name, "%s", r->name ? r->name : "");
    if (r->meta) {
        g->flops16 = r->meta->flops16;
        g->meta_bytes = r->meta->bytes;
        g->n_custom = r->meta->n_custom;
        if (r->meta->n_custom)
            g->custom0 = r->meta->custom_values[0];
    }
    g->rec.meta = NULL; /* freed after delivery */
}

static int setup(void **state)
{
    kscope__corr *c = calloc(1, sizeof *c);
    assert_non_null(c);
    assert_int_equal(kscope__corr_init(c, collect, NULL), 0);
    nseen = 0;
    *state = c;
    return 0;
}

static int teardown(void **state)
{
    kscope__corr_free(*state);
    free(*state);
    return 0;
}

static CUpti_ActivityKernel10 kernel(uint32_t corr, const char *name, uint64_t start, uint64_t end)
{
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.correlationId = corr;
    k.name = name;
    k.start = start;
    k.end = end;
    k.deviceId = 1;
    k.streamId = 7;
    return k;
}

static CUpti_ActivityMemcpy6 copy(uint32_t corr, uint8_t copy_kind, uint64_t bytes)
{
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = copy_kind;
    m.bytes = bytes;
    m.correlationId = corr;
    return m;
}

/* A launch call with id `corr`, begun and ended as the callbacks do. */
static void launch(kscope__corr *c, uint32_t corr, uint64_t ctx, uint32_t tid, uint64_t start,
                   uint64_t end)
{
    kscope__corr_launch_enter(c, corr, ctx, tid, start, 0);
    kscope__corr_launch_exit(c, corr, start, end, 0, 0);
}

#define FEED(c, rec) kscope__corr_feed((c), (const CUpti_Activity *)&(rec))

/* ------------------------------------------------------------- decoding */

static void test_decode_kernel(void **state)
{
    (void)state;
    CUpti_ActivityKernel10 k = kernel(42, "_Z6kernelv", 1000, 1500);
    kscope__gpu_record r;
    assert_int_equal(kscope__gpu_decode((const CUpti_Activity *)&k, &r), 1);
    assert_int_equal(r.kind, KSCOPE__GPU_KERNEL);
    assert_string_equal(r.name, "_Z6kernelv");
    assert_int_equal(r.start_ns, 1000);
    assert_int_equal(r.end_ns, 1500);
    assert_int_equal(r.device, 1);
    assert_int_equal(r.stream, 7);
    assert_int_equal(r.correlation, 42);
    assert_null(r.meta);
}

static void test_decode_copies(void **state)
{
    (void)state;
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    m.bytes = 1 << 20;
    m.start = 10;
    m.end = 30;
    m.deviceId = 2;
    m.streamId = 3;
    m.correlationId = 9;
    kscope__gpu_record r;
    assert_int_equal(kscope__gpu_decode((const CUpti_Activity *)&m, &r), 1);
    assert_int_equal(r.kind, KSCOPE__GPU_MEMCPY);
    assert_string_equal(r.name, "Memcpy HtoD");
    assert_int_equal(r.bytes, 1 << 20);
    assert_int_equal(r.device, 2);
    assert_int_equal(r.stream, 3);
    assert_int_equal(r.correlation, 9);

    CUpti_ActivityMemcpyPtoP4 p;
    memset(&p, 0, sizeof p);
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.bytes = 4096;
    p.srcDeviceId = 0;
    p.dstDeviceId = 1;
    p.deviceId = 0;
    p.correlationId = 11;
    assert_int_equal(kscope__gpu_decode((const CUpti_Activity *)&p, &r), 1);
    assert_string_equal(r.name, "Memcpy PtoP");
    assert_int_equal(r.src_device, 0);
    assert_int_equal(r.dst_device, 1);
    assert_int_equal(r.bytes, 4096);

    CUpti_ActivityMemset4 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    s.bytes = 512;
    s.correlationId = 12;
    assert_int_equal(kscope__gpu_decode((const CUpti_Activity *)&s, &r), 1);
    assert_int_equal(r.kind, KSCOPE__GPU_MEMSET);
    assert_string_equal(r.name, "Memset");
    assert_int_equal(r.bytes, 512);

    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME; /* no GPU work */
    assert_int_equal(kscope__gpu_decode((const CUpti_Activity *)&a, &r), 0);
}

static void test_copy_names(void **state)
{
    (void)state;
    assert_string_equal(kscope__gpu_copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH), "Memcpy DtoH");
    assert_string_equal(kscope__gpu_copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), "Memcpy DtoD");
    assert_string_equal(kscope__gpu_copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH), "Memcpy HtoH");
    assert_string_equal(kscope__gpu_copy_name(200), "Memcpy");
}

/* ---------------------------------------------------------- attribution */

static void test_kernel_under_scope(void **state)
{
    kscope__corr *c = *state;
    launch(c, 5, 0xABCD00, 4242, 100, 120);
    CUpti_ActivityKernel10 k = kernel(5, "_Z6kernelv", 200, 300);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0xABCD00);
    assert_string_equal(seen[0].name, "kernel()");
    assert_int_equal(seen[0].rec.launch_ns, 100);
    assert_int_equal(seen[0].rec.launch_end_ns, 120);
    assert_int_equal(seen[0].rec.launch_tid, 4242);
    assert_int_equal(seen[0].rec.start_ns, 200);
    assert_int_equal(c->unattributed, 0);
    assert_int_equal(c->delivered, 1);
}

/* Launched outside any scope: the root, but the launch (for flows) known. */
static void test_launch_outside_scopes(void **state)
{
    kscope__corr *c = *state;
    launch(c, 6, 0, 17, 100, 120);
    CUpti_ActivityKernel10 k = kernel(6, "plain", 200, 300);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0);
    assert_string_equal(seen[0].name, "plain");
    assert_int_equal(seen[0].rec.launch_ns, 100);
    assert_int_equal(seen[0].rec.launch_tid, 17);
    assert_int_equal(c->unattributed, 1);
}

/* Launched before capture began: delivered at once, to the root. */
static void test_unknown_launch_goes_to_root(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityKernel10 k = kernel(7, "k", 200, 300);
    FEED(c, k);
    CUpti_ActivityKernel10 k0 = kernel(0, "no id", 200, 300);
    FEED(c, k0);
    assert_int_equal(nseen, 2);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(seen[i].ctx, 0);
        assert_int_equal(seen[i].rec.launch_ns, 0);
        assert_int_equal(seen[i].rec.launch_tid, 0);
    }
    assert_int_equal(c->unattributed, 2);
    kscope__corr_launch_enter(c, 0, 0x99, 1, 5, 0); /* id 0 is never noted */
    FEED(c, k0);
    assert_int_equal(seen[2].ctx, 0);
}

/* The work can finish before its (synchronous) call returns. */
static void test_call_still_open(void **state)
{
    kscope__corr *c = *state;
    kscope__corr_launch_enter(c, 8, 0x80, 3, 1000, 0);
    CUpti_ActivityMemcpy6 m = copy(8, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096);
    m.start = 1100;
    m.end = 1200;
    FEED(c, m);
    assert_int_equal(seen[0].ctx, 0x80);
    assert_int_equal(seen[0].rec.launch_ns, 1000);
    assert_int_equal(seen[0].rec.launch_end_ns, 1000); /* not yet returned */
    kscope__corr_launch_exit(c, 8, 1000, 1300, 0, 0);
    FEED(c, m);
    assert_int_equal(seen[1].rec.launch_end_ns, 1300);
}

/* A driver call inside a runtime call, with the same id: the outer call's
 * context and begin are kept. */
static void test_outer_call_kept(void **state)
{
    kscope__corr *c = *state;
    kscope__corr_launch_enter(c, 30, 0x300, 1, 100, 0);
    kscope__corr_launch_enter(c, 30, 0x301, 1, 150, 0);
    kscope__corr_launch_exit(c, 30, 100, 200, 0, 0);
    CUpti_ActivityKernel10 k = kernel(30, "k", 300, 400);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0x300);
    assert_int_equal(seen[0].rec.launch_ns, 100);
    assert_int_equal(seen[0].rec.launch_end_ns, 200);
}

/* A launch KSCOPE__CORR_SIZE ids later takes the slot: the old id's work
 * is no longer known, never given the newer launch's context. */
static void test_slot_reused(void **state)
{
    kscope__corr *c = *state;
    launch(c, 9, 0x90, 1, 10, 20);
    launch(c, 9 + KSCOPE__CORR_SIZE, 0x91, 2, 30, 40);
    CUpti_ActivityKernel10 old = kernel(9, "old", 50, 60);
    CUpti_ActivityKernel10 young = kernel(9 + KSCOPE__CORR_SIZE, "young", 50, 60);
    FEED(c, old);
    FEED(c, young);
    assert_int_equal(seen[0].ctx, 0);
    assert_int_equal(seen[0].rec.launch_ns, 0);
    assert_int_equal(seen[1].ctx, 0x91);
    /* the exit of the old id, arriving late, is not taken for the new one's */
    kscope__corr_launch_exit(c, 9, 10, 999, 0, 0);
    FEED(c, young);
    assert_int_equal(seen[2].rec.launch_end_ns, 30); /* its start: end unknown */
    kscope__corr_launch_exit(c, 9 + KSCOPE__CORR_SIZE, 30, 45, 0, 0);
    FEED(c, young);
    assert_int_equal(seen[3].rec.launch_end_ns, 45);
}

/* Kernels replayed from a graph share the graph launch's correlation id. */
static void test_graph_replay(void **state)
{
    kscope__corr *c = *state;
    for (uint32_t replay = 0; replay < 4; replay++) {
        uint32_t corr = 100 + replay;
        launch(c, corr, 0x5000, 1, 10 * replay, 10 * replay + 5);
        for (int node = 0; node < 3; node++) {
            CUpti_ActivityKernel10 k = kernel(corr, "_Z4nodei", 1000, 1100);
            FEED(c, k);
        }
    }
    assert_int_equal(nseen, 12);
    for (size_t i = 0; i < nseen; i++) {
        assert_int_equal(seen[i].ctx, 0x5000);
        assert_string_equal(seen[i].name, "node(int)");
        assert_int_equal(seen[i].rec.launch_ns, 10 * (i / 3));
    }
}

/* Records of a graph launch: its nodes' kernels and copies go to the
 * launch; a copy that is no node of the graph is kscope's own copy back of
 * the graph's values (made inside the launch call, so under its id). */
static void test_graph_launch_own_copy(void **state)
{
    kscope__corr *c = *state;
    launch(c, 77, 0x7000 | KSCOPE__CTX_GRAPH, 1, 10, 20);
    CUpti_ActivityKernel10 k = kernel(77, "node", 30, 40);
    k.graphNodeId = 5;
    CUpti_ActivityMemcpy6 node_copy = copy(77, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 64);
    node_copy.graphNodeId = 6;
    CUpti_ActivityMemcpy6 own = copy(77, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8);
    FEED(c, k);
    FEED(c, node_copy);
    FEED(c, own);
    assert_int_equal(nseen, 2);
    assert_int_equal(seen[0].ctx, 0x7000); /* the flag is not part of the context */
    assert_int_equal(seen[0].rec.graph_node, 5);
    assert_string_equal(seen[1].name, "Memcpy DtoD");
    /* outside a graph launch a copy is the program's */
    launch(c, 78, 0x7000, 1, 10, 20);
    CUpti_ActivityMemcpy6 mine = copy(78, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8);
    FEED(c, mine);
    assert_int_equal(nseen, 3);
    /* a call kscope made itself with its own id */
    launch(c, 79, KSCOPE__CTX_OWN, 1, 10, 20);
    CUpti_ActivityMemcpy6 ours = copy(79, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8);
    FEED(c, ours);
    assert_int_equal(nseen, 3);
}

static void test_copies_attributed(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityMemcpy6 m = copy(40, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 8192);
    launch(c, 40, 0x40, 1, 1, 2);
    FEED(c, m);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0x40);
    assert_int_equal(seen[0].rec.bytes, 8192);
    assert_string_equal(seen[0].name, "Memcpy DtoH");
}

/* Launching threads write the table while the buffer thread reads it: a
 * record is either attributed to its own launch, every field of it, or
 * to the root; never a mix of two launches sharing a slot, nor another
 * call's end. */
typedef struct race {
    kscope__corr *c;
    _Atomic int stop;
    _Atomic uint64_t launches;
    uint32_t base;
} race;

/* Contexts are aligned node addresses (their low bits carry flags): the
 * stand-ins are too. */
static void *race_writer(void *arg)
{
    race *r = arg;
    for (uint32_t k = 0; !atomic_load(&r->stop); k++) {
        uint32_t corr = r->base + (k % 64) * KSCOPE__CORR_SIZE; /* always one slot */
        launch(r->c, corr, (uint64_t)corr * 8, corr + 1, (uint64_t)corr * 10,
               (uint64_t)corr * 10 + 5);
        atomic_fetch_add_explicit(&r->launches, 1, memory_order_relaxed);
    }
    return NULL;
}

static uint64_t launches_of(race *r, int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += atomic_load_explicit(&r[i].launches, memory_order_relaxed);
    return sum;
}

static void test_concurrent_launches(void **state)
{
    kscope__corr *c = *state;
    race r[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        r[i] = (race){.c = c, .base = 1000u + (uint32_t)(i % 2)}; /* two per slot */
        assert_int_equal(pthread_create(&th[i], NULL, race_writer, &r[i]), 0);
    }
    /* 200000 reads, and on until they met live entries 1000 times: how
     * soon depends on when the writers run (late on a loaded machine), so
     * only the writers' progress bounds the loop, not a count of reads. */
    long attributed = 0, wrong = 0;
    for (uint32_t i = 0; (i < 200000 || attributed < 1000) && launches_of(r, 4) < 100000000u; i++) {
        uint32_t corr = 1000u + (uint32_t)(i % 2) + (uint32_t)(i % 64) * KSCOPE__CORR_SIZE;
        CUpti_ActivityKernel10 k = kernel(corr, "k", 1, 2);
        nseen = 0;
        FEED(c, k);
        const kscope__gpu_record *g = &seen[0].rec;
        if (seen[0].ctx == 0) {
            wrong += g->launch_ns != 0;
            continue;
        }
        attributed++;
        uint64_t end = g->launch_end_ns;
        wrong += seen[0].ctx != (uint64_t)corr * 8 || g->launch_tid != corr + 1 ||
                 g->launch_ns != (uint64_t)corr * 10 ||
                 (end != (uint64_t)corr * 10 && end != (uint64_t)corr * 10 + 5);
    }
    for (int i = 0; i < 4; i++) { /* before any assert: the writers use r[] */
        atomic_store(&r[i].stop, 1);
        pthread_join(th[i], NULL);
    }
    assert_int_equal(wrong, 0);
    assert_true(attributed >= 1000); /* the reads did meet live entries */
}

/* ---------------------------------------------------------- followed calls */

static void test_call_classes(void **state)
{
    (void)state;
    static const char *const launches[] = {
        "cudaLaunchKernel_v7000",      "cudaLaunchKernel_ptsz_v7000", "cudaLaunchKernelExC_v11060",
        "cudaLaunchCooperativeKernel", "cudaGraphLaunch_v10000",      "cuLaunchKernel",
        "cuLaunchKernelEx_ptsz",       "cuLaunchGridAsync",           "cuGraphLaunch_ptsz"};
    static const char *const copies[] = {"cudaMemcpy_v3020",          "cudaMemcpyAsync_ptsz_v7000",
                                         "cudaMemcpyPeerAsync_v4000", "cudaMemset2D_v3020",
                                         "cuMemcpyHtoD_v2",           "cuMemcpyBatchAsync",
                                         "cuMemsetD32Async"};
    static const char *const others[] = {"cudaLaunchHostFunc_v10000",
                                         "cuLaunchHostFunc",
                                         "cudaMalloc_v3020",
                                         "cuMemAlloc_v2",
                                         "cudaStreamSynchronize_v3020",
                                         "cuCtxSynchronize",
                                         "cudaGetDevice_v3020",
                                         "cudnnConvolutionForward",
                                         "",
                                         "cu"};
    for (size_t i = 0; i < sizeof launches / sizeof *launches; i++)
        assert_int_equal(kscope__gpu_call_class(launches[i]), KSCOPE__CALL_LAUNCH);
    for (size_t i = 0; i < sizeof copies / sizeof *copies; i++)
        assert_int_equal(kscope__gpu_call_class(copies[i]), KSCOPE__CALL_COPY);
    for (size_t i = 0; i < sizeof others / sizeof *others; i++)
        assert_int_equal(kscope__gpu_call_class(others[i]), KSCOPE__CALL_OTHER);
    static const char *const begins[] = {"cudaStreamBeginCapture_v10000",
                                         "cudaStreamBeginCaptureToGraph_ptsz_v12030",
                                         "cuStreamBeginCapture_v2"};
    for (size_t i = 0; i < sizeof begins / sizeof *begins; i++)
        assert_int_equal(kscope__gpu_call_class(begins[i]), KSCOPE__CALL_BEGIN_CAPTURE);
    assert_int_equal(kscope__gpu_call_class("cudaStreamEndCapture_v10000"),
                     KSCOPE__CALL_END_CAPTURE);
    assert_int_equal(kscope__gpu_call_class("cuStreamEndCapture_ptsz"), KSCOPE__CALL_END_CAPTURE);
    assert_int_equal(kscope__gpu_call_class("cudaStreamIsCapturing_v10000"), KSCOPE__CALL_OTHER);
    /* the table followed without names: launches and captures, 0-ended */
    int launches_n = 0, begin_n = 0, end_n = 0;
    for (const kscope__known_call *k = kscope__known_calls; k->cbid; k++) {
        launches_n += k->cls == KSCOPE__CALL_LAUNCH;
        begin_n += k->cls == KSCOPE__CALL_BEGIN_CAPTURE;
        end_n += k->cls == KSCOPE__CALL_END_CAPTURE;
    }
    assert_true(launches_n >= 18 && begin_n >= 10 && end_n >= 4);
}

/* ------------------------------------------------------ launch metadata */

static kscope__gpu_meta *meta_for(uint32_t corr, const char *name, double flops16)
{
    static const char *names[] = {"tokens"};
    static const double values[] = {128.0};
    kscope_launch_meta m = {.name = name, .flops16 = flops16, .bytes = 64.0};
    m.n_custom = 1;
    m.custom_names = names;
    m.custom_values = values;
    kscope__gpu_meta *g = NULL;
    assert_int_equal(kscope__gpu_meta_copy(&m, &g), 0);
    g->correlation = corr;
    return g;
}

static void test_metadata_lands_on_its_kernel(void **state)
{
    kscope__corr *c = *state;
    kscope__corr_put_meta(c, meta_for(50, "matmul_fp16", 2e12));
    launch(c, 50, 0x50, 1, 1, 2);
    CUpti_ActivityKernel10 k1 = kernel(50, "_Z6gemm_kv", 10, 20);
    launch(c, 51, 0x50, 1, 3, 4);
    CUpti_ActivityKernel10 k2 = kernel(51, "_Z6gemm_kv", 30, 40);
    FEED(c, k1);
    FEED(c, k2);
    assert_int_equal(nseen, 2);
    assert_string_equal(seen[0].name, "matmul_fp16");
    assert_true(seen[0].flops16 == 2e12);
    assert_true(seen[0].meta_bytes == 64.0);
    assert_int_equal(seen[0].n_custom, 1);
    assert_true(seen[0].custom0 == 128.0);
    /* the next launch has none */
    assert_string_equal(seen[1].name, "gemm_k()");
    assert_int_equal(seen[1].n_custom, 0);
}

/* Metadata whose kernel never came is replaced, not leaked or misused. */
static void test_metadata_slot_reuse(void **state)
{
    kscope__corr *c = *state;
    kscope__corr_put_meta(c, meta_for(60, "stale", 1));
    kscope__corr_put_meta(c, meta_for(60 + KSCOPE__META_SLOTS, "fresh", 2));
    CUpti_ActivityKernel10 k = kernel(60, "plain", 3, 4);
    FEED(c, k);
    assert_string_equal(seen[0].name, "plain"); /* not the other launch's */
    uint32_t later = 60 + KSCOPE__META_SLOTS;
    CUpti_ActivityKernel10 k2 = kernel(later, "plain", 7, 8);
    FEED(c, k2);
    assert_string_equal(seen[1].name, "fresh");
}

static void test_metadata_copy_is_deep(void **state)
{
    (void)state;
    char name[] = "mine";
    char custom[] = "bytes_moved";
    const char *names[] = {custom};
    double values[] = {3.5};
    kscope_launch_meta m = {.name = name, .flops32 = 7, .n_custom = 1};
    m.custom_names = names;
    m.custom_values = values;
    kscope__gpu_meta *g = NULL;
    assert_int_equal(kscope__gpu_meta_copy(&m, &g), 0);
    name[0] = 'X';
    custom[0] = 'X';
    values[0] = 0;
    assert_string_equal(g->meta.name, "mine");
    assert_string_equal(g->meta.custom_names[0], "bytes_moved");
    assert_true(g->meta.custom_values[0] == 3.5);
    assert_true(g->meta.flops32 == 7);
    free(g);
}

static void test_metadata_invalid(void **state)
{
    (void)state;
    kscope__gpu_meta *g = (kscope__gpu_meta *)1;
    kscope_launch_meta m = {.n_custom = 2};
    assert_int_equal(kscope__gpu_meta_copy(&m, &g), KSCOPE_EINVAL);
    assert_null(g);
    assert_non_null(strstr(kscope_last_error(), "custom"));
    const char *names[] = {"ok", ""};
    const double values[] = {1, 2};
    m.custom_names = names;
    m.custom_values = values;
    assert_int_equal(kscope__gpu_meta_copy(&m, &g), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "custom metric 1"));
    assert_int_equal(kscope__gpu_meta_copy(NULL, &g), KSCOPE_EINVAL);
}

/* ------------------------------------------------------------ demangling */

static void test_demangle(void **state)
{
    (void)state;
    assert_string_equal(kscope__demangle("_Z3fooi"), "foo(int)");
    assert_string_equal(kscope__demangle("_ZN2at6native6kernelIfEEvPT_"),
                        "void at::native::kernel<float>(float*)");
    assert_string_equal(kscope__demangle("triton_mm_kernel"), "triton_mm_kernel");
    assert_string_equal(kscope__demangle("_Znot a name"), "_Znot a name");
    assert_string_equal(kscope__demangle(NULL), "");
}

static void test_demangle_cached_by_pointer(void **state)
{
    (void)state;
    static const char name[] = "_Z6kernelPfi";
    const char *a = kscope__demangle(name);
    const char *b = kscope__demangle(name);
    assert_ptr_equal(a, b);
    assert_string_equal(a, "kernel(float*, int)");
    /* Same address, new text (a module unloaded and its memory reused). */
    char buf[32];
    strcpy(buf, "_Z3barv");
    assert_string_equal(kscope__demangle(buf), "bar()");
    strcpy(buf, "_Z3bazv");
    assert_string_equal(kscope__demangle(buf), "baz()");
    /* Many distinct names grow the cache and keep earlier answers. */
    static char names[3000][40];
    for (int i = 0; i < 3000; i++) {
        char tail[16];
        snprintf(tail, sizeof tail, "k%d", i);
        snprintf(names[i], sizeof names[i], "_Z%d%s", (int)strlen(tail), tail);
    }
    for (int i = 0; i < 3000; i++)
        kscope__demangle(names[i]);
    assert_string_equal(kscope__demangle(name), "kernel(float*, int)");
    assert_string_equal(kscope__demangle(names[5]), "k5");
    assert_string_equal(kscope__demangle(names[2999]), "k2999");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_kernel),
        cmocka_unit_test(test_decode_copies),
        cmocka_unit_test(test_copy_names),
        cmocka_unit_test_setup_teardown(test_kernel_under_scope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_launch_outside_scopes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_launch_goes_to_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_call_still_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outer_call_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slot_reused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_launch_own_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copies_attributed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_launches, setup, teardown),
        cmocka_unit_test(test_call_classes),
        cmocka_unit_test_setup_teardown(test_metadata_lands_on_its_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_slot_reuse, setup, teardown),
        cmocka_unit_test(test_metadata_copy_is_deep),
        cmocka_unit_test(test_metadata_invalid),
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_demangle_cached_by_pointer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
