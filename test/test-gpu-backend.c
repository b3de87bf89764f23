/*
 * test-gpu-backend.c - the CUPTI backend where it cannot run: no driver
 * (CI machines) or no CUPTI. Start fails with the right code and a message
 * naming the cause, a session still records host scopes, and the reason
 * is said once on stderr. Launch metadata is checked before any GPU work.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kscope-internal.h"
#include "support/capture.h"

static int have_driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
}

static void test_backend_present(void **state)
{
    (void)state;
    const kscope__backend *b = kscope__backend_find("cupti");
    assert_non_null(b);
    assert_string_equal(b->name, "cupti");
    assert_non_null(b->start);
    assert_non_null(b->stop);
    assert_non_null(b->flush);
    assert_non_null(b->launch_metadata);
}

/* Start fails with one clear cause; a second start says the same. */
static void test_start_names_the_cause(void **state)
{
    (void)state;
    const kscope__backend *b = kscope__backend_find("cupti");
    if (have_driver()) {
        /* A GPU machine: make CUPTI the missing piece instead. */
        setenv("KSCOPE_CUPTI_LIBRARY", "/nonexistent/libcupti.so", 1);
        assert_int_equal(b->start(), KSCOPE_ENOCUPTI);
        assert_non_null(strstr(kscope_last_error(), "/nonexistent/libcupti.so"));
        assert_int_equal(b->start(), KSCOPE_ENOCUPTI);
        return;
    }
    assert_int_equal(b->start(), KSCOPE_ENOGPU);
    assert_non_null(strstr(kscope_last_error(), "libcuda.so.1"));
    assert_non_null(strstr(kscope_last_error(), "no CUDA driver"));
    assert_int_equal(b->start(), KSCOPE_ENOGPU);
    assert_non_null(strstr(kscope_last_error(), "libcuda.so.1"));
}

static int scopes_recorded;

static void two_sessions(void)
{
    for (int i = 0; i < 2; i++) {
        kscope_session_opts o;
        memset(&o, 0, sizeof o);
        o.name = "/tmp/kscope-test-gpu-backend";
        int s = kscope_start(&o);
        assert_true(s >= 0);
        assert_int_equal(kscope_enter("host_only"), 0);
        assert_int_equal(kscope_exit("host_only"), 0);
        char *data = NULL;
        size_t len = 0;
        assert_int_equal(kscope_data(s, "hatchet", &data, &len), 0);
        if (data && memmem(data, len, "host_only", 9))
            scopes_recorded++;
        kscope_free(data);
        assert_int_equal(kscope_finalize(s, "hatchet"), 0);
    }
    unlink("/tmp/kscope-test-gpu-backend.hatchet");
}

static void test_session_without_gpu_records_host_scopes(void **state)
{
    (void)state;
    const char *err = tu_capture_stderr(two_sessions);
    assert_int_equal(scopes_recorded, 2);
    /* exactly one line, naming the cause */
    size_t lines = 0;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 1);
    assert_non_null(strstr(err, "kscope: "));
    assert_non_null(strstr(err, have_driver() ? "libcupti" : "libcuda.so.1"));
}

static void test_launch_metadata_checked(void **state)
{
    (void)state;
    const kscope__backend *b = kscope__backend_find("cupti");
    kscope_launch_meta bad = {.name = "k", .n_custom = 1};
    assert_int_equal(b->launch_metadata(&bad), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "custom"));
    assert_int_equal(b->launch_metadata(NULL), KSCOPE_EINVAL);
    const char *names[] = {"tokens"};
    const double values[] = {1.0};
    kscope_launch_meta good = {.name = "k", .flops16 = 10, .n_custom = 1};
    good.custom_names = names;
    good.custom_values = values;
    assert_int_equal(b->launch_metadata(&good), 0);
    assert_int_equal(b->launch_metadata(&good), 0); /* replaces the pending one */
    /* the public call checks the same way */
    assert_int_equal(kscope_launch_metadata(NULL), KSCOPE_EINVAL);
    assert_int_equal(kscope_launch_metadata(&bad), KSCOPE_EINVAL);
    assert_int_equal(kscope_launch_metadata(&good), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backend_present),
        cmocka_unit_test(test_start_names_the_cause),
        cmocka_unit_test(test_session_without_gpu_records_host_scopes),
        cmocka_unit_test(test_launch_metadata_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
