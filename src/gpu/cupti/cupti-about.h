/*
 * cupti-about.h - what the CUPTI backend is, as the registry and the
 * command line see it: its name, the names messages use, and how a program
 * is made to load libkscope. Shared by cupti.c and, in a build without the
 * CUDA headers, by the registry's entry saying the backend was left out.
 */
#ifndef KSCOPE_CUPTI_ABOUT_H
#define KSCOPE_CUPTI_ABOUT_H

#include "gpu/cuda/cuda.h"

/* The CUDA driver loads the library named here into every process at
 * cuInit and calls its InitializeInjection (gpu/cupti/inject/). */
static const char *const kscope__cupti_inject_env[] = {"CUDA_INJECTION64_PATH", NULL};

/* Device scopes' clocks, as PTX names them (%globaltimer, clock64). */
static const char *const kscope__cupti_devscope_clocks[] = {"globaltimer", "clock64"};

/* The descriptive fields of the CUPTI backend's kscope__backend. */
#define KSCOPE__CUPTI_ABOUT                                                                        \
    .name = "cupti", .label = "CUPTI", .device_type = "CUDA", .needs = "CUDA",                     \
    .inject_env = kscope__cupti_inject_env, .conflict_lib = "libcupti.so",                         \
    .capture_range = "cudaProfilerApi", .framework_device = "cuda", .diag_id = "nv",               \
    .probe = kscope__cuda_probe, .profiler = kscope__cuda_profiler,                                \
    .devscope_clocks = kscope__cupti_devscope_clocks

#endif /* KSCOPE_CUPTI_ABOUT_H */
