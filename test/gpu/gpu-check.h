/*
 * gpu-check.h - the GPU test programs' checks: CK(cuda call) and KS(kscope
 * call) print the call, where it was made and the error, then exit 1.
 */
#ifndef KSCOPE_GPU_CHECK_H
#define KSCOPE_GPU_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include "kscope.h"

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define KS(x)                                                                                      \
    do {                                                                                           \
        int r_ = (x);                                                                              \
        if (r_ < 0) {                                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, kscope_last_error());       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#endif
