/*
 * test-peer-copies.c - copies between two GPUs keep both device ids, in the
 * tree (a node per direction, with src_device_id and dst_device_id) and in
 * the trace (args src_device and dst_device), without a GPU: synthetic
 * records go through kscope__record_gpu as the CUPTI backend's are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope-internal.h"
#include "support/testutil.h"
#include "support/session-util.h"

/* A copy issued on `device` from src to dst, as decode.c fills it. */
static kscope__gpu_record copy(const char *name, uint32_t device, uint32_t src, uint32_t dst,
                               uint64_t bytes)
{
    kscope__gpu_record r = {.kind = KSCOPE__GPU_MEMCPY, .name = name};
    r.launch_ns = kscope_now_ns();
    r.launch_end_ns = r.launch_ns + 1000;
    r.start_ns = r.launch_ns + 2000;
    r.end_ns = r.start_ns + 500;
    r.launch_tid = 99;
    r.device = device;
    r.stream = 3;
    r.src_device = src;
    r.dst_device = dst;
    r.bytes = bytes;
    r.correlation = 7;
    return r;
}

/* Record two 0->1 copies, one 1->0 copy (issued on the same device) and a
 * copy within device 0, under scope "xfer". */
static void record_copies(void)
{
    kscope_enter("xfer");
    uint64_t ctx = kscope__current_ctx();
    kscope_exit("xfer");
    kscope__gpu_record a = copy("Memcpy PtoP", 0, 0, 1, 1 << 20);
    kscope__gpu_record b = copy("Memcpy PtoP", 0, 1, 0, 4096);
    kscope__gpu_record d = copy("Memcpy DtoD", 0, 0, 0, 512);
    kscope__record_gpu(ctx, &a);
    kscope__record_gpu(ctx, &a);
    kscope__record_gpu(ctx, &b);
    kscope__record_gpu(ctx, &d);
}

static void assert_string_metric(yajl_val node, const char *key, const char *want)
{
    yajl_val v = tu_metric(node, key);
    assert_non_null(v);
    assert_true(YAJL_IS_STRING(v));
    assert_string_equal(v->u.string, want);
}

static void test_tree_keeps_both_devices_per_direction(void **state)
{
    (void)state;
    int s = tu_start("t_peer_tree", "tree");
    record_copies();
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(s, "hatchet", &buf, &len), 0);
    yajl_val doc = tu_parse(buf);
    kscope_free(buf);
    assert_non_null(doc);
    yajl_val root = doc->u.array.values[0];

    yajl_val fwd = TU_PATH(root, "xfer", "Memcpy PtoP 0->1");
    assert_non_null(fwd);
    assert_int_equal(tu_metric_int(fwd, "count"), 2);
    assert_int_equal(tu_metric_int(fwd, "bytes"), 2 << 20);
    assert_string_metric(fwd, "src_device_id", "0");
    assert_string_metric(fwd, "dst_device_id", "1");
    assert_string_metric(fwd, "device_id", "0");

    yajl_val back = TU_PATH(root, "xfer", "Memcpy PtoP 1->0");
    assert_non_null(back);
    assert_int_equal(tu_metric_int(back, "count"), 1);
    assert_int_equal(tu_metric_int(back, "bytes"), 4096);
    assert_string_metric(back, "src_device_id", "1");
    assert_string_metric(back, "dst_device_id", "0");

    /* A copy within one device keeps its plain name and no peer fields. */
    yajl_val local = TU_PATH(root, "xfer", "Memcpy DtoD");
    assert_non_null(local);
    assert_int_equal(tu_metric_int(local, "bytes"), 512);
    assert_null(tu_metric(local, "src_device_id"));
    assert_null(tu_metric(local, "dst_device_id"));
    assert_null(TU_PATH(root, "xfer", "Memcpy PtoP"));
    yajl_tree_free(doc);
}

static void test_trace_slices_carry_both_devices(void **state)
{
    (void)state;
    int s = tu_start("t_peer_trace", "trace");
    record_copies();
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_peer_trace.chrome_trace");
    assert_non_null(doc);
    yajl_val evs = tu_get(doc, "traceEvents");
    int fwd = 0, back = 0, local = 0;
    for (size_t i = 0; i < evs->u.array.len; i++) {
        yajl_val e = evs->u.array.values[i];
        if (strcmp(tu_get(e, "ph")->u.string, "X") != 0)
            continue;
        const char *name = tu_get(e, "name")->u.string;
        yajl_val args = tu_get(e, "args");
        if (strncmp(name, "Memcpy", 6) == 0)
            assert_int_equal(YAJL_GET_INTEGER(tu_get(e, "pid")), 1000000);
        if (strcmp(name, "Memcpy PtoP 0->1") == 0) {
            fwd++;
            assert_int_equal(YAJL_GET_INTEGER(tu_get(args, "src_device")), 0);
            assert_int_equal(YAJL_GET_INTEGER(tu_get(args, "dst_device")), 1);
            assert_int_equal(YAJL_GET_INTEGER(tu_get(args, "bytes")), 1 << 20);
        } else if (strcmp(name, "Memcpy PtoP 1->0") == 0) {
            back++;
            assert_int_equal(YAJL_GET_INTEGER(tu_get(args, "src_device")), 1);
            assert_int_equal(YAJL_GET_INTEGER(tu_get(args, "dst_device")), 0);
            assert_int_equal(YAJL_GET_INTEGER(tu_get(args, "bytes")), 4096);
        } else if (strcmp(name, "Memcpy DtoD") == 0) {
            local++;
            assert_null(tu_get(args, "src_device"));
            assert_null(tu_get(args, "dst_device"));
        }
    }
    assert_int_equal(fwd, 2);
    assert_int_equal(back, 1);
    assert_int_equal(local, 1);
    yajl_tree_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_tree_keeps_both_devices_per_direction, tu_teardown),
        cmocka_unit_test_teardown(test_trace_slices_carry_both_devices, tu_teardown),
    };
    return cmocka_run_group_tests_name("peer copies", tests, NULL, NULL);
}
