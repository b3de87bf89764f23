/*
 * attrib.h - GPU work attributed in the core, as a backend hands it over
 * beyond kernels and copies: PC samples, device-side scopes, graphs
 * (src/attrib/ implements them; src/gpu/<vendor>/ calls them).
 */
#ifndef KSCOPE_ATTRIB_H
#define KSCOPE_ATTRIB_H

#include "kscope-internal.h"

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

#endif
