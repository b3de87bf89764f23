/*
 * cupti-lib.c - where the CUPTI library is found: $KSCOPE_CUPTI_LIBRARY
 * when set (a stand-in in tests, or a CUPTI other than the toolkit's),
 * else the names and folders a CUDA install uses. Shared by the backend
 * (gpu/cupti/cupti.c), `kscope bench`'s floor (gpu/cupti/bench.c) and the
 * probe (probe.c, what Python's detect_backend reports), so all of them
 * load the same library.
 */
#include "gpu/cuda/cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *kscope__cupti_open(char *tried, size_t size)
{
    const char *env = getenv("KSCOPE_CUPTI_LIBRARY");
    const char *home = getenv("CUDA_HOME");
    char home_path[4096] = "";
    if (home && *home)
        snprintf(home_path, sizeof home_path, "%s/lib64/libcupti.so", home);
    const char *candidates[] = {
        "libcupti.so.13",
        "libcupti.so",
        home_path,
        "/usr/local/cuda/lib64/libcupti.so",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
    };
    size_t n = sizeof candidates / sizeof candidates[0];
    if (env && *env) {
        candidates[0] = env;
        n = 1;
    }
    tried[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (!candidates[i][0])
            continue;
        void *lib = dlopen(candidates[i], RTLD_NOW | RTLD_GLOBAL);
        if (lib)
            return lib;
        size_t used = strlen(tried);
        snprintf(tried + used, size - used, "%s%s", used ? ", " : "", candidates[i]);
    }
    return NULL;
}
