/*
 * cupti_floor.c - the floor for `kscope run`'s overhead: a CUDA injection
 * library (CUDA_INJECTION64_PATH) that only enables CUPTI's concurrent-
 * kernel activity and counts the records, with no attribution at all. Any
 * CUPTI-based tracer pays at least this much per launch.
 *
 * FLOOR_CALLBACKS=1 adds what any attribution of a kernel to its launch
 * needs from CUPTI: a callback at the begin and end of each kernel launch
 * call (runtime and driver), which notes the call's correlation id and
 * nothing else. CUPTI writes API records no cheaper (bench/gpu/ts_probe.cu,
 * launch_bench.cu's floor_api), so this is the floor of attribution.
 * Build: cc -shared -fPIC -O2 -o floor.so cupti_floor.c
 *        -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcupti
 */
#include <cupti.h>

#include <stdio.h>
#include <stdlib.h>

#define BUF_SIZE (8u << 20)

static size_t records;
static uint32_t last_call[1 << 16]; /* correlation ids, by their low bits */

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
    *buf = aligned_alloc(8, BUF_SIZE);
    *size = *buf ? BUF_SIZE : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
                                      size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
        records++;
    free(buf);
}

static void at_exit(void)
{
    cuptiActivityFlushAll(1);
    if (getenv("FLOOR_VERBOSE"))
        fprintf(stderr, "floor: %zu activity records; last call %u\n", records, last_call[1]);
}

static void CUPTIAPI on_call(void *arg, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void *data)
{
    (void)arg;
    (void)domain;
    (void)cbid;
    const CUpti_CallbackData *cb = data;
    if (cb->callbackSite == CUPTI_API_ENTER)
        last_call[cb->correlationId & 0xFFFFu] = cb->correlationId;
}

static int follow_launches(void)
{
    CUpti_SubscriberHandle sub;
    if (cuptiSubscribe(&sub, on_call, NULL) != CUPTI_SUCCESS)
        return 0;
    return cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                               CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) == CUPTI_SUCCESS &&
           cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API,
                               CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) == CUPTI_SUCCESS;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    const char *cb = getenv("FLOOR_CALLBACKS");
    if (cb && *cb == '1' && !follow_launches()) {
        fprintf(stderr, "floor: cannot follow the launch calls (cuptiSubscribe)\n");
        return 0;
    }
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
        return 0;
    atexit(at_exit);
    return 1;
}
