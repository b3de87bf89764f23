// devscope-long.cu - a long run of device-side scopes (test/gpu/devscope-long.sh
// runs it under kscope run --device-scopes, default options): 1056 CTAs of
// 8 warps, 4 scopes per thread (outer { inner }, then a, then b), launched
// LAUNCHES times back to back with no synchronisation between launches, so
// about 7.1M records pass through a 1M-record buffer. Usage:
//   devscope-long [SPIN_CYCLES [LAUNCHES]]
// SPIN_CYCLES (default 6000000) is how long inner spins; outer holds a
// quarter more, a half: it sets how fast records come.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <kscope/device.h>

#include "gpu-check.h"

#define CTAS  1056
#define WARPS 8

__device__ void spin(long long cycles)
{
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

__global__ void four_scopes(float *x, long long cycles)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    {
        KSCOPE_DEVICE_SCOPE("outer");
        {
            KSCOPE_DEVICE_SCOPE("inner");
            spin(cycles);
            v = v * 1.0001f + 1.0f;
        }
        spin(cycles / 4);
    }
    {
        KSCOPE_DEVICE_SCOPE("a");
        spin(cycles / 2);
    }
    {
        KSCOPE_DEVICE_SCOPE("b");
        x[i] = v;
    }
}

int main(int argc, char **argv)
{
    long long cycles = argc > 1 ? atoll(argv[1]) : 6000000;
    int launches = argc > 2 ? atoi(argv[2]) : 210;
    float *x;
    CK(cudaMalloc(&x, CTAS * WARPS * 32 * sizeof(float)));
    CK(cudaMemset(x, 0, CTAS * WARPS * 32 * sizeof(float)));
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    CK(cudaEventRecord(t0));
    for (int i = 0; i < launches; i++)
        four_scopes<<<CTAS, 32 * WARPS>>>(x, cycles);
    CK(cudaEventRecord(t1));
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, t0, t1));
    printf("devscope-long: %d launches of %d CTAs x %d warps, 4 scopes each: %lld records "
           "in %.1f ms on the GPU\n",
           launches, CTAS, WARPS, 4ll * CTAS * WARPS * launches, ms);
    CK(cudaFree(x));
    return 0;
}
