/*
 * kscope/device.h - device-side scopes: time regions inside CUDA kernels.
 *
 *   #include <kscope/device.h>
 *   __global__ void k(float *x) {
 *       { KSCOPE_DEVICE_SCOPE("load");  ... }     // closes at the end of the block
 *       kscope_device_t s = KSCOPE_DEVICE_ENTER("math");
 *       ...
 *       kscope_device_exit(s);
 *   }
 *
 * No kernel argument or launch changes. Each module that includes this
 * header gets a __device__ symbol, kscope_device_buffer. Without kscope it
 * stays NULL and a scope costs one load and one branch that is always
 * taken the same way. Under kscope with device scopes on, kscope sets it
 * when the module's first kernel is launched (never while a stream of the
 * process captures a graph) to a control block in device memory; each
 * scope then writes one 32-byte record into device memory, in its SM's
 * share of the buffer, claimed with one atomicAdd on that SM's counter:
 * the launch's grid id (PTX %gridid), the SM and warp slot, the scope's
 * id, its start and its duration (%globaltimer nanoseconds or clock64
 * cycles). A thread of kscope copies the new records out on a stream of
 * its own every few milliseconds while kernels run (the program's streams
 * are never synchronised, and nothing is copied while a graph is being
 * captured); the slots it has copied are written again. A share is a ring:
 * a claim whose slot still holds a record kscope has not copied is dropped
 * (by default) and counted, never written over.
 *
 * Names never travel with records: a scope's id is a compile-time hash of
 * its name (FNV-1a, 32 bits), and the name itself is kept in the module's
 * cubin behind a marker, where kscope finds it when the module is loaded.
 * Names must therefore be string literals.
 *
 * Granularity (an option of kscope, not of the program): per warp, the
 * lowest active lane records; per CTA, thread (0,0,0) of the block
 * records. Call a scope from every thread or from whole warps.
 *
 * Define KSCOPE_DISABLE to compile every scope out. Programs compiled with
 * relocatable device code (-rdc) that include this header in several
 * files define KSCOPE_DEVICE_EXTERN in all of them but one.
 */
#ifndef KSCOPE_DEVICE_H
#define KSCOPE_DEVICE_H

#include <stdint.h>

/* ----------------------------------------------------- shared with kscope */

/* Flags of kscope_device_ctl. */
#define KSCOPE_DEVICE_CLOCK64 1u /* clock64 cycles, else %globaltimer ns */
#define KSCOPE_DEVICE_CTA     2u /* once per CTA, else once per warp */
#define KSCOPE_DEVICE_RING    4u /* keep the newest records, else the first */

/* The marker before each scope name in a cubin. */
#define KSCOPE_DEVICE_MARK "\x1bkscope-scope\x1f"

/* One scope instance: two 16-byte halves, each stamped with the claim's
 * tag (claim index + 1, low 32 bits), so a reader tells a whole record
 * from one being written. */
typedef struct kscope_device_record {
    uint32_t tag;   /* claim index + 1 */
    uint32_t grid;  /* low 32 bits of %gridid */
    uint64_t start; /* %globaltimer ns or clock64 cycles */
    uint32_t tag2;  /* = tag */
    uint32_t scope; /* FNV-1a of the name */
    uint32_t dur;   /* end - start, saturated at 2^32 - 1 */
    uint16_t sm;    /* %smid */
    uint16_t warp;  /* %warpid: the warp's slot on its SM */
} kscope_device_record;

/* Each SM's claim counter sits alone on a 128-byte line: counters[i * this];
 * the word after it counts the claims of that SM dropped (keep-first). */
#define KSCOPE_DEVICE_COUNTER_STRIDE 16u

/* What kscope_device_buffer points to (device memory, one per context).
 * The buffer holds `regions` shares of `slots` records (a power of two),
 * one per SM (an SM with a higher id than regions - 1 uses share
 * smid % regions), interleaved: slot k of share s is records[k * regions
 * + s], so the records the SMs claimed lately lie together, and one copy
 * fetches them.
 *
 * Keep-first (no KSCOPE_DEVICE_RING): each share is a ring whose read
 * position kscope advances as it copies records out; limits[s] is the
 * first claim of share s whose slot may still hold a record not copied
 * (read position + slots; it only grows). A claim at or past it is
 * dropped: drops[slot] (interleaved as records) and the share's drop word
 * count it, so kscope tells a dropped claim from one still being written.
 * Keep-newest writes every claim, over the oldest record if need be. */
typedef struct kscope_device_ctl {
    kscope_device_record *records; /* device memory: regions * slots */
    unsigned long long *counters;  /* device memory: claims per share */
    uint64_t slots;                /* records per share, a power of two */
    uint32_t regions;              /* shares: the device's SMs */
    uint32_t flags;                /* KSCOPE_DEVICE_* */
    uint32_t every;                /* record every Nth warp or CTA (1: all) */
    uint32_t pad;
    const unsigned long long *limits; /* device memory: per share (keep-first) */
    unsigned int *drops;              /* device memory: per slot (keep-first) */
} kscope_device_ctl;

/* FNV-1a of a name: a scope's id. */
#if defined(__cplusplus)
#define KSCOPE__CONSTEXPR constexpr
#else
#define KSCOPE__CONSTEXPR
#endif
#if defined(__CUDACC__)
#define KSCOPE__HD __host__ __device__
#else
#define KSCOPE__HD
#endif
static inline KSCOPE__CONSTEXPR KSCOPE__HD uint32_t kscope_device_hash(const char *s, uint32_t h)
{
    return *s ? kscope_device_hash(s + 1, (h ^ (uint8_t)*s) * 16777619u) : h;
}
#define KSCOPE_DEVICE_HASH_SEED 2166136261u

/* ------------------------------------------------------ the device side */

#if defined(KSCOPE_DISABLE) && (defined(__CUDACC__) || defined(KSCOPE_DEVICE_EMULATE))
/* Compiled out: no symbol, no code. */
typedef struct kscope_device_t {
    uint32_t id;
    uint64_t start;
} kscope_device_t;
#if defined(__CUDACC__)
__host__ __device__ __forceinline__ void kscope_device_exit(kscope_device_t) {}
#else
static inline void kscope_device_exit(kscope_device_t s)
{
    (void)s;
}
#endif
#define KSCOPE_DEVICE_ENTER(name) (kscope_device_t{0, 0})
#define KSCOPE_DEVICE_SCOPE(name) ((void)0)

#elif defined(__CUDACC__) || defined(KSCOPE_DEVICE_EMULATE)

#if defined(__CUDACC__)
#define KSCOPE__DEV    __device__ __forceinline__
#define KSCOPE__GLOBAL __device__
#else /* tests of kscope run this code on the host: they define these */
#define KSCOPE__DEV static inline
#define KSCOPE__GLOBAL
uint64_t kscope_emu_gridid(void), kscope_emu_clock(int clock64);
uint32_t kscope_emu_smid(void), kscope_emu_warpid(void), kscope_emu_lane(void);
uint32_t kscope_emu_leader(void), kscope_emu_warp_index(void), kscope_emu_cta_index(void);
int kscope_emu_cta_leader(void);
#endif

#if defined(KSCOPE_DEVICE_EXTERN)
extern KSCOPE__GLOBAL kscope_device_ctl *kscope_device_buffer;
#else
KSCOPE__GLOBAL kscope_device_ctl *kscope_device_buffer;
#endif

typedef struct kscope_device_t {
    uint32_t id;
    uint64_t start; /* 0: this thread does not record this scope */
} kscope_device_t;

#if defined(__CUDACC__)
KSCOPE__DEV uint64_t kscope__dev_clock(uint32_t flags)
{
    uint64_t t;
    if (flags & KSCOPE_DEVICE_CLOCK64)
        return (uint64_t)clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
KSCOPE__DEV uint32_t kscope__dev_sreg_smid(void)
{
    uint32_t v;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
    return v;
}
KSCOPE__DEV uint32_t kscope__dev_sreg_warpid(void)
{
    uint32_t v;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(v));
    return v;
}
KSCOPE__DEV uint64_t kscope__dev_gridid(void)
{
    uint64_t v;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(v));
    return v;
}
/* Whether this thread records for its warp or CTA, and whether that warp
 * or CTA is sampled. */
KSCOPE__DEV int kscope__dev_recorder(uint32_t flags, uint32_t every)
{
    uint32_t cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    uint32_t tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    if (flags & KSCOPE_DEVICE_CTA)
        return tid == 0 && cta % every == 0;
    uint32_t lane = tid & 31u;
    if ((__ffs(__activemask()) - 1) != (int)lane)
        return 0;
    uint32_t warps = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
    return (cta * warps + tid / 32u) % every == 0;
}
/* Keep the marked name in the cubin: its address is used once kscope
 * attached (one instruction there), never read. */
#define KSCOPE__KEEP(p)                  asm volatile("" ::"l"(p))
#define KSCOPE__ATOMIC_ADD(p, v)         atomicAdd((p), (v))
#define KSCOPE__LOAD_LIMIT(p)            (*(const volatile unsigned long long *)(p))
#define KSCOPE__STORE16(dst, a, b, c, d) (*(uint4 *)(dst) = make_uint4((a), (b), (c), (d)))
#else
#define kscope__dev_clock(f)      kscope_emu_clock(((f)&KSCOPE_DEVICE_CLOCK64) != 0)
#define kscope__dev_sreg_smid()   kscope_emu_smid()
#define kscope__dev_sreg_warpid() kscope_emu_warpid()
#define kscope__dev_gridid()      kscope_emu_gridid()
KSCOPE__DEV int kscope__dev_recorder(uint32_t flags, uint32_t every)
{
    if (flags & KSCOPE_DEVICE_CTA)
        return kscope_emu_cta_leader() && kscope_emu_cta_index() % every == 0;
    return kscope_emu_lane() == kscope_emu_leader() && kscope_emu_warp_index() % every == 0;
}
#define KSCOPE__KEEP(p)           ((void)(p))
#define KSCOPE__ATOMIC_ADD(p, v)  __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define KSCOPE__LOAD_LIMIT(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define KSCOPE__STORE16(dst, a, b, c, d)                                                           \
    do {                                                                                           \
        uint32_t *q_ = (uint32_t *)(dst);                                                          \
        __atomic_store_n(&q_[1], (b), __ATOMIC_RELAXED);                                           \
        __atomic_store_n(&q_[2], (c), __ATOMIC_RELAXED);                                           \
        __atomic_store_n(&q_[3], (d), __ATOMIC_RELAXED);                                           \
        __atomic_store_n(&q_[0], (a), __ATOMIC_RELEASE);                                           \
    } while (0)
#endif

/* Begin scope `id` (KSCOPE_DEVICE_ENTER gives id and the marked name). */
KSCOPE__DEV kscope_device_t kscope_device_enter(uint32_t id, const char *marked)
{
    kscope_device_t s = {id, 0};
    kscope_device_ctl *c = kscope_device_buffer;
    if (c == 0)
        return s;
    KSCOPE__KEEP(marked);
    if (kscope__dev_recorder(c->flags, c->every))
        s.start = kscope__dev_clock(c->flags) | 1ull << 63;
    return s;
}

/* End a scope begun by kscope_device_enter: one record in the SM's share,
 * claimed with one atomicAdd on the SM's counter (no two SMs contend).
 * Keep-first: a claim past the share's limit (its slot still holds a
 * record kscope has not copied) is dropped and counted where kscope finds
 * it; keep-newest overwrites the share's oldest. The limit is loaded
 * alongside the claim (no wait on it alone). */
KSCOPE__DEV void kscope_device_exit(kscope_device_t s)
{
    kscope_device_ctl *c = kscope_device_buffer;
    if (c == 0 || s.start == 0)
        return;
    uint64_t end = kscope__dev_clock(c->flags);
    uint64_t start = s.start & ~(1ull << 63);
    uint64_t d = end > start ? end - start : 0;
    uint32_t dur = d > 0xffffffffull ? 0xffffffffu : (uint32_t)d;
    uint32_t sm = kscope__dev_sreg_smid();
    uint32_t share = sm < c->regions ? sm : sm % c->regions;
    unsigned long long *counter = c->counters + share * KSCOPE_DEVICE_COUNTER_STRIDE;
    uint64_t limit =
        (c->flags & KSCOPE_DEVICE_RING) ? ~0ull : KSCOPE__LOAD_LIMIT(c->limits + share);
    uint64_t idx = KSCOPE__ATOMIC_ADD(counter, 1ull);
    uint64_t slot = (idx & (c->slots - 1)) * c->regions + share;
    if (idx >= limit) {
        KSCOPE__ATOMIC_ADD(c->drops + slot, 1u);
        KSCOPE__ATOMIC_ADD(counter + 1, 1ull);
        return;
    }
    kscope_device_record *r = c->records + slot;
    uint32_t tag = (uint32_t)(idx + 1);
    uint32_t where = sm | kscope__dev_sreg_warpid() << 16;
    KSCOPE__STORE16(r, tag, (uint32_t)kscope__dev_gridid(), (uint32_t)start,
                    (uint32_t)(start >> 32));
    KSCOPE__STORE16((char *)r + 16, tag, s.id, dur, where);
}

#if defined(__cplusplus)
template <uint32_t V> struct kscope__device_id {
    static constexpr uint32_t value = V;
};
#define KSCOPE__DEVICE_ID(name)                                                                    \
    (kscope__device_id<kscope_device_hash(name, KSCOPE_DEVICE_HASH_SEED)>::value)
#define KSCOPE_DEVICE_ENTER(name)                                                                  \
    kscope_device_enter(KSCOPE__DEVICE_ID(name), KSCOPE_DEVICE_MARK name)
/* Closes the scope when it leaves the block. */
struct kscope__device_scope {
    kscope_device_t s;
    KSCOPE__DEV kscope__device_scope(kscope_device_t v) : s(v) {}
    KSCOPE__DEV ~kscope__device_scope()
    {
        kscope_device_exit(s);
    }
};
#define KSCOPE__CAT2(a, b) a##b
#define KSCOPE__CAT(a, b)  KSCOPE__CAT2(a, b)
#define KSCOPE_DEVICE_SCOPE(name)                                                                  \
    kscope__device_scope KSCOPE__CAT(kscope__dscope_, __LINE__)(KSCOPE_DEVICE_ENTER(name))
#else /* C emulation (kscope's tests) */
#define KSCOPE_DEVICE_ENTER(name)                                                                  \
    kscope_device_enter(kscope_device_hash(name, KSCOPE_DEVICE_HASH_SEED), KSCOPE_DEVICE_MARK name)
#endif

#endif /* __CUDACC__ || KSCOPE_DEVICE_EMULATE */
#endif /* KSCOPE_DEVICE_H */
