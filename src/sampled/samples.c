/*
 * samples.c - where sessions find resource samples: the sampler that
 * registered itself (src/diag/ when a recorder starts), behind one atomic
 * pointer so the core needs nothing from diag to build its outputs.
 */
#include "kscope-internal.h"

static _Atomic(const kscope__sampler *) sampler;

void kscope__set_sampler(const kscope__sampler *s)
{
    atomic_store(&sampler, s);
}

void kscope__sampler_each(uint64_t t0_ns, uint64_t t1_ns, kscope__sample_fn fn, void *arg)
{
    const kscope__sampler *s = atomic_load(&sampler);
    if (s)
        s->each(t0_ns, t1_ns, fn, arg);
}

size_t kscope__sampler_summary(uint64_t t0_ns, uint64_t t1_ns, kscope__summary_fn emit, void *arg)
{
    const kscope__sampler *s = atomic_load(&sampler);
    return s ? s->summary(t0_ns, t1_ns, emit, arg) : 0;
}
