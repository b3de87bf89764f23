/*
 * subscriber.cu - kscope and another CUPTI subscriber in one process.
 *
 *   release   kscope captures, finalizes, and leaves CUPTI free: another
 *             tool's cuptiSubscribe then succeeds
 *   busy      another tool subscribed first: kscope says so (one line on
 *             stderr, checked by run-subscriber.sh) and still records host
 *             scopes, without kernels
 *
 * usage: subscriber release|busy OUTPATH
 */
#include <cuda_runtime.h>
#include <cupti.h>
#include <stdio.h>
#include <string.h>

#include "kscope.h"

__global__ void sub_kernel() {}

static void CUPTIAPI ignore(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *) {}

static int session(const char *path)
{
    kscope_session_opts o;
    memset(&o, 0, sizeof o);
    o.name = path;
    int s = kscope_start(&o);
    if (s < 0) {
        fprintf(stderr, "kscope_start: %s\n", kscope_last_error());
        return 1;
    }
    kscope_enter("host");
    sub_kernel<<<1, 1>>>();
    cudaDeviceSynchronize();
    kscope_exit("host");
    if (kscope_finalize(s, "hatchet") < 0) {
        fprintf(stderr, "kscope_finalize: %s\n", kscope_last_error());
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    cudaFree(0);
    CUpti_SubscriberHandle other;
    if (!strcmp(argv[1], "release")) {
        if (session(argv[2]))
            return 1;
        CUptiResult rc = cuptiSubscribe(&other, ignore, NULL);
        printf("subscribe after kscope finalize: %d\n", (int)rc);
        return rc == CUPTI_SUCCESS ? 0 : 1;
    }
    if (cuptiSubscribe(&other, ignore, NULL) != CUPTI_SUCCESS) {
        fprintf(stderr, "test setup: own cuptiSubscribe failed\n");
        return 1;
    }
    int rc = session(argv[2]);
    cuptiUnsubscribe(other);
    return rc;
}
