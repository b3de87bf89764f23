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
#include "support/session-util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static int start(const char *name, const char *mode)
{
    return tu_start_opts((kscope_session_opts){.name = name, .backend = "none", .mode = mode});
}

static void scope(const char *name)
{
    assert_int_equal(kscope_enter(name), 0);
    assert_int_equal(kscope_exit(name), 0);
}

/* Phase p of session s as .hatchet, parsed (the caller frees it with
 * yajl_tree_free). */
static yajl_val phase_doc(int s, int p)
{
    char *json;
    size_t len;
    assert_int_equal(kscope_data_phase(s, p, "hatchet", &json, &len), 0);
    yajl_val doc = tu_parse(json);
    kscope_free(json);
    assert_non_null(doc);
    return doc;
}

/* The names of ROOT's children in phase p, comma-separated, into buf. */
static const char *phase_children(int s, int p, char *buf, size_t size)
{
    yajl_val doc = phase_doc(s, p);
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
    int s = tu_session_id(state);
    char buf[256];
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
}

/* Finalize writes one part per phase kept, and the current one. */
static void test_finalize_writes_a_part_per_phase(void **state)
{
    int s = tu_session_id(state);
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
}

/* Periodic flushing writes each phase as it completes, in the format its
 * mode names; what was written is no longer held. */
static void test_periodic_flushing_format(void **state)
{
    int s = tu_session_id(state);
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
    int s = tu_session_id(state);
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
}

/* ---------------------------------------------- phases under threads */

#define LOOP_CALLS 200000

static _Atomic int running;

static void *enter_exit_loop(void *arg)
{
    (void)arg;
    for (int i = 0; i < LOOP_CALLS; i++) {
        kscope_enter("loop");
        kscope_exit("loop");
    }
    atomic_fetch_sub(&running, 1);
    return NULL;
}

/* "calls" of ROOT/loop in phase p of s (0 when the phase has none). */
static long long phase_calls(int s, int p)
{
    yajl_val doc = phase_doc(s, p);
    /* A phase in which a call was open throughout has its time, no call. */
    yajl_val loop = tu_child(doc->u.array.values[0], "loop");
    long long calls = loop && tu_metric(loop, "calls") ? tu_metric_int(loop, "calls") : 0;
    yajl_tree_free(doc);
    return calls;
}

/* Threads enter and exit one scope while the main thread advances phases
 * as fast as it can: every call lands in exactly one phase, so the calls
 * of all phases add up to those made, neither more nor fewer. */
static void phases_exact(int nthreads)
{
    int s = start("t_phase_threads", NULL);
    pthread_t th[4];
    atomic_store(&running, nthreads);
    for (int i = 0; i < nthreads; i++)
        assert_int_equal(pthread_create(&th[i], NULL, enter_exit_loop, NULL), 0);
    int phases = 0;
    while (atomic_load(&running) > 0 && phases < 2000) {
        assert_int_equal(kscope_advance_phase(s), phases + 1);
        phases++;
        sched_yield();
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    long long total = 0;
    for (int p = 0; p <= phases; p++)
        total += phase_calls(s, p);
    assert_int_equal(total, (long long)nthreads * LOOP_CALLS);
    assert_int_equal(kscope_clear_phase(s, phases, 1), 0);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    char path[64];
    snprintf(path, sizeof path, "t_phase_threads.part_%d.hatchet", phases);
    unlink(path);
}

static void test_phases_exact_1_thread(void **state)
{
    (void)state;
    phases_exact(1);
}

static void test_phases_exact_2_threads(void **state)
{
    (void)state;
    phases_exact(2);
}

static void test_phases_exact_4_threads(void **state)
{
    (void)state;
    phases_exact(4);
}

/* A session started in a slot while threads still record into it (the
 * slot's previous session was finalized mid-run): the new session counts
 * only calls made while it runs, and no thread's counters are written by
 * another thread (ThreadSanitizer, tools/tsan.sh). */
static void test_start_after_finalize(void **state)
{
    (void)state;
    int nthreads = 2;
    pthread_t th[2];
    atomic_store(&running, nthreads);
    int s = start("t_phase_restart", NULL);
    for (int i = 0; i < nthreads; i++)
        assert_int_equal(pthread_create(&th[i], NULL, enter_exit_loop, NULL), 0);
    long long seen = 0;
    int rounds = 0;
    while (atomic_load(&running) > 0 && rounds < 200) {
        sched_yield();
        seen += phase_calls(s, 0);
        assert_int_equal(kscope_finalize(s, NULL), 0);
        s = start("t_phase_restart", NULL);
        rounds++;
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);
    seen += phase_calls(s, 0);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    /* Calls made between two sessions count in neither. */
    assert_true(seen <= (long long)nthreads * LOOP_CALLS);
    /* A session started in the slot afterwards counts its own calls only,
     * though the threads' nodes hold every earlier session's counts. */
    s = start("t_phase_restart", NULL);
    for (int i = 0; i < 5; i++)
        scope("loop");
    assert_int_equal(phase_calls(s, 0), 5);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_phase_restart.hatchet");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TU_SESSION_TEST(test_phases_keep_their_data, .name = "t_phase"),
        TU_SESSION_TEST(test_finalize_writes_a_part_per_phase, .name = "t_phase_parts"),
        TU_SESSION_TEST(test_periodic_flushing_format, .name = "t_phase_per",
                        .mode = "periodic_flushing:format=hatchet_msgpack"),
        TU_SESSION_TEST(test_trace_phases, .name = "t_phase_trace", .data = "trace"),
        cmocka_unit_test_teardown(test_phases_exact_1_thread, tu_teardown),
        cmocka_unit_test_teardown(test_phases_exact_2_threads, tu_teardown),
        cmocka_unit_test_teardown(test_phases_exact_4_threads, tu_teardown),
        cmocka_unit_test_teardown(test_start_after_finalize, tu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
