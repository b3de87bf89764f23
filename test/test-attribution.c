/*
 * test-attribution.c - how GPU records land in sessions, without a GPU:
 * synthetic records go through the same entry point the CUPTI backend
 * uses (kscope__record_gpu) with the context the launching thread had.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/core.h"
#include "kscope-internal.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"

static kscope__gpu_record kernel(const char *name, uint64_t launch, uint64_t dur)
{
    kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = name};
    r.launch_ns = launch;
    r.launch_end_ns = launch + 2000;
    r.start_ns = launch + 5000;
    r.end_ns = r.start_ns + dur;
    r.launch_tid = 1234;
    r.stream = 7;
    r.correlation = 42;
    return r;
}

static void test_kernels_land_under_the_launching_scope(void **state)
{
    (void)state;
    int s = tu_start("t_attr", "tree");
    kscope_enter("train");
    kscope_enter("step");
    uint64_t ctx = kscope__current_ctx();
    uint64_t t0 = kscope_now_ns();
    kscope_exit("step");
    kscope_exit("train");
    for (int i = 0; i < 3; i++) {
        kscope__gpu_record r = kernel("add_kernel", t0 + (uint64_t)i, 1000 * (uint64_t)(i + 1));
        kscope__record_gpu(ctx, &r);
    }
    kscope__gpu_record orphan = kernel("orphan", t0, 10);
    kscope__record_gpu(0, &orphan);
    kscope__set_device_info(0, "90", 132, 1980000, 3201000, 6016);
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val k = TU_PATH(root, "train", "step", "add_kernel");
    assert_non_null(k);
    assert_int_equal(tu_metric_int(k, "count"), 3);
    assert_int_equal(tu_metric_int(k, "time (ns)"), 6000);
    assert_int_equal(tu_metric_int(k, "min_time (ns)"), 1000);
    assert_int_equal(tu_metric_int(k, "max_time (ns)"), 3000);
    assert_string_equal(tu_metric(k, "device_id")->u.string, "0");
    assert_string_equal(tu_metric(k, "device_type")->u.string, "CUDA");
    assert_string_equal(tu_metric(root, "time (ns)")->u.number.r, "0"); /* an integer metric */
    assert_true(tu_metric_num(root, "count") == 0.0);
    assert_non_null(TU_PATH(root, "orphan"));
    yajl_val dev = tu_get(tu_get(doc->u.array.values[1], "CUDA"), "0");
    assert_string_equal(tu_get(dev, "arch")->u.string, "90");
    assert_int_equal(YAJL_GET_INTEGER(tu_get(dev, "num_sms")), 132);
    assert_int_equal(YAJL_GET_INTEGER(tu_get(dev, "bus_width")), 6016);
    yajl_tree_free(doc);
}

static void test_state_is_the_frame_above_kernels(void **state)
{
    (void)state;
    int s = tu_start("t_attr_state", "tree");
    kscope_enter("step");
    kscope_state_enter("prefill");
    uint64_t ctx = kscope__current_ctx();
    kscope_state_exit();
    kscope_exit("step");
    kscope__gpu_record r = kernel("attn", kscope_now_ns(), 50);
    kscope__record_gpu(ctx, &r);
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "step", "prefill", "attn"), "count"), 1);
    assert_null(TU_PATH(root, "step", "attn"));
    yajl_tree_free(doc);
}

/* A thread with no scope of its own launches under the main thread's
 * current scope (autograd threads during backward()), and asking does not
 * give it a thread state. */
static void *context_of_fresh_thread(void *arg)
{
    *(uint64_t *)arg = kscope__current_ctx();
    return NULL;
}

/* A thread with its own scope keeps it. */
static void *context_in_own_scope(void *arg)
{
    kscope_enter("worker_scope");
    *(uint64_t *)arg = kscope__current_ctx();
    kscope_exit("worker_scope");
    return NULL;
}

static int thread_count(void)
{
    int n = 0;
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t; t = t->next)
        n++;
    kscope__threads_unlock();
    return n;
}

static uint64_t context_from_thread(void *(*fn)(void *))
{
    uint64_t ctx = 1;
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, fn, &ctx), 0);
    pthread_join(th, NULL);
    return ctx;
}

static void test_fresh_thread_launches_under_the_main_scope(void **state)
{
    (void)state;
    int s = tu_start("t_attr_fresh", "tree");
    uint64_t at_root = context_from_thread(context_of_fresh_thread);
    kscope_enter("backward");
    int before = thread_count();
    uint64_t inherited = context_from_thread(context_of_fresh_thread);
    assert_int_equal(thread_count(), before);
    uint64_t own = context_from_thread(context_in_own_scope);
    kscope_exit("backward");
    uint64_t after = context_from_thread(context_of_fresh_thread);
    kscope__gpu_record r = kernel("from_worker", kscope_now_ns(), 10);
    kscope__record_gpu(inherited, &r);
    kscope__gpu_record r0 = kernel("before_scope", kscope_now_ns(), 10);
    kscope__record_gpu(at_root, &r0);
    kscope__gpu_record r1 = kernel("after_scope", kscope_now_ns(), 10);
    kscope__record_gpu(after, &r1);
    kscope__gpu_record r2 = kernel("own", kscope_now_ns(), 10);
    kscope__record_gpu(own, &r2);
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "backward", "from_worker"), "count"), 1);
    assert_int_equal(tu_metric_int(TU_PATH(root, "before_scope"), "count"), 1);
    assert_int_equal(tu_metric_int(TU_PATH(root, "after_scope"), "count"), 1);
    assert_int_equal(tu_metric_int(TU_PATH(root, "worker_scope", "own"), "count"), 1);
    assert_null(TU_PATH(root, "backward", "worker_scope"));
    yajl_tree_free(doc);
}

static void test_paused_sessions_get_no_kernels(void **state)
{
    (void)state;
    int a = tu_start("t_attr_a", "tree");
    int b = tu_start("t_attr_b", "tree");
    kscope_deactivate(b, 0);
    kscope__gpu_record r = kernel("k", kscope_now_ns(), 10);
    kscope__record_gpu(0, &r);
    kscope_activate(b);
    yajl_val doc, root = tu_session_tree(a, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "k"), "count"), 1);
    yajl_tree_free(doc);
    root = tu_session_tree(b, &doc);
    assert_null(TU_PATH(root, "k"));
    yajl_tree_free(doc);
}

static void test_launch_metadata_names_and_metrics(void **state)
{
    (void)state;
    int s = tu_start("t_attr_meta", "tree");
    const char *names[] = {"tiles"};
    const double values[] = {8};
    kscope_launch_meta m = {.name = "matmul_fp16",
                            .flops16 = 2e9,
                            .bytes = 1e6,
                            .n_custom = 1,
                            .custom_names = names,
                            .custom_values = values};
    kscope__gpu_record r = kernel("_Z6kernelv", kscope_now_ns(), 1000);
    r.meta = &m;
    kscope__record_gpu(0, &r);
    kscope__record_gpu(0, &r);
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val k = TU_PATH(root, "matmul_fp16");
    assert_non_null(k);
    assert_true(YAJL_GET_DOUBLE(tu_metric(k, "flops16")) == 4e9);
    assert_int_equal(tu_metric_int(k, "bytes"), 2000000);
    assert_true(YAJL_GET_DOUBLE(tu_metric(k, "tiles")) == 16);
    assert_non_null(tu_metric(root, "flops16"));
    assert_non_null(tu_metric(root, "tiles"));
    yajl_tree_free(doc);
}

static void test_copies_and_devices(void **state)
{
    (void)state;
    int s = tu_start("t_attr_copy", "tree");
    kscope__gpu_record c = kernel("[memcpy HtoD]", kscope_now_ns(), 100);
    c.kind = KSCOPE__GPU_MEMCPY;
    c.bytes = 4096;
    kscope__record_gpu(0, &c);
    kscope__gpu_record k0 = kernel("same", kscope_now_ns(), 10), k1 = k0;
    k1.device = 1;
    kscope__record_gpu(0, &k0);
    kscope__record_gpu(0, &k1);
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "[memcpy HtoD]"), "bytes"), 4096);
    int same = 0, dev1 = 0;
    yajl_val kids = tu_get(root, "children");
    for (size_t i = 0; i < kids->u.array.len; i++) {
        yajl_val n = kids->u.array.values[i];
        if (strcmp(tu_frame_name(n), "same") != 0)
            continue;
        same++;
        dev1 += strcmp(tu_metric(n, "device_id")->u.string, "1") == 0;
    }
    assert_int_equal(same, 2);
    assert_int_equal(dev1, 1);
    yajl_tree_free(doc);
}

static void test_trace_has_gpu_tracks_and_flows(void **state)
{
    (void)state;
    int s = tu_start("t_attr_trace", "trace");
    kscope_enter("step");
    uint64_t ctx = kscope__current_ctx();
    uint64_t t0 = kscope_now_ns();
    kscope_exit("step");
    kscope__gpu_record r = kernel("gemm", t0, 3000);
    kscope__record_gpu(ctx, &r);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_attr_trace.chrome_trace");
    assert_non_null(doc);
    yajl_val evs = tu_get(doc, "traceEvents");
    double kernel_ts = -1, launch_ts = -1;
    int flow_s = 0, flow_f = 0, gpu_named = 0;
    for (size_t i = 0; i < evs->u.array.len; i++) {
        yajl_val e = evs->u.array.values[i];
        const char *ph = tu_get(e, "ph")->u.string;
        const char *name = tu_get(e, "name")->u.string;
        if (strcmp(ph, "M") == 0) {
            yajl_val n = tu_get(tu_get(e, "args"), "name");
            gpu_named +=
                strcmp(n->u.string, "GPU 0 (CUDA)") == 0 || strcmp(n->u.string, "stream 7") == 0;
            continue;
        }
        if (strcmp(ph, "X") == 0 && strcmp(name, "gemm") == 0) {
            kernel_ts = YAJL_GET_DOUBLE(tu_get(e, "ts"));
            assert_int_equal(YAJL_GET_INTEGER(tu_get(e, "pid")), 1000000);
            assert_int_equal(YAJL_GET_INTEGER(tu_get(e, "tid")), 7);
            yajl_val stack = tu_get(tu_get(e, "args"), "call_stack");
            assert_int_equal(stack->u.array.len, 3);
            assert_string_equal(stack->u.array.values[1]->u.string, "step");
        }
        if (strcmp(ph, "X") == 0 && strcmp(name, "launch") == 0)
            launch_ts = YAJL_GET_DOUBLE(tu_get(e, "ts"));
        flow_s += strcmp(ph, "s") == 0 && YAJL_GET_INTEGER(tu_get(e, "id")) == 42;
        flow_f += strcmp(ph, "f") == 0 && YAJL_GET_INTEGER(tu_get(e, "id")) == 42;
    }
    assert_true(kernel_ts >= 0 && launch_ts >= 0);
    assert_true(kernel_ts >= launch_ts);
    assert_int_equal(flow_s, 1);
    assert_int_equal(flow_f, 1);
    assert_int_equal(gpu_named, 2);
    yajl_tree_free(doc);
}

/* Every track with slices is named, including the track of a thread that
 * only launched GPU work (its launch slices) and never annotated. */
static void test_every_trace_track_is_named(void **state)
{
    (void)state;
    int s = tu_start("t_attr_names", "trace");
    kscope_enter("step");
    kscope_exit("step");
    kscope__gpu_record r = kernel("gemm", kscope_now_ns(), 3000);
    kscope__record_gpu(0, &r); /* launched by thread 1234, which kscope never saw */
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_attr_names.chrome_trace");
    yajl_val evs = tu_get(doc, "traceEvents");
    long long named[64][2], used[64][2];
    size_t nnamed = 0, nused = 0;
    for (size_t i = 0; i < evs->u.array.len; i++) {
        yajl_val e = evs->u.array.values[i];
        const char *ph = tu_get(e, "ph")->u.string;
        yajl_val tid = tu_get(e, "tid");
        long long pt[2] = {YAJL_GET_INTEGER(tu_get(e, "pid")), tid ? YAJL_GET_INTEGER(tid) : -1};
        if (strcmp(ph, "M") == 0 && strcmp(tu_get(e, "name")->u.string, "thread_name") == 0)
            memcpy(named[nnamed++], pt, sizeof pt);
        else if (strcmp(ph, "X") == 0 || strcmp(ph, "i") == 0)
            memcpy(used[nused++], pt, sizeof pt);
        assert_true(nnamed < 64 && nused < 64);
    }
    for (size_t u = 0; u < nused; u++) {
        int found = 0;
        for (size_t n = 0; n < nnamed; n++)
            found |= named[n][0] == used[u][0] && named[n][1] == used[u][1];
        if (!found)
            fail_msg("track pid %lld tid %lld has slices but no thread_name", used[u][0],
                     used[u][1]);
    }
    yajl_tree_free(doc);
}

static void test_dropped_records_are_reported(void **state)
{
    (void)state;
    int s = tu_start("t_attr_dropped", "tree");
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_null(tu_metric(root, "dropped_records"));
    yajl_tree_free(doc);
    kscope__add_dropped(5);
    assert_int_equal(kscope_dropped(s), 5);
    root = tu_session_tree(s, &doc);
    assert_true(tu_metric_num(root, "dropped_records") == 5);
    yajl_tree_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_kernels_land_under_the_launching_scope, tu_teardown),
        cmocka_unit_test_teardown(test_state_is_the_frame_above_kernels, tu_teardown),
        cmocka_unit_test_teardown(test_fresh_thread_launches_under_the_main_scope, tu_teardown),
        cmocka_unit_test_teardown(test_paused_sessions_get_no_kernels, tu_teardown),
        cmocka_unit_test_teardown(test_launch_metadata_names_and_metrics, tu_teardown),
        cmocka_unit_test_teardown(test_copies_and_devices, tu_teardown),
        cmocka_unit_test_teardown(test_trace_has_gpu_tracks_and_flows, tu_teardown),
        cmocka_unit_test_teardown(test_every_trace_track_is_named, tu_teardown),
        cmocka_unit_test_teardown(test_dropped_records_are_reported, tu_teardown),
    };
    return cmocka_run_group_tests_name("attribution", tests, NULL, NULL);
}
