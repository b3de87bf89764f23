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

/* ---------------------------------------------------------------- options */

/* A session's mode option (core/options.c): NULL/"", "periodic_flushing", or "pcsampling"
 * (also "pc_sampling") with an optional ":interval=N", N the sampling
 * period in cycles (32 to 2^31, rounded to a power of two). Fills
 * *periodic and *interval (0: no PC sampling; else the cycles to ask for,
 * KSCOPE__PCS_INTERVAL when not given). KSCOPE_EINVAL with a message
 * naming the problem. */
int kscope__mode_parse(const char *mode, int *periodic, uint32_t *interval);

#define KSCOPE__PCS_INTERVAL 1024u /* default sampling period, cycles */

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
