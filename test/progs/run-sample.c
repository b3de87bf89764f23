/*
 * run-sample.c - stands in for a training loop under `kscope run
 * --sample` on the pretend GPU (test/progs/fake-gpu-*.c): it links the
 * stand-in libcuda.so.1, calls cuInit (where the driver injects libkscope),
 * then runs STEPS steps of two launches each inside a scope, marking each
 * step with kscope_step().
 */
#include "kscope.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "pretend-gpu.h"

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 10;
    if (!pretend_gpu_context(NULL)) {
        fprintf(stderr, "run-sample: no pretend GPU\n");
        return 3;
    }
    dim3 grid = {1, 1, 1}, block = {1, 1, 1};
    kscope_enter("train");
    for (int step = 0; step < steps; step++) {
        if (step)
            kscope_step();
        for (int i = 0; i < 2; i++)
            if (cudaLaunchKernel("empty_kernel", grid, block, NULL, 0, NULL) != cudaSuccess) {
                fprintf(stderr, "run-sample: a launch failed\n");
                return 4;
            }
    }
    kscope_exit("train");
    printf("ran %d steps\n", steps);
    return 0;
}
