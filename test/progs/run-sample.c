/*
 * run-sample.c - stands in for a training loop under `kscope run
 * --sample` on a machine without a GPU, with the stand-in driver and
 * CUPTI of test/fake-cuda.c found as libcuda.so.1: calls the CUDA
 * injection entry as cuInit would, then runs STEPS steps of two launches
 * each inside a scope, marking each step with kscope_step().
 *
 * The backend checks for GPU device nodes; this program answers for them
 * (it exports glob, which libkscope then calls).
 */
#define _GNU_SOURCE
#include "kscope.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int glob(const char *pattern, int flags, int (*err)(const char *, int), glob_t *out)
{
    static int (*real)(const char *, int, int (*)(const char *, int), glob_t *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "glob");
    if (strncmp(pattern, "/dev/nvidia", 11) == 0)
        pattern = "/dev/null";
    return real(pattern, flags, err, out);
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    int (*init)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
    if (!init || init() != 1)
        return 3;
    void (*launch)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "fake_launch");
    if (!launch) {
        fprintf(stderr, "run-sample: the stand-in CUDA was not loaded\n");
        return 4;
    }
    kscope_enter("train");
    for (int step = 0; step < steps; step++) {
        if (step)
            kscope_step();
        launch();
        launch();
    }
    kscope_exit("train");
    printf("ran %d steps\n", steps);
    return 0;
}
