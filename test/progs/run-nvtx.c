/*
 * run-nvtx.c - a program annotated with NVTX v3 only (no kscope calls):
 * push/pop, start/end ranges (nested, out of order, ended on another
 * thread), a domain with registered strings, and marks. Under `kscope run`
 * each range must become a scope of the tree.
 */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static nvtxRangeId_t cross_id;

static void *end_elsewhere(void *arg)
{
    (void)arg;
    nvtxRangeEnd(cross_id);
    return NULL;
}

int main(void)
{
    nvtxRangePushA("step");
    nvtxRangePushA("forward");
    nvtxMarkA("checkpoint");
    nvtxRangePop();
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xFF00FF00u;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "backward";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxRangePop();

    /* start/end: nested, then ended out of order */
    nvtxRangeId_t outer = nvtxRangeStartA("load");
    nvtxRangeId_t inner = nvtxRangeStartA("decode");
    nvtxRangeEnd(inner);
    nvtxRangeEnd(outer);
    nvtxRangeId_t first = nvtxRangeStartA("overlap-a");
    nvtxRangeId_t second = nvtxRangeStartA("overlap-b");
    nvtxRangeEnd(first);
    nvtxRangeEnd(second);

    /* a domain with registered strings */
    nvtxDomainHandle_t dom = nvtxDomainCreateA("mylib");
    nvtxStringHandle_t reg = nvtxDomainRegisterStringA(dom, "registered-op");
    nvtxEventAttributes_t r;
    memset(&r, 0, sizeof r);
    r.version = NVTX_VERSION;
    r.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    r.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    r.message.registered = reg;
    for (int i = 0; i < 2; i++) {
        nvtxDomainRangePushEx(dom, &r);
        nvtxDomainMarkEx(dom, &r);
        nvtxDomainRangePop(dom);
    }
    nvtxEventAttributes_t d = a;
    d.message.ascii = "domain-range";
    nvtxRangeId_t did = nvtxDomainRangeStartEx(dom, &d);
    nvtxDomainRangeEnd(dom, did);

    /* a range ended by another thread */
    cross_id = nvtxRangeStartA("cross-thread");
    pthread_t th;
    pthread_create(&th, NULL, end_elsewhere, NULL);
    pthread_join(th, NULL);
    nvtxRangePushA("after-cross");
    nvtxRangePop();
    nvtxDomainDestroy(dom);
    printf("nvtx program done\n");
    return 0;
}
