// run-range.cu - kernels before, inside and after a cudaProfilerStart/Stop
// pair, for `kscope run --capture-range=cudaProfilerApi` on a real GPU.
// Each phase launches a kernel of its own name, K times.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

__global__ void before_kernel(int *p)
{
    p[threadIdx.x] += 1;
}
__global__ void inside_kernel(int *p)
{
    p[threadIdx.x] += 2;
}
__global__ void after_kernel(int *p)
{
    p[threadIdx.x] += 3;
}

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 10;
    int *d = nullptr;
    if (cudaMalloc(&d, 32 * sizeof(int)) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 1;
    }
    for (int i = 0; i < k; i++)
        before_kernel<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    cudaProfilerStart();
    for (int i = 0; i < k; i++)
        inside_kernel<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    cudaProfilerStop();
    for (int i = 0; i < k; i++)
        after_kernel<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    cudaFree(d);
    printf("range done\n");
    return 0;
}
