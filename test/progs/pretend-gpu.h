/*
 * pretend-gpu.h - for the test programs that run on a stand-in libcuda.so.1
 * (the pretend GPU, fake-gpu-*.c, or fake-cupti.c): the driver started and
 * device 0's primary context made current, as a CUDA program begins.
 */
#ifndef KSCOPE_PRETEND_GPU_H
#define KSCOPE_PRETEND_GPU_H

#include <cuda.h>
#include <stddef.h>

/* cuInit, then device 0's primary context retained and made current (into
 * *ctx when ctx is not NULL). Returns whether every call succeeded. */
static inline int pretend_gpu_context(CUcontext *ctx)
{
    CUdevice d;
    CUcontext c;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&c, d) != CUDA_SUCCESS || cuCtxSetCurrent(c) != CUDA_SUCCESS)
        return 0;
    if (ctx)
        *ctx = c;
    return 1;
}

#endif
