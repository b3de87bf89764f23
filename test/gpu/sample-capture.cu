/*
 * sample-capture.cu - a CUDA program for the sampled mode's GPU test (run
 * under `kscope run --sample`):
 *
 *   steps N       20 steps of 1000 empty kernels, kscope_step() after each
 *                 (the default launch path: the runtime's cudaLaunchKernel)
 *   graphs N      N rounds of: capture 50 kernels into a graph (global
 *                 mode) while 10 ms pass inside the capture, so that time
 *                 windows would switch in it; end the capture (which must
 *                 succeed: a switch during it would invalidate it), launch
 *                 the graph. Prints "graphs ok".
 *
 * Exits non-zero, naming the call, on any CUDA error.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kscope.h"

#include "gpu-check.h"

__global__ void empty_kernel() {}

static void steps(int n)
{
    kscope_enter("train");
    for (int s = 0; s < n; s++) {
        for (int i = 0; i < 1000; i++)
            empty_kernel<<<1, 1>>>();
        kscope_step();
    }
    CK(cudaDeviceSynchronize());
    kscope_exit("train");
    printf("steps ok\n");
}

static void graphs(int n)
{
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int r = 0; r < n; r++) {
        cudaGraph_t g;
        cudaGraphExec_t exec;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < 50; i++)
            empty_kernel<<<1, 1, 0, s>>>();
        usleep(10000);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&exec, g, 0));
        CK(cudaGraphLaunch(exec, s));
        CK(cudaStreamSynchronize(s));
        CK(cudaGraphExecDestroy(exec));
        CK(cudaGraphDestroy(g));
    }
    CK(cudaStreamDestroy(s));
    printf("graphs ok\n");
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "steps";
    int n = argc > 2 ? atoi(argv[2]) : 20;
    CK(cudaFree(0));
    if (strcmp(what, "graphs") == 0)
        graphs(n);
    else
        steps(n);
    return 0;
}
