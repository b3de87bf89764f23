/*
 * registry.c - the GPU backends this kscope knows of, one line each.
 *
 * Adding a backend takes one folder under src/gpu/ (its kscope__backend
 * and what it needs) and one line below. A backend a build leaves out
 * still has its line, with no start(): asking for it then says what the
 * build lacked instead of calling the name unknown. Tests add stand-ins
 * with kscope__backend_register.
 */
#include "kscope-internal.h"

#ifdef KSCOPE_HAVE_CUDA
extern const kscope__backend kscope__cupti_backend;
#else
#include "gpu/cupti/cupti-about.h"
static const kscope__backend kscope__cupti_backend = {KSCOPE__CUPTI_ABOUT};
#endif

static const kscope__backend *const builtin[] = {
    &kscope__cupti_backend, /* gpu/cupti: NVIDIA GPUs */
};

#define N_BUILTIN (sizeof builtin / sizeof builtin[0])
#define N_EXTRA   4

/* Written before the first session starts, read-only after. */
static const kscope__backend *extra[N_EXTRA];
static size_t n_extra;

const kscope__backend *kscope__backend_at(size_t i)
{
    if (i < N_BUILTIN)
        return builtin[i];
    i -= N_BUILTIN;
    return i < n_extra ? extra[i] : NULL;
}

int kscope__backend_register(const kscope__backend *b)
{
    if (n_extra == N_EXTRA)
        return kscope__fail(KSCOPE_ETOOMANY, "more than %d backends registered", N_EXTRA);
    extra[n_extra++] = b;
    return 0;
}
