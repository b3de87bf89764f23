/*
 * capture.c - `--capture-range=cudaProfilerApi`: the program's calls to
 * cudaProfilerStart/Stop (runtime) and cuProfilerStart/Stop (driver) turn
 * the launcher session on and off (through the core's
 * kscope__capture_range hook).
 *
 * libkscope is preloaded, so its definitions of these four functions come
 * first in the global symbol search: a program (or torch) that calls them
 * through a shared libcudart or libcuda reaches us, we tell the launcher,
 * and we call the real function. The real one is found with RTLD_NEXT, or,
 * when the library was loaded into a private scope (Python extensions are
 * opened RTLD_LOCAL), among the loaded objects by name. A program linked
 * with the static cudart calls its own copy, which only a CUPTI callback
 * on these APIs could see.
 */
#define _GNU_SOURCE
#include "gpu/cupti/inject/inject.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

typedef int (*profiler_fn)(void);

#define ERROR_UNKNOWN 999 /* cudaErrorUnknown and CUDA_ERROR_UNKNOWN */

typedef struct find_ctx {
    const char *lib; /* "libcudart.so" or "libcuda.so" */
    const char *sym;
    void *self_base;
    profiler_fn fn;
} find_ctx;

static int find_in_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    find_ctx *c = arg;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, c->lib, strlen(c->lib)) != 0)
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return 0;
    void *p = dlsym(h, c->sym);
    dlclose(h);
    Dl_info di;
    if (p && dladdr(p, &di) && di.dli_fbase != c->self_base) {
        c->fn = (profiler_fn)(uintptr_t)p;
        return 1;
    }
    return 0;
}

void *kscope__real_symbol(const char *lib, const char *sym)
{
    Dl_info self;
    void *self_base = dladdr((void *)&kscope__real_symbol, &self) ? self.dli_fbase : NULL;
    void *p = dlsym(RTLD_NEXT, sym);
    Dl_info di;
    if (p && dladdr(p, &di) && di.dli_fbase != self_base)
        return p;
    find_ctx c = {lib, sym, self_base, NULL};
    dl_iterate_phdr(find_in_object, &c);
    return (void *)(uintptr_t)c.fn;
}

static int forward(const char *lib, const char *sym, _Atomic(profiler_fn) *cache)
{
    profiler_fn fn = atomic_load(cache);
    if (!fn) {
        fn = (profiler_fn)(uintptr_t)kscope__real_symbol(lib, sym);
        if (!fn) {
            kscope__warn_once(sym, "%s: no %s loaded to forward the call to", sym, lib);
            return ERROR_UNKNOWN;
        }
        atomic_store(cache, fn);
    }
    return fn();
}

/* Recording starts after the real call (its own work is not of interest)
 * and stops before it, as with Nsight's capture range. */
static int profiler_call(int start, const char *lib, const char *sym, _Atomic(profiler_fn) *cache)
{
    if (!start)
        kscope__capture_range(0);
    int rc = forward(lib, sym, cache);
    if (start)
        kscope__capture_range(1);
    return rc;
}

/* The four entry points: the runtime's pair and the driver's, each with
 * the real function it forwards to found once. */
#define PROFILER_ENTRY(name, lib, start)                                                           \
    KSCOPE_EXTERN int name(void);                                                                  \
    int name(void)                                                                                 \
    {                                                                                              \
        static _Atomic(profiler_fn) real;                                                          \
        return profiler_call(start, lib, #name, &real);                                            \
    }

PROFILER_ENTRY(cudaProfilerStart, "libcudart.so", 1)
PROFILER_ENTRY(cudaProfilerStop, "libcudart.so", 0)
PROFILER_ENTRY(cuProfilerStart, "libcuda.so", 1)
PROFILER_ENTRY(cuProfilerStop, "libcuda.so", 0)
