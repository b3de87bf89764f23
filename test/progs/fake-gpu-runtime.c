/*
 * fake-gpu-runtime.c - the CUDA runtime's calls of the pretend GPU, and the
 * stream captures of the runtime and the driver, in the stand-in
 * libcuda.so.1 with fake-gpu-driver.c. Each call runs CUPTI's callbacks at
 * its begin and end; a runtime call does its work through the driver's
 * internals (fake-gpu.h), so no driver callback runs under it. The runtime
 * makes device 0's primary context current first; cudaLaunchKernel takes
 * the kernel's name as its `func`; a stream capture makes no graph and
 * returns what fake_cuda_set("capture_rc", n) says (0 by default).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "fake-gpu.h"

#define API __attribute__((visibility("default")))

static _Atomic int capture_rc; /* what the stream-capture calls return */

API cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                 cudaStream_t stream)
{
    (void)block, (void)args, (void)shmem;
    if (!fake_gpu_runtime_context())
        return cudaErrorNoDevice;
    fake_gpu_call c;
    fake_gpu_call_begin(&c, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel", func,
                        NULL);
    fake_gpu_kernel_record(func, grid.x, (CUstream)stream);
    fake_gpu_call_end(&c, cudaSuccess);
    return cudaSuccess;
}

API cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    (void)dst, (void)src;
    if (!fake_gpu_runtime_context())
        return cudaErrorNoDevice;
    fake_gpu_call c;
    fake_gpu_call_begin(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
                        "cudaMemcpy", NULL, NULL);
    fake_gpu_copy(0, NULL,
                  kind == cudaMemcpyHostToDevice ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                                                 : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
                  count);
    fake_gpu_call_end(&c, cudaSuccess);
    return cudaSuccess;
}

API cudaError_t cudaMemset(void *dst, int value, size_t count)
{
    (void)dst;
    if (!fake_gpu_runtime_context())
        return cudaErrorNoDevice;
    fake_gpu_call c;
    fake_gpu_call_begin(&c, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
                        "cudaMemset", NULL, NULL);
    fake_gpu_memset_record((unsigned char)value, count);
    fake_gpu_call_end(&c, cudaSuccess);
    return cudaSuccess;
}

/* A stream-capture call: its callbacks, returning the set code. */
static int capture_call(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const char *name,
                        const void *params)
{
    fake_gpu_call c;
    fake_gpu_call_begin(&c, d, cbid, name, NULL, params);
    int rc = atomic_load(&capture_rc);
    fake_gpu_call_end(&c, rc);
    return rc;
}

API cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode)
{
    cudaStreamBeginCapture_v10000_params p = {s, mode};
    return (cudaError_t)capture_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                                     "cudaStreamBeginCapture", &p);
}

API cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    *g = NULL;
    cudaStreamEndCapture_v10000_params p = {s, g};
    return (cudaError_t)capture_call(CUPTI_CB_DOMAIN_RUNTIME_API,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
                                     "cudaStreamEndCapture", &p);
}

/* Work is done when it is queued: every stream is idle. */
API CUresult cuStreamQuery(CUstream s)
{
    (void)s;
    return CUDA_SUCCESS;
}

API CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    cuStreamBeginCapture_v2_params p = {s, mode};
    return (CUresult)capture_call(CUPTI_CB_DOMAIN_DRIVER_API,
                                  CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
                                  "cuStreamBeginCapture_v2", &p);
}

API CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    *g = NULL;
    cuStreamEndCapture_params p = {s, g};
    return (CUresult)capture_call(CUPTI_CB_DOMAIN_DRIVER_API,
                                  CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, "cuStreamEndCapture",
                                  &p);
}

/* Test controls: "capture_rc" n is what the stream-capture calls return
 * from now on (0: success). */
API void fake_cuda_set(const char *what, long v)
{
    if (strcmp(what, "capture_rc") == 0)
        atomic_store(&capture_rc, (int)v);
}

void fake_gpu_copy_words(void *dst, const void *src, size_t bytes)
{
    if (((uintptr_t)dst | (uintptr_t)src | bytes) & 3u) {
        memcpy(dst, src, bytes);
        return;
    }
    uint32_t *d = dst;
    const uint32_t *w = src;
    for (size_t i = 0; i < bytes / 4; i++)
        __atomic_store_n(&d[i], __atomic_load_n(&w[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}
