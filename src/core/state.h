/*
 * state.h - the recorder's own state: the calling-context tree's nodes, a
 * trace session's event buffers, the per-thread state found through TLS,
 * and the process-wide switch the hot path reads. Included by core/core.h
 * (core/, attrib/, trace/, sampled/) and by the Python extension's fast
 * paths; the rest of kscope reaches the recorder through
 * kscope-internal.h's calls.
 */
#ifndef KSCOPE_CORE_STATE_H
#define KSCOPE_CORE_STATE_H

#include "kscope-internal.h"

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

#endif
