/*
 * bench-time.h - what the GPU benchmark programs share: CK(cuda call)
 * (test/gpu/gpu-check.h: prints the call and its error, exits 1), zeroed
 * device buffers, the median time of a kernel launch over many
 * launches, timed with CUDA events after a warm-up, and the memory-bound
 * benchmarks' triad (the same work in devscope_bench and devscope_parts).
 */
#ifndef KSCOPE_BENCH_TIME_H
#define KSCOPE_BENCH_TIME_H

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "../../test/gpu/gpu-check.h" /* CK */

/* `count` device buffers of `bytes` each, zeroed, into bufs. */
static inline void zeroed_buffers(void **bufs, int count, size_t bytes)
{
    for (int i = 0; i < count; i++) {
        CK(cudaMalloc(&bufs[i], bytes));
        CK(cudaMemset(bufs[i], 0, bytes));
    }
}

/* The median time in microseconds of launch() (one kernel launch on the
 * default stream) over `launches` launches, after 10 not counted. */
template <class Launch> float median_kernel_us(int launches, Launch launch)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> t;
    for (int i = 0; i < launches + 10; i++) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 10) // warm-up
            t.push_back(ms * 1000.f);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

/* The triad c = a + 2b over this thread's elements k in [from, to) of
 * `per`: element i0 + k * stride. */
__device__ __forceinline__ void triad_rows(const float4 *a, const float4 *b, float4 *c, size_t n,
                                           size_t i0, size_t stride, size_t from, size_t to,
                                           size_t per)
{
    for (size_t k = from; k < to && k < per; k++) {
        size_t i = i0 + k * stride;
        if (i < n) {
            float4 x = a[i], y = b[i];
            c[i] = make_float4(x.x + 2.f * y.x, x.y + 2.f * y.y, x.z + 2.f * y.z, x.w + 2.f * y.w);
        }
    }
}

#endif
