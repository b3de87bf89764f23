/*
 * cupti-internal.h - what the files of the CUPTI backend share.
 *
 * The backend is split so that everything that needs no GPU can be tested
 * with synthetic CUPTI records: decode.c turns one CUPTI activity record
 * into a kscope__gpu_record, correlate.c maps each record to the calling
 * context that launched it (a table the launch callbacks fill, launch
 * metadata), demangle.c names kernels. cupti.c alone talks to CUPTI
 * and the driver, both loaded at run time.
 */
#ifndef KSCOPE_CUPTI_INTERNAL_H
#define KSCOPE_CUPTI_INTERNAL_H

#include "kscope-internal.h"

#include <cupti.h>

/* -------------------------------------------------------------- NVTX ranges */

/* Host scopes as NVTX ranges (the `detailed` level), so Nsight Systems
 * shows them: the backend's range_push/range_pop (nvtx-emit.c). */
void kscope__nvtx_push(const char *name, uint32_t color);
void kscope__nvtx_pop(void);

/* ------------------------------------------------------------- demangling */

/* The readable name of a (possibly mangled) kernel name. The result lives
 * as long as the process; the same input pointer gives the same result
 * fast. Thread-safe (a lock of its own). NULL -> "". */
const char *kscope__demangle(const char *mangled);

/* ------------------------------------------------------------- decoding */

/* Fill `out` from one CUPTI activity record. Returns 1 for a kernel, copy
 * or set (out filled; out->name is CUPTI's raw name for kernels, not yet
 * demangled), 0 for a kind that carries no GPU work. */
int kscope__gpu_decode(const CUpti_Activity *rec, kscope__gpu_record *out);

/* Short name of a CUPTI memcpy kind: "HtoD", "DtoH", "DtoD", "HtoH",
 * "PtoP", or "Memcpy" when unknown. */
const char *kscope__gpu_copy_name(uint8_t copy_kind);

/* ---------------------------------------------------------- followed calls */

enum { KSCOPE__CALL_OTHER = 0, KSCOPE__CALL_LAUNCH = 1, KSCOPE__CALL_COPY = 2 };

/* What the runtime or driver call named `name` (CUPTI's callback name, as
 * "cudaLaunchKernel_v7000" or "cuMemcpyHtoD_v2") is to kscope: a kernel
 * launch (graph launches included, host functions not), a copy or set, or
 * another call (not followed). */
int kscope__gpu_call_class(const char *name);

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

/* Correlation ids are dense and increasing, so the launch table is
 * direct-mapped on the low bits of the id: an entry lives until an id
 * KSCOPE__CORR_SIZE later reuses its slot, far longer than any record
 * waits for its buffer. */
#define KSCOPE__CORR_SIZE  (1u << 16)
#define KSCOPE__META_SLOTS 4096u

/* One launch (or copy, or set) API call, written by the launching thread
 * in CUPTI's API-enter callback, read when the work's record arrives. */
typedef struct kscope__corr_launch {
    _Atomic uint32_t correlation; /* 0: empty; KSCOPE__CORR_BUSY: being written */
    _Atomic uint32_t tid;         /* OS thread of the call */
    _Atomic uint64_t ctx;         /* calling context (0: the global root) */
    _Atomic uint64_t start_ns;    /* the call's start, kscope clock */
    _Atomic uint64_t end;         /* correlation << 32 | ns from start to end;
                                     0 until the call returned */
} kscope__corr_launch;

#define KSCOPE__CORR_BUSY UINT32_MAX

typedef void (*kscope__gpu_deliver_fn)(void *arg, uint64_t ctx, const kscope__gpu_record *r);

typedef struct kscope__corr {
    kscope__corr_launch *launch;
    _Atomic(kscope__gpu_meta *) meta[KSCOPE__META_SLOTS];
    uint64_t delivered, unattributed;
    kscope__gpu_deliver_fn deliver;
    void *arg;
} kscope__corr;

/* Set up a correlator that hands each finished record to deliver(arg).
 * Returns 0 or KSCOPE_ENOMEM. */
int kscope__corr_init(kscope__corr *c, kscope__gpu_deliver_fn deliver, void *arg);
void kscope__corr_free(kscope__corr *c);

/* A launch API call with correlation id `corr` began on OS thread `tid`
 * under context `ctx` at `now_ns` (launching thread; lock-free, no
 * allocation). A call made inside another with the same id (the driver
 * under the runtime) keeps the outer one's entry. Should another thread be
 * writing the same slot at that instant (a launch KSCOPE__CORR_SIZE ids
 * away), this one is not noted: its work goes to the root, never to the
 * other launch's context. */
void kscope__corr_launch_enter(kscope__corr *c, uint32_t corr, uint64_t ctx, uint32_t tid,
                               uint64_t now_ns);

/* The call `corr`, begun at `start_ns`, returned at `end_ns` (launching
 * thread; lock-free). */
void kscope__corr_launch_exit(kscope__corr *c, uint32_t corr, uint64_t start_ns, uint64_t end_ns);

/* Feed one CUPTI record (any kind; only kernels, copies and sets are
 * kept): decoded, attributed to its launch's context (the global root
 * when its launch was not seen) and delivered at once. Buffer thread. */
void kscope__corr_feed(kscope__corr *c, const CUpti_Activity *rec);

/* Attach metadata to the launch with this correlation id (launching
 * thread; lock-free). Ownership passes to the correlator. */
void kscope__corr_put_meta(kscope__corr *c, kscope__gpu_meta *m);

/* ------------------------------------------------------- sampling gate */

/* The backend's gate (kscope__backend.gate, gate.c): capture off or on
 * for sampled sessions; KSCOPE_EBUSY while a stream captures a graph. */
int kscope__cupti_gate(int open);

/* Capture started: follow the stream-capture calls through CUPTI's
 * cuptiEnableCallback and cuptiGetCallbackName (which may be NULL). */
void kscope__cupti_gate_start(CUpti_SubscriberHandle subscriber,
                              CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle,
                                                    CUpti_CallbackDomain, CUpti_CallbackId),
                              CUptiResult (*name)(CUpti_CallbackDomain, uint32_t, const char **));

/* A callback of a call that attribution does not follow (on_callback):
 * the stream-capture calls are counted here. */
void kscope__cupti_gate_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const CUpti_CallbackData *cb);

/* cupti.c, for the gate: the followed calls' callbacks and the activity
 * kinds off (on = 0) or back on (1). Never synchronizes. 0 or KSCOPE_E*. */
int kscope__cupti_switch(int on);

/* ------------------------------------------------------------------ bench */

/* The backend's bench (bench.c): n empty kernels through the driver. */
int kscope__cupti_bench(long n, int floor, kscope__bench_result *out);

#endif /* KSCOPE_CUPTI_INTERNAL_H */
