/*
 * registry.c - the GPU backends, range sources and range sinks this kscope
 * knows of, one line each (gpu/backend.h says what each table is).
 *
 * Adding one takes its vendor's folder under src/gpu/ (its table entry
 * and what it needs) and one line in the lists below. A backend a build
 * leaves out still has its line, with no start(): asking for it then says
 * what the build lacked instead of calling the name unknown. Tests add
 * stand-in backends with kscope__backend_register.
 */
#include "kscope-internal.h"

/* ---------------------------------------------------------------- vendors */
/* One line per vendor. */
// clang-format off
#ifdef KSCOPE_HAVE_CUDA
#define IF_CUDA(x) x
#else
#include "gpu/cupti/cupti-about.h"
static const kscope__backend kscope__cupti_backend = {KSCOPE__CUPTI_ABOUT};
#define IF_CUDA(x)
#endif

#define BACKENDS(X) \
    X(kscope__backend, kscope__cupti_backend)         /* gpu/cupti: NVIDIA GPUs */

#define RANGE_SOURCES(X) \
    X(kscope__range_source, kscope__nvtx_source)      /* gpu/nvtx: NVTX */

#define RANGE_SINKS(X) \
    IF_CUDA(X(kscope__range_sink, kscope__nvtx_sink)) /* gpu/cupti/nvtx-emit.c: NVTX */ \
    X(kscope__range_sink, kscope__roctx_sink)         /* gpu/rocm: roctx */
// clang-format on
/* -------------------------------------------------------- end of vendors */

#define DECLARE(type, v) extern const type v;
BACKENDS(DECLARE)
RANGE_SOURCES(DECLARE)
RANGE_SINKS(DECLARE)
#undef DECLARE

#define ENTRY(type, v) &v,
static const kscope__backend *const builtin[] = {BACKENDS(ENTRY)};
static const kscope__range_source *const sources[] = {RANGE_SOURCES(ENTRY) NULL};
static const kscope__range_sink *const sinks[] = {RANGE_SINKS(ENTRY) NULL};
#undef ENTRY

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

const kscope__range_source *kscope__range_source_at(size_t i)
{
    return i < sizeof sources / sizeof sources[0] ? sources[i] : NULL;
}

const kscope__range_sink *kscope__range_sink_at(size_t i)
{
    return i < sizeof sinks / sizeof sinks[0] ? sinks[i] : NULL;
}
