/*
 * ts_probe.cu - when and where CUPTI calls the activity timestamp callback:
 * the facts kscope's attribution from API records rests on (src/gpu/cupti/
 * ctxlog.c). Two threads launch kernels, first with kernel records alone,
 * then with API records of the launch calls; the callback notes each value
 * it returns with the calling thread's OS id. Printed: callback calls per
 * launch and per thread, how many API records' start and end are a value
 * returned on their own thread (threadId read as the OS id), whether the
 * runtime's and the driver's records share a correlation id, and how many
 * kernel records came before their launch's API record. A diagnostic run
 * by tools/gpu-run.sh; it exits non-zero when no API record came or one's
 * start was not returned on its thread.
 *
 * TS_PROBE picks how the launches' API records are asked for: "filter"
 * (default: the RUNTIME and DRIVER kinds on, every other call off by id),
 * "cbid" (the launch calls on by id alone, as cupti_activity.h says may
 * be done: CUDA 13's CUPTI then writes none), "kind" (every call's).
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "launch-records.h"

#define MAX_TS   (1 << 20)
#define MAX_CORR (1 << 16)
#define LAUNCHES 2000

__global__ void ts_kernel() {}

static struct {
    uint64_t ns;
    uint32_t tid;
} ts[MAX_TS];
static int n_ts, launch_tids[2];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int api_seen[MAX_CORR], kernels_before_api, kernels, api_records, start_ok, end_ok;
static int tid_ok, shared_corr;

static uint64_t CUPTIAPI stamp(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
    pthread_mutex_lock(&mu);
    if (n_ts < MAX_TS) {
        ts[n_ts].ns = ns;
        ts[n_ts].tid = (uint32_t)syscall(SYS_gettid);
        n_ts++;
    }
    pthread_mutex_unlock(&mu);
    return ns;
}

static int returned_on(uint64_t ns, uint32_t tid)
{
    for (int i = 0; i < n_ts; i++)
        if (ts[i].ns == ns && ts[i].tid == tid)
            return 1;
    return 0;
}

static void CUPTIAPI request(uint8_t **buf, size_t *size, size_t *max)
{
    *buf = (uint8_t *)aligned_alloc(8, 1 << 20);
    *size = 1 << 20;
    *max = 0;
}

static void CUPTIAPI complete(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid)
{
    CUpti_Activity *r = NULL;
    pthread_mutex_lock(&mu);
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME || r->kind == CUPTI_ACTIVITY_KIND_DRIVER) {
            CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
            if (api_records < 3)
                printf("api record kind %d cbid %u corr %u tid %u\n", (int)r->kind, a->cbid,
                       a->correlationId, a->threadId);
            api_records++;
            start_ok += returned_on(a->start, a->threadId);
            end_ok += returned_on(a->end, a->threadId);
            tid_ok +=
                a->threadId == (uint32_t)launch_tids[0] || a->threadId == (uint32_t)launch_tids[1];
            if (api_seen[a->correlationId % MAX_CORR])
                shared_corr++;
            api_seen[a->correlationId % MAX_CORR] = 1;
        } else if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
            kernels++;
            kernels_before_api += !api_seen[k->correlationId % MAX_CORR];
        }
    }
    pthread_mutex_unlock(&mu);
    free(buf);
}

static void *launcher(void *arg)
{
    int i = (int)(long)arg;
    launch_tids[i] = (int)syscall(SYS_gettid);
    for (int k = 0; k < LAUNCHES; k++)
        ts_kernel<<<1, 1>>>();
    cudaDeviceSynchronize();
    return NULL;
}

static void round_of(const char *what)
{
    n_ts = 0;
    pthread_t t;
    pthread_create(&t, NULL, launcher, (void *)1L);
    launcher((void *)0L);
    pthread_join(t, NULL);
    int per[2] = {0, 0}, other = 0;
    for (int i = 0; i < n_ts; i++) {
        if (ts[i].tid == (uint32_t)launch_tids[0])
            per[0]++;
        else if (ts[i].tid == (uint32_t)launch_tids[1])
            per[1]++;
        else
            other++;
    }
    printf("%-12s timestamp calls: %d (%.2f per launch): launching threads %d and %d, other "
           "threads %d\n",
           what, n_ts, n_ts / (2.0 * LAUNCHES), per[0], per[1], other);
}

int main(void)
{
    cudaFree(0);
    cuptiActivityRegisterTimestampCallback(stamp);
    if (cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS)
        printf("cuptiSetThreadIdType(SYSTEM) failed\n");
    cuptiActivityRegisterCallbacks(request, complete);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    round_of("kernels");
    cuptiActivityFlushAll(1);
    CUptiResult rt =
        cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1);
    CUptiResult dr = cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1);
    printf("cuptiActivityEnableRuntimeApi %d, cuptiActivityEnableDriverApi %d\n", (int)rt, (int)dr);
    const char *how = getenv("TS_PROBE") ? getenv("TS_PROBE") : "filter";
    if (!strcmp(how, "kind")) {
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    } else if (!strcmp(how, "filter") && launch_records_only() < 0) {
        printf("cuptiActivityEnable(RUNTIME/DRIVER) failed\n");
    }
    printf("TS_PROBE=%s\n", how);
    memset(api_seen, 0, sizeof api_seen);
    kernels = kernels_before_api = 0;
    round_of("api");
    /* the records' checks need this round's timestamps: flush first */
    cuptiActivityFlushAll(1);
    printf("api records %d: start returned on its thread %d, end %d, threadId a launching "
           "thread's OS id %d; records sharing a correlation id %d\n",
           api_records, start_ok, end_ok, tid_ok, shared_corr);
    printf("kernel records %d, of which before their launch's API record %d\n", kernels,
           kernels_before_api);
    return api_records > 0 && start_ok == api_records ? 0 : 1;
}
