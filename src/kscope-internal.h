/*
 * kscope-internal.h - what the parts of libkscope share and users do not see.
 *
 * The core keeps, per thread, a calling-context tree (CCT) that does not
 * depend on sessions: a node is created the first time a path is entered and
 * lives as long as the process. Each node holds one stats slot per session,
 * written only by the owning thread and only while that session is active.
 * A node pointer therefore names a calling context for good, which is what
 * a GPU backend notes for each launch (kscope__current_ctx) and later
 * attributes that launch's kernels to.
 */
#ifndef KSCOPE_INTERNAL_H
#define KSCOPE_INTERNAL_H

#include "kscope.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#define KSCOPE__STACK_MAX   1024
#define KSCOPE__STATE_MAX   16
#define KSCOPE__NAME_CACHE  256
#define KSCOPE__CHILD_CACHE 512

/* Fields one thread writes while another may read them (a thread's stack
 * depth and open frames, event-buffer links and generations, read at
 * finalize): plain types accessed through these, so the race is defined
 * and ThreadSanitizer sees it, while on x86 the hot path's stores stay
 * plain moves. */
#define KSCOPE__LOAD(p)             __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define KSCOPE__STORE(p, v)         __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define KSCOPE__LOAD_RELAXED(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define KSCOPE__STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* ------------------------------------------------------------ error helper */

/* Record a formatted message as the thread's last error; returns err. */
int kscope__fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A one-line diagnostic on stderr, prefixed "kscope: ", once per key. */
void kscope__warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ------------------------------------------------------------------ clock */

/* Non-zero when ticks are TSC cycles (set once by kscope__clock_init). */
extern int kscope__use_tsc;
uint64_t kscope__ticks_slow(void);

/* Raw ticks (TSC where invariant, else CLOCK_MONOTONIC ns). Inline: the
 * scope hot path reads it twice per scope. */
static inline uint64_t kscope__ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(kscope__use_tsc, 1)) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        return ((uint64_t)hi << 32) | lo;
    }
#endif
    return kscope__ticks_slow();
}
/* Convert ticks to kscope_now_ns() nanoseconds. */
uint64_t kscope__ticks_to_ns(uint64_t ticks);
/* Convert a duration in ticks to ns. */
uint64_t kscope__ticks_delta_ns(uint64_t dt);
void kscope__clock_init(void);
/* Refit ticks to ns if the run has grown since the last fit (clock.c says
 * when this is called); kscope__refits counts the refits, for tests. */
void kscope__clock_refresh(void);
extern uint64_t kscope__refits;

/* --------------------------------------------------------------- interning */

/* Intern a NUL-terminated name; returns its id (> 0) or 0 on failure.
 * Names are immutable and never freed. */
uint32_t kscope__intern(const char *name);
const char *kscope__name(uint32_t id);

/* ---------------------------------------------------------------- metrics */

typedef enum { KSCOPE__MK_INC = 0, KSCOPE__MK_EXC = 1, KSCOPE__MK_PTY = 2 } kscope__metric_kind;

/* A metric name parsed once: "tokens (exc)" -> base "tokens", kind EXC. */
typedef struct kscope__metric_def {
    uint32_t id;   /* interned full name */
    uint32_t base; /* interned name without (inc)/(exc)/(pty) */
    kscope__metric_kind kind;
} kscope__metric_def;

/* Parse and register a metric name (NULL on failure, message set). */
const kscope__metric_def *kscope__metric_lookup(const char *name);

/* ------------------------------------------------------------------- nodes */

typedef enum {
    KSCOPE__NODE_SCOPE = 0,
    KSCOPE__NODE_STATE = 1,
    KSCOPE__NODE_MARK = 2,
    KSCOPE__NODE_KERNEL = 3,
    KSCOPE__NODE_COPY = 4,
    KSCOPE__NODE_ROOT = 5,
    KSCOPE__NODE_LINE = 6,     /* a source line (or PC) of a kernel: PC samples */
    KSCOPE__NODE_DEVSCOPE = 7, /* a device-side scope of a kernel */
} kscope__node_kind;

/* Host-side counters of one node for one session slot. Written with
 * relaxed atomics by the owning thread only, and never reset: what a
 * session (or one of its phases) counted is the counter less the baseline
 * its harvester took at the session's start or the phase's (core/build.c),
 * so a phase boundary moves every call to exactly one phase without any
 * thread writing another's counters. */
typedef struct kscope__stats {
    _Atomic uint64_t calls;
    _Atomic uint64_t ticks; /* wall time of the scope, inclusive */
} kscope__stats;

/* A baseline of a node's counters, cpu ticks (cpu-timed scopes, counted
 * apart) included; read and written by the harvester alone, under
 * kscope__session_lock. */
typedef struct kscope__stats_base {
    uint64_t calls, ticks, cpu_ticks;
} kscope__stats_base;

typedef struct kscope__gpustats {
    uint64_t count, time_ns, min_ns, max_ns, bytes;
    double flops[4], meta_bytes; /* from launch metadata */
    uint32_t device;
    /* Source and destination devices: they differ for peer copies only. */
    uint32_t src_device, dst_device;
    struct kscope__custom *custom; /* launch-metadata custom metrics */
    struct kscope__count *samples; /* PC samples: kernel and line nodes */
} kscope__gpustats;

typedef struct kscope__custom {
    uint32_t name;
    double value;
    struct kscope__custom *next;
} kscope__custom;

/* One integer metric of a node, in a list (PC sample counts). */
typedef struct kscope__count {
    uint32_t name; /* interned metric name */
    uint64_t value;
    struct kscope__count *next;
} kscope__count;

typedef struct kscope__umetric kscope__umetric;

typedef struct kscope__node kscope__node;

/* A hash index over a node's many children (core/nodes.c): a slot holds a
 * child's name and its number among its owner's nodes, 8 bytes with no
 * cache miss per probe. Added to under the owner's lock, published with
 * release; read without it by the owner alone. */
typedef struct kscope__child_slot {
    uint32_t name;           /* written before node is published */
    _Atomic uint32_t number; /* the child's number + 1; 0: empty */
} kscope__child_slot;

typedef struct kscope__child_table {
    uint32_t mask, used;
    struct kscope__child_table *older; /* replaced ones the owner may still read */
    kscope__child_slot slot[];
} kscope__child_table;

/* What only some nodes carry, made the first time one is needed
 * (kscope__node_ext_make), so a plain scope's node stays small. */
typedef struct kscope__node_ext {
    kscope__gpustats *gpu[KSCOPE_MAX_SESSIONS]; /* kernel/copy nodes: each session's lock */
    kscope__umetric *metrics;                   /* guarded by the owner's lock */
    _Atomic(kscope__child_table *) children;    /* many children: published with release */
} kscope__node_ext;

/* A calling context. Nodes live in their owner's pages (below) and are
 * never freed: a node pointer names a calling context for good. */
struct kscope__node {
    uint32_t name;
    uint16_t kind;
    uint16_t device;    /* kernel/copy nodes */
    uint32_t nchildren; /* guarded by the owner's lock */
    uint32_t number;    /* its place among its owner's nodes */
    kscope__node *parent;
    _Atomic(kscope__node *) first_child; /* published with release */
    kscope__node *next_sibling;          /* immutable once published */
    _Atomic(kscope__node_ext *) ext;     /* published with release; NULL: none */
};

/* Nodes are carved from 64 KiB pages aligned to their size. A page's
 * header (its first KSCOPE__PAGE_HEAD node slots) holds its owner and each
 * session slot's counters of its nodes as one array, made when the slot
 * first counts one: the hot path finds a node's counters from its address
 * with one load. Roots (a thread's, the global one) count nothing. */
#define KSCOPE__PAGE_BYTES 65536u
#define KSCOPE__PAGE_HEAD  5u
#define KSCOPE__PAGE_NODES (KSCOPE__PAGE_BYTES / sizeof(kscope__node) - KSCOPE__PAGE_HEAD)

typedef struct kscope__node_page {
    _Atomic(kscope__stats *) stats[KSCOPE_MAX_SESSIONS];  /* [KSCOPE__PAGE_NODES] each */
    _Atomic(_Atomic uint64_t *) cpu[KSCOPE_MAX_SESSIONS]; /* cpu ticks, once a scope is cpu-timed */
    kscope__stats_base *base[KSCOPE_MAX_SESSIONS];        /* the harvester's, once taken */
    struct kscope__thread *owner;                         /* NULL: the global root's */
    struct kscope__node_page *next;                       /* the owner's older pages */
    uint32_t used;                                        /* nodes made (owner's lock) */
    uint32_t number;                                      /* its place among the owner's pages */
} kscope__node_page;

/* An owner's nodes: its pages, newest first, and a directory of them by
 * number (child indexes name nodes by number). The directory grows under
 * the owner's lock; a replaced one stays (the owner may still read it). */
typedef struct kscope__node_pool {
    kscope__node_page *newest;
    _Atomic(kscope__node_page **) dir;
    uint32_t npages, cap;
} kscope__node_pool;

_Static_assert(sizeof(kscope__node) == 48, "a node is 48 bytes");
_Static_assert(sizeof(kscope__node_page) <= KSCOPE__PAGE_HEAD * 48, "the header fits its slots");

static inline kscope__node_page *kscope__page_of(const kscope__node *n)
{
    return (kscope__node_page *)((uintptr_t)n & ~(uintptr_t)(KSCOPE__PAGE_BYTES - 1));
}

static inline uint32_t kscope__page_index(const kscope__node *n)
{
    return (uint32_t)(((uintptr_t)n & (KSCOPE__PAGE_BYTES - 1)) / sizeof(kscope__node)) -
           KSCOPE__PAGE_HEAD;
}

/* Slot s's counters (or cpu ticks) of page pg, made when missing (core/
 * thread.c); out of memory, a shared array that nothing reads. */
kscope__stats *kscope__stats_page(kscope__node_page *pg, int s);
_Atomic uint64_t *kscope__cpu_page(kscope__node_page *pg, int s);

/* Node n's counters for session slot s (n is not a root). */
static inline kscope__stats *kscope__node_stats(const kscope__node *n, int s)
{
    kscope__node_page *pg = kscope__page_of(n);
    kscope__stats *st = atomic_load_explicit(&pg->stats[s], memory_order_acquire);
    if (__builtin_expect(st == NULL, 0))
        st = kscope__stats_page(pg, s);
    return &st[kscope__page_index(n)];
}

/* Node n's cpu ticks for slot s (a cpu-timed scope's). */
static inline _Atomic uint64_t *kscope__node_cpu(const kscope__node *n, int s)
{
    kscope__node_page *pg = kscope__page_of(n);
    _Atomic uint64_t *c = atomic_load_explicit(&pg->cpu[s], memory_order_acquire);
    if (__builtin_expect(c == NULL, 0))
        c = kscope__cpu_page(pg, s);
    return &c[kscope__page_index(n)];
}

/* The thread that owns node n (NULL: the global root's). */
struct kscope__thread *kscope__node_owner(const kscope__node *n);

/* ------------------------------------------------------------ trace events */

typedef enum {
    KSCOPE__EV_BEGIN = 1,
    KSCOPE__EV_END = 2,
    KSCOPE__EV_MARK = 3,
    KSCOPE__EV_METRIC = 4, /* name = metric id; value in `u` */
    KSCOPE__EV_STATE_BEGIN = 5,
    KSCOPE__EV_STATE_END = 6,
} kscope__ev_type;

/* 16 bytes per event. */
typedef struct kscope__ev {
    uint64_t u; /* ticks, or a metric value (bits) */
    uint32_t name;
    uint16_t type;
    uint16_t aux; /* metric value type */
} kscope__ev;

#define KSCOPE__EV_CHUNK 4096

typedef struct kscope__evchunk {
    struct kscope__evchunk *next;
    _Atomic uint32_t n;
    kscope__ev ev[KSCOPE__EV_CHUNK];
} kscope__evchunk;

typedef struct kscope__evbuf {
    kscope__evchunk *head, *tail;
    uint32_t gen; /* session generation the buffer belongs to */
} kscope__evbuf;

/* ------------------------------------------------------------------ thread */

typedef struct kscope__frame {
    kscope__node *node;
    uint64_t start; /* ticks */
    uint32_t flags;
    uint32_t name;
    kscope__node *hint; /* the child entered last from this frame */
} kscope__frame;

typedef struct kscope__thread {
    kscope__frame stack[KSCOPE__STACK_MAX + 1]; /* stack[0]: the thread root */
    int depth;
    uint32_t states[KSCOPE__STATE_MAX];
    int nstates;
    kscope__node root;
    pthread_mutex_t lock;    /* node creation, metric lists */
    kscope__node_pool nodes; /* its nodes (guarded by lock) */
    uint32_t tid;            /* OS thread id */
    uint32_t index;          /* registration order */
    _Atomic int alive;
    struct {
        const char *ptr;
        uint32_t id;
    } name_cache[KSCOPE__NAME_CACHE];
    struct {
        kscope__node *parent;
        kscope__node *child;
        uint32_t name;
        uint32_t kind;
    } child_cache[KSCOPE__CHILD_CACHE];
    kscope__evbuf ev[KSCOPE_MAX_SESSIONS];
    struct kscope__thread *next; /* registry */
    char name[32];
} kscope__thread;

/* The calling thread's state, NULL until its first annotation. The default
 * TLS model keeps libkscope loadable by dlopen (GPU runtime injection, Python)
 * into processes whose static TLS is full; the build uses TLS descriptors
 * (-mtls-dialect=gnu2) so the access stays a few instructions. */
extern __thread kscope__thread *kscope__tls;

/* Create the calling thread's state (NULL out of memory). */
kscope__thread *kscope__thread_new(void);

/* The calling thread's state, created on first use (NULL out of memory). */
static inline kscope__thread *kscope__thread_get(void)
{
    kscope__thread *t = kscope__tls;
    return __builtin_expect(t != NULL, 1) ? t : kscope__thread_new();
}

/* ------------------------------------------------------------------ global */

typedef struct kscope__global {
    /* Bit s set: session slot s is active. Read on every hot-path call. */
    _Atomic uint32_t active_mask;
    /* Non-zero when annotations must be recorded: some session exists and
     * profiling is not off. The hot path's first (and, when 0, only) load. */
    _Atomic int annotate;
    _Atomic int level; /* kscope_profiling_t */
    kscope__node root; /* global root: GPU work with no context */
} kscope__global;

extern kscope__global kscope__g;

/* -------------------------------------------------------- the GPU backends */

/* The backend table, its registry and its lifecycle: the seam between the
 * core and the vendors' code (src/gpu/backend.h). */
#include "gpu/backend.h"

/* Check a sampled mode's text ("time:on=50ms,every=1s", "step:on=1,every=10",
 * "off"): 0, or KSCOPE_EINVAL with a message naming what is wrong. */
int kscope__sampling_check(const char *spec);

/* Check a launch metadata record (KSCOPE_EINVAL, message set, or 0). */
int kscope__launch_meta_check(const kscope_launch_meta *meta);

typedef enum {
    KSCOPE__GPU_KERNEL = 1,
    KSCOPE__GPU_MEMCPY = 2,
    KSCOPE__GPU_MEMSET = 3,
    KSCOPE__GPU_DEVSCOPE = 4, /* trace sessions only: one device-side scope */
} kscope__gpu_kind;

/* One GPU activity, as the backend hands it to the core. Times are on the
 * kscope clock (ns). */
typedef struct kscope__gpu_record {
    kscope__gpu_kind kind;
    const char *name; /* demangled kernel name, "Memcpy HtoD", "Memset" */
    uint64_t start_ns, end_ns;
    uint64_t launch_ns;        /* host time of the launch API call, 0 unknown */
    uint64_t launch_end_ns;    /* its end, 0 unknown */
    uint64_t launch_ticks;     /* its start in kscope ticks (the host scopes' clock), 0 unknown */
    uint64_t launch_end_ticks; /* its end in ticks */
    uint32_t launch_tid;       /* OS thread of the launch, 0 unknown */
    uint32_t device, stream;
    uint32_t src_device, dst_device; /* peer copies */
    uint64_t bytes;
    uint32_t correlation;
    const kscope_launch_meta *meta; /* NULL: none */
    const char *function;           /* a kernel's own readable name, also when `name`
                                       is launch metadata's (NULL: same as name) */
    /* Work of a graph node captured while kscope recorded: `captured` is 1
     * and the record goes under <captured_at> and the context the node was
     * captured in (capture_ctx, 0: the global root), for sessions that
     * recorded at capture_ns too. */
    int captured;
    uint64_t capture_ctx, capture_ns;
    uint64_t graph_node; /* the backend's id of the graph node (0: none) */
    uint64_t grid_id;    /* kernels: the launch's grid id (device-side scopes) */
    uint32_t context_id; /* the backend's id of the work's context */
} kscope__gpu_record;

/* The context id for work launched now on this thread: the innermost
 * scope's node (or the state node under it). 0: the global root (also for
 * a thread that never annotated; no thread state is made for it). */
uint64_t kscope__current_ctx(void);

/* kscope_state_enter by interned name (kscope__intern): for a binding's
 * own state entered on a hot path (the Triton hook). */
int kscope__state_enter_id(uint32_t id);

/* The interned name of the calling thread's innermost state; 0 when none
 * is set (or the thread never annotated). */
uint32_t kscope__state_top(void);

/* Deliver one record (called from the backend's buffer thread). Returns
 * the sessions that recorded it (bit s: session slot s). */
uint32_t kscope__record_gpu(uint64_t ctx, const kscope__gpu_record *r);

/* ------------------------------------------------------------ PC samples */

/* At most this many sample metrics (num_samples, num_stalled_samples and
 * one per stall reason) exist in a process. */
#define KSCOPE__PCS_METRICS 64

/* PC samples of one place in one kernel, as a backend hands them over:
 * they land on the kernel's node under `ctx` (created when missing, as a
 * kernel record would) or, with a frame, on the frame's node below it. */
typedef struct kscope__pcs_record {
    uint64_t ctx;    /* the launch's calling context (0: the global root) */
    uint32_t kernel; /* interned name of the kernel's node */
    uint32_t device;
    uint32_t frame;       /* interned "file:line@function"; 0: the kernel node */
    uint32_t sessions;    /* bit s: session slot s gets them (pcsampling ones only) */
    size_t n;             /* metrics below */
    const uint32_t *name; /* interned metric names ("num_samples", ...) */
    const uint64_t *value;
} kscope__pcs_record;

/* Add PC samples (backend thread; takes the sessions' locks). */
void kscope__record_pcs(const kscope__pcs_record *r);

/* The sessions that want PC samples now (bit s: slot s). */
uint32_t kscope__pcs_sessions(void);

/* Count PC samples lost (to a full buffer, or by the hardware) for the
 * sessions in `sessions`. */
void kscope__add_dropped_samples(uint32_t sessions, int64_t n);

/* A session's mode option: NULL/"", "periodic_flushing", or "pcsampling"
 * (also "pc_sampling") with an optional ":interval=N", N the sampling
 * period in cycles (32 to 2^31, rounded to a power of two). Fills
 * *periodic and *interval (0: no PC sampling; else the cycles to ask for,
 * KSCOPE__PCS_INTERVAL when not given). KSCOPE_EINVAL with a message
 * naming the problem. */
int kscope__mode_parse(const char *mode, int *periodic, uint32_t *interval);

#define KSCOPE__PCS_INTERVAL 1024u /* default sampling period, cycles */

/* Device info for the output. */
void kscope__set_device_info(uint32_t device, const char *arch, int64_t num_sms, int64_t clock_khz,
                             int64_t mem_clock_khz, int64_t bus_width_bits);

/* -------------------------------------------------------- device scopes */

/* A session's device_scopes option, parsed (attrib/devscope.c). */
typedef struct kscope__devscope_opts {
    uint32_t flags;   /* KSCOPE_DEVICE_* of kscope/device.h */
    uint32_t every;   /* record every Nth warp or CTA */
    uint64_t records; /* buffer capacity per context, a power of two */
} kscope__devscope_opts;

#define KSCOPE__DEVSCOPE_RECORDS (1u << 20) /* default capacity, records */

/* Parse "" / "1" / "on" (defaults) or comma-separated key=value pairs:
 * clock=globaltimer|clock64, granularity=warp|cta, sample=N (every Nth
 * warp or CTA, 1 to 2^20), buffer=N[k|M] (records, 1k to 256M, rounded up
 * to a power of two), full=keep-first|keep-newest. KSCOPE_EINVAL with a
 * one-line message naming the bad part. */
int kscope__devscope_parse(const char *spec, kscope__devscope_opts *o);

/* One device-side scope instance, decoded (the backend's clock units). */
typedef struct kscope__devscope_rec {
    uint32_t name;  /* interned scope name */
    uint16_t sm;    /* SM */
    uint16_t warp;  /* warp slot on the SM */
    uint64_t start; /* ns or cycles */
    uint32_t dur;
    uint32_t seq; /* claim order on its SM (wraps): a warp's scopes in the order they ended */
} kscope__devscope_rec;

/* Add the device-side scopes of kernel launch r (delivered with context
 * ctx): under its kernel node in tree sessions, nested as they ran on each
 * warp (a scope that began and ended inside another of the same warp is its
 * child), slices on per-SM tracks in trace sessions (placed in
 * [r->start_ns, r->end_ns]; cycles go through `ns_per_cycle`). Every
 * session recording device scopes that recorded r gets them. The
 * backend's reader thread. */
void kscope__record_devscopes(uint64_t ctx, const kscope__gpu_record *r,
                              const kscope__devscope_rec *recs, size_t n, int cycles,
                              double ns_per_cycle);

/* Count device-scope records lost (buffer full, or no launch found for
 * them) for every session recording device scopes. */
void kscope__add_devscope_lost(int64_t n);

/* Whether any session records device scopes now. */
int kscope__devscope_wanted(void);

/* Whether a backend must follow launches one by one to tell their host
 * contexts: a thread has annotated (a context other than the root can
 * exist), or a trace session records (launches on the host timeline).
 * Until then every kernel goes to the root whatever the backend does. */
int kscope__calls_wanted(void);

/* The calling thread annotates for the first time (core/thread.c): the
 * first such call tells the started backend (session_changed). */
void kscope__gpu_contexts_seen(void);

/* ------------------------------------------------------------- graphs */

/* The node graph work is put under, below its launch's context: its
 * capture context, as captured, is rebuilt beneath it. */
#define KSCOPE__CAPTURED_AT "<captured_at>"

/* Metric value types (scope metrics, graph values). */
enum {
    KSCOPE__T_INT = 0,
    KSCOPE__T_DOUBLE = 1,
    KSCOPE__T_INTVEC = 2,
    KSCOPE__T_DOUBLEVEC = 3,
    KSCOPE__T_STRING = 4 /* scope metrics only (kscope_metric_str) */
};

/* A metric recorded while a graph was captured: what each launch of the
 * graph adds. */
typedef struct kscope__graph_value {
    const kscope__metric_def *def;
    int type;            /* KSCOPE__T_* */
    size_t n;            /* values (1 for a scalar) */
    const void *vals;    /* n int64_t or double values, or NULL: */
    uint64_t device_ptr; /* device memory each launch writes the n values to */
    uint32_t kernel;     /* interned kernel name: a launch metric of that
                            kernel; 0: a metric of the capture context */
    uint32_t device;     /* the device of that kernel */
    uint64_t ctx, ns;    /* capture context and time (the core fills them) */
} kscope__graph_value;

/* Whether a graph capture is open (the active backend's `capturing`); 0
 * when no backend runs. */
int kscope__capturing(int this_thread);

/* Keep v (its ctx and ns are filled here) for the graph this thread
 * captures: a token > 0, 0 when the thread does not capture, or an error. */
int64_t kscope__capture_value(kscope__graph_value *v);

/* kscope's own work begins (on = 1) or ends on this thread. */
void kscope__capture_hide(int on);

/* Tokens of kept values that are no longer needed (see the backend). */
size_t kscope__capture_released(int64_t *out, size_t n);

/* One launch of a graph produced value v: added under launch_ctx at
 * <captured_at>/<v's capture context>, for every tree session recording at
 * launch_ns and at v->ns. vals: v->n values of v->type. */
void kscope__record_graph_value(uint64_t launch_ctx, uint64_t launch_ns,
                                const kscope__graph_value *v, const void *vals);

/* Count records lost by the backend for every active session. */
void kscope__add_dropped(int64_t n);

/* Host scopes and marks to every range sink (the `detailed` level); no-ops
 * when none opened. */
void kscope__range_push(const char *name, uint32_t color);
void kscope__range_pop(void);
void kscope__range_mark(const char *name);

/* ------------------------------------------------------- resource samples */

/* Receives one sampled value: `series` names its track ("nv0 power_w",
 * "cpu_percent"), t_ns is on the kscope clock. */
typedef void (*kscope__sample_fn)(const char *series, uint64_t t_ns, double value, void *arg);
/* Receives one figure of a summary ("nv0.power_w.mean"). */
typedef void (*kscope__summary_fn)(const char *name, double value, void *arg);

/* What a resource sampler (src/diag/) offers sessions: the samples taken
 * in a time window, one value at a time, and their mean/max summary. The
 * sampler registers itself when its first recorder starts; sessions ask
 * the core, never the sampler. */
typedef struct kscope__sampler {
    /* Returns the number of values handed to fn. */
    size_t (*each)(uint64_t t0_ns, uint64_t t1_ns, kscope__sample_fn fn, void *arg);
    /* Returns the number of samples summarised (0: emit never called). */
    size_t (*summary)(uint64_t t0_ns, uint64_t t1_ns, kscope__summary_fn emit, void *arg);
} kscope__sampler;

void kscope__set_sampler(const kscope__sampler *s);
/* The registered sampler's samples in [t0_ns, t1_ns]; nothing when none. */
void kscope__sampler_each(uint64_t t0_ns, uint64_t t1_ns, kscope__sample_fn fn, void *arg);
size_t kscope__sampler_summary(uint64_t t0_ns, uint64_t t1_ns, kscope__summary_fn emit, void *arg);

/* ---------------------------------------------------------------- launcher */

/* Start the session that `kscope run` drives and return its public id.
 * From then on the program's own kscope_start returns this session and its
 * kscope_finalize is a no-op. */
int kscope__launcher_start(const kscope_session_opts *opts);

/* Finalize the launcher's session for real (default format). Returns 0, a
 * negative error, or 1 when there is no launcher session. */
int kscope__launcher_finalize(void);

/* The launcher's session id, or -1. */
int kscope__launcher_session(void);

/* Whether a file path names the shared libkscope ("libkscope.so*"): the
 * copy that acts for kscope run (core/defer.c). */
int kscope__run_is_shared_library(const char *path);

/* What kscope run (src/run/) needs of a session it drives: a new output
 * name; in a child forked without exec, dropping what the parent recorded;
 * whether anything was recorded; whether its GPU backend started. */
int kscope__session_rename(int id, const char *name);
void kscope__fork_child_reset(int id);
int kscope__session_recorded(int id);
int kscope__session_gpu_on(int id);
/* Start the GPU backend `name` (NULL: the default) for a running session
 * that has none; a backend that cannot start leaves host scopes (message
 * set, as at a session's start). */
void kscope__session_gpu_attach(int id, const char *name);

/* The run's facts (format/run-facts.h; core/facts.c). A launcher names the
 * run's command of its session (public id; NULL: the process's own command line, the
 * default); a trace session writes the facts into its metadata. */
int kscope__session_set_command(int session, const char *command);
/* The facts of a started session as one JSON object and a newline, into a
 * malloc'd buffer: 0 or a negative KSCOPE_E*. */
int kscope__run_facts_text(int session, char **out, size_t *len);
/* Write text to "<profile>.meta.json" beside a tree profile, replacing it
 * atomically; nothing for a trace (its metadata holds the facts). */
int kscope__run_facts_save(const char *profile, const char *text, size_t len);
/* argv[0..argc) as one shell-quoted line (malloc'd; NULL: out of memory). */
char *kscope__command_line(const char *const *argv, int argc);

/* ------------------------------------------------------- kscope run hooks */

/* A backend's entry points reach kscope run only through the core: run/
 * registers these handlers when libkscope loads. The Python extension has
 * no run/, so there every hook does nothing. */
typedef struct kscope__run_hooks {
    void (*capture_range)(int starting);   /* the program's profiler start/stop */
    void (*report_conflict)(const char *); /* one line of the run's result */
    int (*report_note)(const char *);      /* a warning for its summary (1: taken) */
    void (*gpu_injected)(void);            /* the GPU runtime loaded libkscope */
    void (*recording)(void);               /* the first scope of a thread, a phase */
    void (*ranges_injected)(void);         /* a range source's library did */
} kscope__run_hooks;

void kscope__set_run_hooks(const kscope__run_hooks *hooks);

/* Whether kscope run's hooks are there (libkscope, not the extension). */
int kscope__run_hooked(void);

/* The program called its profiler's start (starting = 1) or stop (0): with
 * --capture-range the launcher session records only between them. */
void kscope__capture_range(int starting);

/* Report a problem of this process to a running `kscope run` (nothing when
 * no launcher session runs); a warning goes to its summary, else stderr. */
void kscope__report_conflict(const char *msg);
void kscope__report_note(const char *key, const char *msg);

/* The process records something: kscope run then has a profile to write
 * even when a signal ends it (it starts its finisher thread). */
void kscope__run_recording(void);

/* A signal is ending the process and kscope run's finisher writes its
 * profile: a backend's flush then delivers what the GPU has done and waits
 * for no work still running, which ends with the process. */
void kscope__set_ending(void);
int kscope__ending(void);

/* The GPU runtime loaded libkscope through a backend's injection entry:
 * start the launcher session and note that the process used the GPU. */
void kscope__gpu_injected(void);

#endif /* KSCOPE_INTERNAL_H */
