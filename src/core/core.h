/*
 * core.h - what the files of src/core share: sessions, per-node user
 * metrics, and the helpers that walk every thread's tree.
 */
#ifndef KSCOPE_CORE_H
#define KSCOPE_CORE_H

#include "attrib/attrib.h"
#include "core/state.h"
#include "kscope-internal.h"
#include "format/events.h"

#include <sys/types.h>
#include "format/run-facts.h"
#include "format/sink.h"
#include "profile/ptree.h"

/* A user metric on one node for one session. Guarded by the owner's lock. */
struct kscope__umetric {
    const kscope__metric_def *def;
    uint8_t slot;
    uint8_t type;
    uint32_t n; /* vector length */
    union {
        int64_t i;
        double d;
        int64_t *iv;
        double *dv;
        char *s; /* KSCOPE__T_STRING, malloc'd */
    } v;
    kscope__umetric *next;
};

/* A closed interval of activity of a session, on the kscope clock. */
typedef struct kscope__interval {
    uint64_t start_ns, end_ns; /* end UINT64_MAX while active */
} kscope__interval;

/* One GPU activity kept for a trace session. */
typedef struct kscope__gpu_ev {
    uint64_t start_ns, end_ns, launch_ns, launch_end_ns, bytes;
    uint64_t launch_ticks; /* the launch call on the host scopes' clock (0: launch_ns) */
    uint64_t ctx;
    uint32_t name, kind, device, stream, launch_tid, correlation;
    uint32_t launch_ticks_dur;       /* its length in ticks */
    uint32_t src_device, dst_device; /* differ for peer copies only */
    uint32_t parent;                 /* device scopes: the kernel's name */
} kscope__gpu_ev;

/* ------------------------------------------------- trace storage (spill.c) */

#define KSCOPE__GPU_CHUNK 1024

/* GPU events of a trace session not yet spilled (guarded by its lock). */
typedef struct kscope__gpu_chunk {
    struct kscope__gpu_chunk *next;
    uint32_t n;
    kscope__gpu_ev ev[KSCOPE__GPU_CHUNK];
} kscope__gpu_chunk;

/* A spill file: its descriptor, length, and identity (a descriptor is
 * checked to still be the file before each use). */
typedef struct kscope__spill_part {
    int fd;
    uint64_t len;
    dev_t dev;
    ino_t ino;
} kscope__spill_part;

/* Where a trace session's (or a completed phase's) events went: its own
 * spill file, after the parts a forked child kept of its parent's. */
typedef struct kscope__spill {
    int opened; /* fd and id are a file of this process's */
    int fd;
    uint64_t len;
    kscope__spill_part id;
    kscope__spill_part *parts; /* read-only, from before a fork */
    uint32_t nparts;
    int err;         /* errno of a failed write: no more spilling */
    uint64_t events; /* events written */
} kscope__spill;

/* The track (tid) of a device scope's slice: its SM and warp slot, apart
 * from stream ids. */
#define KSCOPE__DEVSCOPE_TRACK(sm, warp) (1u << 30 | (uint32_t)(sm) << 8 | ((warp)&0xffu))
#define KSCOPE__DEVSCOPE_IS_TRACK(tid)   (((tid) >> 30) == 1u)

/* A completed phase of a session (phase.c): its data as it was when the
 * phase ended, until cleared or written (periodic flushing). */
typedef enum {
    KSCOPE__PHASE_KEPT,
    KSCOPE__PHASE_WRITTEN,
    KSCOPE__PHASE_CLEARED
} kscope__phase_state;
typedef struct kscope__phase {
    kscope__phase_state state;
    int incomplete;      /* ended while a graph capture put off the flush */
    kscope__ptree *tree; /* tree sessions */
    kscope__spill trace; /* trace sessions: its events, on disk */
    uint64_t end_ticks;  /* trace sessions: when it ended (open slices end there) */
} kscope__phase;

typedef struct kscope__session {
    int in_use;
    int slot;
    int id;       /* the public session id: never reused within a process */
    uint32_t gen; /* bumped at each start in this slot */
    char name[1024];
    int trace;      /* data = trace */
    int python_ctx; /* context = python */
    int periodic;   /* mode = periodic_flushing */
    int compress;   /* trace written gzip-compressed by default */
    uint32_t pcs;   /* mode = pcsampling: its period in cycles (else 0) */
    int pcs_ended;  /* its share of PC sampling was given back (finalize) */
    const struct kscope__format *part_format; /* periodic_flushing:format=...; NULL: by data */
    int phase;                                /* the current phase (0 until advanced) */
    kscope__phase *phases;                    /* the completed phases [0, phase) */
    size_t capphases;
    int gpu;        /* the GPU backend was started for it */
    int phase_owed; /* a periodic part waits for a flush put off by a capture */
    int active;
    int sampled; /* GPU capture in the sampling windows only (sampling.c) */
    uint64_t start_ns;
    uint64_t since_ns; /* sampled: start of the part the fraction covers */
    /* Steps begun while active, and those of them inside a window (step
     * sampling; atomics, counted by kscope_step). */
    uint64_t steps, sampled_steps;
    pthread_mutex_t lock; /* everything below */
    kscope__interval *iv;
    size_t niv, capiv;
    struct {
        uint32_t base;
        uint8_t type;
        uint8_t strict; /* given to an inclusive metric or a trace session */
    } * mtypes;
    size_t nmtypes, capmtypes;
    kscope__gpu_chunk *gev, *gev_tail; /* trace: GPU events held (spill.c) */
    uint64_t ngev;                     /* trace: GPU events of this phase, held or spilled */
    size_t budget;                     /* trace: bytes of events held in memory at most */
    _Atomic size_t held;               /* ... held now (their chunks) */
    kscope__spill spill;               /* trace: events written to disk (spill_lock) */
    int64_t dropped;
    int64_t dropped_samples;   /* PC samples lost */
    int dscope;                /* records device-side scopes (devscope.c) */
    kscope__devscope_opts dso; /* their options */
    int dscope_ended;          /* its share of device scopes was given back */
    int64_t dscope_lost;       /* device-scope records lost */
    char *command; /* the run's command a launcher gave (guarded by kscope__session_lock) */
} kscope__session;

extern kscope__session kscope__sessions[KSCOPE_MAX_SESSIONS];
/* Bit s: slot s records a trace (else a tree). */
extern _Atomic uint32_t kscope__trace_mask;
/* Ticks at which slot s was last activated: scope time is clipped to it. */
extern _Atomic uint64_t kscope__act_ticks[KSCOPE_MAX_SESSIONS];
/* Ticks at which slot s was last deactivated (open scopes end there). */
extern _Atomic uint64_t kscope__deact_ticks[KSCOPE_MAX_SESSIONS];
/* Guards session start/stop/finalize and the thread registry walk. */
extern pthread_mutex_t kscope__session_lock;

/* The registry of every thread that ever annotated (alive or not). */
kscope__thread *kscope__threads(void);

/* The process's main thread's state (the thread whose id is the process
 * id), NULL until it annotates: a thread with no scope of its own launches
 * under its current scope (kscope__current_ctx). */
kscope__thread *kscope__main_thread(void);
void kscope__threads_lock(void);
void kscope__threads_unlock(void);

/* The pages of a thread's nodes, newest first (t NULL: the global root's).
 * Read under the owner's lock. */
kscope__node_page *kscope__node_pages(const kscope__thread *t);

/* Node n's extra parts, NULL when it has none; made when missing by
 * kscope__node_ext_make (NULL out of memory). */
static inline kscope__node_ext *kscope__node_ext_get(const kscope__node *n)
{
    return atomic_load_explicit(&((kscope__node *)n)->ext, memory_order_acquire);
}
kscope__node_ext *kscope__node_ext_make(kscope__node *n);

/* Node n's GPU counters for slot s (NULL: none); the caller holds the
 * session's lock. _make returns them, made zeroed when missing (NULL out
 * of memory). */
static inline kscope__gpustats *kscope__node_gpu(const kscope__node *n, int s)
{
    const kscope__node_ext *x = kscope__node_ext_get(n);
    return x ? x->gpu[s] : NULL;
}
kscope__gpustats *kscope__node_gpu_make(kscope__node *n, int s);

/* Child of `parent` with (name, kind), created when missing. The creating
 * thread must be parent's owner, or hold the owner's lock. */
kscope__node *kscope__node_child(kscope__thread *t, kscope__node *parent, uint32_t name,
                                 uint32_t kind);
/* Same, for threads other than the owner (takes the owner's lock). */
kscope__node *kscope__node_child_locked(kscope__node *parent, uint32_t name, uint32_t kind,
                                        uint32_t device);

/* Check/record that metric `def` may take a value of type `type` in
 * session s. An inclusive metric (it adds up into its parents) and any
 * metric of a trace session keep one type per session; a (pty) or (exc)
 * metric of a tree session keeps one type per node (checked by
 * kscope__node_metric_type), as Proton's do, but not one that an inclusive
 * metric of the same name holds. `negative`: the value is a negative int
 * (int64_t rather than uint64_t in the message, as Proton names them). */
int kscope__session_metric_type(kscope__session *s, const kscope__metric_def *def, int type,
                                int negative);

/* The message and code for a value of `type` given to metric `def` that
 * holds `had`. */
int kscope__metric_type_error(const kscope__metric_def *def, int had, int type, int negative);

/* Where session s puts GPU record r launched at `when` (records.c):
 * nowhere, under its launch's context, or under <captured_at>. Caller
 * holds s->lock. */
enum { KSCOPE__PLACE_SKIP = 0, KSCOPE__PLACE_LAUNCH = 1, KSCOPE__PLACE_CAPTURED = 2 };
int kscope__gpu_placement(const kscope__session *s, uint64_t when, const kscope__gpu_record *r);
/* A GPU record's interned node name (launch metadata's name first). */
uint32_t kscope__gpu_record_name(const kscope__gpu_record *r);

/* A device scope node's metrics (devscope.c); cycles: clock64 units. */
int kscope__devscope_metrics(kscope__ptree *t, kscope__pnode *pn, const kscope__gpustats *g,
                             int cycles);

/* Build the tree of slot s into a new ptree (open scopes closed at now).
 * With cut, what goes into the tree is taken from the nodes: the slot
 * goes on counting from zero (a phase ends), and no call, metric or GPU
 * record is in both or neither. */
kscope__ptree *kscope__build_tree(int slot, uint64_t now_ticks, int cut);

/* Whether node n counted a call or holds GPU counters in slot s. */
int kscope__node_recorded(kscope__node *n, int slot);

/* The timeline of slot s, open scopes closed at now_ticks, as an event
 * source for a trace writer (format/events.h): pass a kscope__trace_args.
 * With `phase` set, the events are that completed phase's instead. */
typedef struct kscope__trace_args {
    int slot;
    uint64_t now_ticks;
    const struct kscope__phase *phase;
} kscope__trace_args;
int kscope__trace_source(void *source_arg, kscope__tev_fn fn, void *fn_arg);

/* A session's options, typed (options.c): what kscope_start was given,
 * parsed and checked once, each field set or zero. */
typedef struct kscope__session_config {
    const char *name;                  /* the output's name, "kscope" by default */
    int trace;                         /* data=trace, else a tree */
    int python;                        /* context=python */
    int periodic;                      /* mode periodic_flushing */
    const struct kscope__format *part; /* its parts' format (NULL: the session's) */
    uint32_t pcs;                      /* PC sampling's interval in cycles, 0 off */
    const char *sample;                /* the sampled mode's spec, NULL off */
    int dscope;                        /* device scopes on, with dso */
    kscope__devscope_opts dso;
    size_t trace_budget; /* bytes of events held in memory (trace) */
    int compress;        /* a gzip trace */
} kscope__session_config;

/* opts into *c, or a KSCOPE_E* code with the message naming the option
 * (session lock held: the sampled mode's schedule is checked). */
int kscope__config_parse(const kscope_session_opts *opts, kscope__session_config *c);

/* Trace storage (spill.c). kscope__trace_budget: a KSCOPE_TRACE_BUFFER
 * size ("64M"; text NULL: the variable, else 64 MiB) into *out, or EINVAL
 * with a message. spill_start: a session starts (session lock held; the
 * writer thread runs from the first trace session on); spill_end: it ends
 * (its events dropped). */
int kscope__trace_budget(const char *text, size_t *out);
int kscope__spill_start(kscope__session *s, size_t budget);
void kscope__spill_end(kscope__session *s);
/* A chunk for a thread's events of session s, within its budget (NULL:
 * over it, or out of memory: the event drops); chunks go back with
 * kscope__ev_chunks_free (a list). */
kscope__evchunk *kscope__ev_chunk_new(kscope__session *s);
void kscope__ev_chunks_free(kscope__session *s, kscope__evchunk *c);
/* A slot for one GPU event of s, within its budget (NULL: none); caller
 * holds s->lock. */
kscope__gpu_ev *kscope__gpu_ev_add(kscope__session *s);
/* Every event of s's current phase, spilled ones first then those in
 * memory, each thread's host events in their order. */
typedef struct kscope__trace_visit {
    int (*host)(void *arg, const kscope__thread *t, const kscope__ev *ev, uint32_t n);
    int (*gpu)(void *arg, const kscope__gpu_ev *ev, uint32_t n);
    void *arg;
} kscope__trace_visit;
int kscope__trace_each(kscope__session *s, const kscope__trace_visit *v);
/* The same over a completed phase's spill. */
int kscope__spill_read(const kscope__spill *sp, const kscope__trace_visit *v);
/* The current phase's events, all moved to disk, into *out (the phase
 * ends: the session goes on with none); or dropped. */
int kscope__spill_take(kscope__session *s, kscope__spill *out);
void kscope__spill_drop(kscope__session *s);
/* Spill session `id`'s full chunks now, as the writer thread does when
 * they pass a quarter of its budget (tests); 0 or an error. */
int kscope__spill_now(int id);
/* Close a spill's files (a phase dropped or written). */
void kscope__spill_close(kscope__spill *sp);
/* Drop what s holds of its trace, in a child just forked (one thread, no
 * lock taken: the fork handlers may hold them). */
void kscope__spill_reset_child(kscope__session *s);

/* The run's facts of session s into b (caller holds kscope__session_lock);
 * b->f points into b until kscope__run_facts_done. */
typedef struct kscope__facts_buf {
    kscope__run_facts f;
    char *own; /* this process's command line */
    char host[256], start[40];
} kscope__facts_buf;
void kscope__run_facts_fill(const kscope__session *s, kscope__facts_buf *b);
void kscope__run_facts_done(kscope__facts_buf *b);

/* What session.c shares with phase.c (callers hold kscope__session_lock):
 * the started session with public id `id` (NULL, failing, when none); the
 * format to write (`name`, or the session's default); a serialization of
 * the session's current data; the path of phase `phase` in a format. */
kscope__session *kscope__session_get(int id);
/* The started session with public id `id`, or NULL (no message set). */
kscope__session *kscope__session_find(int id);
/* One of session `session`'s int64_t loss counters (offsetof(kscope__session,
 * dropped), dropped_samples or dscope_lost), read under kscope__session_lock,
 * which the caller does not hold; 0 when there is no such session. */
int64_t kscope__session_count(int session, size_t offset);
int kscope__session_format(kscope__session *s, const char *name, const struct kscope__format **out);
int kscope__session_serialize(kscope__session *s, const struct kscope__format *f,
                              const kscope__phase *ph, char **out, size_t *len);
/* The same (a completed phase's data with ph, else the current one's), to
 * a sink as it is made, or to a file (output.c's, atomically). */
int kscope__session_write(kscope__session *s, const struct kscope__format *f,
                          const kscope__phase *ph, const kscope__sink *out);
int kscope__session_output(kscope__session *s, const struct kscope__format *f,
                           const kscope__phase *ph, const char *path);
int kscope__session_path(kscope__session *s, const struct kscope__format *f, int phase, char *buf,
                         size_t size);

/* Phases (phase.c). Complete the current phase (its GPU records flushed),
 * keep it (or write it: periodic flushing) and start the next one empty;
 * returns the new phase. */
int kscope__phase_advance(kscope__session *s);
/* Write every kept phase to its part file in format f (finalize). */
int kscope__phase_write_kept(kscope__session *s, const struct kscope__format *f);
/* Free what the session keeps of its phases (it ends). */
void kscope__phase_free(kscope__session *s);
/* Drop the current phase's data and go on recording into it. */
void kscope__phase_reset_current(kscope__session *s);

/* Write a whole profile to path, atomically (output.c). */
int kscope__output_file(const char *path, const char *buf, size_t len);

/* The same, streamed: open, write (a sink's write function: pass the
 * outfile as its arg), then close, which with commit puts the file in
 * place (else it is dropped, the old one left). Errors are set with the
 * path named. */
typedef struct kscope__outfile kscope__outfile;
int kscope__output_open(const char *path, kscope__outfile **out);
int kscope__output_write(void *outfile, const void *buf, size_t len);
int kscope__output_close(kscope__outfile *o, int commit);

/* Start slot s anew on every node: what it counted is forgotten, its
 * metrics and GPU counters dropped (a new session or phase starts). 0 or
 * KSCOPE_ENOMEM (a baseline could not be kept). */
int kscope__reset_slot(int slot);

/* Free a node's GPU counters for one session (PC samples included). */
void kscope__gpustats_free(kscope__gpustats *g);

/* Count one duration in a node's GPU counters (count, time, min, max). */
static inline void kscope__gpustats_time(kscope__gpustats *g, uint64_t dur)
{
    if (g->count == 0 || dur < g->min_ns)
        g->min_ns = dur;
    if (dur > g->max_ns)
        g->max_ns = dur;
    g->count++;
    g->time_ns += dur;
}

/* Write a node's PC sample counts into pn (inclusive metrics, as ROOT
 * lists them). 0 or KSCOPE_ENOMEM. */
int kscope__pcs_metrics(kscope__ptree *t, kscope__pnode *pn, const kscope__count *c);

/* Device info recorded so far, copied into a ptree. */
void kscope__devices_to_ptree(kscope__ptree *t);

/* The GPU backend of sessions (backend.c): 0 or KSCOPE_EBACKEND for an
 * unknown backend= name; attach starts the backend for the first session
 * that uses it (a failure leaves host scopes), detach stops it after the
 * last, flush waits for the records of work launched so far. */
int kscope__backend_check(const char *name);
int kscope__gpu_attach(kscope__session *s, const char *name);
/* A session being finalized (after its flush, before it is written): the
 * last one sampling PCs turns sampling off, so that what the backend hands
 * over only when sampling ends still reaches it. */
void kscope__gpu_pcs_end(kscope__session *s);
/* Likewise for device scopes: the last one recording them turns them off. */
void kscope__gpu_dscope_end(kscope__session *s);
void kscope__gpu_detach(kscope__session *s);
/* Returns 1 when the flush was put off: a graph capture is open (the
 * records come later; kscope__gpu_flush_owed does it once none is). */
int kscope__gpu_flush(kscope__session *s);
/* Do a flush put off during a capture, if none is open now: 1 if done.
 * Caller holds kscope__session_lock. */
int kscope__gpu_flush_owed(void);

/* Was session s recording at host time ns? Caller holds s->lock. */
int kscope__recording_at(const kscope__session *s, uint64_t ns);

/* The node under `launch` (a launch context) for work captured under
 * capture_ctx: <captured_at> and, below it, the capture context's path
 * from its thread's root, made where missing. NULL out of memory. */
kscope__node *kscope__captured_node(kscope__node *launch, uint64_t capture_ctx);

/* Add one launch-metadata value named `name` (interned) to a kernel's
 * counters: flops8..flops64 and bytes have their own, any other name is a
 * custom metric. Caller holds the session's lock. */
void kscope__gpustats_add(kscope__gpustats *g, uint32_t name, double value);

/* The lock that guards node creation and metric lists under n: its
 * owner thread's, or the global root's. */
pthread_mutex_t *kscope__owner_lock(const kscope__node *n);

/* Add a metric value to node n (any thread's) for session slot s. */
int kscope__node_metric(kscope__node *n, int s, const kscope__metric_def *def, int type,
                        const void *vals, size_t count);

/* The sampled mode (sampling.c). A process has one schedule of windows,
 * set by its first sampled session; GPU capture is on in the windows and
 * off between them (the backend's gate), unless a session that is not
 * sampled needs it. The windows are kept so that records, scaling and
 * the output agree on what was sampled.
 *
 * sampling_resolve: the spec a session asks for (opts->sample, else
 * $KSCOPE_SAMPLE) into *spec (NULL: not sampled); checks it against the
 * schedule running (EINVAL, message set). Session lock held. */
int kscope__sampling_resolve(const char *asked, const char **spec);
/* A session started (spec from resolve) or is released: the schedule and
 * the gate follow. Session lock held. */
int kscope__sampling_attach(kscope__session *s, const char *spec);
void kscope__sampling_detach(kscope__session *s);
/* A periodic session starts its next part: the fraction starts anew. */
void kscope__sampling_phase(kscope__session *s);
/* The GPU backend just started (capture on, as a start leaves it). */
void kscope__sampling_backend_started(void);
/* Whether GPU work launched at ns fell in a window (buffer thread). */
int kscope__sampling_in_window(uint64_t ns);
/* A sampled session's figures into its tree: the fraction sampled and the
 * estimated (est_) metrics at ROOT and on every GPU node. */
int kscope__sampling_tree(kscope__session *s, kscope__ptree *t, uint64_t now_ns);
/* The windows [open, close) that overlap [t0, t1], in order; close is
 * UINT64_MAX for a window still open. */
void kscope__sampling_windows(uint64_t t0, uint64_t t1,
                              void (*fn)(uint64_t open, uint64_t close, void *arg), void *arg);

/* Set the started backend's gate to a KSCOPE__GATE_* state; 0 when there
 * is no backend or it cannot switch (backend.c). */
int kscope__gpu_gate(int state);

/* ------------------------------------------------------------- deferral */

/* The public calls a copy of the recorder linked into the program hands to
 * the preloaded libkscope.so under kscope run (defer.c): every call that
 * records, reads or ends a session, or reports its errors. */
#define KSCOPE__DEFERRED_API(X)                                                                    \
    X(profiling, int, (void))                                                                      \
    X(set_profiling, int, (int))                                                                   \
    X(start, int, (const kscope_session_opts *))                                                   \
    X(activate, int, (int))                                                                        \
    X(deactivate, int, (int, int))                                                                 \
    X(finalize, int, (int, const char *))                                                          \
    X(output_path, int, (int, const char *, char *, size_t))                                       \
    X(data, int, (int, const char *, char **, size_t *))                                           \
    X(dropped, int64_t, (int))                                                                     \
    X(dropped_samples, int64_t, (int))                                                             \
    X(device_scopes_lost, int64_t, (int))                                                          \
    X(step, int, (void))                                                                           \
    X(enter_ex, int, (const char *, uint32_t, uint32_t))                                           \
    X(enter_loc, int, (kscope_loc *))                                                              \
    X(exit, int, (const char *))                                                                   \
    X(exit_loc, int, (kscope_loc *))                                                               \
    X(depth, int, (void))                                                                          \
    X(innermost, const char *, (void))                                                             \
    X(state_enter, int, (const char *))                                                            \
    X(state_exit, int, (void))                                                                     \
    X(mark, int, (const char *))                                                                   \
    X(metric_int, int, (const char *, int64_t))                                                    \
    X(metric_double, int, (const char *, double))                                                  \
    X(metric_int_vec, int, (const char *, const int64_t *, size_t))                                \
    X(metric_double_vec, int, (const char *, const double *, size_t))                              \
    X(launch_metadata, int, (const kscope_launch_meta *))                                          \
    X(last_error, const char *, (void))

typedef struct kscope__api {
#define KSCOPE__API_FIELD(fn, ret, args) ret(*fn) args;
    KSCOPE__DEFERRED_API(KSCOPE__API_FIELD)
#undef KSCOPE__API_FIELD
} kscope__api;

enum { KSCOPE__DEFER_UNKNOWN = 0, KSCOPE__DEFER_NO = 1, KSCOPE__DEFER_YES = 2 };
extern _Atomic int kscope__defer_state;
extern const kscope__api *kscope__defer_api;

/* Decide (once) whether this copy defers; the libkscope.so's calls or NULL. */
const kscope__api *kscope__defer_resolve(void);

/* The calls to hand over, or NULL when this copy records for itself: one
 * load once decided. */
static inline const kscope__api *kscope__deferred(void)
{
    int st = atomic_load_explicit(&kscope__defer_state, memory_order_acquire);
    if (__builtin_expect(st == KSCOPE__DEFER_NO, 1))
        return NULL;
    return st == KSCOPE__DEFER_YES ? kscope__defer_api : kscope__defer_resolve();
}

/* rc of a deferred call; a failure's message is copied to this copy's
 * kscope_last_error, which the program reads. */
int kscope__defer_rc(const kscope__api *d, int rc);

/* Hand the call to libkscope.so when this copy defers (defer.c); _VALUE
 * for calls that cannot fail. */
#define KSCOPE__DEFER(fn, ...)                                                                     \
    do {                                                                                           \
        const kscope__api *kscope__d = kscope__deferred();                                         \
        if (__builtin_expect(kscope__d != NULL, 0))                                                \
            return kscope__defer_rc(kscope__d, kscope__d->fn(__VA_ARGS__));                        \
    } while (0)
#define KSCOPE__DEFER_VALUE(fn, ...)                                                               \
    do {                                                                                           \
        const kscope__api *kscope__d = kscope__deferred();                                         \
        if (__builtin_expect(kscope__d != NULL, 0))                                                \
            return kscope__d->fn(__VA_ARGS__);                                                     \
    } while (0)

#endif
