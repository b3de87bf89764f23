/*
 * fake-devnodes.c - preloaded where there is no GPU, answers the CUPTI
 * backend's look for GPU device nodes (/dev/nvidia<N>) with a file that
 * exists, so the backend goes on to the stand-in driver and CUPTI of
 * test/fake-cuda.c. Every other pattern is looked up for real.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <glob.h>
#include <string.h>

int glob(const char *pattern, int flags, int (*err)(const char *, int), glob_t *out)
{
    static int (*real)(const char *, int, int (*)(const char *, int), glob_t *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "glob");
    if (strncmp(pattern, "/dev/nvidia", 11) == 0)
        pattern = "/dev/null";
    return real(pattern, flags, err, out);
}
