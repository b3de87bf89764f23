/*
 * cupti_floor.c - the floor for `kscope run`'s overhead: a CUDA injection
 * library (CUDA_INJECTION64_PATH) that only enables CUPTI's concurrent-
 * kernel activity and counts the records, with no attribution at all. Any
 * CUPTI-based tracer pays at least this much per launch.
 * Build: cc -shared -fPIC -O2 -o floor.so cupti_floor.c
 *        -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lcupti
 */
#include <cupti.h>

#include <stdio.h>
#include <stdlib.h>

#define BUF_SIZE (8u << 20)

static size_t records;

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
        fprintf(stderr, "floor: %zu activity records\n", records);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
        return 0;
    atexit(at_exit);
    return 1;
}
