// devscope.cu - device-side scopes on a real GPU (test/gpu/devscope.sh runs
// it under kscope run --device-scopes and checks the profiles):
//   phases  each warp times three phases spinning 1x, 2x and 4x SPIN cycles
//   warps   even warps spin SPIN cycles in "uneven", odd warps 2x SPIN
//   small   COUNT scope instances in one launch (for a too-small buffer)
//   graph   the kernel's first launch is captured into a CUDA graph
//           (launched 3 times), then launched on two streams at once
//   plain   a kernel without scopes, launched 200 times
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <kscope/device.h>

#include "gpu-check.h"

#define SPIN  100000ll
#define WARPS 8 // per block

__device__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void phases(int *out)
{
    {
        KSCOPE_DEVICE_SCOPE("x1");
        spin(SPIN);
    }
    {
        KSCOPE_DEVICE_SCOPE("x2");
        spin(2 * SPIN);
    }
    kscope_device_t s = KSCOPE_DEVICE_ENTER("x4");
    spin(4 * SPIN);
    kscope_device_exit(s);
    if (threadIdx.x == 0)
        out[blockIdx.x] = 1;
}

__global__ void warps(int *out)
{
    int w = threadIdx.x / 32;
    {
        KSCOPE_DEVICE_SCOPE("uneven");
        spin((w % 2 + 1) * SPIN);
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = 2;
}

__global__ void small(int *out, int per_warp)
{
    for (int i = 0; i < per_warp; i++) {
        KSCOPE_DEVICE_SCOPE("tiny");
        out[blockIdx.x * blockDim.x + threadIdx.x] += i;
    }
}

__global__ void graphed(int *out)
{
    KSCOPE_DEVICE_SCOPE("in_graph");
    spin(SPIN / 10);
    out[blockIdx.x] += 1;
}

__global__ void plain(float *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        x[i] = x[i] * 1.0001f + 0.5f;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "phases";
    int *out;
    CK(cudaMalloc(&out, 1 << 24));
    CK(cudaMemset(out, 0, 1 << 24));
    if (!strcmp(mode, "phases")) {
        for (int i = 0; i < 5; i++)
            phases<<<132, 32 * WARPS>>>(out);
    } else if (!strcmp(mode, "warps")) {
        warps<<<132, 32 * WARPS>>>(out);
    } else if (!strcmp(mode, "small")) {
        // 64 blocks x 8 warps x 10 scopes = 5120 records
        small<<<64, 32 * WARPS>>>(out, 10);
    } else if (!strcmp(mode, "graph")) {
        cudaStream_t s1, s2;
        CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
        graphed<<<16, 32 * WARPS, 0, s1>>>(out);
        CK(cudaStreamEndCapture(s1, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        for (int i = 0; i < 3; i++)
            CK(cudaGraphLaunch(ge, s1));
        CK(cudaStreamSynchronize(s1));
        graphed<<<16, 32 * WARPS, 0, s1>>>(out);
        graphed<<<16, 32 * WARPS, 0, s2>>>(out + 1024);
        CK(cudaGraphExecDestroy(ge));
        CK(cudaGraphDestroy(g));
    } else if (!strcmp(mode, "plain")) {
        float *x;
        int n = 1 << 24;
        CK(cudaMalloc(&x, n * sizeof(float)));
        for (int i = 0; i < 200; i++)
            plain<<<264, 256>>>(x, n);
        CK(cudaFree(x));
    }
    CK(cudaDeviceSynchronize());
    CK(cudaFree(out));
    printf("%s done\n", mode);
    return 0;
}
