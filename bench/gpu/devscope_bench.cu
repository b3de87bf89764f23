// devscope_bench.cu - what device-side scopes cost a kernel: a memory-bound
// kernel (a triad over 3 x 64 MiB, ~55 us on the H200) and a compute-bound
// one (FMA chains, ~420 us there), with its work cut into S scopes per
// thread (S = 0, 1, 4, 16; S = 0 has no scope at all). Run as
//   devscope_bench mem|comp S [LAUNCHES]
// it prints "median_us <t>": the median kernel time over LAUNCHES (default
// 200) launches, timed with CUDA events. devscope_bench.sh runs it bare and
// under kscope with and without device scopes.
#include <cstring>

#include <kscope/device.h>

#include "bench-time.h"

template <int S> __global__ void mem(const float4 *a, const float4 *b, float4 *c, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t per = (n + stride - 1) / stride; // elements per thread
    size_t chunk = S ? (per + S - 1) / S : per;
    size_t i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
#pragma unroll 1
    for (int s = 0; s < (S ? S : 1); s++) {
        kscope_device_t sc = {0, 0};
        if (S)
            sc = KSCOPE_DEVICE_ENTER("chunk");
        triad_rows(a, b, c, n, i0, stride, s * chunk, (s + 1) * chunk, per);
        if (S)
            kscope_device_exit(sc);
    }
}

template <int S> __global__ void comp(float *out, int iters)
{
    float x = threadIdx.x * 1e-3f, y = 1.0001f, z = 0.9999f, w = 0.5f;
    int chunk = S ? iters / S : iters;
#pragma unroll 1
    for (int s = 0; s < (S ? S : 1); s++) {
        kscope_device_t sc = {0, 0};
        if (S)
            sc = KSCOPE_DEVICE_ENTER("chunk");
#pragma unroll 8
        for (int k = 0; k < chunk; k++) {
            x = fmaf(x, y, z);
            w = fmaf(w, z, x);
            y = fmaf(y, w, 1e-7f);
            z = fmaf(z, x, -1e-7f);
        }
        if (S)
            kscope_device_exit(sc);
    }
    if (x + y + z + w == 12345.f)
        out[threadIdx.x] = x;
}

template <int S> void launch(bool is_mem, void **p, size_t n)
{
    if (is_mem)
        mem<S><<<132 * 8, 256>>>((const float4 *)p[0], (const float4 *)p[1], (float4 *)p[2], n);
    else
        comp<S><<<132 * 4, 256>>>((float *)p[0], 16384);
}

int main(int argc, char **argv)
{
    bool is_mem = argc > 1 && !strcmp(argv[1], "mem");
    int scopes = argc > 2 ? atoi(argv[2]) : 0;
    int launches = argc > 3 ? atoi(argv[3]) : 200;
    size_t n = (64u << 20) / sizeof(float4);
    void *p[3];
    zeroed_buffers(p, 3, n * sizeof(float4));
    float t = median_kernel_us(launches, [&] {
        switch (scopes) {
        case 0:
            launch<0>(is_mem, p, n);
            break;
        case 1:
            launch<1>(is_mem, p, n);
            break;
        case 4:
            launch<4>(is_mem, p, n);
            break;
        default:
            launch<16>(is_mem, p, n);
            break;
        }
    });
    printf("median_us %.2f\n", t);
    return 0;
}
