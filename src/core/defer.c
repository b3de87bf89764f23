/*
 * defer.c - a copy of the recorder linked into the program itself
 * (libkscope.a) under `kscope run`.
 *
 * kscope run preloads libkscope.so: its launcher session, the GPU backend
 * (which attributes kernels to that copy's scope stacks), NVTX's injection
 * and the interposed GPU runtime calls all live there. A program linked
 * with the static library calls its own copy directly, which no preload
 * can interpose, so that copy hands each recording call of the public API
 * to the loaded libkscope.so, found by name among the loaded objects. Its
 * own sessions then never start, so it records nothing itself and the
 * process keeps one kscope state, as with the shared library.
 *
 * The choice is made once, at the first call that needs it: deferred when
 * the process runs under kscope run (KSCOPE_RUN=1, set by the command
 * line; see run/run.h), this copy is not libkscope.so, and a libkscope.so
 * is loaded. A copy that defers never annotates, so the scope calls ask
 * only on their "no session" path: a copy that records for itself pays one
 * more load of a flag it reads anyway.
 */
#define _GNU_SOURCE
#include "core.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

_Atomic int kscope__defer_state; /* KSCOPE__DEFER_* */
const kscope__api *kscope__defer_api;

static kscope__api api;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

int kscope__run_is_shared_library(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libkscope.so", 12) == 0;
}

/* dl_iterate_phdr callback: the name of the first loaded libkscope.so
 * (never this copy, which resolve() found to be named otherwise). */
static int find_shared(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    if (!info->dlpi_name || !kscope__run_is_shared_library(info->dlpi_name))
        return 0;
    *(const char **)arg = info->dlpi_name;
    return 1;
}

/* Fill `api` from the library named `name`; 0 when it lacks a function. */
static int load_api(const char *name)
{
    void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD); /* kept: the library stays */
    if (!h)
        return 0;
    const char *missing = NULL;
#define KSCOPE__LOOK(fn, ret, args)                                                                \
    if (!(*(void **)&api.fn = dlsym(h, "kscope_" #fn)) && !missing)                                \
        missing = "kscope_" #fn;
    KSCOPE__DEFERRED_API(KSCOPE__LOOK)
#undef KSCOPE__LOOK
    if (missing) {
        kscope__warn_once("defer", "%s lacks %s: the program's own kscope records instead", name,
                          missing);
        return 0;
    }
    return 1;
}

static void resolve(void)
{
    int state = KSCOPE__DEFER_NO;
    const char *run = getenv("KSCOPE_RUN");
    Dl_info self;
    if (run && strcmp(run, "1") == 0 && dladdr((void *)&resolve, &self) &&
        !(self.dli_fname && kscope__run_is_shared_library(self.dli_fname))) {
        const char *name = NULL;
        dl_iterate_phdr(find_shared, &name);
        if (name && load_api(name)) {
            kscope__defer_api = &api;
            state = KSCOPE__DEFER_YES;
        }
    }
    atomic_store_explicit(&kscope__defer_state, state, memory_order_release);
}

const kscope__api *kscope__defer_resolve(void)
{
    pthread_once(&resolve_once, resolve);
    return atomic_load_explicit(&kscope__defer_state, memory_order_acquire) == KSCOPE__DEFER_YES
               ? kscope__defer_api
               : NULL;
}

int kscope__defer_rc(const kscope__api *d, int rc)
{
    const char *msg = rc < 0 ? d->last_error() : NULL;
    return msg && *msg ? kscope__fail(rc, "%s", msg) : rc;
}
