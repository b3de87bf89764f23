/*
 * gpu-none.c - the GPU parts of a build without the CUDA toolkit: no
 * backend, and NVTX emission that does nothing. Host scopes work as usual.
 */
#include "kscope-internal.h"

/* Public (kscope.h): no kernels are recorded in this build, so metadata is
 * only checked. */
int kscope_launch_metadata(const kscope_launch_meta *meta)
{
    if (!meta)
        return kscope__fail(KSCOPE_EINVAL, "launch metadata: NULL");
    if (meta->n_custom && (!meta->custom_names || !meta->custom_values))
        return kscope__fail(KSCOPE_EINVAL,
                            "launch metadata: %zu custom metrics but no names or values",
                            meta->n_custom);
    return 0;
}

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
