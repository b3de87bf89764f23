/*
 * test-gpu-decode.c - the CUPTI backend's GPU-free parts, on synthetic
 * CUPTI records: decoding, attribution to calling contexts (external
 * correlation, launch records, out-of-order buffers, graph replays),
 * launch metadata, and kernel name demangling.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu/gpu-internal.h"

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

static CUpti_ActivityExternalCorrelation ext(uint32_t corr, uint64_t id)
{
    CUpti_ActivityExternalCorrelation x;
    memset(&x, 0, sizeof x);
    x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    x.externalId = id;
    x.correlationId = corr;
    return x;
}

static CUpti_ActivityAPI api(uint32_t corr, uint64_t start, uint64_t end, uint32_t tid)
{
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
    a.correlationId = corr;
    a.start = start;
    a.end = end;
    a.threadId = tid;
    return a;
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

    CUpti_ActivityAPI a = api(1, 0, 0, 0);
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
    CUpti_ActivityExternalCorrelation x = ext(5, 0xABCD00);
    CUpti_ActivityAPI a = api(5, 100, 120, 4242);
    CUpti_ActivityKernel10 k = kernel(5, "_Z6kernelv", 200, 300);
    FEED(c, x);
    FEED(c, a);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0xABCD00);
    assert_string_equal(seen[0].name, "kernel()");
    assert_int_equal(seen[0].rec.launch_ns, 100);
    assert_int_equal(seen[0].rec.launch_end_ns, 120);
    assert_int_equal(seen[0].rec.launch_tid, 4242);
    assert_int_equal(c->unattributed, 0);
}

static void test_kernel_without_scope_goes_to_root(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityAPI a = api(6, 100, 120, 1);
    CUpti_ActivityKernel10 k = kernel(6, "plain", 200, 300);
    FEED(c, a);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0);
    assert_string_equal(seen[0].name, "plain");
    assert_int_equal(c->unattributed, 1);
}

/* The kernel's buffer arrives before the buffer with its launch. */
static void test_out_of_order_buffers(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityKernel10 k = kernel(7, "k", 200, 300);
    FEED(c, k);
    kscope__corr_drain(c, 4);
    assert_int_equal(nseen, 0);
    assert_int_equal(c->npending, 1);
    CUpti_ActivityExternalCorrelation x = ext(7, 77);
    CUpti_ActivityAPI a = api(7, 100, 110, 3);
    FEED(c, x);
    FEED(c, a);
    kscope__corr_drain(c, 4);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 77);
    assert_int_equal(seen[0].rec.launch_ns, 100);
    assert_int_equal(c->npending, 0);
}

/* The order CUPTI 13 writes them (seen on an H200): the external id, the
 * kernel's slot, then the runtime call's record, all in one buffer. */
static void test_cupti13_order(void **state)
{
    kscope__corr *c = *state;
    for (uint32_t i = 0; i < 10; i++) {
        uint32_t corr = 2 * i + 2;
        CUpti_ActivityExternalCorrelation x = ext(corr, 0x9000 + i % 2);
        CUpti_ActivityKernel10 k = kernel(corr, "_Z12probe_kernelPi", 1000 + i, 1001 + i);
        CUpti_ActivityAPI a = api(corr, 500 + i, 600 + i, 77);
        a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
        FEED(c, x);
        FEED(c, k);
        FEED(c, a);
    }
    kscope__corr_drain(c, 64);
    assert_int_equal(nseen, 10);
    for (size_t i = 0; i < nseen; i++) {
        assert_int_equal(seen[i].ctx, 0x9000 + i % 2);
        assert_int_equal(seen[i].rec.launch_ns, 500 + i);
        assert_int_equal(seen[i].rec.launch_tid, 77);
        assert_string_equal(seen[i].name, "probe_kernel(int*)");
    }
    assert_int_equal(c->npending, 0);
}

/* Two passes over that buffer: nothing waits at all. */
static void test_two_passes(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityExternalCorrelation x[4];
    CUpti_ActivityKernel10 k[4];
    CUpti_ActivityAPI a[4];
    const CUpti_Activity *buffer[12];
    for (uint32_t i = 0; i < 4; i++) {
        x[i] = ext(10 + i, 0xC0DE);
        k[i] = kernel(10 + i, "k", 100, 200);
        a[i] = api(10 + i, 50, 60, 5);
        a[i].kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        buffer[3 * i] = (const CUpti_Activity *)&x[i];
        buffer[3 * i + 1] = (const CUpti_Activity *)&k[i];
        buffer[3 * i + 2] = (const CUpti_Activity *)&a[i];
    }
    for (int pass = 1; pass <= 2; pass++) {
        for (size_t i = 0; i < 12; i++)
            kscope__corr_feed_pass(c, buffer[i], pass);
        if (pass == 1)
            assert_int_equal(nseen, 0); /* launches only: nothing delivered */
    }
    assert_int_equal(nseen, 4);
    assert_int_equal(c->npending, 0);
    assert_int_equal(c->cap_pending, 0); /* the waiting list was never needed */
    for (size_t i = 0; i < nseen; i++)
        assert_int_equal(seen[i].ctx, 0xC0DE);
}

/* Work whose launch id is far behind every launch seen: its API record's
 * slot is long reused, so it is delivered at once, unattributed. */
static void test_too_old_delivered(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityAPI a = api(KSCOPE__CORR_SIZE, 1, 2, 1);
    FEED(c, a);
    CUpti_ActivityKernel10 k = kernel(3, "late", 5, 6);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0);
    assert_int_equal(c->npending, 0);
}

/* CUPTI's thread ids (pthread_t's low bits) map to OS thread ids. */
static void test_thread_ids(void **state)
{
    (void)state;
    assert_int_equal(kscope__gpu_tid_lookup(0x66712000u), 0);
    assert_int_equal(kscope__gpu_tid_note(0x66712000u, 2088), 0);
    assert_int_equal(kscope__gpu_tid_lookup(0x66712000u), 2088);
    assert_int_equal(kscope__gpu_tid_note(0x66712000u, 2089), 0); /* noted again: updated */
    assert_int_equal(kscope__gpu_tid_lookup(0x66712000u), 2089);
    assert_int_equal(kscope__gpu_tid_note(0, 1), KSCOPE_EINVAL);
    assert_int_equal(kscope__gpu_tid_lookup(0), 0);
    /* many threads (ids from nearby addresses share their low bits) */
    for (uint32_t i = 1; i <= 1000; i++)
        assert_int_equal(kscope__gpu_tid_note(i << 12 | 0x700u, 10000 + i), 0);
    for (uint32_t i = 1; i <= 1000; i++)
        assert_int_equal(kscope__gpu_tid_lookup(i << 12 | 0x700u), 10000 + i);
    assert_int_equal(kscope__gpu_tid_lookup(0x66712000u), 2089);
    assert_int_equal(kscope__gpu_tid_lookup(12345u << 9), 0);
}

/* A record whose launch never shows up is not held forever. */
static void test_pending_gives_up(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityKernel10 k = kernel(8, "k", 200, 300);
    FEED(c, k);
    for (int i = 0; i < 4; i++)
        kscope__corr_drain(c, 4);
    assert_int_equal(nseen, 0);
    kscope__corr_drain(c, 4);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0);

    CUpti_ActivityKernel10 k2 = kernel(9, "k2", 200, 300);
    FEED(c, k2);
    kscope__corr_drain(c, 0); /* final flush: everything goes */
    assert_int_equal(nseen, 2);
    assert_int_equal(c->npending, 0);
}

/* Kernels replayed from a graph share the graph launch's correlation id. */
static void test_graph_replay(void **state)
{
    kscope__corr *c = *state;
    for (uint32_t launch = 0; launch < 4; launch++) {
        uint32_t corr = 100 + launch;
        CUpti_ActivityExternalCorrelation x = ext(corr, 0x5000);
        CUpti_ActivityAPI a = api(corr, 10 * launch, 10 * launch + 5, 1);
        FEED(c, x);
        FEED(c, a);
        for (int node = 0; node < 3; node++) {
            CUpti_ActivityKernel10 k = kernel(corr, "_Z4nodei", 1000, 1100);
            FEED(c, k);
        }
    }
    assert_int_equal(nseen, 12);
    for (size_t i = 0; i < nseen; i++) {
        assert_int_equal(seen[i].ctx, 0x5000);
        assert_string_equal(seen[i].name, "node(int)");
    }
}

/* Other external kinds (a framework's own ids) are not kscope's. */
static void test_foreign_external_kind_ignored(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityExternalCorrelation x = ext(20, 999);
    x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
    CUpti_ActivityAPI a = api(20, 1, 2, 1);
    CUpti_ActivityKernel10 k = kernel(20, "k", 3, 4);
    FEED(c, x);
    FEED(c, a);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0);
}

/* A runtime call and the driver call inside it: the outer launch time. */
static void test_outer_api_record_kept(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityAPI inner = api(30, 150, 160, 1);
    CUpti_ActivityAPI outer = api(30, 100, 200, 1);
    outer.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    CUpti_ActivityKernel10 k = kernel(30, "k", 300, 400);
    FEED(c, inner);
    FEED(c, outer);
    FEED(c, k);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].rec.launch_ns, 100);
    assert_int_equal(seen[0].rec.launch_end_ns, 200);
}

static void test_copies_attributed(void **state)
{
    kscope__corr *c = *state;
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    m.bytes = 8192;
    m.correlationId = 40;
    CUpti_ActivityExternalCorrelation x = ext(40, 0x40);
    CUpti_ActivityAPI a = api(40, 1, 2, 1);
    FEED(c, x);
    FEED(c, a);
    FEED(c, m);
    assert_int_equal(nseen, 1);
    assert_int_equal(seen[0].ctx, 0x40);
    assert_int_equal(seen[0].rec.bytes, 8192);
    assert_string_equal(seen[0].name, "Memcpy DtoH");
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
    CUpti_ActivityAPI a1 = api(50, 1, 2, 1);
    CUpti_ActivityKernel10 k1 = kernel(50, "_Z6gemm_kv", 10, 20);
    CUpti_ActivityAPI a2 = api(51, 3, 4, 1);
    CUpti_ActivityKernel10 k2 = kernel(51, "_Z6gemm_kv", 30, 40);
    FEED(c, a1);
    FEED(c, k1);
    FEED(c, a2);
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
    CUpti_ActivityAPI a = api(60, 1, 2, 1);
    CUpti_ActivityKernel10 k = kernel(60, "plain", 3, 4);
    FEED(c, a);
    FEED(c, k);
    assert_string_equal(seen[0].name, "plain"); /* not the other launch's */
    uint32_t later = 60 + KSCOPE__META_SLOTS;
    CUpti_ActivityAPI a2 = api(later, 5, 6, 1);
    CUpti_ActivityKernel10 k2 = kernel(later, "plain", 7, 8);
    FEED(c, a2);
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
        cmocka_unit_test_setup_teardown(test_kernel_without_scope_goes_to_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_out_of_order_buffers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cupti13_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_old_delivered, setup, teardown),
        cmocka_unit_test(test_thread_ids),
        cmocka_unit_test_setup_teardown(test_pending_gives_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_graph_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_external_kind_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outer_api_record_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_copies_attributed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_lands_on_its_kernel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metadata_slot_reuse, setup, teardown),
        cmocka_unit_test(test_metadata_copy_is_deep),
        cmocka_unit_test(test_metadata_invalid),
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_demangle_cached_by_pointer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
