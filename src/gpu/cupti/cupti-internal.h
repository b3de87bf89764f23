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

#include "attrib/attrib.h"
#include "kscope-internal.h"

#include <cupti.h>

#include "gpu/cuda/cuda.h"

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

enum {
    KSCOPE__CALL_OTHER = 0,
    KSCOPE__CALL_LAUNCH = 1,
    KSCOPE__CALL_COPY = 2,
    KSCOPE__CALL_BEGIN_CAPTURE = 3,
    KSCOPE__CALL_END_CAPTURE = 4,
};

/* What the runtime or driver call named `name` (CUPTI's callback name, as
 * "cudaLaunchKernel_v7000" or "cuMemcpyHtoD_v2") is to kscope: a kernel
 * launch (graph launches included, host functions not), a copy or set, the
 * begin or end of a stream capture, or another call (not followed). */
int kscope__gpu_call_class(const char *name);

/* The calls followed even where CUPTI cannot name its callbacks, each with
 * its KSCOPE__CALL_* class; ends with cbid 0. */
typedef struct kscope__known_call {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    uint8_t cls;
} kscope__known_call;

extern const kscope__known_call kscope__known_calls[];

/* What a callback id of the runtime (row 0) or driver (row 1) domain is to
 * kscope (KSCOPE__CALL_*), filled by kscope__follow_classify. */
#define KSCOPE__CBID_MAX 4096
extern uint8_t kscope__call_class[2][KSCOPE__CBID_MAX];

typedef CUptiResult (*kscope__enable_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                         CUpti_CallbackId);

/* Fill kscope__call_class: the known calls, then every call CUPTI names
 * (name_of may be NULL: the known calls only). follow.c */
void kscope__follow_classify(CUptiResult (*name_of)(CUpti_CallbackDomain, uint32_t, const char **));

/* At start: the stream-capture calls' callbacks on (always), graph
 * resources on; graph launches and launches off. CUPTI's result. */
CUptiResult kscope__follow_start(CUpti_SubscriberHandle sub, kscope__enable_fn enable);

/* Graph launches' and launches' (kernels, copies, sets) callbacks on or
 * off, each only when it changes (the caller's lock held). CUPTI's
 * result. */
CUptiResult kscope__follow_set(int graphs, int launches, CUpti_SubscriberHandle sub,
                               kscope__enable_fn enable);

/* Whether launches' callbacks are on. */
int kscope__follow_launches(void);

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
    _Atomic uint64_t start_ticks; /* the same, in the host scopes' ticks */
    _Atomic uint64_t end;         /* correlation << 32 | ns from start to end;
                                     0 until the call returned */
    _Atomic uint64_t end_ticks;   /* the same in ticks */
} kscope__corr_launch;

#define KSCOPE__CORR_BUSY UINT32_MAX

typedef void (*kscope__gpu_deliver_fn)(void *arg, uint64_t ctx, const kscope__gpu_record *r);

/* The context noted for kscope's own calls (copies of graph values): their
 * records are dropped. Contexts are aligned node addresses, never 1. */
#define KSCOPE__CTX_OWN 1u
/* Set in the context noted for a graph launch. kscope copies a graph's
 * values back inside the launch call (its end callback), and CUPTI gives a
 * call made there the launch's correlation id: a copy that is no node of
 * the graph, under a graph launch's id, is kscope's and is dropped. */
#define KSCOPE__CTX_GRAPH 2u

/* What graph work a record is (graphs.c's kscope__graphs_lookup): 1 with
 * r's capture fields (and meta) filled, then graph_done once r was
 * delivered; 0 for work of a node kscope did not see; -1 to drop it. */
typedef int (*kscope__gpu_graph_fn)(void *arg, kscope__gpu_record *r);

typedef struct kscope__corr {
    kscope__corr_launch *launch;
    _Atomic(kscope__gpu_meta *) meta[KSCOPE__META_SLOTS];
    uint64_t delivered, unattributed;
    kscope__gpu_deliver_fn deliver;
    void *arg;
    kscope__gpu_graph_fn graph; /* NULL: graph work goes to its launch */
    void (*graph_done)(void *arg);
    void *graph_arg;
} kscope__corr;

/* Set up a correlator that hands each finished record to deliver(arg).
 * Returns 0 or KSCOPE_ENOMEM. */
int kscope__corr_init(kscope__corr *c, kscope__gpu_deliver_fn deliver, void *arg);
void kscope__corr_free(kscope__corr *c);

/* A launch API call with correlation id `corr` began on OS thread `tid`
 * under context `ctx` at `now_ns`, `now_ticks` on the host scopes' clock
 * (kscope__ticks: a trace draws the call among them, on one clock with
 * them whatever CLOCK_MONOTONIC does meanwhile) (launching thread; lock-free, no
 * allocation). A call made inside another with the same id (the driver
 * under the runtime) keeps the outer one's entry. Should another thread be
 * writing the same slot at that instant (a launch KSCOPE__CORR_SIZE ids
 * away), this one is not noted: its work goes to the root, never to the
 * other launch's context. */
void kscope__corr_launch_enter(kscope__corr *c, uint32_t corr, uint64_t ctx, uint32_t tid,
                               uint64_t now_ns, uint64_t now_ticks);

/* The call `corr`, begun at `start_ns` (`start_ticks`), returned at
 * `end_ns` (`end_ticks`) (launching thread; lock-free). */
void kscope__corr_launch_exit(kscope__corr *c, uint32_t corr, uint64_t start_ns, uint64_t end_ns,
                              uint64_t start_ticks, uint64_t end_ticks);

/* Feed one CUPTI record (any kind; only kernels, copies and sets are
 * kept): decoded, attributed to its launch's context (the global root
 * when its launch was not seen) and delivered at once. Buffer thread. */
void kscope__corr_feed(kscope__corr *c, const CUpti_Activity *rec);

/* Attach metadata to the launch with this correlation id (launching
 * thread; lock-free). Ownership passes to the correlator. */
void kscope__corr_put_meta(kscope__corr *c, kscope__gpu_meta *m);

/* ------------------------------------------------------------------ graphs */

/* The CUPTI and driver functions graphs.c calls, loaded by cupti.c (the
 * last four may be NULL: an older driver). */
typedef struct kscope__graph_api {
    CUptiResult (*node_id)(CUgraphNode, uint64_t *);
    CUptiResult (*graph_id)(CUgraph, uint32_t *);
    CUptiResult (*exec_id)(CUgraphExec, uint32_t *);
    CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*host_alloc)(void **, size_t, unsigned int);
    CUresult (*host_free)(void *);
    CUresult (*copy_dtoh)(void *, CUdeviceptr, size_t, CUstream);
} kscope__graph_api;

extern kscope__graph_api kscope__graph_fns;

/* The resource callbacks graphs.c follows, 0-ended. */
extern const CUpti_CallbackId kscope__graph_resource_cbids[];

/* The backend's capturing / capture_value / capture_hide /
 * capture_released (see kscope__backend). */
int kscope__graphs_capturing(int this_thread);
int64_t kscope__graphs_value(const kscope__graph_value *v);
void kscope__graphs_hide(int on);
size_t kscope__graphs_released(int64_t *out, size_t n);

/* A stream capture's begin (begin = 1) or end call, at either site. */
void kscope__graphs_capture_call(int begin, const CUpti_CallbackData *cb);
/* A graph resource callback (node or graph made, cloned, destroyed). */
void kscope__graphs_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd);

/* Launch metadata of the launch now being captured on this thread (owned
 * from here on: its node keeps a copy); call_done frees what is left. */
void kscope__graphs_call_meta(kscope__gpu_meta *m);
void kscope__graphs_call_done(void);

/* Whether callback id cbid (driver domain if `driver`, else runtime) is a
 * graph launch; that launch's begin (warns of an exec kscope did not see
 * made) and end (queues the values its graph computes), on the launching
 * thread with its context and start. */
int kscope__graphs_is_launch(int driver, CUpti_CallbackId cbid);
void kscope__graphs_launch_enter(int driver, CUpti_CallbackId cbid, const void *params);
void kscope__graphs_launch_exit(int driver, CUpti_CallbackId cbid, const void *params, uint64_t ctx,
                                uint64_t ns);
/* Whether this thread's current call is kscope's own copy. */
int kscope__graphs_own_call(void);

/* kscope__gpu_graph_fn for the correlator, and its done. */
int kscope__graphs_lookup(void *arg, kscope__gpu_record *r);
void kscope__graphs_lookup_done(void *arg);

/* At a flush, after every record was delivered: add the values of the
 * launches since the last (their copies have landed). */
void kscope__graphs_drain(void);
/* Nodes destroyed so far (before a flush synchronises); after it, forget
 * the first n of them: their records were delivered. */
size_t kscope__graphs_retired(void);
void kscope__graphs_flushed(size_t n);
/* Capture stops: launches still waiting are lost (counted as dropped);
 * `drained` (no capture open, all copies done) frees the pinned memory. */
void kscope__graphs_stop(int drained);

/* ----------------------------------------------------------- graph tables */

/* An open-addressing map of non-zero 64-bit ids to pointers (graph-table.c;
 * callers serialise). */
typedef struct kscope__u64slot {
    uint64_t key; /* 0: empty */
    void *val;
} kscope__u64slot;

typedef struct kscope__u64map {
    kscope__u64slot *slot;
    size_t cap, used, tombs;
} kscope__u64map;

void *kscope__u64map_get(const kscope__u64map *m, uint64_t key);
/* 0, KSCOPE_ENOMEM, or KSCOPE_EINVAL for key 0 or UINT64_MAX. */
int kscope__u64map_put(kscope__u64map *m, uint64_t key, void *val);
/* Remove key; returns its value (NULL when absent). */
void *kscope__u64map_del(kscope__u64map *m, uint64_t key);
/* Free the map, and each value with free_val (may be NULL). */
void kscope__u64map_free(kscope__u64map *m, void (*free_val)(void *));

/* A graph node as captured: where, when, with what launch metadata. */
typedef struct kscope__gnode {
    uint64_t ctx, ns;       /* capture context and time */
    kscope__gpu_meta *meta; /* launch metadata of its launch (owned), or NULL */
    uint32_t flags;         /* KSCOPE__GNODE_* */
} kscope__gnode;

enum {
    KSCOPE__GNODE_HIDDEN = 1,  /* kscope's own work: its records are dropped */
    KSCOPE__GNODE_UNKNOWN = 2, /* a copy of a node captured before kscope ran */
};

/* Store a copy of *from (and of its meta) as node `id`, replacing any.
 * 0 or KSCOPE_ENOMEM. */
int kscope__gnode_put(kscope__u64map *nodes, uint64_t id, const kscope__gnode *from);
void kscope__gnode_free(void *node);

/* A metric value kept for a graph's launches, shared by the lists that
 * hold it (the graph's, each exec's, launches waiting for a flush). */
typedef struct kscope__gvalue {
    kscope__graph_value v; /* host values, if any, follow the struct */
    int64_t token;         /* reported once the value is no longer held (0: none) */
    int refs;
} kscope__gvalue;

typedef struct kscope__gvlist {
    kscope__gvalue **items;
    size_t n, cap;
} kscope__gvlist;

/* Tokens of values no longer held, until the owner takes them. */
typedef struct kscope__released {
    int64_t *tokens;
    size_t n, cap;
} kscope__released;

/* A copy of v (and of its host values) with no holder yet; NULL out of
 * memory. */
kscope__gvalue *kscope__gvalue_new(const kscope__graph_value *v, int64_t token);
/* Drop one hold; the last frees it and notes its token in rel. */
void kscope__gvalue_unref(kscope__gvalue *g, kscope__released *rel);
/* Append g, holding it: 0 or KSCOPE_ENOMEM. */
int kscope__gvlist_add(kscope__gvlist *l, kscope__gvalue *g);
/* A new list holding what `from` holds; NULL out of memory. */
kscope__gvlist *kscope__gvlist_copy(const kscope__gvlist *from);
/* Drop the list's holds and free it (NULL: nothing). */
void kscope__gvlist_free(kscope__gvlist *l, kscope__released *rel);
/* Move up to n tokens into out; returns how many. */
size_t kscope__released_take(kscope__released *rel, int64_t *out, size_t n);
void kscope__released_free(kscope__released *rel);

/* ------------------------------------------------------------ device info */

/* Record device `ordinal`'s facts (arch, SMs, clocks, bus width) with the
 * core the first time its work shows up (on the buffer thread: the program
 * has initialised CUDA by then), through the driver's calls given. */
void kscope__cupti_note_device(uint32_t ordinal, CUresult (*device_get)(CUdevice *, int),
                               CUresult (*attribute)(int *, CUdevice_attribute, CUdevice));

/* ------------------------------------------------------------ library */

/* kscope__cupti_open (where CUPTI is found) is gpu/cuda/cuda.h's. */

/* ------------------------------------------------------- sampling gate */

/* The backend's gate (kscope__backend.gate, gate.c): a KSCOPE__GATE_*
 * state for sampled sessions; KSCOPE_EBUSY while a stream captures a graph. */
int kscope__cupti_gate(int state);

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

/* cupti.c, for the gate: open, the followed calls' callbacks and the
 * activity kinds on; quiet, the callbacks off and the activity still on;
 * shut, both off. Never synchronizes. 0 or KSCOPE_E*. */
int kscope__cupti_switch(int state);

/* ------------------------------------------------------------------ bench */

/* The backend's bench (bench.c): empty kernels through the driver. */
int kscope__cupti_bench(const kscope__bench_loop *loop, kscope__bench_result *out);

#endif /* KSCOPE_CUPTI_INTERNAL_H */
