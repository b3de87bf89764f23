/*
 * fake-gpu.h - what the pretend GPU's driver (fake-gpu-driver.c) lends its
 * runtime calls (fake-gpu-runtime.c), both in the stand-in libcuda.so.1: a
 * call's CUPTI callbacks and the activity records of its work. Not
 * exported from the library.
 */
#ifndef KSCOPE_FAKE_GPU_H
#define KSCOPE_FAKE_GPU_H

#include <cuda.h>
#include <cupti.h>
#include <stdint.h>

/* One call of the driver's or the runtime's, open from its begin to its end. */
typedef struct fake_gpu_call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_CallbackData data;
    uint64_t corr_data;
    int rc;
} fake_gpu_call;

/* A call's begin: CUPTI's enter callback, with a new correlation id and
 * the call's parameters (NULL: none given). */
void fake_gpu_call_begin(fake_gpu_call *c, CUpti_CallbackDomain d, CUpti_CallbackId cbid,
                         const char *name, const char *symbol, const void *params);

/* A call's end: CUPTI's exit callback, the call returning rc. */
void fake_gpu_call_end(fake_gpu_call *c, int rc);

/* Makes device 0's primary context current where none is, as the runtime
 * does; whether this thread has a current context now. */
int fake_gpu_runtime_context(void);

/* The work of a launch, copy or set, in the current context (one must be). */
void fake_gpu_kernel_record(const char *name, unsigned grid_x, CUstream s);
CUresult fake_gpu_copy(CUpti_CallbackId cbid, const char *name, uint8_t kind, size_t bytes);
void fake_gpu_memset_record(unsigned char v, size_t n);

/* Copy as a DMA engine does beside running kernels: aligned words whole
 * (emulated kernels on other threads store words atomically). */
void fake_gpu_copy_words(void *dst, const void *src, size_t bytes);

#endif
