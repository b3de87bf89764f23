/*
 * probe.c - what this machine offers the CUPTI backend, found without
 * starting it: the CUDA driver's devices, whether CUPTI and the CUDA
 * runtime load (the CUPTI backend's kscope__backend.probe; Python's
 * detect_backend reports it); and the runtime's profiler start/stop, the
 * calls --capture-range=cudaProfilerApi follows (kscope__backend.profiler,
 * for Python's cuda_profiler_region). Built in every build: nothing here
 * needs a CUDA header.
 */
#include "gpu/cuda/cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Append one reason to out->why ("a; b"). */
static void say(kscope__probe *out, const char *why)
{
    size_t used = strlen(out->why);
    snprintf(out->why + used, sizeof out->why - used, "%s%s", used ? "; " : "", why);
}

/* The driver's device count (cuInit, cuDeviceGetCount), or < 0 with why. */
static int driver_devices(kscope__probe *out)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
        lib = dlopen("libcuda.so", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        say(out, "no CUDA driver (libcuda.so.1 not found)");
        return -1;
    }
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
    int (*count)(int *) = (int (*)(int *))dlsym(lib, "cuDeviceGetCount");
    if (!init || !count || init(0) != 0) {
        say(out, "cuInit failed (no GPU or driver not loaded)");
        return -1;
    }
    int n = 0;
    if (count(&n) != 0 || n <= 0) {
        say(out, "no CUDA device");
        return 0;
    }
    return n;
}

/* The CUDA runtime (already loaded, or found by these names), or NULL. */
static void *runtime(void)
{
    static const char *const names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                        "libcudart.so.11.0"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (lib)
            return lib;
    }
    return NULL;
}

int kscope__cuda_profiler(int start)
{
    void *lib = runtime();
    if (!lib)
        return kscope__fail(KSCOPE_ENOGPU, "libcudart not loadable; cudaProfilerStart cannot be "
                                           "called and the capture would be empty");
    const char *sym = start ? "cudaProfilerStart" : "cudaProfilerStop";
    int (*call)(void) = (int (*)(void))dlsym(lib, sym);
    if (!call)
        return kscope__fail(KSCOPE_ENOGPU, "the CUDA runtime lacks %s", sym);
    call();
    return 0;
}

void kscope__cuda_probe(kscope__probe *out)
{
    memset(out, 0, sizeof *out);
    int n = driver_devices(out);
    out->devices = n > 0 ? n : 0;
    char tried[2048];
    out->tool = kscope__cupti_open(tried, sizeof tried) != NULL;
    if (!out->tool)
        say(out, "CUPTI not found");
    out->runtime = runtime() != NULL;
}
