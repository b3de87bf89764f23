/*
 * run-nvtx-gpu.c - a CUDA program annotated with NVTX only, for `kscope
 * run -d trace` on the pretend GPU: for about 0.4 s it repeats a step (a
 * push/pop range) that holds a library's range in a domain of its own
 * (as CUB's cub::DeviceRadixSort) around kernel launches, a start/end
 * range left across a pop, and a short range pushed on another thread.
 * Every thread track of the trace must nest.
 */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pretend-gpu.h"

static void launch(const char *kernel, unsigned us)
{
    CUfunction f;
    if (cuModuleGetFunction(&f, NULL, kernel) != CUDA_SUCCESS ||
        cuLaunchKernel(f, us, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
        fprintf(stderr, "launch of %s failed\n", kernel);
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void pause_us(long us)
{
    struct timespec t = {0, us * 1000};
    nanosleep(&t, NULL);
}

static void *side(void *ctx)
{
    cuCtxSetCurrent((CUcontext)ctx);
    nvtxRangePushA("side");
    launch("side_kernel", 1);
    nvtxRangePop();
    return NULL;
}

static void library_sort(nvtxDomainHandle_t cub)
{
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "cub::DeviceRadixSort::SortPairs";
    nvtxDomainRangePushEx(cub, &a);
    launch("radix_upsweep", 2);
    pause_us(20);
    launch("radix_downsweep", 3);
    nvtxDomainRangePop(cub);
}

int main(void)
{
    CUcontext c;
    if (!pretend_gpu_context(&c)) {
        fprintf(stderr, "no pretend GPU\n");
        return 3;
    }
    nvtxDomainHandle_t cub = nvtxDomainCreateA("CCCL");
    double end = seconds() + 0.4;
    int steps = 0;
    while (seconds() < end || steps < 20) {
        nvtxRangePushA("step");
        launch("forward", 1);
        library_sort(cub);
        nvtxRangeId_t id = nvtxRangeStartA("optimizer"); /* ended after the pop below */
        nvtxRangePushA("adamw");
        launch("adamw_kernel", 1);
        nvtxRangePop();
        if (steps % 10 == 0) {
            pthread_t th;
            pthread_create(&th, NULL, side, c);
            pthread_join(th, NULL);
        }
        nvtxRangePop();
        nvtxRangeEnd(id);
        pause_us(300);
        steps++;
    }
    nvtxDomainDestroy(cub);
    printf("nvtx gpu program done\n");
    return 0;
}
