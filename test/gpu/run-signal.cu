// run-signal.cu - a CUDA program ended by a signal under `kscope run`
// (test/gpu/run-signal.sh): it launches kernels until killed, waits in a
// long synchronize, or raises a signal itself. The profile must still hold
// its kernels, and the process end by the signal.
// Usage: run-signal loop | sync | raise
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void small_kernel(int *p)
{
    atomicAdd(p, 1);
}

__global__ void long_kernel(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles)
        ;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "loop";
    int *d = nullptr;
    cudaMalloc(&d, sizeof(int));
    for (int i = 0; i < 100; i++)
        small_kernel<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    if (strcmp(mode, "raise") == 0) {
        printf("raising\n");
        fflush(stdout);
        raise(SIGINT);
        printf("after\n");
        return 0;
    }
    printf("ready\n");
    fflush(stdout);
    if (strcmp(mode, "sync") == 0) {
        int rate = 0;
        cudaDeviceGetAttribute(&rate, cudaDevAttrClockRate, 0); // kHz
        long_kernel<<<1, 1>>>((long long)rate * 1000 * 30);     // about 30 s
        cudaDeviceSynchronize();
    } else {
        for (;;)
            small_kernel<<<1, 32>>>(d);
    }
    printf("not killed\n");
    return 0;
}
