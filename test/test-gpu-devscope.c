/*
 * test-gpu-devscope.c - device-side scopes on the pretend GPU
 * (test/progs/fake-gpu-*.c): the backend attaches a module's buffer at its
 * first launch (not while a capture is open), and kernels write records
 * with the device header's own code, compiled here for the host
 * (KSCOPE_DEVICE_EMULATE: the special registers are this file's
 * kscope_emu_* functions). Then: records read per launch, names from the
 * module's bytes, tree and trace output, sampling, both full policies and
 * their exact lost counts, options rejected with one-line errors, and a
 * buffer's reader on hand-made records (torn halves, overwritten claims).
 */
#define _GNU_SOURCE
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
#include <cuda.h>
#include <cupti.h>

#define KSCOPE_DEVICE_EMULATE
#include "kscope/device.h"
#include "support/device-emu.h"

#include "gpu/cupti/devscope.h"
#include "kscope-internal.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"

uint64_t fake_cuda_next_grid(void);
long fake_cupti_count(const char *what);

/* ------------------------------------------------- the emulated device */

/* Its registers are test/support/device-emu.h's tu_emu; clock64 counts
 * cycles at twice the clock (set in main). */

typedef struct fake_image {
    size_t size;
    const char *bytes;
} fake_image;

static CUcontext primary;

/* A module with the symbol (or not) and the given marked names. */
static CUmodule load_module(int with_symbol, const char *const *names, size_t n)
{
    static char bytes[4][512];
    static int next;
    char *b = bytes[next++ % 4];
    size_t len = 0;
    if (with_symbol)
        len += (size_t)sprintf(b, "ELF...kscope_device_buffer") + 1;
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(b + len, "%s%s", KSCOPE_DEVICE_MARK, names[i]) + 1;
    fake_image im = {len + 8, b};
    CUmodule m;
    assert_int_equal(cuModuleLoadData(&m, &im), CUDA_SUCCESS);
    return m;
}

/* Kernel `kernel` of a new module that has kscope's symbol and the
 * scope names `names` (the module into *m). */
static CUfunction kernel_in(CUmodule *m, const char *kernel, const char *const *names, size_t n)
{
    *m = load_module(1, names, n);
    CUfunction f;
    assert_int_equal(cuModuleGetFunction(&f, *m, kernel), CUDA_SUCCESS);
    return f;
}

/* Kernel `kernel` of a new module that has kscope's symbol and the one
 * scope name `scope` (the module into *m). */
static CUfunction one_scope_kernel(CUmodule *m, const char *kernel, const char *scope)
{
    return kernel_in(m, kernel, &scope, 1);
}

static uint64_t symbol_of(CUmodule m)
{
    CUdeviceptr p;
    size_t size;
    if (cuModuleGetGlobal_v2(&p, &size, m, "kscope_device_buffer") != CUDA_SUCCESS)
        return 0;
    return *(uint64_t *)(uintptr_t)p;
}

/* Launch f (grid gx "us"), then run its body: `warps` warps of 32 lanes on
 * SM (w % 4), each timing scope `name` for dur(w) units. */
static uint32_t sms = 4, first_sm = 0; /* run() puts warp w on SM first_sm + w % sms */

/* The kernel's body runs while the reader cannot take a pass (it may
 * between launches), so what a launch drops does not hang on timing. */
static void body_begin(CUfunction f, CUmodule m)
{
    tu_emu.grid = fake_cuda_next_grid();
    assert_int_equal(cuLaunchKernel(f, 50, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    kscope_device_buffer = (kscope_device_ctl *)(uintptr_t)symbol_of(m);
    pthread_mutex_lock(&kscope__ds_read_lock);
}

static void body_end(void)
{
    pthread_mutex_unlock(&kscope__ds_read_lock);
}

static void run(CUfunction f, CUmodule m, const char *name, int warps, uint64_t (*dur)(int))
{
    body_begin(f, m);
    for (int w = 0; w < warps; w++) {
        tu_emu.sm = first_sm + (uint32_t)w % sms;
        tu_emu.warpid = (uint32_t)w / sms;
        tu_emu.warp_index = tu_emu.cta_index = (uint32_t)w;
        tu_emu.cta_leader = 1;
        for (uint32_t lane = 0; lane < 32; lane++) {
            tu_emu.lane = lane;
            tu_emu.leader = 0;
            tu_emu.clock = 1000;
            kscope_device_t s =
                kscope_device_enter(kscope_device_hash(name, KSCOPE_DEVICE_HASH_SEED), name);
            tu_emu.clock = 1000 + dur(w);
            kscope_device_exit(s);
            tu_emu.cta_leader = 0;
        }
    }
    body_end();
}

static uint64_t by_warp(int w)
{
    return 100 * (uint64_t)(w + 1);
}

static const char *str(yajl_val v)
{
    return v && YAJL_IS_STRING(v) ? v->u.string : "";
}

static int start(const char *data, const char *dscopes)
{
    return tu_start_opts((kscope_session_opts){
        .name = "dscope", .data = data, .backend = "cupti", .device_scopes = dscopes});
}

static int teardown(void **state)
{
    (void)state;
    kscope_finalize(KSCOPE_ALL, NULL);
    kscope_device_buffer = NULL;
    sms = 4, first_sm = 0;
    cuCtxSetCurrent(primary);
    return 0;
}

/* ---------------------------------------------------------------- tests */

/* A module's first launch attaches it; its kernels' scopes become children
 * of the kernel's node with count, total, min, avg and max; a module
 * without the symbol is left alone; kscope's own copies are not shown. */
static void test_tree(void **state)
{
    (void)state;
    int s = start(NULL, "on"); /* modules load after: their names are learnt */
    const char *names[] = {"load", "math"};
    CUmodule m = load_module(1, names, 2), plain = load_module(0, NULL, 0);
    CUfunction f, g;
    assert_int_equal(cuModuleGetFunction(&f, m, "scoped_kernel"), CUDA_SUCCESS);
    assert_int_equal(cuModuleGetFunction(&g, plain, "plain_kernel"), CUDA_SUCCESS);
    assert_int_equal(symbol_of(m), 0);
    kscope_enter("step");
    run(f, m, "load", 4, by_warp); /* 100..400 */
    run(f, m, "math", 2, by_warp); /* 100, 200 */
    run(f, m, "load", 4, by_warp);
    assert_int_equal(cuLaunchKernel(g, 10, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    kscope_exit("step");
    assert_true(symbol_of(m) != 0);
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val k = tu_path(root, (const char *[]){"step", "scoped_kernel", NULL});
    assert_non_null(k);
    assert_int_equal(tu_metric_int(k, "count"), 3);
    yajl_val load = tu_child(k, "load"), math = tu_child(k, "math");
    assert_non_null(load);
    assert_non_null(math);
    assert_int_equal(tu_metric_int(load, "device_count"), 8);
    assert_int_equal(tu_metric_int(load, "device_time (ns)"), 2000);
    assert_int_equal(tu_metric_int(load, "device_min_time (ns)"), 100);
    assert_int_equal(tu_metric_int(load, "device_max_time (ns)"), 400);
    assert_true(tu_metric_num(load, "device_avg_time (ns)") == 250.0);
    assert_int_equal(tu_metric_int(math, "device_count"), 2);
    yajl_val p = tu_path(root, (const char *[]){"step", "plain_kernel", NULL});
    assert_non_null(p);
    assert_int_equal(tu_nchildren(p), 0);
    assert_null(tu_child(root, "Memcpy HtoD")); /* kscope's own copies */
    assert_null(tu_child(tu_child(root, "step"), "Memcpy HtoD"));
    assert_null(tu_metric(root, "device_scopes_lost")); /* shown once some are lost */
    assert_int_equal(kscope_device_scopes_lost(s), 0);
    /* the copies were made by kscope's reader, never in CUPTI's buffer callback */
    assert_int_equal(fake_cupti_count("calls_in_completed"), 0);
    yajl_tree_free(doc);
}

/* Records the reader copied free their slots: launches noted late (CUPTI
 * reports them at a flush) fill a keep-first buffer many times over and
 * lose nothing when the reader passes between them; with no pass, what a
 * share cannot hold is dropped and counted exactly, and later launches are
 * kept again once the reader passed. 1k records: 8 per SM. */
static void test_slots_freed(void **state)
{
    (void)state;
    int s = start(NULL, "buffer=1k");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "reuse_kernel", "r");
    sms = 132;
    for (int i = 0; i < 5; i++) {
        run(f, m, "r", 132 * 6, by_warp); /* 6 claims per SM */
        kscope__ds_flush(0);              /* a pass: no launch reported yet */
    }
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val r = tu_child(tu_child(root, "reuse_kernel"), "r");
    assert_int_equal(tu_metric_int(r, "device_count"), 5 * 132 * 6);
    assert_int_equal(kscope_device_scopes_lost(s), 0);
    assert_null(tu_metric(root, "device_scopes_lost"));
    yajl_tree_free(doc);
    /* 12 claims per SM at once: 4 per SM dropped; then 6 per SM fit again */
    run(f, m, "r", 132 * 12, by_warp);
    kscope__ds_flush(0);
    run(f, m, "r", 132 * 6, by_warp);
    root = tu_session_tree(s, &doc);
    r = tu_child(tu_child(root, "reuse_kernel"), "r");
    assert_int_equal(tu_metric_int(r, "device_count"), 5 * 132 * 6 + 132 * 8 + 132 * 6);
    assert_int_equal(kscope_device_scopes_lost(s), 132 * 4);
    assert_true(tu_metric_num(root, "device_scopes_lost") == 132 * 4);
    yajl_tree_free(doc);
}

/* Drops of many laps (a share's claims far past its limit while the
 * reader cannot pass: kernels of microseconds) are each told from a
 * record still being written, so the read position moves past them and
 * the next launches are kept. 1k records: 8 per SM. */
static void test_slots_freed_after_laps_dropped(void **state)
{
    (void)state;
    int s = start(NULL, "buffer=1k");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "laps_kernel", "r");
    sms = 132;
    run(f, m, "r", 132 * 40, by_warp); /* 40 claims per SM: 32 dropped, 4 laps */
    kscope__ds_flush(0);
    for (int i = 0; i < 3; i++) {
        run(f, m, "r", 132 * 6, by_warp);
        kscope__ds_flush(0);
    }
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val r = tu_child(tu_child(root, "laps_kernel"), "r");
    assert_int_equal(tu_metric_int(r, "device_count"), 132 * 8 + 3 * 132 * 6);
    assert_int_equal(kscope_device_scopes_lost(s), 132 * 32);
    yajl_tree_free(doc);
}

/* A reader that backed off while no kernel wrote (it naps up to 32 ms) is
 * woken by the next launch, before that kernel's records can fill the
 * buffer: kernels of microseconds fill 1M records in a few ms. */
static void test_launch_wakes_reader(void **state)
{
    (void)state;
    start(NULL, "buffer=1k");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "wake_kernel", "r");
    run(f, m, "r", 8, by_warp);
    kscope__ds_flush(0);
    int napped = 0; /* nothing written since: the reader backs off */
    for (int i = 0; i < 2000 && !napped; i++) {
        napped = kscope__ds_reader_napping();
        if (!napped)
            usleep(1000);
    }
    assert_true(napped);
    assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    assert_false(kscope__ds_reader_napping()); /* the launch itself woke it */
}

/* One warp's scopes at given times: entered at enter[i], left at leave[i],
 * in the order `events` lists ('e' + index or 'x' + index). */
typedef struct warp_plan {
    const char *names[4];
    uint64_t enter[4], leave[4];
    const char *events; /* "e0e1x1x0": enter 0, enter 1, leave 1, leave 0 */
} warp_plan;

static void run_plan(CUfunction f, CUmodule m, const warp_plan *p, int warps)
{
    body_begin(f, m);
    for (int w = 0; w < warps; w++) {
        tu_emu.sm = (uint32_t)w % 4;
        tu_emu.warpid = (uint32_t)w / 4;
        tu_emu.warp_index = tu_emu.cta_index = (uint32_t)w;
        tu_emu.lane = tu_emu.leader = 0;
        kscope_device_t open[4];
        for (const char *e = p->events; *e; e += 2) {
            int i = e[1] - '0';
            uint64_t base = 1000 * (uint64_t)(w + 1);
            if (e[0] == 'e') {
                tu_emu.clock = base + p->enter[i];
                open[i] = kscope_device_enter(
                    kscope_device_hash(p->names[i], KSCOPE_DEVICE_HASH_SEED), p->names[i]);
            } else {
                tu_emu.clock = base + p->leave[i];
                kscope_device_exit(open[i]);
            }
        }
    }
    body_end();
}

/* Scopes nested in the kernel's code nest in the tree: inner under outer,
 * and two in a row (the second entered at the tick the first left) under
 * the one holding them; two that only overlap stay siblings. */
static void test_nesting(void **state)
{
    (void)state;
    int s = start(NULL, "on");
    const char *names[] = {"outer", "inner", "a", "b"};
    CUmodule m;
    CUfunction f = kernel_in(&m, "nest_kernel", names, 4);
    /* outer { inner { } } , twice on every warp */
    warp_plan nest = {{"outer", "inner"}, {10, 20}, {100, 50}, "e0e1x1x0"};
    run_plan(f, m, &nest, 8);
    run_plan(f, m, &nest, 8);
    /* outer { a { } b { } } with b starting at the tick a ended */
    warp_plan seq = {{"outer", "a", "b"}, {10, 20, 40}, {100, 40, 60}, "e0e1x1e2x2x0"};
    run_plan(f, m, &seq, 4);
    /* a and b overlapping: a left before b */
    warp_plan overlap = {{"a", "b"}, {10, 20}, {30, 40}, "e0e1x0x1"};
    run_plan(f, m, &overlap, 4);
    /* a coarse timer: inner begins at outer's tick; b begins at the tick
     * a began and ended */
    warp_plan ticks = {
        {"outer", "inner", "a", "b"}, {10, 10, 20, 20}, {90, 30, 20, 50}, "e0e1x1e2x2e3x3x0"};
    run_plan(f, m, &ticks, 4);
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val k = tu_child(root, "nest_kernel");
    yajl_val outer = tu_child(k, "outer");
    assert_int_equal(tu_metric_int(outer, "device_count"), 24);
    yajl_val inner = tu_child(outer, "inner");
    assert_non_null(inner);
    assert_int_equal(tu_metric_int(inner, "device_count"), 20);
    assert_int_equal(tu_metric_int(inner, "device_time (ns)"), 16 * 30 + 4 * 20);
    assert_null(tu_child(k, "inner"));
    assert_int_equal(tu_metric_int(tu_child(outer, "a"), "device_count"), 8);
    assert_int_equal(tu_metric_int(tu_child(outer, "b"), "device_count"), 8);
    assert_null(tu_child(tu_child(outer, "b"), "a"));
    assert_int_equal(tu_metric_int(tu_child(k, "a"), "device_count"), 4);
    assert_int_equal(tu_metric_int(tu_child(k, "b"), "device_count"), 4);
    assert_null(tu_child(tu_child(k, "a"), "b"));
    assert_int_equal(tu_nchildren(k), 3);
    yajl_tree_free(doc);
    assert_int_equal(kscope_device_scopes_lost(s), 0);
}

/* A name the module's bytes never marked keeps its id. */
static void test_unknown_name(void **state)
{
    (void)state;
    CUmodule m = load_module(1, NULL, 0);
    CUfunction f;
    assert_int_equal(cuModuleGetFunction(&f, m, "anon_kernel"), CUDA_SUCCESS);
    int s = start(NULL, NULL);
    kscope_finalize(s, NULL); /* device scopes off: nothing attached */
    assert_int_equal(symbol_of(m), 0);
    s = start(NULL, "on");
    run(f, m, "never-marked", 1, by_warp);
    char want[32];
    snprintf(want, sizeof want, "scope_%08x",
             kscope_device_hash("never-marked", KSCOPE_DEVICE_HASH_SEED));
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_non_null(tu_child(tu_child(root, "anon_kernel"), want));
    yajl_tree_free(doc);
}

/* Keep-first: each SM's share keeps its first records, the rest are
 * counted exactly. 1k records over the pretend GPU's 132 SMs: 8 per SM. */
static void test_keep_first(void **state)
{
    (void)state;
    int s = start(NULL, "buffer=1k");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "kf_kernel", "x");
    sms = 132;
    run(f, m, "x", 1500, by_warp); /* warp w is SM w % 132's claim w / 132 */
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val x = tu_child(tu_child(root, "kf_kernel"), "x");
    assert_int_equal(tu_metric_int(x, "device_count"), 1056);
    assert_int_equal(tu_metric_int(x, "device_max_time (ns)"), 105600); /* warps 0..1055 */
    assert_true(tu_metric_num(root, "device_scopes_lost") == 444);
    assert_int_equal(kscope_device_scopes_lost(s), 444);
    yajl_tree_free(doc);
}

/* Keep-newest: each share keeps its newest records, the overwritten ones
 * are lost. */
static void test_keep_newest(void **state)
{
    (void)state;
    int s = start(NULL, "buffer=1k,full=keep-newest");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "kn_kernel", "y");
    sms = 132;
    run(f, m, "y", 1500, by_warp);
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val y = tu_child(tu_child(root, "kn_kernel"), "y");
    assert_int_equal(tu_metric_int(y, "device_count"), 1056);
    /* SM 48 made 11 claims (warps 48, 180, ..., 1368): the newest 8 start at warp 444 */
    assert_int_equal(tu_metric_int(y, "device_min_time (ns)"), 44500);
    assert_int_equal(tu_metric_int(y, "device_max_time (ns)"), 150000);
    assert_int_equal(kscope_device_scopes_lost(s), 444);
    /* later launches still read: the shares go round */
    run(f, m, "y", 10, by_warp);
    yajl_tree_free(doc);
    root = tu_session_tree(s, &doc);
    y = tu_child(tu_child(root, "kn_kernel"), "y");
    assert_int_equal(tu_metric_int(y, "device_count"), 1066);
    assert_int_equal(kscope_device_scopes_lost(s), 444);
    yajl_tree_free(doc);
}

/* SMs that claimed at different paces: the rows to copy come in runs far
 * apart (SM 0's first slots, SM 1's 31st on), each copied. */
static void test_uneven_sms(void **state)
{
    (void)state;
    int s = start(NULL, "on");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "uneven_kernel", "u");
    sms = 1, first_sm = 1;
    run(f, m, "u", 30, by_warp); /* SM 1: claims 0..29 */
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_int_equal(tu_metric_int(tu_child(tu_child(root, "uneven_kernel"), "u"), "device_count"),
                     30);
    yajl_tree_free(doc);
    sms = 2, first_sm = 0;
    run(f, m, "u", 4, by_warp); /* SM 0: claims 0, 1; SM 1: 30, 31 */
    root = tu_session_tree(s, &doc);
    yajl_val u = tu_child(tu_child(root, "uneven_kernel"), "u");
    assert_int_equal(tu_metric_int(u, "device_count"), 34);
    assert_int_equal(kscope_device_scopes_lost(s), 0);
    yajl_tree_free(doc);
}

/* An SM whose id is past the device's SM count shares an SM's share;
 * its records keep their own SM. */
static void test_high_smid(void **state)
{
    (void)state;
    int s = start("trace", "on");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "high_kernel", "h");
    sms = 300;
    run(f, m, "h", 250, by_warp); /* SMs 0..249 over 132 shares */
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(s, "chrome_trace", &buf, &len), 0);
    assert_non_null(strstr(buf, "\"SM 249 warp 0\""));
    int n = 0;
    for (const char *p = buf; (p = strstr(p, "\"device_scope\"")) != NULL; p++)
        n++;
    assert_int_equal(n, 250);
    assert_int_equal(kscope_device_scopes_lost(s), 0);
    kscope_free(buf);
}

/* sample=N: every Nth warp (or CTA); granularity=cta: one thread per CTA;
 * clock64: cycles. */
static void test_sampling(void **state)
{
    (void)state;
    int s = start(NULL, "sample=4");
    const char *names[] = {"w", "c"};
    CUmodule m;
    CUfunction f = kernel_in(&m, "samp_kernel", names, 2);
    run(f, m, "w", 16, by_warp);
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val w = tu_child(tu_child(root, "samp_kernel"), "w");
    assert_int_equal(tu_metric_int(w, "device_count"), 4);
    assert_int_equal(tu_metric_int(w, "device_time (ns)"), 100 + 500 + 900 + 1300);
    yajl_tree_free(doc);
    kscope_finalize(s, NULL);
    /* one thread per CTA (each warp here is a CTA), every 2nd CTA, cycles */
    s = start(NULL, "granularity=cta,sample=2,clock=clock64");
    run(f, m, "c", 16, by_warp);
    root = tu_session_tree(s, &doc);
    yajl_val c = tu_child(tu_child(root, "samp_kernel"), "c");
    assert_int_equal(tu_metric_int(c, "device_count"), 8);
    assert_int_equal(tu_metric_int(c, "device_cycles"),
                     2 * (100 + 300 + 500 + 700 + 900 + 1100 + 1300 + 1500));
    assert_int_equal(tu_metric_int(c, "device_max_cycles"), 3000);
    assert_null(tu_metric(c, "device_time (ns)"));
    yajl_tree_free(doc);
}

/* The trace: each record a slice on its SM's warp-slot track, inside its
 * kernel's slice. */
static void test_trace(void **state)
{
    (void)state;
    int s = start("trace", "on");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "trace_kernel", "t");
    run(f, m, "t", 8, by_warp);
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(s, "chrome_trace", &buf, &len), 0);
    assert_non_null(strstr(buf, "\"SM 3 warp 1\""));
    assert_non_null(strstr(buf, "\"device_scope\""));
    yajl_val doc = tu_parse(buf);
    yajl_val ev = tu_get(doc, "traceEvents");
    double k0 = -1, k1 = -1;
    int n = 0;
    for (size_t i = 0; i < ev->u.array.len; i++) {
        yajl_val e = ev->u.array.values[i];
        if (strcmp(str(tu_get(e, "name")), "trace_kernel") != 0)
            continue;
        k0 = YAJL_GET_DOUBLE(tu_get(e, "ts"));
        k1 = k0 + YAJL_GET_DOUBLE(tu_get(e, "dur"));
    }
    for (size_t i = 0; i < ev->u.array.len; i++) {
        yajl_val e = ev->u.array.values[i];
        if (strcmp(str(tu_get(e, "cat")), "device_scope") != 0)
            continue;
        double ts = YAJL_GET_DOUBLE(tu_get(e, "ts")), dur = YAJL_GET_DOUBLE(tu_get(e, "dur"));
        assert_true(ts >= k0 && ts + dur <= k1 + 0.001);
        n++;
    }
    assert_int_equal(n, 8);
    yajl_tree_free(doc);
    kscope_free(buf);
}

/* A module first launched while a stream captures waits for the capture's
 * end: no allocation, no copy during it. */
static void test_capture_waits(void **state)
{
    (void)state;
    int s = start(NULL, "on");
    CUmodule m;
    CUfunction f = one_scope_kernel(&m, "cap_kernel", "cap");
    CUstream st = (CUstream)(uintptr_t)3;
    assert_int_equal(cuStreamBeginCapture_v2(st, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL), CUDA_SUCCESS);
    assert_int_equal(symbol_of(m), 0);
    CUgraph g;
    assert_int_equal(cuStreamEndCapture(st, &g), CUDA_SUCCESS);
    assert_true(symbol_of(m) != 0);
    kscope_finalize(s, NULL);
}

/* Bad options: one line naming the problem; a good one starts. */
static void test_options(void **state)
{
    (void)state;
    static const char *bad[][2] = {
        {"clock=wall", "clock is globaltimer or clock64"},
        {"granularity=block", "granularity is warp or cta"},
        {"sample=0", "sample is a whole number"},
        {"sample=x", "sample is a whole number"},
        {"buffer=10", "buffer is a number of records from 1k"},
        {"buffer=1G", "buffer is a number of records"},
        {"full=drop", "full is keep-first or keep-newest"},
        {"speed=1", "unknown option"},
        {"clock", "expected key=value"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kscope_session_opts o = {.name = "dscope", .device_scopes = bad[i][0]};
        assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
        assert_non_null(strstr(kscope_last_error(), bad[i][1]));
        assert_non_null(strstr(kscope_last_error(), bad[i][0]));
        assert_null(strchr(kscope_last_error(), '\n'));
    }
    kscope_session_opts o = {
        .name = "dscope", .device_scopes = "on", .sample = "step:on=1,every=2"};
    assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "device scopes and the sampled mode"));
    kscope__devscope_opts d;
    assert_int_equal(kscope__devscope_parse(
                         "clock=clock64,granularity=cta,sample=3,buffer=3k,full=keep-newest", &d),
                     0);
    assert_int_equal(d.flags, KSCOPE_DEVICE_CLOCK64 | KSCOPE_DEVICE_CTA | KSCOPE_DEVICE_RING);
    assert_int_equal(d.every, 3);
    assert_int_equal(d.records, 4096);
    assert_int_equal(kscope__devscope_parse(NULL, &d), 0);
    assert_int_equal(d.records, KSCOPE__DEVSCOPE_RECORDS);
    assert_int_equal(d.every, 1);
}

/* The reader on hand-made records: half-written ones wait, records of a
 * launch not yet reported wait on the host (their slots are free),
 * overwritten claims are counted once. */
static void test_reader(void **state)
{
    (void)state;
    static kscope_device_record recs[8];
    memset(recs, 0, sizeof recs);
    kscope__dsbuf b;
    assert_int_equal(kscope__dsbuf_init(&b, recs, NULL, 8, 1, KSCOPE_DEVICE_RING, 5), 0);
    kscope__dsgrids g = {0};
    /* claim 0 whole (grid 1), claim 1 half-written (grid 1), claim 2 grid 2 */
    recs[0] = (kscope_device_record){1, 1, 10, 1, 77, 5, 0, 0};
    recs[1] = (kscope_device_record){2, 1, 10, 0, 0, 0, 0, 0};
    recs[2] = (kscope_device_record){3, 2, 10, 3, 77, 6, 0, 0};
    assert_int_equal(kscope__dsgrids_expect(&g, 5, 1), 0);
    kscope__dsbuf_claims(&b, 3, 0); /* the share's counter */
    uint64_t from, unread;
    kscope__dsbuf_unread(&b, &from, &unread);
    assert_int_equal(from, 0);
    assert_int_equal(unread, 3);
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 0);
    size_t n;
    const kscope__devscope_rec *r = kscope__dsgrids_take(&g, 5, 1, &n);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].dur, 5);
    assert_int_equal(b.w, 1);       /* claim 1 is not whole yet */
    assert_int_equal(g.waiting, 1); /* claim 2, its launch not reported */
    assert_null(kscope__dsgrids_take(&g, 5, 2, &n));
    recs[1] = (kscope_device_record){2, 1, 10, 2, 77, 7, 0, 0};
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 0);
    r = kscope__dsgrids_take(&g, 5, 1, &n);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].dur, 7);
    assert_int_equal(b.w, 3); /* claim 2 waits on the host: its slot is free */
    assert_int_equal(kscope__dsgrids_end_pass(&g, 0), 0);
    assert_int_equal(g.waiting, 1);
    /* claims 3..12 written, wrapping over 3 and 4 */
    for (uint32_t i = 3; i < 13; i++)
        recs[i % 8] = (kscope_device_record){i + 1, 3, 10, i + 1, 77, i, 0, 0};
    kscope__dsbuf_claims(&b, 13, 0);
    kscope__dsbuf_unread(&b, &from, &unread);
    assert_int_equal(from, 3);
    assert_int_equal(unread, 8); /* one lap */
    assert_int_equal(kscope__dsgrids_expect(&g, 5, 3), 0);
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 2); /* claims 3, 4 overwritten */
    /* a reported launch not handed over in this pass waits for the next */
    assert_int_equal(kscope__dsgrids_end_pass(&g, 0), 0);
    r = kscope__dsgrids_take(&g, 5, 3, &n);
    assert_int_equal(n, 8); /* claims 5..12, over two laps */
    assert_int_equal(r[7].dur, 12);
    assert_int_equal(b.w, 13);
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 0);
    /* grid 2 was never reported: lost at a flush once a later grid was */
    assert_int_equal(kscope__dsgrids_end_pass(&g, 1), 1);
    assert_int_equal(g.waiting, 0);
    kscope__dsgrids_free(&g);
    kscope__dsbuf_free(&b);
}

/* Keep-first on hand-made records: a claim not written is dropped or
 * still being written, which the slots' drop counts tell apart, also when
 * a later claim of the same slot was dropped meanwhile. */
static void test_reader_drops(void **state)
{
    (void)state;
    static kscope_device_record recs[4];
    static uint32_t drops[4];
    memset(recs, 0, sizeof recs);
    memset(drops, 0, sizeof drops);
    kscope__dsbuf b;
    assert_int_equal(kscope__dsbuf_init(&b, recs, drops, 4, 1, 0, 5), 0);
    kscope__dsgrids g = {0};
    assert_int_equal(kscope__dsbuf_limit(&b), 4);
    /* claims 0, 1, 3 written; 2 being written; 4..7 past the limit: dropped */
    for (uint32_t i = 0; i < 4; i++)
        if (i != 2)
            recs[i] = (kscope_device_record){i + 1, 1, 10, i + 1, 77, i, 0, 0};
    for (uint32_t i = 4; i < 8; i++)
        drops[i % 4]++;
    kscope__dsbuf_claims(&b, 8, 4);
    assert_true(kscope__dsbuf_wants_drops(&b));
    kscope__dsbuf_recount(&b, 8);
    assert_int_equal(kscope__dsgrids_expect(&g, 5, 1), 0);
    /* slot 2 counts one drop (claim 6's): claim 2 may still be written */
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 0);
    assert_int_equal(b.w, 2);
    assert_int_equal(kscope__dsbuf_limit(&b), 6);
    size_t n;
    assert_non_null(kscope__dsgrids_take(&g, 5, 1, &n));
    assert_int_equal(n, 3);
    /* it is; claim 8 (slot 0) is made, its drop not counted yet: slot 0's
     * one drop may be claim 8's, so claim 4 waits */
    recs[2] = (kscope_device_record){3, 1, 10, 3, 77, 2, 0, 0};
    kscope__dsbuf_claims(&b, 9, 4);
    kscope__dsbuf_recount(&b, 9);
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 0);
    assert_int_equal(b.w, 4);
    /* claim 8's drop lands: claims 4..8 are dropped, each counted once */
    drops[0]++;
    kscope__dsbuf_claims(&b, 9, 5);
    assert_true(kscope__dsbuf_wants_drops(&b));
    kscope__dsbuf_recount(&b, 9);
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 5);
    assert_int_equal(b.w, 9);
    assert_int_equal(b.acked, 5);
    assert_false(kscope__dsbuf_wants_drops(&b));
    assert_int_equal(kscope__dsbuf_limit(&b), 13);
    /* a claim never written nor dropped is lost only when every launch
     * finished */
    kscope__dsbuf_claims(&b, 10, 5);
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 0), 0);
    assert_int_equal(b.w, 9);
    assert_int_equal(kscope__dsbuf_scan(&b, &g, 1), 1);
    assert_int_equal(b.w, 10);
    assert_int_equal(kscope__dsgrids_end_pass(&g, 2), 1); /* claim 2's record, never taken */
    kscope__dsgrids_free(&g);
    kscope__dsbuf_free(&b);
}

int main(void)
{
    setenv("FAKE_CUDA_DEVICES", "1", 1);
    setenv("KSCOPE_CUPTI_LIBRARY", FAKE_GPU_CUPTI, 1);
    setenv("KSCOPE_GPU_DEVICE_GLOB", FAKE_GPU_DRIVER, 1);
    setenv("KSCOPE_QUIET", "1", 1);
    tu_emu.clock64_scale = 2;
    CUdevice d;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&primary, d) != CUDA_SUCCESS)
        return 1;
    cuCtxSetCurrent(primary);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_reader),
        cmocka_unit_test(test_reader_drops),
        cmocka_unit_test_teardown(test_tree, teardown),
        cmocka_unit_test_teardown(test_unknown_name, teardown),
        cmocka_unit_test_teardown(test_keep_first, teardown),
        cmocka_unit_test_teardown(test_slots_freed, teardown),
        cmocka_unit_test_teardown(test_launch_wakes_reader, teardown),
        cmocka_unit_test_teardown(test_slots_freed_after_laps_dropped, teardown),
        cmocka_unit_test_teardown(test_nesting, teardown),
        cmocka_unit_test_teardown(test_keep_newest, teardown),
        cmocka_unit_test_teardown(test_high_smid, teardown),
        cmocka_unit_test_teardown(test_uneven_sms, teardown),
        cmocka_unit_test_teardown(test_sampling, teardown),
        cmocka_unit_test_teardown(test_trace, teardown),
        cmocka_unit_test_teardown(test_capture_waits, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
