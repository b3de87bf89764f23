/*
 * graphs.cu - CUDA graphs and kscope through the C API, one session per
 * scenario, written into the folder given as argv[1]; check_graphs.py
 * reads the outputs and facts.json.
 *
 *   before:    a 2-kernel graph captured and instantiated before profiling,
 *              replayed under replay0 and replay1 (kscope says once that it
 *              cannot place its kernels; they go under each replay scope)
 *   captured:  a graph captured while profiling (global capture mode):
 *              per iteration scope_a, a deactivate, scope_b, an activate,
 *              scope_c with a metric, a kernel with launch metadata; the
 *              session is read and a periodic part asked for during the
 *              capture; replayed once under test0 and twice under test1
 *
 * Every CUDA call must succeed: a capture kscope broke fails
 * cudaStreamEndCapture with cudaErrorStreamCaptureInvalidated. Exit status
 * 0 when everything succeeded.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kscope.h"

#include "gpu-check.h"

__global__ void k_ones(int *p)
{
    p[0] = 1;
}
__global__ void k_add(int *p)
{
    p[1] += p[0];
}
__global__ void k_a(int *p)
{
    p[2] += 1;
}
__global__ void k_b(int *p)
{
    p[3] += 1;
}
__global__ void k_c(int *p)
{
    p[4] += 1;
}
__global__ void k_meta(int *p)
{
    p[5] += 1;
}
__global__ void k_warm(int *p)
{
    p[6] += 1;
}

static const char *outdir;

static void before_scenario(int *dev, cudaStream_t st)
{
    cudaGraph_t g;
    cudaGraphExec_t e;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    k_ones<<<1, 1, 0, st>>>(dev);
    k_add<<<1, 1, 0, st>>>(dev);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&e, g, 0));
    int s = start_in(outdir, "before", NULL, NULL);
    KS(kscope_enter("replay0"));
    CK(cudaGraphLaunch(e, st));
    KS(kscope_exit("replay0"));
    KS(kscope_enter("replay1"));
    CK(cudaGraphLaunch(e, st));
    KS(kscope_exit("replay1"));
    CK(cudaStreamSynchronize(st));
    KS(kscope_finalize(s, "hatchet"));
    CK(cudaGraphExecDestroy(e));
    CK(cudaGraphDestroy(g));
}

static void capture_iteration(int i, int s, int periodic, int *dev, cudaStream_t st)
{
    char name[16];
    snprintf(name, sizeof name, "iter_%d", i);
    KS(kscope_enter(name));
    KS(kscope_enter("scope_a"));
    k_a<<<1, 1, 0, st>>>(dev);
    KS(kscope_exit("scope_a"));
    KS(kscope_deactivate(s, 0));
    KS(kscope_enter("scope_b"));
    k_b<<<1, 1, 0, st>>>(dev);
    KS(kscope_exit("scope_b"));
    KS(kscope_activate(s));
    KS(kscope_enter("scope_c"));
    KS(kscope_metric_int("bytes", 16));
    k_c<<<1, 1, 0, st>>>(dev);
    KS(kscope_exit("scope_c"));
    kscope_launch_meta m;
    memset(&m, 0, sizeof m);
    m.name = "named";
    m.flops32 = 100;
    KS(kscope_launch_metadata(&m));
    k_meta<<<1, 1, 0, st>>>(dev);
    if (i == 0) { /* read the session and ask for a periodic part mid-capture */
        char *buf;
        size_t len;
        KS(kscope_data(s, "hatchet", &buf, &len));
        kscope_free(buf);
        KS(kscope_deactivate(periodic, 1));
        KS(kscope_activate(periodic));
    }
    KS(kscope_exit(name));
}

static void captured_scenario(int *dev, cudaStream_t st)
{
    int s = start_in(outdir, "captured", NULL, NULL);
    int periodic = start_in(outdir, "periodic", NULL, "periodic_flushing");
    KS(kscope_enter("warm"));
    k_warm<<<1, 1, 0, st>>>(dev);
    KS(kscope_exit("warm"));
    cudaGraph_t g;
    cudaGraphExec_t e;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 3; i++)
        capture_iteration(i, s, periodic, dev, st);
    CK(cudaStreamEndCapture(st, &g)); /* fails when the capture was broken */
    CK(cudaGraphInstantiate(&e, g, 0));
    KS(kscope_enter("test0"));
    CK(cudaGraphLaunch(e, st));
    KS(kscope_exit("test0"));
    KS(kscope_enter("test1"));
    CK(cudaGraphLaunch(e, st));
    CK(cudaGraphLaunch(e, st));
    KS(kscope_exit("test1"));
    CK(cudaGraphExecDestroy(e)); /* before its records were flushed */
    CK(cudaGraphDestroy(g));
    KS(kscope_finalize(periodic, NULL));
    KS(kscope_finalize(s, "hatchet"));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: graphs OUTDIR\n");
        return 2;
    }
    outdir = argv[1];
    int *dev = NULL;
    cudaStream_t st;
    CK(cudaMalloc(&dev, 64 * sizeof(int)));
    CK(cudaMemset(dev, 0, 64 * sizeof(int)));
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    before_scenario(dev, st);
    captured_scenario(dev, st);
    CK(cudaStreamDestroy(st));
    CK(cudaFree(dev));
    printf("graphs: all scenarios ran\n");
    return 0;
}
