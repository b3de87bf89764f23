// devscope_parts.cu - what one device-scope record costs a memory-bound
// kernel, part by part, without kscope: devscope_bench.cu's triad cut into
// S chunks, where at the end of each chunk the lowest active lane of each
// warp does one of
//   none      nothing (the chunked kernel alone)
//   clock     reads %globaltimer twice (what enter and exit read)
//   atomic    one atomicAdd on one counter in device memory (how a record
//             claims its slot today)
//   sharded   one atomicAdd on its SM's counter (one of 256, 128 bytes apart)
//   host      a 32-byte store to host-mapped memory at the warp's own slot
//             (where records go today), no atomic
//   device    the same store to device memory
//   record    atomic + host: what a record costs today, without kscope
//   shardrec  sharded + host
//   sharddev  sharded + device: how kscope/device.h writes a record (each
//             SM's share of device memory, copied out after the launch)
//   claimfirst sharddev with the slot claimed when the chunk begins, so
//             that the chunk's work hides the atomic's round trip (it does
//             not help: kscope/device.h claims where it writes)
// Run as
//   devscope_parts PART S [LAUNCHES]
// it prints "median_us <t>" over LAUNCHES (default 200) launches, timed with
// CUDA events. devscope_bench.sh runs every part at S = 4 and 16, so that
// the part that makes a memory-bound kernel slow under device scopes is
// measured alone (claim contention on one address, or traffic to host
// memory over the bus).
#include <cstring>

#include "bench-time.h"

enum part {
    NONE,
    CLOCK,
    ATOMIC,
    SHARDED,
    HOST,
    DEVICE,
    RECORD,
    SHARDREC,
    SHARDDEV,
    CLAIMFIRST,
    NPARTS
};
static const char *const part_names[NPARTS] = {"none",     "clock",     "atomic", "sharded",
                                               "host",     "device",    "record", "shardrec",
                                               "sharddev", "claimfirst"};

__device__ __forceinline__ bool leader_lane()
{
    return (__ffs(__activemask()) - 1) == (int)(threadIdx.x & 31u);
}

struct sinks {
    unsigned long long *counter; // device memory: one counter
    unsigned long long *shards;  // device memory: 256 counters, 16 apart
    uint4 *host;                 // host-mapped: two uint4 per slot
    uint4 *dev;                  // device memory: the same layout
    unsigned long long slots;    // per buffer, a power of two
};

__device__ __forceinline__ unsigned long long globaltimer()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned smid()
{
    unsigned v;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
    return v;
}

// One record's worth of work of `P` by the warp's lowest active lane.
template <int P>
__device__ __forceinline__ void mark(const sinks &s, unsigned long long start,
                                     unsigned long long claim)
{
    if (!leader_lane())
        return;
    unsigned long long warp = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x) / 32;
    const bool timed =
        P == CLOCK || P == RECORD || P == SHARDREC || P == SHARDDEV || P == CLAIMFIRST;
    unsigned long long end = timed ? globaltimer() : 0;
    unsigned long long idx = warp;
    if (P == ATOMIC || P == RECORD)
        idx = atomicAdd(s.counter, 1ull);
    if (P == SHARDED || P == SHARDREC)
        idx = atomicAdd(&s.shards[(smid() & 255u) * 16], 1ull) * 256 + (smid() & 255u);
    if (P == SHARDDEV) // the SM's own share of slots, interleaved as kscope/device.h writes
        idx = (atomicAdd(&s.shards[(smid() & 255u) * 16], 1ull) & (s.slots / 256 - 1)) * 256 +
              (smid() & 255u);
    if (P == CLAIMFIRST)
        idx = (claim & (s.slots / 256 - 1)) * 256 + (smid() & 255u);
    unsigned tag = (unsigned)idx + 1;
    uint4 a = make_uint4(tag, 7u, (unsigned)start, (unsigned)(start >> 32));
    uint4 b = make_uint4(tag, 42u, (unsigned)(end - start), smid());
    idx &= s.slots - 1;
    if (P == HOST || P == RECORD || P == SHARDREC) {
        s.host[2 * idx] = a;
        s.host[2 * idx + 1] = b;
    } else if (P == DEVICE || P == SHARDDEV || P == CLAIMFIRST) {
        s.dev[2 * idx] = a;
        s.dev[2 * idx + 1] = b;
    } else if (P == CLOCK && end == 0) { // never: keeps the reads
        s.dev[0] = a;
    }
}

template <int P, int S>
__global__ void triad(const float4 *a, const float4 *b, float4 *c, size_t n, sinks s)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t per = (n + stride - 1) / stride;
    size_t chunk = (per + S - 1) / S;
    size_t i0 = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
#pragma unroll 1
    for (int k0 = 0; k0 < S; k0++) {
        unsigned long long start =
            (P == CLOCK || P == RECORD || P == SHARDREC || P == SHARDDEV || P == CLAIMFIRST)
                ? globaltimer()
                : 0;
        unsigned long long claim = 0;
        if (P == CLAIMFIRST && leader_lane())
            claim = atomicAdd(&s.shards[(smid() & 255u) * 16], 1ull);
        triad_rows(a, b, c, n, i0, stride, k0 * chunk, (k0 + 1) * chunk, per);
        if (P != NONE)
            mark<P>(s, start, claim);
    }
}

typedef void (*triad_fn)(const float4 *, const float4 *, float4 *, size_t, sinks);

template <int S> void launch(int p, void **buf, size_t n, const sinks &s)
{
    static const triad_fn kernels[NPARTS] = {
        triad<NONE, S>,     triad<CLOCK, S>,     triad<ATOMIC, S>, triad<SHARDED, S>,
        triad<HOST, S>,     triad<DEVICE, S>,    triad<RECORD, S>, triad<SHARDREC, S>,
        triad<SHARDDEV, S>, triad<CLAIMFIRST, S>};
    kernels[p]<<<132 * 8, 256>>>((const float4 *)buf[0], (const float4 *)buf[1], (float4 *)buf[2],
                                 n, s);
}

int main(int argc, char **argv)
{
    int p = 0;
    while (p < NPARTS && (argc < 2 || strcmp(argv[1], part_names[p]) != 0))
        p++;
    int scopes = argc > 2 ? atoi(argv[2]) : 4;
    int launches = argc > 3 ? atoi(argv[3]) : 200;
    if (p == NPARTS || (scopes != 1 && scopes != 4 && scopes != 16)) {
        fprintf(stderr, "usage: devscope_parts none|clock|atomic|sharded|host|device|record|"
                        "shardrec|sharddev|claimfirst 1|4|16 [LAUNCHES]\n");
        return 2;
    }
    size_t n = (64u << 20) / sizeof(float4);
    void *buf[3];
    zeroed_buffers(buf, 3, n * sizeof(float4));
    sinks s;
    s.slots = 1ull << 20; // kscope's default buffer: 1M records of 32 bytes
    zeroed_buffers((void **)&s.counter, 1, sizeof *s.counter);
    zeroed_buffers((void **)&s.shards, 1, 256 * 16 * sizeof *s.shards);
    CK(cudaMalloc(&s.dev, s.slots * 2 * sizeof(uint4)));
    CK(cudaHostAlloc(&s.host, s.slots * 2 * sizeof(uint4), cudaHostAllocMapped));
    float t = median_kernel_us(launches, [&] {
        if (scopes == 1)
            launch<1>(p, buf, n, s);
        else if (scopes == 4)
            launch<4>(p, buf, n, s);
        else
            launch<16>(p, buf, n, s);
    });
    printf("median_us %.2f\n", t);
    return 0;
}
