/*
 * kscope.h - the public C API of libkscope.
 *
 * kscope attributes host scopes, GPU kernels and copies to the calling
 * context that caused them, and writes the result as a calling-context
 * tree (.hatchet, .hatchet_msgpack) or a timeline (Chrome trace JSON).
 *
 * Conventions (as in libuv):
 *   - every function that can fail returns 0 (or a non-negative value) on
 *     success and a negative KSCOPE_E* code on failure;
 *   - kscope_strerror() names a code, kscope_last_error() gives the calling
 *     thread's message for its last failure (it names the objects involved);
 *   - structs passed in are owned by the caller;
 *   - the library never aborts and never writes to stdout.
 *
 * Hot path: kscope_enter/kscope_exit and the KSCOPE_SCOPE macro take no lock,
 * allocate nothing in the steady state and copy no string. With no session
 * started they return after one load and one branch.
 */
#ifndef KSCOPE_H
#define KSCOPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define KSCOPE_EXTERN __declspec(dllexport)
#else
#define KSCOPE_EXTERN __attribute__((visibility("default")))
#endif

#define KSCOPE_VERSION_MAJOR  0
#define KSCOPE_VERSION_MINOR  1
#define KSCOPE_VERSION_PATCH  0
#define KSCOPE_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- errors */

/* XX(name, message): the one list of error codes. */
#define KSCOPE_ERRNO_MAP(XX)                                                                       \
    XX(EINVAL, "invalid argument")                                                                 \
    XX(ENOMEM, "out of memory")                                                                    \
    XX(ENOSESSION, "no such session")                                                              \
    XX(ETOOMANY, "too many sessions")                                                              \
    XX(EFORMAT, "unknown output format")                                                           \
    XX(EDATA, "unknown data kind")                                                                 \
    XX(EBACKEND, "unknown or unavailable backend")                                                 \
    XX(EMISMATCH, "scope exit does not match the innermost scope")                                 \
    XX(EEMPTY, "no open scope on this thread")                                                     \
    XX(EDEPTH, "scope nesting too deep")                                                           \
    XX(EMETRICTYPE, "metric type mismatch")                                                        \
    XX(ERESERVED, "reserved metric name")                                                          \
    XX(EIO, "input/output error")                                                                  \
    XX(ENOSPC, "no space left on device")                                                          \
    XX(EACCES, "permission denied")                                                                \
    XX(ENOGPU, "no GPU or no GPU driver")                                                          \
    XX(ENOGPUTOOL, "the GPU vendor's profiling interface is not available")                        \
    XX(EBUSY, "another tool holds the GPU profiling interface")                                    \
    XX(EPARSE, "malformed input")                                                                  \
    XX(ENOTSUP, "operation not supported")                                                         \
    XX(ESTATE, "operation not valid in the current state")                                         \
    XX(ENOPROC, "no such process")

typedef enum {
    KSCOPE_OK = 0,
#define KSCOPE__ERR_ENUM(name, msg) KSCOPE_##name,
    KSCOPE__ERR_FIRST = -1000,
    KSCOPE_ERRNO_MAP(KSCOPE__ERR_ENUM)
#undef KSCOPE__ERR_ENUM
        KSCOPE__ERR_LAST
} kscope_errno_t;

/* Earlier names of codes, kept so code written against them still builds. */
#define KSCOPE_ENOCUPTI KSCOPE_ENOGPUTOOL /* CUPTI, the CUPTI backend's interface */

/* Message for an error code ("unknown error" for codes not in the list). */
KSCOPE_EXTERN const char *kscope_strerror(int err);

/* Symbolic name of an error code, e.g. "KSCOPE_EMISMATCH". */
KSCOPE_EXTERN const char *kscope_err_name(int err);

/* The calling thread's message for its last failed call; "" if none.
 * Valid until the thread's next failing call. */
KSCOPE_EXTERN const char *kscope_last_error(void);

/* Library version string, e.g. "0.1.0". */
KSCOPE_EXTERN const char *kscope_version(void);

/* --------------------------------------------------------- profiling switch */

typedef enum {
    KSCOPE_PROFILING_OFF = 0,      /* annotations are no-ops */
    KSCOPE_PROFILING_ON = 1,       /* annotations recorded (default) */
    KSCOPE_PROFILING_DETAILED = 2, /* also emitted as NVTX ranges */
} kscope_profiling_t;

/* Current level: set from KSCOPE_PROFILING (or MODULAR_ENABLE_PROFILING) at
 * first use, "on" when neither is set, then by kscope_set_profiling. */
KSCOPE_EXTERN int kscope_profiling(void);

/* Override the level at run time. Returns KSCOPE_EINVAL for other values. */
KSCOPE_EXTERN int kscope_set_profiling(int level);

/* Parse "off|on|detailed" (also "0|1|2", "false|true"); negative if bad. */
KSCOPE_EXTERN int kscope_parse_profiling(const char *text);

/* ---------------------------------------------------------------- sessions */

#define KSCOPE_ALL          (-1) /* "every session" for activate/deactivate/finalize */
#define KSCOPE_MAX_SESSIONS 8

typedef struct kscope_session_opts {
    const char *name;    /* output path without extension; NULL -> "kscope" */
    const char *context; /* "shadow" (default) or "python" (bindings) */
    const char *data;    /* "tree" (default) or "trace" */
    const char *backend; /* NULL (auto), "cupti" or "none" */
    /* NULL, "periodic_flushing" (optionally ":format=<name>", the format
     * of its part files), or "pcsampling" (PC sampling: where in
     * each kernel's source the GPU spends its time, and why its warps
     * stall) with an optional ":interval=N", the sampling period in GPU
     * cycles (32 to 2^31, rounded to a power of two; default 1024). */
    const char *mode;
    /* Sampled mode: GPU capture only in windows, host scopes always.
     * "time:on=50ms,every=1s" (a 50 ms window each second) or
     * "step:on=1,every=10" (one step in ten, steps marked by kscope_step);
     * optional ",first=" delays the first window. NULL: $KSCOPE_SAMPLE, or
     * every launch when that is unset; "" or "off": every launch. */
    const char *sample;
    /* Device-side scopes (kscope/device.h) of the kernels: NULL or "off":
     * none; "on" (or ""): the defaults; else comma-separated options:
     * clock=globaltimer|clock64, granularity=warp|cta, sample=N (every
     * Nth warp or CTA), buffer=N[k|M] (records per context, rounded up to
     * a power of two; default 1M), full=keep-first|keep-newest. The
     * first session's options hold while several record them. */
    const char *device_scopes;
} kscope_session_opts;

/* Start a session and activate it. opts may be NULL (all defaults).
 * Returns the session id (>= 0) or a negative error. When a launcher
 * (kscope run) drives the process, returns the launcher's session. */
KSCOPE_EXTERN int kscope_start(const kscope_session_opts *opts);

/* Resume recording into a session (KSCOPE_ALL: every session). */
KSCOPE_EXTERN int kscope_activate(int session);

/* Pause a session: work done until the next activate is not recorded.
 * flushing != 0 also waits until every GPU record so far has arrived. */
KSCOPE_EXTERN int kscope_deactivate(int session, int flushing);

/* Write the session to "<name>.<ext>" and end it. format: "hatchet",
 * "hatchet_msgpack", "chrome_trace" or NULL (by the session's data: tree ->
 * hatchet, trace -> chrome_trace). Scopes still open on any thread are closed
 * at the time of the call. KSCOPE_ALL ends every session. */
KSCOPE_EXTERN int kscope_finalize(int session, const char *format);

/* Path written (or to be written) for a session and format, into buf.
 * Returns the length or a negative error. */
KSCOPE_EXTERN int kscope_output_path(int session, const char *format, char *buf, size_t size);

/* Serialise a live session without ending it. On success *out is a buffer
 * allocated by kscope (free with kscope_free) of *len bytes. */
KSCOPE_EXTERN int kscope_data(int session, const char *format, char **out, size_t *len);

/* Phases (Proton's data phases): a session's data is cut into phases,
 * numbered from 0. The current phase is the live data; advancing completes
 * it (waiting for the GPU records of work launched so far, as
 * kscope_deactivate with flushing does), keeps it and starts the next one
 * empty. A session in periodic flushing mode writes each completed phase
 * to "<name>.part_<N>.<ext>" at once instead of keeping it. kscope_finalize
 * writes a session past phase 0 as one part file per phase kept and one
 * for the current phase. */

/* Complete the current phase; returns the new phase's number. */
KSCOPE_EXTERN int kscope_advance_phase(int session);

/* 1 when phase `phase` is complete (all its records arrived) and still
 * held or written, 0 when not (the current phase, or a cleared one). */
KSCOPE_EXTERN int kscope_phase_complete(int session, int phase);

/* Drop the data of phase `phase` (up_to != 0: of phases 0..phase). The
 * current phase, when cleared, goes on recording from empty. */
KSCOPE_EXTERN int kscope_clear_phase(int session, int phase, int up_to);

/* kscope_data of one phase: the current one, or a completed one still
 * held (KSCOPE_ESTATE once cleared or written to its part file). */
KSCOPE_EXTERN int kscope_data_phase(int session, int phase, const char *format, char **out,
                                    size_t *len);

/* Free memory returned by kscope. */
KSCOPE_EXTERN void kscope_free(void *p);

/* Mark the end of one step of the program and the start of the next (a
 * training step, a request). Sessions sampled by steps ("step:...")
 * switch GPU capture on or off here; otherwise a no-op of one load.
 * Returns 0. */
KSCOPE_EXTERN int kscope_step(void);

/* NVTX ranges (nvtxRangePush/Pop, nvtxRangeStart/End, domains, marks) as
 * kscope scopes and marks, in-process. on = 1: NVTX instances that
 * initialize after this call (NVTX does at its first call in each library)
 * report to kscope: NVTX_INJECTION64_PATH is set to the shared library
 * kscope is in, unless it already names it; ranges opened from then on
 * become scopes. on = 0: later ranges and marks are ignored. Under kscope
 * run ranges are on from the start. Returns 0, KSCOPE_ESTATE when
 * NVTX_INJECTION64_PATH names another tool (Nsight Systems, say), or
 * KSCOPE_ENOTSUP when kscope is linked statically into the program. */
KSCOPE_EXTERN int kscope_nvtx_ranges(int on);

/* Number of GPU records dropped so far by a session (0 without a GPU). */
KSCOPE_EXTERN int64_t kscope_dropped(int session);

/* Number of PC samples lost so far by a session in pcsampling mode (a
 * sampling buffer was full, or the hardware dropped them). */
KSCOPE_EXTERN int64_t kscope_dropped_samples(int session);

/* Number of device-side scope records lost so far by a session (its
 * buffer was full, or no kernel launch was found for them). */
KSCOPE_EXTERN int64_t kscope_device_scopes_lost(int session);

/* ------------------------------------------------------------------ scopes */

/* A static per-call-site description. The hot path passes a pointer to it;
 * kscope fills `id` on first use. Zero-initialise what you do not set. */
typedef struct kscope_loc {
    const char *name;
    const char *function;
    const char *file;
    uint32_t line;
    uint32_t color; /* 0xRRGGBB; 0 -> default */
    uint32_t flags; /* KSCOPE_CPU_TIMED */
    uint32_t id;    /* set by kscope */
} kscope_loc;

#define KSCOPE_CPU_TIMED 1u /* scope also records exclusive "cpu_time (ns)" */

/* Enter a scope named `name` on the calling thread. */
KSCOPE_EXTERN int kscope_enter(const char *name);

/* Enter with a colour and flags (KSCOPE_CPU_TIMED). */
KSCOPE_EXTERN int kscope_enter_ex(const char *name, uint32_t color, uint32_t flags);

/* Leave the innermost scope. `name` NULL leaves it whatever its name; a
 * name that is not the innermost's returns KSCOPE_EMISMATCH naming both
 * and leaves the stack as it was. */
KSCOPE_EXTERN int kscope_exit(const char *name);

/* Enter/leave by call site (the fastest path). */
KSCOPE_EXTERN int kscope_enter_loc(kscope_loc *loc);
KSCOPE_EXTERN int kscope_exit_loc(kscope_loc *loc);

/* Depth of the calling thread's scope stack. */
KSCOPE_EXTERN int kscope_depth(void);

/* Name of the calling thread's innermost scope (kscope's copy, valid for
 * the process), or NULL when none is open. */
KSCOPE_EXTERN const char *kscope_innermost(void);

/* An async scope: one call of a scope whose work runs in steps that other
 * work interleaves with on the same thread (a coroutine, from its first
 * resume to its end). Its node is a child of the scope innermost at begin;
 * it counts one call and the time from begin to end. Between resume and
 * suspend (one step) it is the calling thread's innermost scope, so scopes,
 * kernels and metrics of the step land under it; a trace shows each step as
 * a slice on the thread that ran it. Caller-owned; kscope fills it. */
typedef struct kscope_async {
    void *node;     /* kscope's: NULL when begin recorded nothing */
    void *thread;   /* kscope's: the thread whose stack holds the open step */
    uint64_t start; /* ticks at begin */
    uint32_t name;  /* kscope's */
    uint32_t flags; /* KSCOPE_CPU_TIMED */
    uint32_t color;
    int open; /* a step is open */
} kscope_async;

/* Begin: counts the call. 0, 1 when nothing is recorded (no session,
 * profiling off: the other calls then do nothing), or an error. */
KSCOPE_EXTERN int kscope_async_begin(kscope_async *a, const char *name, uint32_t color,
                                     uint32_t flags);
/* Open a step on the calling thread (a resume): pushes the scope. */
KSCOPE_EXTERN int kscope_async_resume(kscope_async *a);
/* Close the open step (a suspension). KSCOPE_EMISMATCH, leaving the stack
 * as it is, when another scope opened in the step is still open above it. */
KSCOPE_EXTERN int kscope_async_suspend(kscope_async *a);
/* End: closes an open step and adds the time since begin. */
KSCOPE_EXTERN int kscope_async_end(kscope_async *a);

/* Metrics on the calling thread's innermost scope (ROOT when none).
 * Suffixes: "(inc)" (default) rolls up to parents, "(exc)" stays on the
 * node, "(pty)" is a property (last value wins). A name keeps one type per
 * session (KSCOPE_EMETRICTYPE otherwise). "cpu_time (ns)" is reserved. */
KSCOPE_EXTERN int kscope_metric_int(const char *name, int64_t value);
KSCOPE_EXTERN int kscope_metric_double(const char *name, double value);
KSCOPE_EXTERN int kscope_metric_int_vec(const char *name, const int64_t *values, size_t n);
KSCOPE_EXTERN int kscope_metric_double_vec(const char *name, const double *values, size_t n);

/* A text value (copied) for a "(pty)" or "(exc)" metric: the last value
 * given wins. Any other metric refuses text with KSCOPE_EMETRICTYPE; a trace
 * session (data = "trace") refuses it with KSCOPE_ENOTSUP. */
KSCOPE_EXTERN int kscope_metric_str(const char *name, const char *value);

/* States: at most one per thread (innermost wins); shown as the frame
 * directly above whatever is recorded under it (kernels, copies, marks,
 * metrics), as Proton places them. */
KSCOPE_EXTERN int kscope_state_enter(const char *name);
KSCOPE_EXTERN int kscope_state_exit(void);

/* An instant event on the calling thread. */
KSCOPE_EXTERN int kscope_mark(const char *name);

/* ---------------------------------------------------------- launch metadata */

typedef struct kscope_launch_meta {
    const char *name; /* display name for the kernel; NULL keeps its own */
    double flops8, flops16, flops32, flops64, bytes;
    size_t n_custom;
    const char *const *custom_names;
    const double *custom_values;
} kscope_launch_meta;

/* Give the next kernel launched on this thread a name and metrics; they
 * land on that kernel's node. Copied; the caller keeps ownership. */
KSCOPE_EXTERN int kscope_launch_metadata(const kscope_launch_meta *meta);

/* ------------------------------------------------------------------ tracer */

#define KSCOPE_TRACER_MAX 64

/* A MAX-style stack of spans. Caller-owned; zero-initialise or use
 * kscope_tracer_init. When profiling is off, push records a placeholder so
 * push/pop stay balanced. */
typedef struct kscope_tracer {
    int depth;
    unsigned char real[KSCOPE_TRACER_MAX]; /* 1: a scope was entered */
} kscope_tracer;

KSCOPE_EXTERN void kscope_tracer_init(kscope_tracer *t);
KSCOPE_EXTERN int kscope_tracer_push(kscope_tracer *t, const char *name, uint32_t color);
KSCOPE_EXTERN int kscope_tracer_pop(kscope_tracer *t); /* KSCOPE_EEMPTY if empty */
KSCOPE_EXTERN int kscope_tracer_next(kscope_tracer *t, const char *name, uint32_t color);
KSCOPE_EXTERN int kscope_tracer_cleanup(kscope_tracer *t);                /* pops everything */
KSCOPE_EXTERN int kscope_tracer_mark(kscope_tracer *t, const char *name); /* EEMPTY if empty */

/* 0xRRGGBB of a named colour: modular_purple, blue, green, orange, purple,
 * red, white, yellow; anything else gives modular_purple (0xB5BAF5). */
KSCOPE_EXTERN uint32_t kscope_color(const char *name);

/* ------------------------------------------------------------------- clock */

/* The one monotonic clock (ns) used for host scopes and GPU records. */
KSCOPE_EXTERN uint64_t kscope_now_ns(void);

/* ------------------------------------------------------------------ macros */

#ifndef KSCOPE_DISABLE
typedef struct kscope__guard {
    kscope_loc *loc;
    int entered;
} kscope__guard;

static inline void kscope__guard_close(kscope__guard *g)
{
    if (g->entered)
        kscope_exit_loc(g->loc);
}

#define KSCOPE__CAT2(a, b) a##b
#define KSCOPE__CAT(a, b)  KSCOPE__CAT2(a, b)

/* KSCOPE_SCOPE_EX("name", color, flags): a scope that closes at the end of
 * the enclosing block. The call site's description is static. */
#define KSCOPE_SCOPE_EX(name_, color_, flags_)                                                     \
    static kscope_loc KSCOPE__CAT(kscope__loc_, __LINE__) = {                                      \
        (name_), __func__, __FILE__, __LINE__, (color_), (flags_), 0};                             \
    kscope__guard KSCOPE__CAT(kscope__g_, __LINE__)                                                \
        __attribute__((cleanup(kscope__guard_close))) = {                                          \
            &KSCOPE__CAT(kscope__loc_, __LINE__),                                                  \
            kscope_enter_loc(&KSCOPE__CAT(kscope__loc_, __LINE__)) == 0}

#define KSCOPE_SCOPE(name_)           KSCOPE_SCOPE_EX(name_, 0, 0)
#define KSCOPE_CPU_TIMED_SCOPE(name_) KSCOPE_SCOPE_EX(name_, 0, KSCOPE_CPU_TIMED)
#define KSCOPE_FUNCTION()             KSCOPE_SCOPE_EX(__func__, 0, 0)
#else
#define KSCOPE_SCOPE_EX(name_, color_, flags_) ((void)0)
#define KSCOPE_SCOPE(name_)                    ((void)0)
#define KSCOPE_CPU_TIMED_SCOPE(name_)          ((void)0)
#define KSCOPE_FUNCTION()                      ((void)0)
#endif

/* ---------------------------------------------------- resource diagnostics */

/* GPU metrics come from NVML, loaded at run time ("libnvidia-ml.so.1", or the
 * file named by KSCOPE_NVML_LIBRARY); nothing of NVML is needed to build.
 * CPU metrics come from /proc. Field names follow MAX's max.profiler. */

/* Why a GPU's clock is below its boost ceiling (NVML's bit values). */
#define KSCOPE_THROTTLE_GPU_IDLE       0x1ull
#define KSCOPE_THROTTLE_APP_CLOCKS     0x2ull /* applications_clocks_setting */
#define KSCOPE_THROTTLE_SW_POWER_CAP   0x4ull
#define KSCOPE_THROTTLE_HW_SLOWDOWN    0x8ull
#define KSCOPE_THROTTLE_SYNC_BOOST     0x10ull
#define KSCOPE_THROTTLE_SW_THERMAL     0x20ull
#define KSCOPE_THROTTLE_HW_THERMAL     0x40ull
#define KSCOPE_THROTTLE_HW_POWER_BRAKE 0x80ull
#define KSCOPE_THROTTLE_DISPLAY_CLOCK  0x100ull
/* The reasons that mean the hardware capped the clock (not idle, not a
 * setting): test `reasons & KSCOPE_THROTTLE_HARDWARE`. */
#define KSCOPE_THROTTLE_HARDWARE 0xFCull

/* Bits of kscope_gpu_stats.has: which fields hold a value. A metric the
 * device does not report is absent, never an error. */
#define KSCOPE_GPU_HAS_UTIL         (1u << 0) /* gpu_usage_percent */
#define KSCOPE_GPU_HAS_MEM_ACTIVITY (1u << 1) /* memory_activity_percent */
#define KSCOPE_GPU_HAS_MEMORY       (1u << 2) /* total/free/used_bytes */
#define KSCOPE_GPU_HAS_RESERVED     (1u << 3) /* reserved_bytes */
#define KSCOPE_GPU_HAS_CORE_CLOCK   (1u << 4)
#define KSCOPE_GPU_HAS_CORE_MAX     (1u << 5)
#define KSCOPE_GPU_HAS_MEM_CLOCK    (1u << 6)
#define KSCOPE_GPU_HAS_MEM_MAX      (1u << 7)
#define KSCOPE_GPU_HAS_POWER        (1u << 8)
#define KSCOPE_GPU_HAS_TEMPERATURE  (1u << 9)
#define KSCOPE_GPU_HAS_THROTTLE     (1u << 10)
#define KSCOPE_GPU_HAS_PROCESS      (1u << 11) /* process_bytes (recorder samples) */

/* One GPU at one instant. */
typedef struct kscope_gpu_stats {
    uint32_t device; /* kscope_gpu_* index (kscope_gpu_id names it) */
    uint32_t has;    /* KSCOPE_GPU_HAS_* */
    uint32_t gpu_usage_percent, memory_activity_percent;
    uint64_t total_bytes, free_bytes, used_bytes, reserved_bytes;
    uint32_t core_mhz, core_max_mhz; /* SM clock and its maximum */
    uint32_t mem_mhz, mem_max_mhz;
    uint32_t power_mw, temperature_c;
    uint64_t throttle_reasons; /* KSCOPE_THROTTLE_* */
    /* GPU memory of the processes a recorder follows (set in recorder
     * samples only; absent when the driver does not say). */
    uint64_t process_bytes;
} kscope_gpu_stats;

/* Load NVML and count the GPUs. Returns the count (>= 0) or KSCOPE_ENOGPU
 * with a one-line message saying why (library missing, driver not loaded).
 * Reference counted and thread-safe: pair each success with
 * kscope_gpu_shutdown. */
KSCOPE_EXTERN int kscope_gpu_init(void);
KSCOPE_EXTERN void kscope_gpu_shutdown(void);

/* Number of GPUs; KSCOPE_ESTATE before kscope_gpu_init. */
KSCOPE_EXTERN int kscope_gpu_count(void);

/* The device's product name into buf; returns its length. */
KSCOPE_EXTERN int kscope_gpu_name(uint32_t device, char *buf, size_t size);

/* The device's name in every output, as MAX names GPUs: its vendor's
 * prefix and its index among that vendor's GPUs ("nv0", "amd1"), into buf;
 * returns its length. Known from kscope_gpu_init on, also after
 * kscope_gpu_shutdown (to name recorded samples); KSCOPE_EINVAL for an
 * index no kscope_gpu_init has numbered. */
KSCOPE_EXTERN int kscope_gpu_id(uint32_t device, char *buf, size_t size);

/* Sample one GPU. Fails only for a bad index or a GPU that stopped
 * answering; unsupported metrics are left out of out->has. */
KSCOPE_EXTERN int kscope_gpu_get_stats(uint32_t device, kscope_gpu_stats *out);

/* GPU memory used by process `pid` on a device (0 when it has none there).
 * KSCOPE_ENOTSUP when the driver does not say (e.g. not permitted). */
KSCOPE_EXTERN int kscope_gpu_process_memory(uint32_t device, int pid, uint64_t *bytes);

/* MAX's name of one throttle bit ("gpu_idle", "sw_power_cap", ...); NULL
 * for a bit that is not a known reason. */
KSCOPE_EXTERN const char *kscope_gpu_throttle_name(uint64_t reason);

/* Names of every bit set, comma-separated, into buf (truncated to fit).
 * Returns the full length, as snprintf does. */
KSCOPE_EXTERN int kscope_gpu_throttle_format(uint64_t reasons, char *buf, size_t size);

/* One reading of a process from /proc. */
typedef struct kscope_cpu_reading {
    int pid;
    uint32_t threads;
    double user_s, system_s; /* CPU seconds since the process started */
    uint64_t rss_bytes;
    uint64_t start_ticks; /* when the process started: tells reused pids apart */
    uint64_t t_ns;        /* kscope_now_ns() at the reading */
} kscope_cpu_reading;

/* Read a process now. KSCOPE_ENOPROC when there is no such process,
 * KSCOPE_EINVAL for pid <= 0. */
KSCOPE_EXTERN int kscope_cpu_read(int pid, kscope_cpu_reading *out);

/* A process followed over an interval. The caller sets pid; kscope fills
 * the rest. A process that ends (or whose pid is reused) mid-way is marked
 * `exited` and keeps what it used up to its last reading. */
typedef struct kscope_cpu_proc {
    int pid;
    int exited;
    double user, system;                 /* CPU seconds within the interval */
    double user_percent, system_percent; /* of one core, over the interval */
    uint64_t rss_bytes;                  /* at the last reading */
    uint32_t threads;
    kscope_cpu_reading first, last; /* kscope's */
} kscope_cpu_proc;

/* MAX's CPUMetrics: totals over a set of processes. */
typedef struct kscope_cpu_stats {
    double user, user_percent, system, system_percent;
    double elapsed; /* seconds */
    uint64_t rss_bytes;
    uint32_t threads;
    uint32_t exited; /* processes that ended within the interval */
} kscope_cpu_stats;

/* Start the interval: read every process. A pid that does not exist fails
 * with KSCOPE_ENOPROC naming it (nothing is started). */
KSCOPE_EXTERN int kscope_cpu_begin(kscope_cpu_proc *procs, size_t n);

/* Read again and fill each process and `out` (may be NULL) with what was
 * used since kscope_cpu_begin. May be called any number of times. */
KSCOPE_EXTERN int kscope_cpu_update(kscope_cpu_proc *procs, size_t n, kscope_cpu_stats *out);

/* The processes listening on TCP `port` (IPv4 and IPv6) and all their
 * descendants, ascending, into pids[0..cap). Returns how many there are
 * (possibly more than cap), 0 when none; KSCOPE_EINVAL for a port outside
 * 1..65535; KSCOPE_EACCES when a listener exists but its owner cannot be
 * seen (another user's process). */
KSCOPE_EXTERN int kscope_pids_for_port(int port, int *pids, size_t cap);

/* ---- background recorder */

#define KSCOPE_SAMPLE_GPUS 8 /* GPUs kept per sample (the first ones) */

/* What the recorder saw at one tick. CPU figures add up every process
 * given and are measured over the time since the previous tick. */
typedef struct kscope_sample {
    uint64_t t_ns; /* kscope_now_ns() */
    uint32_t ngpu;
    uint32_t nproc, alive; /* processes followed, processes still running */
    double cpu_percent, user_percent, system_percent; /* of one core */
    uint64_t rss_bytes;
    uint32_t threads;
    kscope_gpu_stats gpu[KSCOPE_SAMPLE_GPUS];
} kscope_sample;

typedef struct kscope_recorder_opts {
    double interval_ms; /* 0: 100; below 1 or above 3600000 is refused */
    const int *pids;    /* processes to follow (copied); may be NULL */
    size_t npids;
    int no_gpu;      /* 1: do not sample GPUs */
    size_t capacity; /* samples kept, oldest dropped beyond; 0: 65536 */
    /* Called on the recorder's thread after each sample (may be NULL). */
    void (*on_sample)(const kscope_sample *sample, void *arg);
    void *arg;
} kscope_recorder_opts;

typedef struct kscope_recorder kscope_recorder;

/* Start sampling on a thread of its own. Fails with KSCOPE_EINVAL for an
 * interval below 1 ms and KSCOPE_ENOPROC for a pid that does not exist.
 * Without NVML the GPU part is left out (kscope_recorder_gpus() == 0) and
 * the CPU part still runs. */
KSCOPE_EXTERN int kscope_recorder_start(const kscope_recorder_opts *opts, kscope_recorder **out);

/* Stop sampling (takes one last sample). KSCOPE_ESTATE if already stopped. */
KSCOPE_EXTERN int kscope_recorder_stop(kscope_recorder *rec);

/* Samples held, oldest first; read any time (also while running). */
KSCOPE_EXTERN size_t kscope_recorder_count(kscope_recorder *rec);
KSCOPE_EXTERN int kscope_recorder_read(kscope_recorder *rec, size_t index, kscope_sample *out);

/* Samples dropped because the ring was full. */
KSCOPE_EXTERN uint64_t kscope_recorder_dropped(kscope_recorder *rec);

/* GPUs sampled (0 without NVML or with no_gpu). */
KSCOPE_EXTERN int kscope_recorder_gpus(kscope_recorder *rec);

/* Stop if running and free everything. NULL is a no-op. */
KSCOPE_EXTERN void kscope_recorder_free(kscope_recorder *rec);

#ifdef __cplusplus
}
#endif

#endif /* KSCOPE_H */
