/*
 * gpu-check.h - the GPU test programs' checks: CK(cuda call) and KS(kscope
 * call) print the call, where it was made and the error, then exit 1; and
 * what the programs that write profiles share: a session started into
 * their output folder, and the arguments of a two-GPU program.
 */
#ifndef KSCOPE_GPU_CHECK_H
#define KSCOPE_GPU_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* start_in(DIR, NAME, DATA, MODE): kscope_start writing DIR/NAME, with
 * that data ("tree", "trace"; NULL: the default) and mode (NULL: none);
 * exits 1 when it fails. Returns the session. */
static inline int start_in(const char *dir, const char *name, const char *data, const char *mode)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    kscope_session_opts o;
    memset(&o, 0, sizeof o);
    o.name = path;
    o.data = data;
    o.mode = mode;
    int s = kscope_start(&o);
    KS(s);
    return s;
}

/* tree_then_trace(DIR, PREFIX, WORKLOAD): WORKLOAD once in a tree session
 * written to DIR/PREFIX_tree.hatchet, then once in a trace session written
 * to DIR/PREFIX_trace.chrome_trace; exits 1 when a kscope call fails. */
static inline void tree_then_trace(const char *dir, const char *prefix, void (*workload)(void))
{
    char name[256];
    snprintf(name, sizeof name, "%s_tree", prefix);
    int s = start_in(dir, name, "tree", NULL);
    workload();
    KS(kscope_finalize(s, "hatchet"));
    snprintf(name, sizeof name, "%s_trace", prefix);
    s = start_in(dir, name, "trace", NULL);
    workload();
    KS(kscope_finalize(s, "chrome_trace"));
}

/* two_gpu_outdir(PROG, ARGC, ARGV): the OUTDIR of `PROG OUTDIR`; exits 2
 * with a usage line on other arguments, 1 when fewer than two GPUs are
 * there. */
static inline const char *two_gpu_outdir(const char *prog, int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", prog);
        exit(2);
    }
    int n = 0;
    CK(cudaGetDeviceCount(&n));
    if (n < 2) {
        fprintf(stderr, "%s: needs 2 GPUs, found %d\n", prog, n);
        exit(1);
    }
    return argv[1];
}

#endif
