/*
 * roctx.c - host scopes as roctx ranges, for the `detailed` level: a range
 * sink of the registry (gpu/backend.h), so rocprof and Omnitrace show
 * kscope's scopes and marks on AMD machines, beside NVTX's for Nsight.
 *
 * roctx (libroctx64) is loaded at run time, at the first detailed scope:
 * the library KSCOPE_ROCTX_LIBRARY names, else the roctx calls the process
 * already has (a tool such as Omnitrace defines them itself, or the
 * program loaded libroctx64), else libroctx64 by its usual names. Without
 * it the sink does not open and nothing is emitted. roctx ranges have no
 * colour.
 */
#include "kscope-internal.h"

#include <dlfcn.h>
#include <stdlib.h>

static struct {
    int (*push)(const char *);
    int (*pop)(void);
    void (*mark)(const char *);
} rx;

/* Take the calls from `lib` (RTLD_DEFAULT: the process's); 1 when the
 * range calls are there. */
static int resolve(void *lib)
{
    *(void **)&rx.push = dlsym(lib, "roctxRangePushA");
    *(void **)&rx.pop = dlsym(lib, "roctxRangePop");
    *(void **)&rx.mark = dlsym(lib, "roctxMarkA");
    return rx.push && rx.pop;
}

static int roctx_open(void)
{
    static const char *const names[] = {"libroctx64.so", "libroctx64.so.4",
                                        "/opt/rocm/lib/libroctx64.so"};
    const char *named = getenv("KSCOPE_ROCTX_LIBRARY");
    if (named && *named) {
        void *lib = dlopen(named, RTLD_NOW | RTLD_GLOBAL);
        return lib && resolve(lib);
    }
    if (resolve(RTLD_DEFAULT))
        return 1;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (lib && resolve(lib))
            return 1;
    }
    return 0;
}

static void roctx_push(const char *name, uint32_t color)
{
    (void)color;
    rx.push(name ? name : "");
}

static void roctx_pop(void)
{
    rx.pop();
}

static void roctx_mark(const char *name)
{
    if (rx.mark)
        rx.mark(name ? name : "");
}

const kscope__range_sink kscope__roctx_sink = {
    .name = "roctx",
    .open = roctx_open,
    .push = roctx_push,
    .pop = roctx_pop,
    .mark = roctx_mark,
};
