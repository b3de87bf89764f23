/*
 * nvtx.h - NVTX as a range source (nvtx.c): what the tests reach directly.
 */
#ifndef KSCOPE_GPU_NVTX_H
#define KSCOPE_GPU_NVTX_H

#include "kscope-internal.h"

/* Hand our callbacks to an NVTX instance, as the injection entry does
 * (without starting kscope run's session). Returns 1 on success, 0 on
 * failure, as NVTX expects. */
int kscope__nvtx_attach(const void *(*get_export_table)(uint32_t id));

/* The registry's entry (gpu/registry.c). */
extern const kscope__range_source kscope__nvtx_source;

#endif /* KSCOPE_GPU_NVTX_H */
