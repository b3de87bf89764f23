/*
 * run-cuinit.c - stands in for a CUDA program on a machine without a GPU:
 * calls the CUDA injection entry point as the driver's cuInit would, then
 * records a scope. Under `kscope run` the GPU work cannot be captured, and
 * the run must say so.
 */
#define _GNU_SOURCE
#include "kscope.h"

#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
    if (init && init() != 1)
        return 3;
    kscope_enter("host-work");
    kscope_exit("host-work");
    printf("cuinit %s\n", init ? "called" : "absent");
    return 0;
}
