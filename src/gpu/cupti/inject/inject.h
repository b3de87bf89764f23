/*
 * inject.h - what the CUDA entry points of the preloaded libkscope share.
 *
 * These files stand in for CUDA and CUPTI functions and hold the driver's
 * injection entry. They go into libkscope only (src/sources.txt's
 * inject-cuda line), never into the Python extension, and reach `kscope
 * run` only through the core's hooks (kscope-internal.h).
 */
#ifndef KSCOPE_CUPTI_INJECT_H
#define KSCOPE_CUPTI_INJECT_H

#include "kscope-internal.h"

/* The real definition of `sym` from the loaded library whose file name
 * starts with `lib` (e.g. "libcudart.so"), for the functions libkscope
 * stands in for when preloaded: the next definition after ours in the
 * global scope, else one in a library loaded into a private scope.
 * NULL when none is loaded. */
void *kscope__real_symbol(const char *lib, const char *sym);

#endif /* KSCOPE_CUPTI_INJECT_H */
