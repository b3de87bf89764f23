/*
 * test-phase.c - a session's data by phase: advance, complete, clear, the
 * data of a phase, the part files finalize writes, periodic flushing's
 * format option.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "support/testutil.h"

#include <string.h>
#include <unistd.h>

static int teardown(void **state)
{
    (void)state;
    while (kscope_depth() > 0)
        kscope_exit(NULL);
    kscope_finalize(KSCOPE_ALL, NULL);
    return 0;
}

static int start(const char *name, const char *mode)
{
    kscope_session_opts o = {.name = name, .backend = "none", .mode = mode};
    int s = kscope_start(&o);
    assert_true(s >= 0);
    return s;
}

static void scope(const char *name)
{
    assert_int_equal(kscope_enter(name), 0);
    assert_int_equal(kscope_exit(name), 0);
}

/* The names of ROOT's children in phase p, comma-separated, into buf. */
static const char *phase_children(int s, int p, char *buf, size_t size)
{
    char *json;
    size_t len;
    assert_int_equal(kscope_data_phase(s, p, "hatchet", &json, &len), 0);
    yajl_val doc = tu_parse(json);
    kscope_free(json);
    assert_non_null(doc);
    yajl_val root = doc->u.array.values[0];
    buf[0] = '\0';
    for (size_t i = 0; i < tu_nchildren(root); i++) {
        yajl_val c = tu_get(root, "children")->u.array.values[i];
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? "," : "", tu_frame_name(c));
    }
    yajl_tree_free(doc);
    return buf;
}

static void test_phases_keep_their_data(void **state)
{
    (void)state;
    char buf[256];
    int s = start("t_phase", NULL);
    scope("a");
    assert_int_equal(kscope_phase_complete(s, 0), 0); /* current */
    assert_int_equal(kscope_advance_phase(s), 1);
    assert_int_equal(kscope_phase_complete(s, 0), 1);
    assert_int_equal(kscope_phase_complete(s, 1), 0);
    scope("b");
    assert_string_equal(phase_children(s, 0, buf, sizeof buf), "a");
    assert_string_equal(phase_children(s, 1, buf, sizeof buf), "b");
    assert_int_equal(kscope_phase_complete(s, 2), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "phase 2"));
    char *out;
    size_t len;
    assert_int_equal(kscope_data_phase(s, 5, NULL, &out, &len), KSCOPE_EINVAL);
    /* Clearing phase 0 drops it; clearing the current one empties it. */
    assert_int_equal(kscope_clear_phase(s, 0, 0), 0);
    assert_int_equal(kscope_phase_complete(s, 0), 0);
    assert_int_equal(kscope_data_phase(s, 0, NULL, &out, &len), KSCOPE_ESTATE);
    assert_non_null(strstr(kscope_last_error(), "has no data"));
    assert_int_equal(kscope_clear_phase(s, 1, 0), 0);
    assert_string_equal(phase_children(s, 1, buf, sizeof buf), "");
    scope("c"); /* recording goes on in the cleared current phase */
    assert_string_equal(phase_children(s, 1, buf, sizeof buf), "c");
    assert_int_equal(kscope_advance_phase(s), 2);
    scope("d");
    assert_int_equal(kscope_clear_phase(s, 2, 1), 0); /* 0..2 */
    assert_int_equal(kscope_data_phase(s, 1, NULL, &out, &len), KSCOPE_ESTATE);
    assert_string_equal(phase_children(s, 2, buf, sizeof buf), "");
    assert_int_equal(kscope_advance_phase(999), KSCOPE_ENOSESSION);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_phase.part_2.hatchet");
}

/* Finalize writes one part per phase kept, and the current one. */
static void test_finalize_writes_a_part_per_phase(void **state)
{
    (void)state;
    int s = start("t_phase_parts", NULL);
    scope("p0");
    assert_int_equal(kscope_advance_phase(s), 1);
    scope("p1");
    char path[256];
    assert_true(kscope_output_path(s, NULL, path, sizeof path) > 0);
    assert_string_equal(path, "t_phase_parts.part_1.hatchet");
    assert_int_equal(kscope_finalize(s, "hatchet_msgpack"), 0);
    assert_int_equal(access("t_phase_parts.part_0.hatchet_msgpack", R_OK), 0);
    assert_int_equal(access("t_phase_parts.part_1.hatchet_msgpack", R_OK), 0);
    assert_int_equal(access("t_phase_parts.hatchet_msgpack", R_OK), -1);
    unlink("t_phase_parts.part_0.hatchet_msgpack");
    unlink("t_phase_parts.part_1.hatchet_msgpack");
}

/* Periodic flushing writes each phase as it completes, in the format its
 * mode names; what was written is no longer held. */
static void test_periodic_flushing_format(void **state)
{
    (void)state;
    int s = start("t_phase_per", "periodic_flushing:format=hatchet_msgpack");
    scope("p0");
    assert_int_equal(kscope_advance_phase(s), 1);
    assert_int_equal(access("t_phase_per.part_0.hatchet_msgpack", R_OK), 0);
    assert_int_equal(kscope_phase_complete(s, 0), 1);
    char *out;
    size_t len;
    assert_int_equal(kscope_data_phase(s, 0, NULL, &out, &len), KSCOPE_ESTATE);
    assert_non_null(strstr(kscope_last_error(), "written"));
    scope("p1");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(access("t_phase_per.part_1.hatchet_msgpack", R_OK), 0);
    unlink("t_phase_per.part_0.hatchet_msgpack");
    unlink("t_phase_per.part_1.hatchet_msgpack");
    static const char *const bad[] = {"periodic_flushing:format=csv", "periodic_flushing:level=2",
                                      "periodic_flushing:format=chrome_trace",
                                      "periodic_flushingX"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kscope_session_opts o = {.name = "t_phase_bad", .backend = "none", .mode = bad[i]};
        assert_true(kscope_start(&o) < 0);
        assert_non_null(strstr(kscope_last_error(), bad[i]));
    }
}

/* A trace session keeps its completed phases as traces. */
static void test_trace_phases(void **state)
{
    (void)state;
    kscope_session_opts o = {.name = "t_phase_trace", .backend = "none", .data = "trace"};
    int s = kscope_start(&o);
    assert_true(s >= 0);
    scope("t0");
    assert_int_equal(kscope_advance_phase(s), 1);
    scope("t1");
    char *out;
    size_t len;
    assert_int_equal(kscope_data_phase(s, 0, NULL, &out, &len), 0);
    assert_non_null(strstr(out, "\"t0\""));
    assert_null(strstr(out, "\"t1\""));
    kscope_free(out);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(access("t_phase_trace.part_0.chrome_trace", R_OK), 0);
    unlink("t_phase_trace.part_0.chrome_trace");
    unlink("t_phase_trace.part_1.chrome_trace");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_phases_keep_their_data, teardown),
        cmocka_unit_test_teardown(test_finalize_writes_a_part_per_phase, teardown),
        cmocka_unit_test_teardown(test_periodic_flushing_format, teardown),
        cmocka_unit_test_teardown(test_trace_phases, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
