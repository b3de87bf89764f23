/*
 * test-hardening.c - the recorder under hostile conditions: a disk that
 * fills while a profile is written, many distinct children under one
 * scope, threads racing finalize.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "support/testutil.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every test ends with no session left. */
static int teardown(void **state)
{
    (void)state;
    while (kscope_depth() > 0)
        kscope_exit(NULL);
    kscope_finalize(KSCOPE_ALL, NULL);
    return 0;
}

static int start_tree(const char *name)
{
    kscope_session_opts o = {.name = name, .data = "tree", .backend = "none"};
    int s = kscope_start(&o);
    assert_true(s >= 0);
    return s;
}

/* Files in the working directory whose names start with prefix. */
static int count_files(const char *prefix)
{
    DIR *d = opendir(".");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* A write that fails half way (here: the file size limit, as a full disk
 * would) leaves the previous profile whole and no temporary file behind. */
static void test_failed_write_keeps_the_previous_profile(void **state)
{
    (void)state;
    unlink("t_atomic.hatchet");
    int s = start_tree("t_atomic");
    kscope_enter("first");
    kscope_exit("first");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    size_t before_len;
    char *before = tu_read_file("t_atomic.hatchet", &before_len);
    assert_non_null(before);

    s = start_tree("t_atomic");
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "second_%d", i);
        kscope_enter(name);
        kscope_exit(name);
    }
    struct rlimit old, small = {64, 64};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = kscope_finalize(s, NULL);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_true(rc < 0);
    assert_non_null(strstr(kscope_last_error(), "t_atomic.hatchet"));

    size_t after_len;
    char *after = tu_read_file("t_atomic.hatchet", &after_len);
    assert_non_null(after);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    assert_int_equal(count_files("t_atomic.hatchet"), 1);
    free(before);
    free(after);
    /* The session is still there and is written once the disk has room. */
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_atomic.hatchet");
    assert_non_null(TU_PATH(doc->u.array.values[0], "second_199"));
    yajl_tree_free(doc);
}

/* A profile written through a symbolic link replaces the file it names. */
static void test_write_through_a_link_keeps_the_link(void **state)
{
    (void)state;
    unlink("t_link_target.hatchet");
    unlink("t_link.hatchet");
    assert_int_equal(symlink("t_link_target.hatchet", "t_link.hatchet"), 0);
    int s = start_tree("t_link");
    kscope_enter("x");
    kscope_exit("x");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    struct stat st;
    assert_int_equal(lstat("t_link.hatchet", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    yajl_val doc = tu_parse_file("t_link_target.hatchet");
    assert_non_null(TU_PATH(doc->u.array.values[0], "x"));
    yajl_tree_free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_failed_write_keeps_the_previous_profile, teardown),
        cmocka_unit_test_teardown(test_write_through_a_link_keeps_the_link, teardown),
    };
    return cmocka_run_group_tests_name("hardening", tests, NULL, NULL);
}
