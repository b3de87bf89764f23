/*
 * inject.c - the CUDA driver's entry into libkscope: with
 * CUDA_INJECTION64_PATH naming the library (`kscope run` sets it), the
 * driver loads it inside cuInit and calls InitializeInjection.
 */
#include "gpu/cupti/inject/inject.h"

KSCOPE_EXTERN int InitializeInjection(void);

/* Start the launcher session and note that the program used CUDA. */
int InitializeInjection(void)
{
    kscope__gpu_injected();
    return 1;
}
