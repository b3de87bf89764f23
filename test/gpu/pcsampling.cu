// pcsampling.cu - a kernel whose hot source line and its stall are known
// by construction, for test/gpu/pcsampling.sh (built with -lineinfo).
//
// Each thread first follows a chain of dependent loads through a random
// cycle over 128 MB (larger than the L2 cache, so nearly every load goes
// to memory and the next cannot start before it returns: the warps wait
// on a long scoreboard), then runs a short chain of dependent multiply-
// adds (arithmetic, no memory). The chain's line takes most samples, and
// most of them stalled on the long scoreboard; the arithmetic line has
// samples, mostly for other reasons. The markers below name the lines.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "gpu-check.h"

__global__ void chase_and_compute(const unsigned *next, unsigned n, int hops, int iters, float *out)
{
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned i = (tid * 2654435761u) % n;
    for (int h = 0; h < hops; h++)
        i = next[i]; // HOT-LINE
    float x = (float)(i & 1023);
    for (int k = 0; k < iters; k++)
        x = x * 1.000001f + 0.5f; // MATH-LINE
    out[tid] = x;
}

int main(int argc, char **argv)
{
    int launches = argc > 1 ? atoi(argv[1]) : 10;
    const unsigned n = 32u << 20; // 128 MB of indices
    unsigned *host = (unsigned *)malloc(n * sizeof *host);
    // one random cycle through every index (Sattolo's shuffle)
    for (unsigned k = 0; k < n; k++)
        host[k] = k;
    unsigned long long s = 88172645463325252ull;
    for (unsigned k = n - 1; k > 0; k--) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        unsigned j = (unsigned)(s % k);
        unsigned t = host[k];
        host[k] = host[j];
        host[j] = t;
    }
    unsigned *next;
    float *out;
    const int blocks = 264, threads = 256;
    CK(cudaMalloc(&next, n * sizeof *next));
    CK(cudaMalloc(&out, blocks * threads * sizeof *out));
    CK(cudaMemcpy(next, host, n * sizeof *next, cudaMemcpyHostToDevice));
    for (int l = 0; l < launches; l++)
        chase_and_compute<<<blocks, threads>>>(next, n, 1000, 40000, out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    printf("pcsampling: %d launches done\n", launches);
    CK(cudaFree(next));
    CK(cudaFree(out));
    free(host);
    return 0;
}
