/*
 * test-memory.c - what recording costs in memory, measured in the process
 * as the operating system counts it (its peak resident size): a tree's
 * distinct scopes, finalize included, and a trace of any length, held to
 * its budget. Each test runs in a process of its own (its peak is its
 * own); a sanitizer's build is skipped (its allocator is not ours).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "support/proc-status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Run fn in a child process: its exit status (0: it held). */
static int in_child(int (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = fn();
        fflush(NULL);
        _exit(rc);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

#define SCOPES 200000

/* 200k distinct scopes under one parent, then finalize: at most 250 bytes
 * each at the peak, the file's writing and the tree it is made from
 * included (854 before nodes shrank and the file was streamed). */
static int tree_scopes(void)
{
    long base = status_kb("VmHWM:");
    kscope_session_opts o = {.name = "t_mem_tree", .backend = "none"};
    int s = kscope_start(&o);
    char name[32];
    kscope_enter("parent");
    for (int i = 0; i < SCOPES; i++) {
        snprintf(name, sizeof name, "scope_%d", i);
        kscope_enter(name);
        kscope_exit(name);
    }
    kscope_exit("parent");
    if (s < 0 || kscope_finalize(s, NULL) != 0)
        return 2;
    unlink("t_mem_tree.hatchet");
    long per = (status_kb("VmHWM:") - base) * 1024 / SCOPES;
    printf("tree: %ld bytes per distinct scope at the peak\n", per);
    return per <= 250 ? 0 : 1;
}

static void test_tree_bytes_per_scope(void **state)
{
    (void)state;
#ifdef SANITIZED
    skip();
#endif
    assert_int_equal(in_child(tree_scopes), 0);
}

/* 4M events (64 MB as they are held) with a 4 MiB budget: the process
 * grows by the budget and a little more, whether they all reach the disk
 * or some drop, however long the run. */
static int trace_budget(void)
{
    long base = status_kb("VmHWM:");
    kscope_session_opts o = {
        .name = "t_mem_trace", .data = "trace", .backend = "none", .trace_buffer = "4M"};
    int s = kscope_start(&o);
    for (int i = 0; i < 1000000; i++) {
        kscope_enter("step");
        kscope_enter("inner");
        kscope_exit("inner");
        kscope_exit("step");
    }
    long recorded = status_kb("VmHWM:") - base;
    if (s < 0 || kscope_finalize(s, NULL) != 0)
        return 2;
    unlink("t_mem_trace.chrome_trace");
    long peak = status_kb("VmHWM:") - base;
    printf("trace: %ld kB while recording, %ld kB at the peak (budget 4096 kB)\n", recorded, peak);
    return recorded <= 4096 + 4096 && peak <= 4096 + 8192 ? 0 : 1;
}

static void test_trace_within_its_budget(void **state)
{
    (void)state;
#ifdef SANITIZED
    skip();
#endif
    assert_int_equal(in_child(trace_budget), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_bytes_per_scope),
        cmocka_unit_test(test_trace_within_its_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
