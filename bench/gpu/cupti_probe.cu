/*
 * cupti_probe.cu - what CUPTI records for one launch of each kind made
 * under a pushed external correlation id: a runtime launch (<<<>>>), a
 * driver launch (cuLaunchKernel), a graph launch, a copy. Prints every
 * record (kind, API name, correlation id, thread id, external id) and the
 * launching thread's ids, so the attribution rules in src/gpu/correlate.c
 * can be checked against the CUPTI and driver at hand. A diagnostic run by
 * tools/gpu-run.sh; it asserts nothing.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__global__ void probe_kernel(int *p)
{
    p[0] += 1;
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
    while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
        switch (r->kind) {
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER: {
            CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
            const char *name = "?";
            cuptiGetCallbackName(r->kind == CUPTI_ACTIVITY_KIND_RUNTIME
                                     ? CUPTI_CB_DOMAIN_RUNTIME_API
                                     : CUPTI_CB_DOMAIN_DRIVER_API,
                                 a->cbid, &name);
            printf("  %-7s %-36s corr %u tid %u start %llu\n",
                   r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? "RUNTIME" : "DRIVER", name,
                   a->correlationId, a->threadId, (unsigned long long)a->start);
            break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            CUpti_ActivityExternalCorrelation *x = (CUpti_ActivityExternalCorrelation *)r;
            printf("  EXTCORR kind %d ext %llu corr %u\n", (int)x->externalKind,
                   (unsigned long long)x->externalId, x->correlationId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
            printf("  KERNEL  %-36s corr %u graph %u node %llu start %llu\n", k->name,
                   k->correlationId, k->graphId, (unsigned long long)k->graphNodeId,
                   (unsigned long long)k->start);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)r;
            printf("  MEMCPY  kind %d bytes %llu corr %u runtimeCorr %u\n", m->copyKind,
                   (unsigned long long)m->bytes, m->correlationId, m->runtimeCorrelationId);
            break;
        }
        default:
            printf("  kind %d\n", (int)r->kind);
        }
    }
    free(buf);
}

int main(void)
{
    int *dev;
    cudaMalloc(&dev, 64);
    cudaStream_t st;
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    cudaGraph_t g;
    cudaGraphExec_t exec;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal);
    probe_kernel<<<1, 1, 0, st>>>(dev);
    cudaStreamEndCapture(st, &g);
    cudaGraphInstantiate(&exec, g, 0);
    cudaFunction_t fn;
    cudaGetFuncBySymbol(&fn, (const void *)probe_kernel);

    cuptiActivityRegisterCallbacks(request, complete);
    CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                  CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
                                  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
                                  CUPTI_ACTIVITY_KIND_MEMCPY};
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS)
            printf("enable kind %d failed\n", (int)kinds[i]);
    printf("probe: gettid %ld pthread_self %lu\n", (long)syscall(SYS_gettid),
           (unsigned long)pthread_self());
    uint64_t last;
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 111);
    probe_kernel<<<1, 1>>>(dev);
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 222);
    void *args[] = {&dev};
    CUresult rc = cuLaunchKernel((CUfunction)fn, 1, 1, 1, 1, 1, 1, 0, 0, args, NULL);
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 333);
    cudaGraphLaunch(exec, st);
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    int host = 0;
    cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 444);
    cudaMemcpy(&host, dev, sizeof host, cudaMemcpyDeviceToHost);
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    cudaDeviceSynchronize();
    printf("probe: cuLaunchKernel rc %d; records (ext ids: 111 runtime launch, 222 driver "
           "launch, 333 graph launch, 444 memcpy):\n",
           (int)rc);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    return 0;
}
