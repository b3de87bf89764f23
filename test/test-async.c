/*
 * test-async.c - async scopes (kscope_async_*): one call and the time from
 * begin to end for work that runs in interleaved steps, as a coroutine
 * does between its awaits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"

#include <string.h>
#include <unistd.h>

/* Two "coroutines" interleaved on one thread: each counts one call and
 * its time from begin to end; the work of its steps lands under it. */
static void test_interleaved_async_scopes(void **state)
{
    (void)state;
    int s = tu_start("t_async", "tree");
    kscope_async a, b;
    assert_int_equal(kscope_enter("outer"), 0);
    assert_int_equal(kscope_async_begin(&a, "task_a", 0, 0), 0);
    assert_int_equal(kscope_async_resume(&a), 0);
    assert_int_equal(kscope_enter("a_step"), 0);
    assert_int_equal(kscope_exit("a_step"), 0);
    assert_int_equal(kscope_async_suspend(&a), 0);
    assert_int_equal(kscope_async_begin(&b, "task_b", 0, KSCOPE_CPU_TIMED), 0);
    for (int i = 0; i < 3; i++) { /* b resumes three times */
        assert_int_equal(kscope_async_resume(&b), 0);
        assert_int_equal(kscope_metric_int("tokens", 1), 0);
        assert_int_equal(kscope_async_suspend(&b), 0);
    }
    usleep(3000); /* both are waiting: their time goes on */
    assert_int_equal(kscope_async_resume(&a), 0);
    assert_int_equal(kscope_async_end(&a), 0); /* closes the open step */
    assert_int_equal(kscope_async_end(&b), 0);
    assert_int_equal(kscope_depth(), 1);
    assert_int_equal(kscope_exit("outer"), 0);

    yajl_val doc, root = tu_session_tree(s, &doc);
    yajl_val ta = TU_PATH(root, "outer", "task_a"), tb = TU_PATH(root, "outer", "task_b");
    assert_int_equal(tu_metric_int(ta, "calls"), 1);
    assert_int_equal(tu_metric_int(tb, "calls"), 1);
    assert_true(tu_metric_int(ta, "wall_time (ns)") >= 3000000);
    assert_true(tu_metric_int(tb, "wall_time (ns)") >= 3000000);
    assert_true(tu_metric_int(tb, "cpu_time (ns)") >= 3000000);
    assert_int_equal(tu_metric_int(tb, "tokens"), 3);
    assert_int_equal(tu_metric_int(TU_PATH(ta, "a_step"), "calls"), 1);
    assert_null(TU_PATH(root, "outer", "task_a", "task_b"));
    yajl_tree_free(doc);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_async.hatchet");
}

/* A step that leaves a scope of its own open cannot be suspended: the
 * stack is left as it is, and the step closes once that scope is left. */
static void test_suspend_with_a_scope_open_in_the_step(void **state)
{
    (void)state;
    tu_start("t_async_open", "tree");
    kscope_async a;
    assert_int_equal(kscope_async_begin(&a, "task", 0, 0), 0);
    assert_int_equal(kscope_async_resume(&a), 0);
    assert_int_equal(kscope_async_resume(&a), KSCOPE_ESTATE);
    assert_int_equal(kscope_enter("held"), 0);
    assert_int_equal(kscope_async_suspend(&a), KSCOPE_EMISMATCH);
    assert_non_null(strstr(kscope_last_error(), "'held'"));
    assert_int_equal(kscope_depth(), 2);
    assert_int_equal(kscope_exit("held"), 0);
    assert_int_equal(kscope_async_suspend(&a), 0);
    assert_int_equal(kscope_async_suspend(&a), 1); /* no step open */
    assert_int_equal(kscope_async_end(&a), 0);
    assert_int_equal(kscope_async_end(&a), 1); /* ended */
    assert_int_equal(kscope_depth(), 0);
    unlink("t_async_open.hatchet");
}

/* Nothing recorded: begin says so and the other calls do nothing. */
static void test_async_without_session(void **state)
{
    (void)state;
    kscope_async a;
    assert_int_equal(kscope_async_begin(&a, "task", 0, 0), 1);
    assert_int_equal(kscope_async_resume(&a), 1);
    assert_int_equal(kscope_depth(), 0);
    assert_int_equal(kscope_async_suspend(&a), 1);
    assert_int_equal(kscope_async_end(&a), 1);
    assert_int_equal(kscope_async_begin(&a, "", 0, 0), KSCOPE_EINVAL);
    assert_int_equal(kscope_async_begin(NULL, "x", 0, 0), KSCOPE_EINVAL);
}

/* A trace shows each step as a slice on the thread that ran it. */
static void test_async_steps_in_a_trace(void **state)
{
    (void)state;
    int s = tu_start("t_async_trace", "trace");
    kscope_async a;
    assert_int_equal(kscope_async_begin(&a, "task", 0, 0), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(kscope_async_resume(&a), 0);
        assert_int_equal(kscope_async_suspend(&a), 0);
    }
    assert_int_equal(kscope_async_end(&a), 0);
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(s, NULL, &buf, &len), 0);
    int slices = 0;
    for (const char *p = buf; (p = strstr(p, "\"name\":\"task\"")) != NULL; p++)
        slices++;
    assert_int_equal(slices, 2);
    kscope_free(buf);
    unlink("t_async_trace.chrome_trace");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_interleaved_async_scopes, tu_teardown),
        cmocka_unit_test_teardown(test_suspend_with_a_scope_open_in_the_step, tu_teardown),
        cmocka_unit_test_teardown(test_async_without_session, tu_teardown),
        cmocka_unit_test_teardown(test_async_steps_in_a_trace, tu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
