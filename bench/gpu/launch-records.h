/*
 * launch-records.h - API records of the kernel launch calls alone, for the
 * CUPTI benchmarks (launch_bench.cu, ts_probe.cu). CUPTI writes none for a
 * call enabled by id while its kind is off, so the RUNTIME and DRIVER
 * kinds go on and every other call goes off again by id. Returns 0, or -1
 * when CUPTI refused a kind.
 */
#ifndef KSCOPE_BENCH_LAUNCH_RECORDS_H
#define KSCOPE_BENCH_LAUNCH_RECORDS_H

#include <cupti.h>

static int launch_records_only(void)
{
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER) != CUPTI_SUCCESS)
        return -1;
    for (uint32_t id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; id++)
        if (id != CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
            cuptiActivityEnableRuntimeApi(id, 0);
    for (uint32_t id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++)
        if (id != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
            cuptiActivityEnableDriverApi(id, 0);
    return 0;
}

#endif
