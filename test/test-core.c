/*
 * test-core.c - scopes, metrics, states, marks, the tracer, the profiling
 * switch and the errors of the C API (sessions themselves: test-session.c).
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

static void test_errors_have_names_and_messages(void **state)
{
    (void)state;
    assert_string_equal(kscope_strerror(0), "success");
    assert_string_equal(kscope_err_name(KSCOPE_EMISMATCH), "KSCOPE_EMISMATCH");
    assert_string_equal(kscope_strerror(KSCOPE_ENOSESSION), "no such session");
    assert_string_equal(kscope_strerror(12345), "unknown error");
    /* codes renamed vendor-neutral keep their earlier names as aliases */
    assert_int_equal(KSCOPE_ENOCUPTI, KSCOPE_ENOGPUTOOL);
    assert_string_equal(kscope_err_name(KSCOPE_ENOCUPTI), "KSCOPE_ENOGPUTOOL");
    assert_string_equal(kscope_strerror(KSCOPE_ENOGPUTOOL),
                        "the GPU vendor's profiling interface is not available");
    assert_true(KSCOPE_EINVAL < 0 && KSCOPE_ESTATE < 0);
    assert_int_equal(kscope_finalize(5, NULL), KSCOPE_ENOSESSION);
    assert_non_null(strstr(kscope_last_error(), "Session has not been initialized: 5"));
}

static void test_nested_scopes_make_a_tree(void **state)
{
    int s = tu_session_id(state);
    assert_int_equal(kscope_enter("a"), 0);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(kscope_enter("b"), 0);
        assert_int_equal(kscope_exit("b"), 0);
    }
    assert_int_equal(kscope_enter("c"), 0);
    assert_int_equal(kscope_depth(), 2);
    assert_int_equal(kscope_exit(NULL), 0);
    assert_int_equal(kscope_exit("a"), 0);
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_string_equal(tu_frame_name(root), "ROOT");
    yajl_val a = TU_PATH(root, "a");
    assert_non_null(a);
    assert_int_equal(tu_metric_int(a, "calls"), 1);
    assert_int_equal(tu_metric_int(TU_PATH(root, "a", "b"), "calls"), 3);
    assert_int_equal(tu_metric_int(TU_PATH(root, "a", "c"), "calls"), 1);
    assert_true(tu_metric_int(a, "wall_time (ns)") >=
                tu_metric_int(TU_PATH(root, "a", "b"), "wall_time (ns)"));
    /* Host metrics are exclusive: not listed in ROOT, so readers do not
     * add them up; and they never use the kernel names. */
    assert_null(tu_metric(root, "calls"));
    assert_null(tu_metric(root, "wall_time (ns)"));
    assert_null(tu_metric(a, "count"));
    assert_null(tu_metric(a, "time (ns)"));
    /* The frame shape proton-viewer reads. */
    yajl_val type = tu_get(tu_get(a, "frame"), "type");
    assert_string_equal(type->u.string, "function");
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(access("t_nested.hatchet", R_OK), 0);
}

static void test_same_named_children_merge(void **state)
{
    int s = tu_session_id(state);
    for (int i = 0; i < 5; i++) {
        kscope_enter("x");
        kscope_enter("y");
        kscope_exit("y");
        kscope_exit("x");
    }
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_int_equal(tu_nchildren(root), 1);
    assert_int_equal(tu_nchildren(TU_PATH(root, "x")), 1);
    assert_int_equal(tu_metric_int(TU_PATH(root, "x", "y"), "calls"), 5);
    yajl_tree_free(doc);
}

static void test_mismatched_exit_names_both_and_keeps_stack(void **state)
{
    (void)state;
    assert_null(kscope_innermost());
    kscope_enter("outer");
    kscope_enter("inner");
    assert_string_equal(kscope_innermost(), "inner");
    assert_int_equal(kscope_exit("outer"), KSCOPE_EMISMATCH);
    assert_non_null(strstr(kscope_last_error(), "'outer'"));
    assert_non_null(strstr(kscope_last_error(), "'inner'"));
    assert_int_equal(kscope_depth(), 2);
    assert_int_equal(kscope_exit("inner"), 0);
    assert_string_equal(kscope_innermost(), "outer");
    assert_int_equal(kscope_exit("outer"), 0);
    assert_int_equal(kscope_exit("outer"), KSCOPE_EEMPTY);
    assert_non_null(strstr(kscope_last_error(), "no scope is open"));
}

static void test_bad_names_are_refused(void **state)
{
    (void)state;
    assert_int_equal(kscope_enter(NULL), KSCOPE_EINVAL);
    assert_int_equal(kscope_enter(""), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "empty"));
    assert_int_equal(kscope_mark(NULL), KSCOPE_EINVAL);
    assert_int_equal(kscope_state_enter(""), KSCOPE_EINVAL);
    assert_int_equal(kscope_metric_int(NULL, 1), KSCOPE_EINVAL);
    assert_int_equal(kscope_metric_double("nan", 0.0 / 0.0), KSCOPE_EINVAL);
    assert_int_equal(kscope_enter_loc(NULL), KSCOPE_EINVAL);
}

static void test_metric_kinds(void **state)
{
    int s = tu_session_id(state);
    kscope_enter("train");
    assert_int_equal(kscope_metric_int("tokens", 100), 0);
    assert_int_equal(kscope_metric_int("tokens (inc)", 50), 0);
    assert_int_equal(kscope_metric_int("cpu_wait (ns)(exc)", 7), 0);
    assert_int_equal(kscope_metric_int("step_idx (pty)", 1), 0);
    assert_int_equal(kscope_metric_int("step_idx (pty)", 2), 0);
    assert_int_equal(kscope_metric_double("flops16", 1.5), 0);
    int64_t iv[3] = {1, 2, 3};
    double dv[2] = {0.5, 1.5};
    assert_int_equal(kscope_metric_int_vec("hist", iv, 3), 0);
    assert_int_equal(kscope_metric_int_vec("hist", iv, 2), 0);
    assert_int_equal(kscope_metric_double_vec("samples (pty)", dv, 2), 0);
    kscope_exit("train");
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    yajl_val train = TU_PATH(root, "train");
    assert_int_equal(tu_metric_int(train, "tokens"), 150);
    assert_int_equal(tu_metric_int(train, "cpu_wait (ns)"), 7);
    assert_int_equal(tu_metric_int(train, "step_idx"), 2);
    assert_true(tu_written_as_double(tu_metric(train, "flops16")));
    assert_false(YAJL_IS_INTEGER(tu_metric(train, "flops16")));
    yajl_val hist = tu_metric(train, "hist");
    assert_true(YAJL_IS_ARRAY(hist));
    assert_int_equal(hist->u.array.len, 3);
    assert_int_equal(YAJL_GET_INTEGER(hist->u.array.values[0]), 2);
    assert_int_equal(YAJL_GET_INTEGER(hist->u.array.values[2]), 3);
    assert_true(YAJL_IS_ARRAY(tu_metric(train, "samples")));
    /* Inclusive scalar metrics appear in ROOT with 0 of their own type, as
     * Proton writes them (0 for an integer metric, 0.0 for a floating-point
     * one); the others do not. */
    assert_string_equal(tu_metric(root, "tokens")->u.number.r, "0");
    assert_true(tu_written_as_double(tu_metric(root, "flops16")));
    assert_true(tu_metric_num(root, "flops16") == 0.0);
    assert_null(tu_metric(root, "cpu_wait (ns)"));
    assert_null(tu_metric(root, "step_idx"));
    assert_null(tu_metric(root, "samples"));
    /* An inclusive vector gets no placeholder Hatchet would try to sum:
     * ROOT names it in its "kscope" member instead, with every other
     * inclusive metric. */
    assert_null(tu_metric(root, "hist"));
    assert_true(tu_root_lists_inclusive(root, "hist"));
    assert_true(tu_root_lists_inclusive(root, "tokens"));
    assert_false(tu_root_lists_inclusive(root, "step_idx"));
    /* Suffixes are stripped. */
    assert_null(tu_metric(train, "cpu_wait (ns)(exc)"));
    assert_null(tu_metric(train, "step_idx (pty)"));
    yajl_tree_free(doc);
}

static void test_metric_type_mismatch_and_reserved(void **state)
{
    (void)state;
    kscope_enter("s");
    assert_int_equal(kscope_metric_int("tokens", 1), 0);
    assert_int_equal(kscope_metric_double("tokens", 1.0), KSCOPE_EMETRICTYPE);
    assert_non_null(strstr(kscope_last_error(),
                           "Metric value type mismatch for valueId 0 (tokens): "
                           "current=int64_t, new=double"));
    assert_int_equal(kscope_metric_double("tokens (exc)", 1.0), KSCOPE_EMETRICTYPE);
    assert_int_equal(kscope_metric_int("cpu_time (ns)", 1), KSCOPE_ERESERVED);
    assert_non_null(strstr(kscope_last_error(), "reserved"));
    assert_int_equal(kscope_metric_int("wall_time (ns)", 1), KSCOPE_ERESERVED);
    kscope_exit("s");
}

/* Text goes to (pty) and (exc) metrics, whose type is kept per node (as
 * Proton keeps it); an inclusive metric refuses text. */
static void test_metric_text_and_per_node_types(void **state)
{
    int s = tu_session_id(state);
    kscope_enter("a");
    assert_int_equal(kscope_metric_str("owner (pty)", "me"), 0);
    assert_int_equal(kscope_metric_str("owner (pty)", "you"), 0); /* last wins */
    assert_int_equal(kscope_metric_str("tag (exc)", "x"), 0);
    assert_int_equal(kscope_metric_double("owner (pty)", 1.0), KSCOPE_EMETRICTYPE);
    assert_non_null(strstr(kscope_last_error(), "current=std::string, new=double"));
    assert_int_equal(kscope_metric_str("tokens", "many"), KSCOPE_EMETRICTYPE);
    assert_non_null(strstr(kscope_last_error(), "only (pty) and (exc)"));
    assert_int_equal(kscope_metric_str("owner (pty)", NULL), KSCOPE_EINVAL);
    kscope_exit("a");
    kscope_enter("b");
    assert_int_equal(kscope_metric_double("owner (pty)", 2.0), 0); /* another node */
    kscope_exit("b");
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    yajl_val owner = tu_metric(TU_PATH(root, "a"), "owner");
    assert_true(YAJL_IS_STRING(owner));
    assert_string_equal(YAJL_GET_STRING(owner), "you");
    assert_string_equal(YAJL_GET_STRING(tu_metric(TU_PATH(root, "a"), "tag")), "x");
    assert_true(YAJL_IS_DOUBLE(tu_metric(TU_PATH(root, "b"), "owner")));
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    kscope_session_opts o = {.name = "t_mtext_trace", .data = "trace", .backend = "none"};
    s = kscope_start(&o);
    assert_true(s >= 0);
    assert_int_equal(kscope_metric_str("owner (pty)", "me"), KSCOPE_ENOTSUP);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_mtext_trace.chrome_trace");
}

/* A metric given under a state lands on the state's node below the scope,
 * as a kernel would (Proton's placement). */
static void test_metric_under_state(void **state)
{
    int s = tu_session_id(state);
    kscope_enter("outer");
    assert_int_equal(kscope_state_enter("st"), 0);
    kscope_enter("inner");
    assert_int_equal(kscope_metric_double("a", 1.0), 0);
    kscope_exit("inner");
    assert_int_equal(kscope_state_exit(), 0);
    kscope_exit("outer");
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_null(tu_metric(TU_PATH(root, "outer", "inner"), "a"));
    assert_true(tu_metric(TU_PATH(root, "outer", "inner", "st"), "a") != NULL);
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_mstate.hatchet");
}

static void test_metric_types_are_per_session(void **state)
{
    (void)state;
    int a = tu_start("t_mtype_a", "tree");
    assert_int_equal(kscope_metric_int("m", 1), 0);
    assert_int_equal(kscope_finalize(a, NULL), 0);
    tu_start("t_mtype_b", "tree");
    assert_int_equal(kscope_metric_double("m", 1.0), 0);
}

static void test_cpu_timed_scope(void **state)
{
    int s = tu_session_id(state);
    {
        KSCOPE_CPU_TIMED_SCOPE("host_prep");
        usleep(2000);
    }
    {
        KSCOPE_SCOPE("plain");
    }
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    long long cpu = tu_metric_int(TU_PATH(root, "host_prep"), "cpu_time (ns)");
    assert_true(cpu >= 2000000);
    assert_true(cpu < 2000000000);
    assert_null(tu_metric(TU_PATH(root, "plain"), "cpu_time (ns)"));
    assert_null(tu_metric(root, "cpu_time (ns)"));
    yajl_tree_free(doc);
}

static void test_scope_macro_uses_static_location(void **state)
{
    int s = tu_session_id(state);
    for (int i = 0; i < 4; i++) {
        KSCOPE_SCOPE("loop_body");
        assert_int_equal(kscope_depth(), 1);
    }
    assert_int_equal(kscope_depth(), 0);
    kscope_loc loc = {.name = "by_loc"};
    assert_int_equal(kscope_enter_loc(&loc), 0);
    assert_true(loc.id > 0);
    assert_int_equal(kscope_exit_loc(&loc), 0);
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "loop_body"), "calls"), 4);
    assert_int_equal(tu_metric_int(TU_PATH(root, "by_loc"), "calls"), 1);
    yajl_tree_free(doc);
}

static void test_marks_are_recorded(void **state)
{
    int s = tu_session_id(state);
    kscope_enter("step");
    kscope_mark("checkpoint");
    kscope_mark("checkpoint");
    kscope_exit("step");
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "step", "checkpoint"), "calls"), 2);
    yajl_tree_free(doc);
}

static void test_states_sit_above_what_is_recorded_under_them(void **state)
{
    int s = tu_session_id(state);
    kscope_enter("step");
    assert_int_equal(kscope_state_enter("warmup"), 0);
    assert_int_equal(kscope_state_enter("decode"), 0); /* innermost wins */
    kscope_mark("tick");
    assert_int_equal(kscope_state_exit(), 0);
    kscope_mark("tock");
    assert_int_equal(kscope_state_exit(), 0);
    assert_int_equal(kscope_state_exit(), KSCOPE_EEMPTY);
    kscope_exit("step");
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "step", "decode", "tick"), "calls"), 1);
    assert_int_equal(tu_metric_int(TU_PATH(root, "step", "warmup", "tock"), "calls"), 1);
    assert_null(TU_PATH(root, "step", "warmup", "decode"));
    yajl_tree_free(doc);
}

static void test_deactivated_work_is_not_recorded(void **state)
{
    int s = tu_session_id(state);
    kscope_enter("before");
    kscope_exit("before");
    assert_int_equal(kscope_deactivate(s, 0), 0);
    kscope_enter("paused");
    kscope_exit("paused");
    assert_int_equal(kscope_activate(s), 0);
    kscope_enter("after");
    kscope_exit("after");
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_non_null(TU_PATH(root, "before"));
    assert_null(TU_PATH(root, "paused"));
    assert_non_null(TU_PATH(root, "after"));
    yajl_tree_free(doc);
}

/* The scope's time is at most the two active stretches around the pause,
 * measured outside them (no bound on how long anything takes). */
static void test_pause_inside_a_scope_clips_its_time(void **state)
{
    int s = tu_session_id(state);
    uint64_t t0 = kscope_now_ns();
    kscope_enter("long");
    kscope_deactivate(s, 0);
    uint64_t t1 = kscope_now_ns();
    usleep(20000);
    uint64_t t2 = kscope_now_ns();
    kscope_activate(s);
    kscope_exit("long");
    uint64_t t3 = kscope_now_ns();
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    int64_t wall = tu_metric_int(TU_PATH(root, "long"), "wall_time (ns)");
    if (wall < 0 /* 1 us: ticks to ns rounding */ || (uint64_t)wall > (t1 - t0) + (t3 - t2) + 1000)
        fail_msg("wall_time %lld ns, active at most %llu ns (paused %llu ns)", (long long)wall,
                 (unsigned long long)((t1 - t0) + (t3 - t2)), (unsigned long long)(t2 - t1));
    yajl_tree_free(doc);
}

static void test_profiling_switch(void **state)
{
    (void)state;
    assert_int_equal(kscope_parse_profiling("off"), KSCOPE_PROFILING_OFF);
    assert_int_equal(kscope_parse_profiling("ON"), KSCOPE_PROFILING_ON);
    assert_int_equal(kscope_parse_profiling("detailed"), KSCOPE_PROFILING_DETAILED);
    assert_int_equal(kscope_parse_profiling("loud"), KSCOPE_EINVAL);
    assert_int_equal(kscope_set_profiling(7), KSCOPE_EINVAL);
    int s = tu_start("t_switch", "tree");
    assert_int_equal(kscope_set_profiling(KSCOPE_PROFILING_OFF), 0);
    assert_int_equal(kscope_profiling(), KSCOPE_PROFILING_OFF);
    assert_int_equal(kscope_enter("hidden"), 1); /* not recorded */
    assert_int_equal(kscope_exit("hidden"), 1);
    assert_int_equal(kscope_set_profiling(KSCOPE_PROFILING_ON), 0);
    assert_int_equal(kscope_enter("shown"), 0);
    assert_int_equal(kscope_exit("shown"), 0);
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_null(TU_PATH(root, "hidden"));
    assert_non_null(TU_PATH(root, "shown"));
    yajl_tree_free(doc);
}

static void test_no_session_records_nothing(void **state)
{
    (void)state;
    assert_int_equal(kscope_enter("nobody"), 1);
    assert_int_equal(kscope_exit("nobody"), 1);
    assert_int_equal(kscope_depth(), 0);
    assert_int_equal(kscope_mark("m"), 1);
}

static void test_tracer(void **state)
{
    int s = tu_session_id(state);
    kscope_tracer t;
    kscope_tracer_init(&t);
    assert_int_equal(kscope_tracer_mark(&t, "m"), KSCOPE_EEMPTY);
    assert_int_equal(kscope_tracer_pop(&t), KSCOPE_EEMPTY);
    assert_int_equal(kscope_tracer_push(&t, "load", kscope_color("blue")), 0);
    assert_int_equal(kscope_tracer_mark(&t, "loaded"), 0);
    assert_int_equal(kscope_tracer_next(&t, "run", 0), 0);
    assert_int_equal(kscope_tracer_push(&t, "inner", 0), 0);
    /* Off: pushes become placeholders and still balance. */
    kscope_set_profiling(KSCOPE_PROFILING_OFF);
    assert_int_equal(kscope_tracer_push(&t, "ghost", 0), 0);
    assert_int_equal(t.depth, 3);
    assert_int_equal(t.real[2], 0);
    assert_int_equal(kscope_tracer_pop(&t), 0);
    kscope_set_profiling(KSCOPE_PROFILING_ON);
    assert_int_equal(kscope_tracer_cleanup(&t), 0);
    assert_int_equal(t.depth, 0);
    assert_int_equal(kscope_depth(), 0);
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "load", "loaded"), "calls"), 1);
    assert_non_null(TU_PATH(root, "run", "inner"));
    assert_null(TU_PATH(root, "run", "inner", "ghost"));
    yajl_tree_free(doc);
}

static void test_colours(void **state)
{
    (void)state;
    assert_int_equal(kscope_color("modular_purple"), 0xB5BAF5);
    assert_int_equal(kscope_color("red"), 0xFF0000);
    assert_int_equal(kscope_color("no such colour"), 0xB5BAF5);
    assert_int_equal(kscope_color(NULL), 0xB5BAF5);
    const char *names[] = {"blue", "green", "orange", "purple", "white", "yellow"};
    for (size_t i = 0; i < 6; i++)
        assert_int_not_equal(kscope_color(names[i]), 0xB5BAF5);
}

static void test_strings_are_escaped(void **state)
{
    int s = tu_session_id(state);
    const char *weird = "q\"b\\s\n\t\x01 \xc3\xa9 \xff end";
    kscope_enter(weird);
    kscope_exit(weird);
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(s, "hatchet", &buf, &len), 0);
    yajl_val doc = tu_parse(buf);
    assert_non_null(doc); /* yajl validates UTF-8 and escapes */
    const char *got = tu_frame_name(tu_get(doc->u.array.values[0], "children")->u.array.values[0]);
    assert_string_equal(got, "q\"b\\s\n\t\x01 \xc3\xa9 \xef\xbf\xbd end");
    yajl_tree_free(doc);
    kscope_free(buf);
}

static void test_too_deep_is_refused(void **state)
{
    (void)state;
    int rc = 0, n = 0;
    while (rc == 0 && n < 5000) {
        rc = kscope_enter("d");
        n += rc == 0;
    }
    assert_int_equal(rc, KSCOPE_EDEPTH);
    assert_int_equal(kscope_depth(), n);
    while (kscope_depth() > 0)
        assert_int_equal(kscope_exit("d"), 0);
}

/* ------------------------------------------------------------ threads */

#define NTHREADS   16
#define PER_THREAD 100000

static void *annotate_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < PER_THREAD; i++) {
        KSCOPE_SCOPE("work");
        kscope_enter("inner");
        kscope_exit("inner");
    }
    return NULL;
}

static void test_many_threads_lose_nothing(void **state)
{
    int s = tu_session_id(state);
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, annotate_many, NULL);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    yajl_val doc, root = tu_session_tree_checked(s, &doc);
    assert_int_equal(tu_metric_int(TU_PATH(root, "work"), "calls"), NTHREADS * PER_THREAD);
    assert_int_equal(tu_metric_int(TU_PATH(root, "work", "inner"), "calls"), NTHREADS * PER_THREAD);
    yajl_tree_free(doc);
}

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static int gate_open, inside;

static void *stay_inside(void *arg)
{
    (void)arg;
    kscope_enter("still_open");
    pthread_mutex_lock(&gate_lock);
    inside = 1;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    kscope_exit("still_open");
    return NULL;
}

static void test_finalize_closes_scopes_open_on_other_threads(void **state)
{
    int s = tu_session_id(state);
    pthread_t th;
    pthread_create(&th, NULL, stay_inside, NULL);
    pthread_mutex_lock(&gate_lock);
    while (!inside)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    usleep(5000);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    pthread_join(th, NULL);
    yajl_val doc = tu_parse_file("t_open.hatchet");
    yajl_val open = TU_PATH(doc->u.array.values[0], "still_open");
    assert_int_equal(tu_metric_int(open, "calls"), 1);
    assert_true(tu_metric_int(open, "wall_time (ns)") >= 5000000);
    yajl_tree_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_errors_have_names_and_messages, tu_teardown_profiling),
        TU_SESSION_TEST(test_nested_scopes_make_a_tree, .name = "t_nested", .data = "tree"),
        TU_SESSION_TEST(test_same_named_children_merge, .name = "t_merge", .data = "tree"),
        TU_SESSION_TEST(test_mismatched_exit_names_both_and_keeps_stack, .name = "t_mismatch",
                        .data = "tree"),
        TU_SESSION_TEST(test_bad_names_are_refused, .name = "t_badnames", .data = "tree"),
        TU_SESSION_TEST(test_metric_kinds, .name = "t_metrics", .data = "tree"),
        TU_SESSION_TEST(test_metric_type_mismatch_and_reserved, .name = "t_mtype", .data = "tree"),
        cmocka_unit_test_teardown(test_metric_types_are_per_session, tu_teardown_profiling),
        TU_SESSION_TEST(test_cpu_timed_scope, .name = "t_cpu", .data = "tree"),
        TU_SESSION_TEST(test_scope_macro_uses_static_location, .name = "t_macro", .data = "tree"),
        TU_SESSION_TEST(test_marks_are_recorded, .name = "t_marks", .data = "tree"),
        TU_SESSION_TEST(test_states_sit_above_what_is_recorded_under_them, .name = "t_states",
                        .data = "tree"),
        TU_SESSION_TEST(test_deactivated_work_is_not_recorded, .name = "t_deact", .data = "tree"),
        TU_SESSION_TEST(test_pause_inside_a_scope_clips_its_time, .name = "t_clip", .data = "tree"),
        cmocka_unit_test_teardown(test_profiling_switch, tu_teardown_profiling),
        cmocka_unit_test_teardown(test_no_session_records_nothing, tu_teardown_profiling),
        TU_SESSION_TEST(test_tracer, .name = "t_tracer", .data = "tree"),
        cmocka_unit_test_teardown(test_colours, tu_teardown_profiling),
        TU_SESSION_TEST(test_strings_are_escaped, .name = "t_escape", .data = "tree"),
        TU_SESSION_TEST(test_too_deep_is_refused, .name = "t_deep", .data = "tree"),
        TU_SESSION_TEST(test_metric_text_and_per_node_types, .name = "t_mtext", .data = "tree"),
        TU_SESSION_TEST(test_metric_under_state, .name = "t_mstate", .data = "tree"),
        TU_SESSION_TEST(test_many_threads_lose_nothing, .name = "t_threads", .data = "tree"),
        TU_SESSION_TEST(test_finalize_closes_scopes_open_on_other_threads, .name = "t_open",
                        .data = "tree"),
    };
    return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
