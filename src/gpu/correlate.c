/*
 * correlate.c - which calling context launched each GPU record.
 *
 * kscope pushes the current context id (a CCT node) onto CUPTI's external
 * correlation stack at every scope boundary, so CUPTI writes, before each
 * runtime or driver API record made inside a scope, an EXTERNAL_CORRELATION
 * record mapping the call's correlation id to that context. A kernel or
 * copy record carries the correlation id of the API call that launched it
 * (for graph replays: of the graph launch), so attribution is two table
 * lookups and no per-launch callback.
 *
 * Records from different buffers may arrive out of order. The API record
 * of a launch comes after its external correlation record, so once
 * the API record of a launch has been seen, its context is known for good:
 * a kernel whose API record is not yet there waits in `pending` until it
 * is (or until a flush, or until it is too old to hope), then goes to the
 * context found, or the global root (ctx 0) when it had none.
 *
 * Every function here runs under the backend's buffer lock, except
 * kscope__corr_put_meta (launching threads, lock-free).
 */
#include "gpu/gpu-internal.h"

#include <stdlib.h>
#include <string.h>

#define CORR_MASK (KSCOPE__CORR_SIZE - 1u)

int kscope__corr_init(kscope__corr *c, kscope__gpu_deliver_fn deliver, void *arg)
{
    memset(c, 0, sizeof *c);
    c->ext = calloc(KSCOPE__CORR_SIZE, sizeof *c->ext);
    c->api = calloc(KSCOPE__CORR_SIZE, sizeof *c->api);
    if (!c->ext || !c->api) {
        kscope__corr_free(c);
        return kscope__fail(KSCOPE_ENOMEM, "GPU correlation tables: out of memory");
    }
    c->deliver = deliver;
    c->arg = arg;
    return 0;
}

void kscope__corr_free(kscope__corr *c)
{
    free(c->ext);
    free(c->api);
    free(c->pending);
    for (size_t i = 0; i < KSCOPE__META_SLOTS; i++)
        free(atomic_exchange(&c->meta[i], NULL));
    memset(c, 0, sizeof *c);
}

void kscope__corr_put_meta(kscope__corr *c, kscope__gpu_meta *m)
{
    kscope__gpu_meta *old = atomic_exchange_explicit(&c->meta[m->correlation % KSCOPE__META_SLOTS],
                                                     m, memory_order_acq_rel);
    free(old); /* its kernel never came, or is KSCOPE__META_SLOTS launches late */
}

/* Take the metadata of launch `corr`, if any (caller frees). */
static kscope__gpu_meta *take_meta(kscope__corr *c, uint32_t corr)
{
    _Atomic(kscope__gpu_meta *) *slot = &c->meta[corr % KSCOPE__META_SLOTS];
    if (!atomic_load_explicit(slot, memory_order_relaxed))
        return NULL;
    kscope__gpu_meta *m = atomic_exchange_explicit(slot, NULL, memory_order_acq_rel);
    if (!m || m->correlation == corr)
        return m;
    /* Another launch's: put it back unless a newer one took the slot. */
    kscope__gpu_meta *expected = NULL;
    if (!atomic_compare_exchange_strong(slot, &expected, m))
        free(m);
    return NULL;
}

static int api_seen(const kscope__corr *c, uint32_t corr)
{
    return c->api[corr & CORR_MASK].correlation == corr;
}

/* The slot of `corr` may since have been reused: nothing more will come. */
static int too_old(const kscope__corr *c, uint32_t corr)
{
    return c->api_max >= corr && c->api_max - corr >= KSCOPE__CORR_SIZE / 2;
}

static void deliver(kscope__corr *c, kscope__gpu_record *r)
{
    const kscope__corr_ext *e = &c->ext[r->correlation & CORR_MASK];
    uint64_t ctx = e->correlation == r->correlation ? e->ext : 0;
    const kscope__corr_api *a = &c->api[r->correlation & CORR_MASK];
    if (a->correlation == r->correlation) {
        r->launch_ns = a->start_ns;
        r->launch_end_ns = a->end_ns;
        r->launch_tid = a->tid;
    }
    kscope__gpu_meta *m = r->kind == KSCOPE__GPU_KERNEL ? take_meta(c, r->correlation) : NULL;
    if (m) {
        r->meta = &m->meta;
        if (m->meta.name)
            r->name = m->meta.name;
    }
    if (!ctx)
        c->unattributed++;
    c->delivered++;
    c->deliver(c->arg, ctx, r);
    free(m);
}

static void keep(kscope__corr *c, const kscope__gpu_record *r)
{
    if (c->npending == c->cap_pending) {
        size_t cap = c->cap_pending ? 2 * c->cap_pending : 256;
        kscope__corr_pending *p = realloc(c->pending, cap * sizeof *p);
        if (!p) { /* cannot wait: deliver with what is known */
            kscope__gpu_record copy = *r;
            deliver(c, &copy);
            return;
        }
        c->pending = p;
        c->cap_pending = cap;
    }
    c->pending[c->npending].rec = *r;
    c->pending[c->npending].age = 0;
    c->npending++;
}

static void note_ext(kscope__corr *c, const CUpti_ActivityExternalCorrelation *x)
{
    if (x->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        return;
    kscope__corr_ext *e = &c->ext[x->correlationId & CORR_MASK];
    e->correlation = x->correlationId;
    e->ext = x->externalId;
}

static void note_api(kscope__corr *c, const CUpti_ActivityAPI *a)
{
    kscope__corr_api *slot = &c->api[a->correlationId & CORR_MASK];
    /* Should two API records share an id (a call made inside another),
     * keep the outer one (it starts first): the call the user made. */
    if (slot->correlation == a->correlationId && slot->start_ns <= a->start)
        return;
    slot->correlation = a->correlationId;
    slot->tid = a->threadId;
    slot->start_ns = a->start;
    slot->end_ns = a->end;
    if (a->correlationId > c->api_max)
        c->api_max = a->correlationId;
}

void kscope__corr_feed(kscope__corr *c, const CUpti_Activity *rec)
{
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        note_ext(c, (const CUpti_ActivityExternalCorrelation *)rec);
        return;
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        note_api(c, (const CUpti_ActivityAPI *)rec);
        return;
    default:
        break;
    }
    kscope__gpu_record r;
    if (!kscope__gpu_decode(rec, &r))
        return;
    if (r.kind == KSCOPE__GPU_KERNEL)
        r.name = kscope__demangle(r.name);
    if (api_seen(c, r.correlation) || too_old(c, r.correlation))
        deliver(c, &r);
    else
        keep(c, &r);
}

static int names_launches(CUpti_ActivityKind kind)
{
    return kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION || kind == CUPTI_ACTIVITY_KIND_DRIVER ||
           kind == CUPTI_ACTIVITY_KIND_RUNTIME;
}

void kscope__corr_feed_pass(kscope__corr *c, const CUpti_Activity *rec, int pass)
{
    if (names_launches(rec->kind) == (pass == 1))
        kscope__corr_feed(c, rec);
}

void kscope__corr_drain(kscope__corr *c, uint32_t max_age)
{
    size_t kept = 0;
    for (size_t i = 0; i < c->npending; i++) {
        kscope__corr_pending *p = &c->pending[i];
        p->age++;
        if (max_age == 0 || p->age > max_age || api_seen(c, p->rec.correlation) ||
            too_old(c, p->rec.correlation))
            deliver(c, &p->rec);
        else
            c->pending[kept++] = *p;
    }
    c->npending = kept;
}
