/*
 * test-gpu-graphs.c - the CUPTI backend and CUDA graphs, on a pretend GPU:
 * test/progs/fake-cupti.c built whole stands in for CUPTI and the driver
 * (linked as libcuda.so.1, so the backend's dlopen finds it; named by
 * KSCOPE_CUPTI_LIBRARY for CUPTI), and the tests drive it as a program
 * would: streams that capture, launches, graphs instantiated, launched and
 * destroyed.
 *
 * What must hold: nothing kscope does while a capture is open
 * synchronises, flushes CUPTI or allocates pinned memory (sessions
 * deactivated, activated, read, finalized, periodic parts); a graph
 * captured while profiling puts its work under the launch's context at
 * <captured_at>/<capture context>, for the sessions active at capture and
 * at launch, with the launch metadata given at capture; metrics recorded
 * during the capture come back with each launch, host values and values a
 * launch leaves in device memory alike; kscope's own work and copies are
 * never shown; a graph built before profiling is said once on stderr.
 */
#define _GNU_SOURCE
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

#include "gpu/cupti/cupti-internal.h"
#include "kscope-internal.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"
#include "support/capture.h"

/* The pretend GPU's controls (fake-cupti.c). */
CUstream fake_stream(int i);
int fake_count(const char *what);
void fake_begin_capture(CUstream s);
CUgraph fake_end_capture(CUstream s);
void fake_launch(CUstream s, const char *kernel);
CUgraphExec fake_instantiate(CUgraph g);
void fake_graph_launch(CUgraphExec e, CUstream s);
void fake_exec_destroy(CUgraphExec e);
void fake_graph_destroy(CUgraph g);

static int start(const char *name, const char *mode)
{
    return tu_start_opts((kscope_session_opts){.name = name, .backend = "cupti", .mode = mode});
}

/* Is a node named `name` anywhere under n? */
static int has_node(yajl_val n, const char *name)
{
    const char *own = tu_frame_name(n);
    if (own && strcmp(own, name) == 0)
        return 1;
    yajl_val kids = tu_get(n, "children");
    for (size_t i = 0; YAJL_IS_ARRAY(kids) && i < kids->u.array.len; i++)
        if (has_node(kids->u.array.values[i], name))
            return 1;
    return 0;
}

static double metric_double(yajl_val n, const char *key)
{
    yajl_val v = tu_metric(n, key);
    return YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : -1;
}

static void assert_nothing_done_in_capture(void)
{
    assert_int_equal(fake_count("sync_in_capture"), 0);
    assert_int_equal(fake_count("flush_in_capture"), 0);
    assert_int_equal(fake_count("alloc_in_capture"), 0);
}

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* ---------------------------------------------------------------- tests */

/* Proton's test_cudagraph_not_captured_by_profiler, on the pretend GPU. */
static void replay_twice(void *exec)
{
    kscope_enter("replay0");
    fake_graph_launch(exec, fake_stream(0));
    kscope_exit("replay0");
    kscope_enter("replay1");
    fake_graph_launch(exec, fake_stream(0));
    kscope_exit("replay1");
}

static void test_graph_built_before_profiling(void **state)
{
    (void)state;
    CUstream s = fake_stream(0);
    fake_begin_capture(s);
    fake_launch(s, "ones");
    fake_launch(s, "add");
    CUgraph g = fake_end_capture(s);
    CUgraphExec e = fake_instantiate(g);
    int sid = start("/tmp/kscope-test-graphs-before", NULL);
    const char *err = tu_capture_stderr_arg(replay_twice, e);
    assert_int_equal(count_of(err, "Cannot find graph for graphExecId:"), 1);
    assert_non_null(strstr(err, "start profiling before the graph is created"));
    kscope_deactivate(sid, 0);
    yajl_val doc, root = tu_session_tree(sid, &doc);
    for (int i = 0; i < 2; i++) {
        yajl_val r = tu_child(root, i ? "replay1" : "replay0");
        assert_non_null(r);
        assert_int_equal(tu_nchildren(r), 2); /* the kernels, no <captured_at> */
        assert_int_equal(tu_metric_int(tu_child(r, "ones"), "count"), 1);
    }
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    fake_exec_destroy(e);
    fake_graph_destroy(g);
}

/* Proton's test_cudagraph_deactivate: deactivate/activate inside the
 * captured region, scopes around each launch, one replay. */
static void capture_iterations(CUstream s, int sid, int iters)
{
    for (int i = 0; i < iters; i++) {
        char name[16];
        snprintf(name, sizeof name, "iter_%d", i);
        kscope_enter(name);
        kscope_enter("scope_a");
        fake_launch(s, "ones_a");
        kscope_exit("scope_a");
        assert_int_equal(kscope_deactivate(sid, 0), 0);
        kscope_enter("scope_b");
        fake_launch(s, "ones_b");
        kscope_exit("scope_b");
        assert_int_equal(kscope_activate(sid), 0);
        kscope_enter("scope_c");
        fake_launch(s, "add");
        kscope_exit("scope_c");
        fake_launch(s, "foo");
        kscope_exit(name);
    }
}

static void test_deactivate_during_capture(void **state)
{
    (void)state;
    int sid = start("/tmp/kscope-test-graphs-deactivate", NULL);
    CUstream s = fake_stream(1);
    fake_launch(s, "warmup"); /* work before the capture: flushed later */
    fake_begin_capture(s);
    capture_iterations(s, sid, 3);
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(sid, "hatchet", &buf, &len), 0); /* read during the capture */
    kscope_free(buf);
    CUgraph g = fake_end_capture(s);
    assert_nothing_done_in_capture();
    CUgraphExec e = fake_instantiate(g);
    kscope_enter("test0");
    fake_graph_launch(e, s);
    kscope_exit("test0");

    yajl_val doc, root = tu_session_tree(sid, &doc);
    assert_non_null(tu_child(root, "warmup"));
    yajl_val at = TU_PATH(root, "test0", KSCOPE__CAPTURED_AT);
    assert_non_null(at);
    assert_int_equal(tu_nchildren(tu_child(root, "test0")), 1);
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "iter_%d", i);
        yajl_val it = tu_child(at, name);
        assert_non_null(it);
        assert_int_equal(tu_metric_int(TU_PATH(it, "scope_a", "ones_a"), "count"), 1);
        assert_null(tu_child(it, "scope_b")); /* captured while deactivated */
        assert_int_equal(tu_metric_int(TU_PATH(it, "scope_c", "add"), "count"), 1);
        assert_int_equal(tu_metric_int(tu_child(it, "foo"), "count"), 1);
        /* a captured scope has no host figures of its own */
        assert_int_equal(tu_metric_int(it, "calls"), -1);
    }
    /* nothing ran at capture time: no kernel where the capture was */
    assert_false(has_node(tu_child(root, "iter_0"), "ones_a"));
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    fake_exec_destroy(e);
    fake_graph_destroy(g);
}

/* Two sessions (Proton's test_multiple_sessions_cudagraph_metric_kernels):
 * each sees the graphs captured while it was active and launched while it
 * was, and a session finalized during a capture ends without a sync. */
static void test_sessions_during_capture(void **state)
{
    (void)state;
    int s0 = start("/tmp/kscope-test-graphs-s0", NULL);
    int s1 = start("/tmp/kscope-test-graphs-s1", NULL);
    int s2 = start("/tmp/kscope-test-graphs-s2", NULL);
    CUstream s = fake_stream(2);
    kscope_deactivate(s1, 0);
    fake_begin_capture(s);
    fake_launch(s, "foo");
    assert_int_equal(kscope_finalize(s2, NULL), 0); /* ends during the capture */
    CUgraph gfoo = fake_end_capture(s);
    CUgraphExec efoo = fake_instantiate(gfoo);
    kscope_enter("session0_replay");
    fake_graph_launch(efoo, s);
    kscope_exit("session0_replay");
    kscope_deactivate(s0, 0);
    kscope_activate(s1);
    fake_begin_capture(s);
    fake_launch(s, "bar");
    fake_launch(s, "bar");
    CUgraph gbar = fake_end_capture(s);
    CUgraphExec ebar = fake_instantiate(gbar);
    kscope_enter("session1_replay");
    fake_graph_launch(ebar, s);
    kscope_exit("session1_replay");
    assert_nothing_done_in_capture();

    yajl_val doc0, root0 = tu_session_tree(s0, &doc0);
    yajl_val doc1, root1 = tu_session_tree(s1, &doc1);
    yajl_val foo0 = TU_PATH(root0, "session0_replay", KSCOPE__CAPTURED_AT, "foo");
    assert_int_equal(tu_metric_int(foo0, "count"), 1);
    assert_false(has_node(root0, "bar"));
    assert_false(has_node(root1, "foo"));
    yajl_val bar1 = TU_PATH(root1, "session1_replay", KSCOPE__CAPTURED_AT, "bar");
    assert_int_equal(tu_metric_int(bar1, "count"), 2);
    yajl_tree_free(doc0);
    yajl_tree_free(doc1);
    assert_int_equal(kscope_finalize(KSCOPE_ALL, NULL), 0);
    fake_exec_destroy(efoo);
    fake_exec_destroy(ebar);
    fake_graph_destroy(gfoo);
    fake_graph_destroy(gbar);
}

/* A periodic part asked for during a capture is written once it closed. */
static void test_periodic_part_waits_for_the_capture(void **state)
{
    (void)state;
    const char *part = "/tmp/kscope-test-graphs-periodic.part_0.hatchet";
    unlink(part);
    int sid = start("/tmp/kscope-test-graphs-periodic", "periodic_flushing");
    CUstream s = fake_stream(3);
    fake_launch(s, "before");
    fake_begin_capture(s);
    assert_int_equal(kscope_deactivate(sid, 1), 0);
    assert_int_not_equal(access(part, F_OK), 0);
    kscope_activate(sid);
    CUgraph g = fake_end_capture(s);
    assert_nothing_done_in_capture();
    assert_int_equal(kscope_activate(sid), 0); /* the first call after: writes it */
    yajl_val doc = tu_parse_file(part);
    assert_non_null(doc);
    assert_int_equal(tu_metric_int(tu_child(doc->u.array.values[0], "before"), "count"), 1);
    yajl_tree_free(doc);
    unlink(part);
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    fake_graph_destroy(g);
}

/* Metrics recorded during a capture, host and device values, kscope's own
 * hidden work, launch metadata: Proton's test_tensor_metrics_cudagraph. */
static void capture_metrics(CUstream s, double *dev, int64_t *token)
{
    fake_begin_capture(s);
    for (int i = 0; i < 10; i++) {
        kscope_enter("scope_a");
        assert_int_equal(kscope_metric_int("bytes", 16), 0);
        fake_launch(s, "ones");
        kscope_exit("scope_a");
        kscope_enter("scope_b");
        kscope__capture_hide(1); /* the copy of the value: kscope's own */
        fake_launch(s, "copy_value");
        kscope__capture_hide(0);
        kscope__graph_value v = {.def = kscope__metric_lookup("sum"),
                                 .type = KSCOPE__T_DOUBLE,
                                 .n = 1,
                                 .device_ptr = (uint64_t)(uintptr_t)dev};
        *token = kscope__capture_value(&v);
        assert_true(*token > 1);
        kscope_exit("scope_b");
        kscope_launch_meta m = {.name = "foo_test", .bytes = 16};
        kscope_launch_metadata(&m);
        kscope__graph_value f = {.def = kscope__metric_lookup("flops"),
                                 .type = KSCOPE__T_DOUBLE,
                                 .n = 1,
                                 .device_ptr = (uint64_t)(uintptr_t)(dev + 1),
                                 .kernel = kscope__intern("foo_test")};
        assert_true(kscope__capture_value(&f) > 1);
        fake_launch(s, "foo");
    }
}

static void test_metrics_during_capture(void **state)
{
    (void)state;
    int sid = start("/tmp/kscope-test-graphs-metrics", NULL);
    CUstream s = fake_stream(0);
    double dev[2] = {0, 0}; /* what each launch leaves in device memory */
    int64_t token = 0;
    capture_metrics(s, dev, &token);
    CUgraph g = fake_end_capture(s);
    assert_nothing_done_in_capture();
    CUgraphExec e = fake_instantiate(g);
    dev[0] = 4, dev[1] = 4;
    kscope_enter("test0");
    fake_graph_launch(e, s);
    kscope_exit("test0");
    dev[0] = 1, dev[1] = 2;
    kscope_enter("test1");
    fake_graph_launch(e, s);
    fake_graph_launch(e, s);
    kscope_exit("test1");
    assert_true(fake_count("dtoh") >= 40);

    yajl_val doc, root = tu_session_tree(sid, &doc);
    yajl_val at0 = TU_PATH(root, "test0", KSCOPE__CAPTURED_AT);
    yajl_val at1 = TU_PATH(root, "test1", KSCOPE__CAPTURED_AT);
    assert_int_equal(tu_metric_int(tu_child(at0, "scope_a"), "bytes"), 160);
    assert_int_equal(tu_metric_int(tu_child(at1, "scope_a"), "bytes"), 320);
    assert_int_equal(tu_metric_int(tu_child(at0, "scope_a"), "count"), -1);
    assert_true(metric_double(tu_child(at0, "scope_b"), "sum") == 40.0);
    assert_true(metric_double(tu_child(at1, "scope_b"), "sum") == 20.0);
    yajl_val foo0 = tu_child(at0, "foo_test"), foo1 = tu_child(at1, "foo_test");
    assert_int_equal(tu_metric_int(foo0, "count"), 10);
    assert_int_equal(tu_metric_int(foo0, "bytes"), 160);
    assert_true(metric_double(foo0, "flops") == 40.0);
    assert_true(metric_double(foo1, "flops") == 40.0);
    assert_int_equal(tu_metric_int(foo1, "count"), 20);
    assert_false(has_node(root, "copy_value"));  /* kscope's own, hidden */
    assert_false(has_node(root, "Memcpy DtoH")); /* kscope's copies back */
    /* a metric of the capture is not one of the capture's time */
    assert_int_equal(tu_metric_int(tu_child(root, "scope_a"), "bytes"), -1);
    yajl_tree_free(doc);

    /* once the graph and its exec are gone, the device value is released */
    int64_t out[64];
    assert_int_equal(kscope__capture_released(out, 64), 0);
    fake_exec_destroy(e);
    fake_graph_destroy(g);
    size_t n = kscope__capture_released(out, 64);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found |= out[i] == token;
    assert_true(found);
    assert_int_equal(kscope_finalize(sid, NULL), 0);
}

/* Outside a capture nothing changes: the value is recorded at once. */
static void test_no_capture_no_change(void **state)
{
    (void)state;
    int sid = start("/tmp/kscope-test-graphs-plain", NULL);
    assert_int_equal(kscope__capturing(1), 0);
    kscope__graph_value v = {.def = kscope__metric_lookup("x"), .type = KSCOPE__T_INT, .n = 1};
    assert_int_equal(kscope__capture_value(&v), 0);
    kscope_enter("s");
    assert_int_equal(kscope_metric_int("bytes", 3), 0);
    kscope_exit("s");
    yajl_val doc, root = tu_session_tree(sid, &doc);
    assert_int_equal(tu_metric_int(tu_child(root, "s"), "bytes"), 3);
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    assert_true(fake_count("sync") > 0); /* flushes do synchronise outside captures */
}

/* The tables behind it (graph-table.c): ids to records through growth and
 * deletions; values held by several lists, released once, token reported. */
static void test_graph_tables(void **state)
{
    (void)state;
    kscope__u64map m = {0};
    assert_int_equal(kscope__u64map_put(&m, 0, &m), KSCOPE_EINVAL);
    for (uint64_t id = 1; id <= 5000; id++)
        assert_int_equal(kscope__u64map_put(&m, id * 7919, (void *)(uintptr_t)id), 0);
    for (uint64_t id = 1; id <= 5000; id += 2)
        assert_ptr_equal(kscope__u64map_del(&m, id * 7919), (void *)(uintptr_t)id);
    for (uint64_t id = 1; id <= 5000; id++)
        assert_ptr_equal(kscope__u64map_get(&m, id * 7919), id % 2 ? NULL : (void *)(uintptr_t)id);
    assert_int_equal(m.used, 2500);
    for (int round = 0; round < 20; round++) /* tombstones do not fill the table */
        for (uint64_t id = 1; id <= 500; id++) {
            assert_int_equal(kscope__u64map_put(&m, 1000000 + id, &m), 0);
            assert_ptr_equal(kscope__u64map_del(&m, 1000000 + id), &m);
        }
    assert_true(m.cap <= 16384);
    kscope__u64map_free(&m, NULL);

    kscope__released rel = {0};
    double x = 2;
    kscope__graph_value v = {.type = KSCOPE__T_DOUBLE, .n = 1, .vals = &x};
    kscope__gvalue *g = kscope__gvalue_new(&v, 42);
    x = 3; /* the value was copied */
    kscope__gvlist *a = calloc(1, sizeof *a);
    assert_int_equal(kscope__gvlist_add(a, g), 0);
    kscope__gvlist *b = kscope__gvlist_copy(a);
    assert_int_equal(g->refs, 2);
    assert_true(*(const double *)g->v.vals == 2);
    kscope__gvlist_free(a, &rel);
    int64_t out[4];
    assert_int_equal(kscope__released_take(&rel, out, 4), 0);
    kscope__gvlist_free(b, &rel);
    assert_int_equal(kscope__released_take(&rel, out, 4), 1);
    assert_int_equal(out[0], 42);
    kscope__released_free(&rel);
}

int main(void)
{
    setenv("KSCOPE_CUPTI_LIBRARY", FAKE_CUPTI_PATH, 1);
    setenv("KSCOPE_GPU_DEVICE_GLOB", FAKE_CUPTI_PATH, 1); /* its "GPU" */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_built_before_profiling), /* first: nothing subscribed yet */
        cmocka_unit_test(test_deactivate_during_capture),
        cmocka_unit_test(test_sessions_during_capture),
        cmocka_unit_test(test_periodic_part_waits_for_the_capture),
        cmocka_unit_test(test_metrics_during_capture),
        cmocka_unit_test(test_no_capture_no_change),
        cmocka_unit_test(test_graph_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
