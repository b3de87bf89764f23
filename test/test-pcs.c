/*
 * test-pcs.c - PC samples in the core, without a GPU: the pcsampling mode
 * option and its errors, samples delivered through the entry point a
 * backend uses (kscope__record_pcs) landing on kernel nodes and the
 * source-line nodes below them, only in sessions that asked for them,
 * the metrics ROOT lists, dropped samples, and a new session starting
 * empty; and the seam to the backend: stand-in backends that can sample
 * (or cannot, or fail to) are asked to start with the first sampling
 * session and to stop with the last, before its file is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "kscope-internal.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"
#include "support/capture.h"

/* The slot bit of session `id` (the backend names sessions by slot; ids
 * count up and are never reused). */
static uint32_t bit(int id)
{
    kscope__session *s = kscope__session_find(id);
    assert_non_null(s);
    return 1u << s->slot;
}

/* ------------------------------------------------------ stand-ins */

static int pcs_calls, pcs_on, pcs_interval, pcs_fail, delivered_at_off;

static int standin_start(void)
{
    return 0;
}

static void standin_stop(void) {}

static void standin_flush(void) {}

/* Samples that come only when sampling ends (a backend's last records)
 * must reach the session that ends it. */
static int standin_pcs(int on, uint32_t interval)
{
    pcs_calls++;
    if (pcs_fail)
        return kscope__fail(KSCOPE_ENOCUPTI, "stand-in: no sampling on this device");
    pcs_on = on;
    if (on) {
        pcs_interval = (int)interval;
        return 0;
    }
    uint32_t names[1] = {kscope__intern("num_samples")};
    uint64_t values[1] = {9};
    kscope__pcs_record r = {
        0, kscope__intern("last_kernel"), 0, 0, kscope__pcs_sessions(), 1, names, values};
    kscope__record_pcs(&r);
    delivered_at_off = kscope__pcs_sessions() != 0;
    return 0;
}

static const kscope__backend sampler = {.name = "sampler",
                                        .label = "Sampler",
                                        .device_type = "SAMPLER",
                                        .start = standin_start,
                                        .stop = standin_stop,
                                        .flush = standin_flush,
                                        .pc_sampling = standin_pcs};
static const kscope__backend nosampler = {.name = "nosampler",
                                          .label = "No sampler",
                                          .device_type = "SAMPLER",
                                          .start = standin_start,
                                          .stop = standin_stop,
                                          .flush = standin_flush};

static int start(const char *name, const char *mode)
{
    return tu_start_opts((kscope_session_opts){.name = name, .backend = "none", .mode = mode});
}

/* Deliver `samples` samples of one place, `stalled` of them long
 * scoreboard stalls, the rest selected. */
static void deliver(uint64_t ctx, const char *kernel, const char *frame, uint32_t sessions,
                    uint64_t samples, uint64_t stalled)
{
    uint32_t names[4] = {kscope__intern("num_samples"), kscope__intern("num_stalled_samples"),
                         kscope__intern("stalled_long_scoreboard"),
                         kscope__intern("stalled_selected")};
    uint64_t values[4] = {samples, stalled, stalled, samples - stalled};
    kscope__pcs_record r = {
        ctx,   kscope__intern(kernel), 0, frame ? kscope__intern(frame) : 0, sessions, 4, names,
        values};
    kscope__record_pcs(&r);
}

static void test_mode_option(void **state)
{
    (void)state;
    int periodic;
    uint32_t iv;
    assert_int_equal(kscope__mode_parse(NULL, &periodic, &iv), 0);
    assert_int_equal(iv, 0);
    assert_int_equal(kscope__mode_parse("periodic_flushing", &periodic, &iv), 0);
    assert_true(periodic);
    assert_int_equal(iv, 0);
    assert_int_equal(kscope__mode_parse("pcsampling", &periodic, &iv), 0);
    assert_false(periodic);
    assert_int_equal(iv, KSCOPE__PCS_INTERVAL);
    /* Proton's spelling, and its default interval, rounded to 2^10 */
    assert_int_equal(kscope__mode_parse("pc_sampling:interval=1000", &periodic, &iv), 0);
    assert_int_equal(iv, 1024);
    assert_int_equal(kscope__mode_parse("pcsampling:interval=32", &periodic, &iv), 0);
    assert_int_equal(iv, 32);
    assert_int_equal(kscope__mode_parse("pcsampling:interval=5000", &periodic, &iv), 0);
    assert_int_equal(iv, 4096);
    assert_int_equal(kscope__mode_parse("pcsampling:interval=7000", &periodic, &iv), 0);
    assert_int_equal(iv, 8192);
    assert_int_equal(kscope__mode_parse("pcsampling:interval=2147483648", &periodic, &iv), 0);
    assert_int_equal(iv, 1u << 31);
    static const char *const bad[] = {"pcsampling:interval=31", "pcsampling:interval=abc",
                                      "pcsampling:interval=", "pcsampling:interval=-64",
                                      "pcsampling:interval=4294967296"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(kscope__mode_parse(bad[i], &periodic, &iv), KSCOPE_EINVAL);
        assert_non_null(strstr(kscope_last_error(), "from 32 to 2147483648"));
    }
    assert_int_equal(kscope__mode_parse("pcsampling:every=5", &periodic, &iv), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "unknown option 'every=5'"));
    assert_int_equal(kscope__mode_parse("pcsamplingx", &periodic, &iv), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "is not periodic_flushing or pcsampling"));
}

static void test_start_checks_the_mode(void **state)
{
    (void)state;
    kscope_session_opts o = {.name = "t_pcs_bad", .backend = "none", .mode = "pcsampling:x=1"};
    assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "unknown option 'x=1'"));
    kscope_session_opts t = {
        .name = "t_pcs_trace", .backend = "none", .data = "trace", .mode = "pcsampling"};
    assert_int_equal(kscope_start(&t), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "use data=tree"));
}

static void test_samples_land_on_lines_below_kernels(void **state)
{
    (void)state;
    int s = start("t_pcs_lines", "pcsampling");
    int plain = start("t_pcs_plain", NULL);
    kscope_enter("step");
    uint64_t ctx = kscope__current_ctx();
    kscope_exit("step");
    uint32_t all = bit(s) | bit(plain);
    deliver(ctx, "chain", "k.cu:12@chain", all, 90, 80);
    deliver(ctx, "chain", "k.cu:20@chain", all, 10, 1);
    deliver(ctx, "chain", "k.cu:12@chain", all, 10, 10); /* adds up */
    deliver(0, "elementwise", NULL, all, 7, 3);          /* no lines: the kernel itself */
    deliver(ctx, "chain", "k.cu:30@chain", all, 0, 0);   /* nothing: no node */
    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val hot = TU_PATH(root, "step", "chain", "k.cu:12@chain");
    assert_non_null(hot);
    assert_int_equal(tu_metric_int(hot, "num_samples"), 100);
    assert_int_equal(tu_metric_int(hot, "num_stalled_samples"), 90);
    assert_int_equal(tu_metric_int(hot, "stalled_long_scoreboard"), 90);
    assert_int_equal(tu_metric_int(hot, "stalled_selected"), 10);
    assert_int_equal(tu_metric_int(TU_PATH(root, "step", "chain", "k.cu:20@chain"), "num_samples"),
                     10);
    assert_null(TU_PATH(root, "step", "chain", "k.cu:30@chain"));
    assert_int_equal(tu_metric_int(TU_PATH(root, "elementwise"), "num_samples"), 7);
    /* listed at ROOT with 0, as Proton lists its PC sampling metrics */
    assert_true(tu_metric_num(root, "num_samples") == 0);
    assert_true(tu_metric_num(root, "stalled_long_scoreboard") == 0);
    assert_null(tu_metric(root, "dropped_samples"));
    yajl_tree_free(doc);
    /* the session that did not ask has no sample and no node for them */
    root = tu_session_tree(plain, &doc);
    assert_non_null(TU_PATH(root, "step"));
    assert_null(TU_PATH(root, "step", "chain"));
    assert_null(TU_PATH(root, "elementwise"));
    assert_null(tu_metric(root, "num_samples"));
    yajl_tree_free(doc);
}

/* Samples go to the sessions the backend names, and only while in use. */
static void test_samples_go_to_the_sessions_named(void **state)
{
    (void)state;
    int a = start("t_pcs_a", "pcsampling");
    int b = start("t_pcs_b", "pc_sampling:interval=4096");
    assert_int_equal(kscope__pcs_sessions(), bit(a) | bit(b));
    deliver(0, "k", "f.py:3@k", bit(b), 5, 5);
    yajl_val doc, root = tu_session_tree(a, &doc);
    assert_null(TU_PATH(root, "k"));
    yajl_tree_free(doc);
    root = tu_session_tree(b, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "k", "f.py:3@k"), "num_samples"), 5);
    yajl_tree_free(doc);
}

static void test_dropped_samples_are_counted(void **state)
{
    (void)state;
    int s = start("t_pcs_drop", "pcsampling");
    int plain = start("t_pcs_drop_plain", NULL);
    kscope__add_dropped_samples(kscope__pcs_sessions(), 1234);
    assert_int_equal(kscope_dropped_samples(s), 1234);
    assert_int_equal(kscope_dropped_samples(plain), 0);
    assert_int_equal(kscope_dropped_samples(-1), 0);
    assert_int_equal(kscope_dropped_samples(KSCOPE_MAX_SESSIONS), 0);
    yajl_val doc, root = tu_session_tree(s, &doc);
    assert_true(tu_metric_num(root, "dropped_samples") == 1234);
    yajl_tree_free(doc);
    root = tu_session_tree(plain, &doc);
    assert_null(tu_metric(root, "dropped_samples"));
    yajl_tree_free(doc);
}

/* A session that reuses a slot starts with no samples and no drops. */
static void test_a_new_session_starts_empty(void **state)
{
    (void)state;
    int s = start("t_pcs_first", "pcsampling");
    deliver(0, "k", "a.cu:1@k", bit(s), 3, 3);
    uint32_t first = bit(s);
    kscope__add_dropped_samples(first, 2);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    int again = start("t_pcs_second", "pcsampling");
    assert_int_equal(bit(again), first); /* the same slot, a new id */
    assert_int_equal(again, s + 1);
    assert_int_equal(kscope_dropped_samples(again), 0);
    yajl_val doc, root = tu_session_tree(again, &doc);
    assert_null(TU_PATH(root, "k"));
    assert_null(tu_metric(root, "dropped_samples"));
    yajl_tree_free(doc);
}

static int start_on(const char *name, const char *backend, const char *mode)
{
    return tu_start_opts((kscope_session_opts){.name = name, .backend = backend, .mode = mode});
}

/* The first sampling session starts sampling with its interval; the last
 * one's end stops it before its file is written. */
static void test_backend_is_asked_to_sample(void **state)
{
    (void)state;
    pcs_calls = 0;
    int plain = start_on("t_pcs_seam_plain", "sampler", NULL);
    assert_int_equal(pcs_calls, 0); /* a session without the mode asks nothing */
    int a = start_on("t_pcs_seam_a", "sampler", "pcsampling:interval=2048");
    assert_int_equal(pcs_calls, 1);
    assert_true(pcs_on);
    assert_int_equal(pcs_interval, 2048);
    int b = start_on("t_pcs_seam_b", "sampler", "pcsampling");
    assert_int_equal(pcs_calls, 2); /* the backend says which interval it keeps */
    assert_int_equal(kscope_finalize(a, NULL), 0);
    assert_true(pcs_on); /* b still samples */
    char *buf;
    size_t len;
    assert_int_equal(kscope_output_path(b, NULL, (char[64]){0}, 64) > 0, 1);
    assert_int_equal(kscope_data(b, "hatchet", &buf, &len), 0);
    kscope_free(buf);
    assert_int_equal(kscope_finalize(b, NULL), 0);
    assert_false(pcs_on);
    assert_true(delivered_at_off);
    yajl_val doc = tu_parse_file("t_pcs_seam_b.hatchet");
    assert_non_null(doc);
    assert_int_equal(tu_metric_int(TU_PATH(doc->u.array.values[0], "last_kernel"), "num_samples"),
                     9);
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(plain, NULL), 0);
    assert_int_equal(pcs_calls, 3);
}

static void start_failing(void)
{
    pcs_fail = 1;
    int s = start_on("t_pcs_seam_fail", "sampler", "pcsampling");
    pcs_fail = 0;
    kscope_enter("still_recorded");
    kscope_exit(NULL);
    yajl_val doc;
    yajl_val root = tu_session_tree(s, &doc);
    assert_non_null(TU_PATH(root, "still_recorded"));
    yajl_tree_free(doc);
}

static void start_unable(void)
{
    start_on("t_pcs_seam_unable", "nosampler", "pcsampling");
}

/* A backend that cannot sample, or fails to: said once, plainly; the
 * session records the rest. */
static void test_sampling_that_cannot_start_is_said(void **state)
{
    (void)state;
    const char *captured = tu_capture_stderr(start_failing);
    assert_non_null(strstr(captured, "PC sampling unavailable (stand-in: no sampling on this "
                                     "device); recording without samples"));
    kscope_finalize(KSCOPE_ALL, NULL);
    captured = tu_capture_stderr(start_unable);
    assert_non_null(
        strstr(captured, "backend nosampler cannot sample PCs; recording without samples"));
}

int main(void)
{
    kscope__backend_register(&sampler);
    kscope__backend_register(&nosampler);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_mode_option, tu_teardown),
        cmocka_unit_test_teardown(test_start_checks_the_mode, tu_teardown),
        cmocka_unit_test_teardown(test_samples_land_on_lines_below_kernels, tu_teardown),
        cmocka_unit_test_teardown(test_samples_go_to_the_sessions_named, tu_teardown),
        cmocka_unit_test_teardown(test_dropped_samples_are_counted, tu_teardown),
        cmocka_unit_test_teardown(test_a_new_session_starts_empty, tu_teardown),
        cmocka_unit_test_teardown(test_backend_is_asked_to_sample, tu_teardown),
        cmocka_unit_test_teardown(test_sampling_that_cannot_start_is_said, tu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
