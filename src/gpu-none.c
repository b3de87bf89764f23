/*
 * gpu-none.c - the GPU parts of a build without the CUDA toolkit: no
 * backend, and NVTX emission that does nothing. Host scopes work as usual.
 */
#include "kscope-internal.h"

/* No GPU backend in this build. */
const kscope__backend *kscope__gpu_backend(void)
{
    return NULL;
}

/* NVTX ranges need the CUDA headers: nothing to emit. */
void kscope__nvtx_push(const char *name, uint32_t color)
{
    (void)name;
    (void)color;
}

void kscope__nvtx_pop(void) {}
