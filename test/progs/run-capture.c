/*
 * run-capture.c - scopes before, inside and after a cudaProfilerStart/Stop
 * pair, for `kscope run --capture-range=cudaProfilerApi`.
 */
#include "kscope.h"

#include <stdio.h>

int cudaProfilerStart(void);
int cudaProfilerStop(void);

static void scope(const char *name)
{
    kscope_enter(name);
    kscope_exit(name);
}

int main(void)
{
    scope("before");
    int a = cudaProfilerStart();
    scope("inside");
    int b = cudaProfilerStop();
    scope("after");
    printf("results %d %d\n", a, b);
    return 0;
}
