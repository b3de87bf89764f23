/*
 * test-backend-registry.c - a GPU backend goes through the registry and
 * the core's seam alone: a stand-in backend, registered at run time, is
 * chosen by name, started, flushed and stopped with its sessions, gets the
 * launch metadata, and names the devices of the output. Unknown backend
 * names fail with a message listing the registered ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "attrib/attrib.h"
#include "kscope-internal.h"
#include "support/testutil.h"

/* ------------------------------------------------------ the stand-in */

static int starts, stops, flushes, changes, metas;
static char last_meta[64];
static uint64_t launch_ctx; /* the context of the scope the test launched in */

/* Deliver one kernel and its device the way a backend's buffer thread
 * would, so the output shows the backend's device type. */
static void deliver_kernel(void)
{
    kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = "standin_kernel"};
    r.start_ns = kscope_now_ns();
    r.end_ns = r.start_ns + 1000;
    r.device = 0;
    kscope__record_gpu(launch_ctx, &r);
    kscope__set_device_info(0, "x1", 8, 1000, 2000, 64);
}

static int standin_start(void)
{
    starts++;
    return 0;
}

static void standin_stop(void)
{
    stops++;
}

static void standin_flush(void)
{
    flushes++;
    deliver_kernel();
}

static void standin_session_changed(void)
{
    changes++;
}

static int standin_launch_metadata(const kscope_launch_meta *meta)
{
    metas++;
    snprintf(last_meta, sizeof last_meta, "%s", meta->name ? meta->name : "");
    return 0;
}

static const kscope__backend standin = {
    .name = "standin",
    .label = "Stand-in",
    .device_type = "STANDIN",
    .needs = "nothing",
    .start = standin_start,
    .stop = standin_stop,
    .flush = standin_flush,
    .session_changed = standin_session_changed,
    .launch_metadata = standin_launch_metadata,
};

/* ------------------------------------------------------------- tests */

static int start_with(const char *backend)
{
    kscope_session_opts o = {.name = "/tmp/kscope-test-backend-registry", .backend = backend};
    return kscope_start(&o);
}

static void test_registered_backend_is_found(void **state)
{
    (void)state;
    assert_ptr_equal(kscope__backend_find("standin"), &standin);
    assert_null(kscope__backend_find("nosuch"));
    int found = 0;
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        found += b == &standin;
    assert_int_equal(found, 1);
}

static void test_unknown_backend_lists_the_names(void **state)
{
    (void)state;
    assert_int_equal(start_with("nosuch"), KSCOPE_EBACKEND);
    const char *msg = kscope_last_error();
    assert_non_null(strstr(msg, "'nosuch'"));
    assert_non_null(strstr(msg, "standin"));
    assert_non_null(strstr(msg, "none"));
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        assert_non_null(strstr(msg, b->name));
}

/* Two sessions share the backend: started by the first, stopped after the
 * last, told of each session change, flushed at each finalize. */
static void test_lifecycle_follows_sessions(void **state)
{
    (void)state;
    starts = stops = flushes = changes = 0;
    int a = start_with("standin");
    assert_true(a >= 0);
    assert_int_equal(kscope__session_gpu_on(a), 1);
    int b = start_with("standin");
    assert_true(b >= 0);
    assert_int_equal(starts, 1);
    assert_int_equal(changes, 2);
    assert_int_equal(kscope_finalize(b, NULL), 0);
    assert_int_equal(stops, 0);
    assert_true(flushes >= 1);
    assert_int_equal(kscope_finalize(a, NULL), 0);
    assert_int_equal(stops, 1);
    unlink("/tmp/kscope-test-backend-registry.hatchet");
}

/* Metadata is checked by the core, then reaches the backend only while it
 * captures. */
static void test_launch_metadata_reaches_the_backend(void **state)
{
    (void)state;
    metas = 0;
    kscope_launch_meta m = {.name = "gemm", .flops16 = 1e9};
    assert_int_equal(kscope_launch_metadata(&m), 0);
    assert_int_equal(metas, 0); /* no session: nothing captures */
    int s = start_with("standin");
    assert_true(s >= 0);
    assert_int_equal(kscope_launch_metadata(&m), 0);
    assert_int_equal(metas, 1);
    assert_string_equal(last_meta, "gemm");
    assert_int_equal(kscope_launch_metadata(NULL), KSCOPE_EINVAL);
    kscope_launch_meta bad = {.name = "k", .n_custom = 1};
    assert_int_equal(kscope_launch_metadata(&bad), KSCOPE_EINVAL);
    assert_int_equal(metas, 1);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(kscope_launch_metadata(&m), 0);
    assert_int_equal(metas, 1);
    unlink("/tmp/kscope-test-backend-registry.hatchet");
}

/* The backend's device type names the kernel node and the device info. */
static void test_device_type_comes_from_the_backend(void **state)
{
    (void)state;
    int s = start_with("standin");
    assert_true(s >= 0);
    assert_string_equal(kscope__gpu_device_type(), "STANDIN");
    assert_int_equal(kscope_enter("step"), 0);
    launch_ctx = kscope__current_ctx();
    assert_int_equal(kscope_exit("step"), 0);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(kscope_data(s, "hatchet", &buf, &len), 0); /* flushes: the kernel comes */
    yajl_val doc = tu_parse(buf);
    kscope_free(buf);
    assert_non_null(doc);
    yajl_val k = TU_PATH(doc->u.array.values[0], "step", "standin_kernel");
    assert_non_null(k);
    assert_string_equal(tu_metric(k, "device_type")->u.string, "STANDIN");
    yajl_val dev = tu_get(tu_get(doc->u.array.values[1], "STANDIN"), "0");
    assert_non_null(dev);
    assert_string_equal(tu_get(dev, "arch")->u.string, "x1");
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("/tmp/kscope-test-backend-registry.hatchet");
}

/* backend="none" leaves the stand-in alone. */
static void test_none_starts_nothing(void **state)
{
    (void)state;
    starts = 0;
    int s = start_with("none");
    assert_true(s >= 0);
    assert_int_equal(starts, 0);
    assert_int_equal(kscope__session_gpu_on(s), 0);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("/tmp/kscope-test-backend-registry.hatchet");
}

int main(void)
{
    /* Before the first start, as the registry asks. */
    if (kscope__backend_register(&standin) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered_backend_is_found),
        cmocka_unit_test(test_unknown_backend_lists_the_names),
        cmocka_unit_test(test_lifecycle_follows_sessions),
        cmocka_unit_test(test_launch_metadata_reaches_the_backend),
        cmocka_unit_test(test_device_type_comes_from_the_backend),
        cmocka_unit_test(test_none_starts_nothing),
    };
    return cmocka_run_group_tests_name("backend-registry", tests, NULL, NULL);
}
