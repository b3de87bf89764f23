/*
 * cupti-guard.c - a program run by `kscope run` that subscribes to CUPTI
 * itself (torch.profiler, Proton, its own tracer) finds CUPTI taken: only
 * one subscriber may exist in a process. The preloaded libkscope stands in
 * for cuptiSubscribe to say so plainly, as one line of the run's result
 * (and a non-zero exit of `kscope run`), then hands the program CUPTI's own
 * answer. When kscope holds no subscription (backend none, no GPU), the
 * program's call simply succeeds.
 */
#define _GNU_SOURCE
#include "gpu/cupti/inject/inject.h"

#include <stdint.h>

#define CUPTI_MULTIPLE_SUBSCRIBERS 39 /* CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED */
#define CUPTI_NOT_INITIALIZED      15 /* CUPTI_ERROR_NOT_INITIALIZED */

typedef int (*subscribe_fn)(void **subscriber, void *callback, void *userdata);

KSCOPE_EXTERN int cuptiSubscribe(void **subscriber, void *callback, void *userdata);

int cuptiSubscribe(void **subscriber, void *callback, void *userdata)
{
    static _Atomic(subscribe_fn) real;
    subscribe_fn fn = atomic_load(&real);
    if (!fn) {
        fn = (subscribe_fn)(uintptr_t)kscope__real_symbol("libcupti.so", "cuptiSubscribe");
        if (!fn)
            return CUPTI_NOT_INITIALIZED;
        atomic_store(&real, fn);
    }
    int rc = fn(subscriber, callback, userdata);
    if (rc == CUPTI_MULTIPLE_SUBSCRIBERS) /* reported while kscope run's session runs */
        kscope__report_conflict("the program subscribes to CUPTI itself (a profiler such as "
                                "torch.profiler or Proton); kscope holds the one CUPTI "
                                "subscription, so the program's own profiler gets no data");
    return rc;
}
