/*
 * run-scopes.c - a program annotated with kscope scopes, for `kscope run`
 * tests: its own start/finalize must be ignored under the launcher, its
 * scopes must land in the launcher's profile, and its exit code must come
 * back through kscope. Usage: run-scopes [EXIT_CODE]
 */
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>

static void work(int i)
{
    KSCOPE_SCOPE("work");
    kscope_metric_int("items", i);
}

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    kscope_session_opts o = {.name = "program-own-name"};
    int sid = kscope_start(&o);
    if (sid < 0) {
        fprintf(stderr, "kscope_start: %s\n", kscope_last_error());
        return 99;
    }
    kscope_enter("outer");
    for (int i = 0; i < 3; i++)
        work(i);
    kscope_mark("done");
    kscope_exit("outer");
    kscope_finalize(sid, NULL);
    printf("program output\n");
    return code;
}
