/*
 * test-session.c - sessions of the C API: several at once, their ids,
 * options, names and formats, their limits, writing their files (a full
 * disk, an unwritable folder, periodic parts) and reading them while
 * paused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope-internal.h"
#include "kscope.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_several_sessions_at_once(void **state)
{
    (void)state;
    int a = tu_start("t_multi_a", "tree");
    kscope_enter("only_a");
    kscope_exit("only_a");
    kscope_session_opts o = {.name = "t_multi_b", .data = "trace", .backend = "none"};
    int b = kscope_start(&o);
    assert_true(b >= 0 && b != a);
    kscope_enter("both");
    kscope_exit("both");
    kscope_deactivate(a, 0);
    kscope_enter("only_b");
    kscope_exit("only_b");
    yajl_val doc, root = tu_session_tree_checked(a, &doc);
    assert_non_null(TU_PATH(root, "only_a"));
    assert_non_null(TU_PATH(root, "both"));
    assert_null(TU_PATH(root, "only_b"));
    yajl_tree_free(doc);
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(b, NULL, &buf, &len), 0);
    assert_null(strstr(buf, "\"only_a\""));
    assert_non_null(strstr(buf, "\"both\""));
    assert_non_null(strstr(buf, "\"only_b\""));
    kscope_free(buf);
    /* Finalize all: one file each, in each one's own format. */
    assert_int_equal(kscope_finalize(KSCOPE_ALL, NULL), 0);
    assert_int_equal(access("t_multi_a.hatchet", R_OK), 0);
    assert_int_equal(access("t_multi_b.chrome_trace", R_OK), 0);
    assert_int_equal(kscope_finalize(a, NULL), KSCOPE_ENOSESSION);
}

/* Ids count up and are never reused, though the slot behind them is: an id
 * kept after its session ended must not reach the next session. */
static void test_session_ids_never_repeat(void **state)
{
    (void)state;
    int a = tu_start("t_ids_a", "tree");
    assert_int_equal(kscope_finalize(a, NULL), 0);
    int b = tu_start("t_ids_b", "tree");
    assert_int_equal(b, a + 1);
    assert_int_equal(kscope_activate(a), KSCOPE_ENOSESSION);
    assert_non_null(strstr(kscope_last_error(), "Session has not been initialized"));
    assert_int_equal(kscope_deactivate(a, 0), KSCOPE_ENOSESSION);
    assert_int_equal(kscope_dropped(a), 0);
    char path[256];
    assert_true(kscope_output_path(b, NULL, path, sizeof path) > 0);
    assert_string_equal(path, "t_ids_b.hatchet");
    assert_int_equal(kscope_finalize(b, NULL), 0);
    unlink("t_ids_a.hatchet");
    unlink("t_ids_b.hatchet");
}

static void test_session_options_are_checked(void **state)
{
    (void)state;
    kscope_session_opts o = {.name = "x", .data = "forest"};
    assert_int_equal(kscope_start(&o), KSCOPE_EDATA);
    assert_non_null(strstr(kscope_last_error(), "forest"));
    o = (kscope_session_opts){.name = "x", .backend = "rocm"};
    assert_int_equal(kscope_start(&o), KSCOPE_EBACKEND);
    o = (kscope_session_opts){.name = "x", .context = "deep"};
    assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
    o = (kscope_session_opts){.name = "x", .mode = "sometimes"};
    assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
    o = (kscope_session_opts){.name = ""};
    assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
    o = (kscope_session_opts){.name = "/nonexistent-dir/x"};
    int rc = kscope_start(&o);
    assert_true(rc == KSCOPE_EIO || rc == KSCOPE_EACCES);
    assert_non_null(strstr(kscope_last_error(), "/nonexistent-dir"));
}

static void test_default_name_and_formats(void **state)
{
    (void)state;
    unlink("kscope.hatchet");
    int s = kscope_start(NULL);
    assert_true(s >= 0);
    char path[64];
    assert_int_equal(kscope_output_path(s, NULL, path, sizeof path), (int)strlen("kscope.hatchet"));
    assert_string_equal(path, "kscope.hatchet");
    assert_int_equal(kscope_output_path(s, "hatchet_msgpack", path, sizeof path), 22);
    assert_int_equal(kscope_finalize(s, "json"), KSCOPE_EFORMAT);
    assert_non_null(strstr(kscope_last_error(), "'json'"));
    assert_int_equal(kscope_finalize(s, "chrome_trace"), KSCOPE_EFORMAT);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(access("kscope.hatchet", R_OK), 0);
}

static void test_too_many_sessions(void **state)
{
    (void)state;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++)
        tu_start("t_many", "tree");
    kscope_session_opts o = {.name = "t_many"};
    assert_int_equal(kscope_start(&o), KSCOPE_ETOOMANY);
}

static void test_full_disk_is_an_error_and_keeps_the_session(void **state)
{
    (void)state;
    unlink("t_full.hatchet");
    if (symlink("/dev/full", "t_full.hatchet") != 0)
        skip();
    int s = tu_start("t_full", "tree");
    kscope_enter("x");
    kscope_exit("x");
    assert_int_equal(kscope_finalize(s, NULL), KSCOPE_ENOSPC);
    assert_non_null(strstr(kscope_last_error(), "t_full.hatchet"));
    unlink("t_full.hatchet");
    /* Nothing was lost: the session is still there and can be written. */
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_full.hatchet");
    assert_non_null(TU_PATH(doc->u.array.values[0], "x"));
    yajl_tree_free(doc);
}

static void test_unwritable_output_is_an_error(void **state)
{
    (void)state;
    unlink("t_ro_dir/out.hatchet");
    rmdir("t_ro_dir");
    mkdir("t_ro_dir", 0755);
    int s = tu_start("t_ro_dir/out", "tree");
    assert_int_equal(rmdir("t_ro_dir"), 0);
    assert_true(kscope_finalize(s, NULL) < 0);
    assert_non_null(strstr(kscope_last_error(), "t_ro_dir/out.hatchet"));
    mkdir("t_ro_dir", 0755);
    assert_int_equal(kscope_finalize(s, NULL), 0);
}

static void test_periodic_flushing_writes_parts(void **state)
{
    int s = tu_session_id(state);
    kscope_enter("phase0");
    kscope_exit("phase0");
    assert_int_equal(kscope_deactivate(s, 1), 0);
    kscope_activate(s);
    kscope_enter("phase1");
    kscope_exit("phase1");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val p0 = tu_parse_file("t_periodic.part_0.hatchet");
    yajl_val p1 = tu_parse_file("t_periodic.part_1.hatchet");
    assert_non_null(p0);
    assert_non_null(p1);
    assert_non_null(TU_PATH(p0->u.array.values[0], "phase0"));
    assert_null(TU_PATH(p0->u.array.values[0], "phase1"));
    assert_null(TU_PATH(p1->u.array.values[0], "phase0"));
    assert_non_null(TU_PATH(p1->u.array.values[0], "phase1"));
    yajl_tree_free(p0);
    yajl_tree_free(p1);
}

/* A paused session reads the same every time: reading never refits the
 * clock (Proton's test_get_data compares two reads). */
static void test_paused_session_reads_alike(void **state)
{
    (void)state;
    kscope_session_opts o = {.name = "/tmp/kscope-test-core-alike"};
    int s = kscope_start(&o);
    assert_true(s >= 0);
    assert_int_equal(kscope_enter("test"), 0);
    usleep(2000);
    assert_int_equal(kscope_exit("test"), 0);
    assert_int_equal(kscope_deactivate(s, 1), 0);
    char *first = NULL, *again = NULL;
    size_t n1 = 0, n2 = 0;
    assert_int_equal(kscope_data(s, "hatchet", &first, &n1), 0);
    uint64_t refits = __atomic_load_n(&kscope__refits, __ATOMIC_RELAXED);
    usleep(100000); /* the run grows: a fit made now would be a new one */
    assert_int_equal(kscope_data(s, "hatchet", &again, &n2), 0);
    assert_int_equal(__atomic_load_n(&kscope__refits, __ATOMIC_RELAXED), refits);
    assert_int_equal(n1, n2);
    assert_memory_equal(first, again, n1);
    kscope_free(first);
    kscope_free(again);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("/tmp/kscope-test-core-alike.hatchet");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_several_sessions_at_once, tu_teardown_profiling),
        cmocka_unit_test_teardown(test_session_ids_never_repeat, tu_teardown_profiling),
        cmocka_unit_test_teardown(test_session_options_are_checked, tu_teardown_profiling),
        cmocka_unit_test_teardown(test_default_name_and_formats, tu_teardown_profiling),
        cmocka_unit_test_teardown(test_too_many_sessions, tu_teardown_profiling),
        cmocka_unit_test_teardown(test_full_disk_is_an_error_and_keeps_the_session,
                                  tu_teardown_profiling),
        cmocka_unit_test_teardown(test_unwritable_output_is_an_error, tu_teardown_profiling),
        TU_SESSION_TEST(test_periodic_flushing_writes_parts, .name = "t_periodic",
                        .mode = "periodic_flushing"),
        cmocka_unit_test_teardown(test_paused_session_reads_alike, tu_teardown_profiling),
    };
    return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
