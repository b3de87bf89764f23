/*
 * test-ranges-roctx.c - the `detailed` level emits host scopes and marks
 * as roctx ranges (the roctx range sink, src/gpu/rocm/roctx.c) into the
 * stand-in libroctx64 (test/fake-roctx.c): names, nesting, balance per
 * thread, marks; nothing below the detailed level; one library loaded
 * once, at the first detailed scope.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "kscope.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fake_path[4096];
static const char *(*rx_log)(void);
static void (*rx_clear)(void);
static int (*rx_depth)(void), (*rx_bad)(void), (*rx_calls)(void);

/* The stand-in kscope loaded (NULL until the first detailed scope). */
static void *stand_in(void)
{
    return dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD);
}

static void bind(void)
{
    void *lib = stand_in();
    assert_non_null(lib);
    *(void **)&rx_log = dlsym(lib, "fake_roctx_log");
    *(void **)&rx_clear = dlsym(lib, "fake_roctx_clear");
    *(void **)&rx_depth = dlsym(lib, "fake_roctx_depth");
    *(void **)&rx_bad = dlsym(lib, "fake_roctx_bad");
    *(void **)&rx_calls = dlsym(lib, "fake_roctx_calls");
    assert_non_null(rx_log);
    dlclose(lib);
}

static int session(void)
{
    int sid =
        kscope_start(&(kscope_session_opts){.name = "/tmp/kscope-test-roctx", .backend = "none"});
    assert_true(sid >= 0);
    return sid;
}

static void finish(int sid)
{
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    unlink("/tmp/kscope-test-roctx.hatchet");
}

/* Below `detailed` nothing reaches roctx: not even loaded. */
static void not_detailed_nothing(void **state)
{
    (void)state;
    assert_int_equal(kscope_set_profiling(KSCOPE_PROFILING_ON), 0);
    int sid = session();
    kscope_enter("quiet");
    kscope_mark("quiet-mark");
    kscope_exit("quiet");
    finish(sid);
    void *lib = stand_in();
    assert_null(lib);
}

/* Detailed: every scope a range, nested, every mark a mark, balanced. */
static void detailed_scopes_and_marks(void **state)
{
    (void)state;
    assert_int_equal(kscope_set_profiling(KSCOPE_PROFILING_DETAILED), 0);
    int sid = session();
    kscope_enter("step");
    bind();
    kscope_enter("forward");
    kscope_mark("checkpoint");
    kscope_exit("forward");
    {
        KSCOPE_SCOPE("backward");
    }
    kscope_exit("step");
    assert_string_equal(rx_log(),
                        "push:step push:forward mark:checkpoint pop push:backward pop pop");
    assert_int_equal(rx_depth(), 0);
    assert_int_equal(rx_bad(), 0);
    finish(sid);
}

static void *worker(void *arg)
{
    (void)arg;
    kscope_enter("worker-scope");
    kscope_enter("inner");
    kscope_exit("inner");
    kscope_exit("worker-scope");
    char *copy = strdup(rx_log());
    if (rx_depth() != 0)
        copy[0] = '!';
    return copy;
}

/* Each thread's ranges on its own stack, balanced. */
static void detailed_threads(void **state)
{
    (void)state;
    int sid = session();
    rx_clear();
    kscope_enter("main-scope");
    pthread_t th;
    char *theirs = NULL;
    assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
    assert_int_equal(pthread_join(th, (void **)&theirs), 0);
    kscope_exit("main-scope");
    assert_string_equal(theirs, "push:worker-scope push:inner pop pop");
    free(theirs);
    assert_string_equal(rx_log(), "push:main-scope pop");
    assert_int_equal(rx_bad(), 0);
    /* back below detailed: no more calls */
    int before = rx_calls();
    assert_int_equal(kscope_set_profiling(KSCOPE_PROFILING_ON), 0);
    kscope_enter("after");
    kscope_exit("after");
    assert_int_equal(rx_calls(), before);
    finish(sid);
}

int main(void)
{
    const char *bin = getenv("KSCOPE_BINARY_DIR");
    snprintf(fake_path, sizeof fake_path, "%s/test/libkscope_fake_roctx.so", bin ? bin : ".");
    if (access(fake_path, R_OK) != 0) {
        fprintf(stderr, "test-ranges-roctx: the stand-in %s is missing\n", fake_path);
        return 1;
    }
    setenv("KSCOPE_ROCTX_LIBRARY", fake_path, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(not_detailed_nothing),
        cmocka_unit_test(detailed_scopes_and_marks),
        cmocka_unit_test(detailed_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
