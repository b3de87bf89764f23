/*
 * cuda.h - the NVIDIA parts every build has, with no CUDA header: where
 * CUPTI is found (cupti-lib.c) and what this machine offers the CUPTI
 * backend (probe.c). The backend (gpu/cupti/) and its registry entry use
 * them.
 */
#ifndef KSCOPE_GPU_CUDA_H
#define KSCOPE_GPU_CUDA_H

#include "kscope-internal.h"

/* dlopen CUPTI: $KSCOPE_CUPTI_LIBRARY if set, else the usual names and
 * places. NULL when none loads; `tried` lists them. */
void *kscope__cupti_open(char *tried, size_t size);

/* The CUPTI backend's probe and profiler calls (kscope__backend.probe,
 * kscope__backend.profiler). */
void kscope__cuda_probe(kscope__probe *out);
int kscope__cuda_profiler(int start);

#endif /* KSCOPE_GPU_CUDA_H */
