/*
 * gpu-internal.h - what the files of the CUPTI backend share.
 *
 * The backend is split so that everything that needs no GPU can be tested
 * with synthetic CUPTI records: decode.c turns one CUPTI activity record
 * into a kscope__gpu_record, correlate.c maps each record to the calling
 * context that launched it (external correlation ids, launch API records,
 * launch metadata), demangle.c names kernels. cupti.c alone talks to CUPTI
 * and the driver, both loaded at run time.
 */
#ifndef KSCOPE_GPU_INTERNAL_H
#define KSCOPE_GPU_INTERNAL_H

#include "kscope-internal.h"

#include <cupti.h>

/* ------------------------------------------------------------- demangling */

/* The readable name of a (possibly mangled) kernel name. The result lives
 * as long as the process; the same input pointer gives the same result
 * fast. Not thread-safe: callers serialise (the buffer lock). NULL -> "". */
const char *kscope__demangle(const char *mangled);

/* ------------------------------------------------------------- decoding */

/* Fill `out` from one CUPTI activity record. Returns 1 for a kernel, copy
 * or set (out filled; out->name is CUPTI's raw name for kernels, not yet
 * demangled), 0 for a kind that carries no GPU work. */
int kscope__gpu_decode(const CUpti_Activity *rec, kscope__gpu_record *out);

/* Short name of a CUPTI memcpy kind: "HtoD", "DtoH", "DtoD", "HtoH",
 * "PtoP", or "Memcpy" when unknown. */
const char *kscope__gpu_copy_name(uint8_t copy_kind);

/* ------------------------------------------------------------ thread ids */

#define KSCOPE__TID_SLOTS 4096u

/* Remember that CUPTI's thread id `cupti_id` (the low 32 bits of a
 * pthread_t) is OS thread `os_tid`. Lock-free; a thread calls it once.
 * KSCOPE_EINVAL for id 0, KSCOPE_ENOMEM when all slots are taken. */
int kscope__gpu_tid_note(uint32_t cupti_id, uint32_t os_tid);

/* The OS thread id noted for `cupti_id`, 0 when none was. */
uint32_t kscope__gpu_tid_lookup(uint32_t cupti_id);

/* ------------------------------------------------------ launch metadata */

/* A copy of a kscope_launch_meta in one allocation, waiting for its
 * kernel. `meta` points into the same block. */
typedef struct kscope__gpu_meta {
    uint32_t correlation; /* of the launch API call, set by the callback */
    kscope_launch_meta meta;
} kscope__gpu_meta;

/* Copy `m` (name, metrics, custom names and values) into *out (free with
 * free()). KSCOPE_EINVAL for a meta with custom metrics lacking names or
 * values, KSCOPE_ENOMEM; the message names the problem. */
int kscope__gpu_meta_copy(const kscope_launch_meta *m, kscope__gpu_meta **out);

/* ------------------------------------------------------------ correlation */

/* Correlation ids are dense and increasing, so each table is direct-mapped
 * on the low bits of the id: an entry lives until an id KSCOPE__CORR_SIZE
 * later reuses its slot, far longer than any record waits. */
#define KSCOPE__CORR_SIZE  (1u << 16)
#define KSCOPE__META_SLOTS 4096u

typedef struct kscope__corr_ext {
    uint32_t correlation; /* 0: empty */
    uint64_t ext;         /* context id */
} kscope__corr_ext;

typedef struct kscope__corr_api {
    uint32_t correlation; /* 0: empty */
    uint32_t tid;
    uint64_t start_ns, end_ns;
} kscope__corr_api;

/* A decoded record whose launch API record has not been seen yet. */
typedef struct kscope__corr_pending {
    kscope__gpu_record rec;
    uint32_t age; /* buffers seen since it arrived */
} kscope__corr_pending;

typedef void (*kscope__gpu_deliver_fn)(void *arg, uint64_t ctx, const kscope__gpu_record *r);

typedef struct kscope__corr {
    kscope__corr_ext *ext;
    kscope__corr_api *api;
    _Atomic(kscope__gpu_meta *) meta[KSCOPE__META_SLOTS];
    uint32_t api_max; /* highest API correlation id seen */
    kscope__corr_pending *pending;
    size_t npending, cap_pending;
    uint64_t delivered, unattributed;
    kscope__gpu_deliver_fn deliver;
    void *arg;
} kscope__corr;

/* Set up a correlator that hands each finished record to deliver(arg).
 * Returns 0 or KSCOPE_ENOMEM. */
int kscope__corr_init(kscope__corr *c, kscope__gpu_deliver_fn deliver, void *arg);
void kscope__corr_free(kscope__corr *c);

/* Feed one CUPTI record (any kind). Kernels and copies are delivered at
 * once when their launch is known, else kept until it is. */
void kscope__corr_feed(kscope__corr *c, const CUpti_Activity *rec);

/* The same in two passes over a buffer: pass 1 takes only the records that
 * name launches (external correlation, API), pass 2 only the GPU work, so
 * work whose launch record comes later in the same buffer need not wait. */
void kscope__corr_feed_pass(kscope__corr *c, const CUpti_Activity *rec, int pass);

/* After each buffer: deliver the kept records whose launch arrived, and
 * give up on those older than `max_age` buffers (they go to the root).
 * max_age 0 delivers everything kept (final flush). */
void kscope__corr_drain(kscope__corr *c, uint32_t max_age);

/* Attach metadata to the launch with this correlation id (launching
 * thread; lock-free). Ownership passes to the correlator. */
void kscope__corr_put_meta(kscope__corr *c, kscope__gpu_meta *m);

#endif /* KSCOPE_GPU_INTERNAL_H */
