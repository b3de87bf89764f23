/*
 * cxx.c - the C++ runtime's demangler (__cxa_demangle: libstdc++ or
 * libc++abi, C linkage by design), looked up at run time: neither the
 * recorder nor the toolkit links a C++ runtime. Already in the process (a
 * CUDA tool library is C++), else the system's libstdc++; without one,
 * names stay as written.
 */
#define _GNU_SOURCE
#include "util/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);
static cxa_demangle_fn cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void find_cxa_demangle(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!sym) {
        void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        h = h ? h : dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        sym = h ? dlsym(h, "__cxa_demangle") : NULL;
    }
    cxa_demangle = (cxa_demangle_fn)(uintptr_t)sym;
}

int kscope__cxx_demangler(void)
{
    pthread_once(&cxa_once, find_cxa_demangle);
    return cxa_demangle != NULL;
}

char *kscope__cxx_demangle(const char *mangled)
{
    if (!kscope__cxx_demangler())
        return NULL;
    int status = -1;
    char *out = cxa_demangle(mangled, NULL, NULL, &status);
    if (out && status == 0)
        return out;
    free(out);
    return NULL;
}
