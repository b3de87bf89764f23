/*
 * backend.h - the seam between kscope's core and a GPU vendor's code: the
 * backend table, the registry that lists the backends, and the order in
 * which the core calls a backend.
 *
 * A backend is one folder under src/gpu/ (src/gpu/cupti/ for NVIDIA GPUs)
 * plus one line of src/gpu/registry.c. The core (src/core/backend.c) and
 * the command line (src/cli/backends.c) know backends only through this
 * table: its descriptive fields (name, label, device type, the variables
 * that make a program load libkscope, the capture-range value) are read at
 * any time, also for a backend this build left out; its functions only
 * while the backend runs, in this order:
 *
 *   1. start(): when the first session that uses the backend starts (the
 *      core holds its session lock; the backend loads its vendor's library
 *      here, at run time, and fails with a message naming what is missing).
 *      Then session_changed(), and pc_sampling(1, ...) / device_scopes(1,
 *      ...) when that session asks for them.
 *   2. While it runs, from any thread: launch_metadata() before a launch
 *      (the program's thread, no lock); capturing(), capture_value(),
 *      capture_hide() around graph captures; gate() for sampled sessions
 *      (sampled/sampling.c, never while a capture is open); session_changed()
 *      whenever a session starts or ends or a thread annotates for the
 *      first time. The backend delivers records from its own threads with
 *      kscope__record_gpu, kscope__record_pcs, kscope__record_devscopes and
 *      kscope__set_device_info (kscope-internal.h).
 *   3. flush(): at a session's flush or finalize; it returns once every
 *      record of work launched so far was delivered. The core never calls
 *      it while capturing(0) says a graph capture is open (it owes the
 *      flush and makes it later).
 *   4. pc_sampling(0, 0) / device_scopes(0, NULL) after the last session
 *      that asked for them, then stop() after the last session that used
 *      the backend. capture_released() may still be called after stop().
 *
 * `kscope bench` calls bench() on its own, with no session. Tests add
 * stand-in backends with kscope__backend_register before the first session.
 *
 * Two smaller tables, also one line of the registry per entry, join a
 * vendor's annotation tools to kscope's scopes, both ways:
 *
 *   a range source (kscope__range_source) is an annotation API whose
 *   ranges become kscope scopes: the vendor's library loads libkscope as
 *   its tool through the source's `inject_env` (kscope run sets those
 *   variables, as it does a backend's), and the source's entry point turns
 *   each range call into a kscope__ranges_* call on the calling thread;
 *
 *   a range sink (kscope__range_sink) is a vendor tool's range API that
 *   host scopes are emitted to at the `detailed` level (kscope_profiling),
 *   so the vendor's timeline shows them: the core opens every sink at the
 *   first detailed scope (a sink may load its library then) and calls each
 *   one that opened on the scope's own thread, from scope enter and exit.
 */
#ifndef KSCOPE_GPU_BACKEND_H
#define KSCOPE_GPU_BACKEND_H

#include "kscope.h"

#include <stddef.h>
#include <stdint.h>

struct kscope__graph_value;   /* kscope-internal.h, with the graph functions */
struct kscope__devscope_opts; /* kscope-internal.h, with device scopes */
/* What `kscope bench` asks a backend's loop for: `blocks` timed blocks
 * (1: one loop) of `launches` empty kernels each, under the bare activity
 * capture if `floor`; before(block, arg), when set, runs before each
 * block, untimed (after it a block's first launches are untimed too). */
typedef struct kscope__bench_loop {
    long launches;
    int blocks, floor;
    void (*before)(int block, void *arg);
    void *arg;
    double *block_us; /* each block's microseconds per launch (NULL: none) */
} kscope__bench_loop;

/* One timed loop of `kscope bench` (a backend's bench). */
typedef struct kscope__bench_result {
    double us_per_launch;
    uint64_t records; /* the floor's activity records */
    char device[128]; /* the device's name */
} kscope__bench_result;

/* What a machine offers a backend (kscope__backend.probe), in one call
 * that starts nothing for good (it may load the vendor's libraries). */
typedef struct kscope__probe {
    int devices;   /* GPUs the vendor's driver sees (0: none, or no driver) */
    int tool;      /* the backend's tool library (CUPTI) loads */
    int runtime;   /* the vendor's runtime loads (for `profiler`) */
    char why[256]; /* what is missing, "a; b" ("" when nothing) */
} kscope__probe;

/* What a GPU backend offers the core: see the lifecycle at the top of this
 * file. A registry entry with start == NULL is a backend this build left
 * out: asking for it warns, naming what the build needed (`needs`). */
/* The states of a backend's gate (kscope__backend.gate). */
enum { KSCOPE__GATE_SHUT = 0, KSCOPE__GATE_OPEN = 1, KSCOPE__GATE_QUIET = 2 };

typedef struct kscope__backend {
    const char *name;        /* the backend= option's value */
    const char *label;       /* how messages name its interface */
    const char *device_type; /* of the devices it records, for the output */
    const char *needs;       /* what a build needs to include it */
    /* Environment variables that make a program load libkscope for this
     * backend (set by `kscope run` to the library's path), NULL-ended. */
    const char *const *inject_env;
    /* A program that links a library whose name starts so drives the
     * backend's interface itself: `kscope run` refuses it. NULL: none. */
    const char *conflict_lib;
    /* The --capture-range value that follows the program's own profiler
     * start/stop calls (NULL: none). */
    const char *capture_range;
    /* What frameworks call its devices (torch: a tensor's is_<it>, the
     * module torch.<it> with is_current_stream_capturing); NULL: none. */
    const char *framework_device;
    /* The device_scopes option's clock=VALUE names: [0] the nanosecond
     * timer, [1] the cycle counter (KSCOPE_DEVICE_CLOCK64); NULL: none. */
    const char *const *devscope_clocks;
    /* The prefix of its GPUs in the GPU diagnostics (src/diag/: "nv"). */
    const char *diag_id;
    /* What this machine offers the backend, found without starting it
     * (Python's detect_backend); NULL: nothing to say. */
    void (*probe)(struct kscope__probe *out);
    /* Call the vendor runtime's profiler start (1) or stop (0) as a program
     * would: what `capture_range` follows. 0, or a negative KSCOPE_E* with
     * a message; NULL: the backend has no such calls. */
    int (*profiler)(int start);
    int (*start)(void);
    void (*stop)(void);
    void (*flush)(void);
    /* Tell the backend a session started or ended, or a thread annotated
     * for the first time: kscope__calls_wanted may have changed. */
    void (*session_changed)(void);
    /* PC sampling on (on = 1, a period of `interval` cycles) for the
     * first session that asks for it, off (on = 0) after the last; NULL
     * when the backend cannot sample. Returns 0 or a negative error with
     * a message. */
    int (*pc_sampling)(int on, uint32_t interval);
    /* kscope_launch_metadata lands here once checked (copy what you keep). */
    int (*launch_metadata)(const kscope_launch_meta *meta);
    /* Graph capture (each may be NULL: the backend sees none). Whether a
     * stream capture is open: begun by the calling thread (this_thread 1)
     * or by any thread (0). While one is, the core neither flushes nor
     * synchronises: either would end the program's capture. */
    int (*capturing)(int this_thread);
    /* A metric recorded while the calling thread captures: kept with the
     * graph and added at each of its launches (kscope__record_graph_value).
     * Returns 1 (host values kept), a token > 1 naming kept device values
     * (see capture_released), 0 when the thread is not capturing, or a
     * negative error. */
    int64_t (*capture_value)(const struct kscope__graph_value *v);
    /* Work the calling thread launches while `on` is kscope's own (copies
     * of metric values): it is captured, but never shown. */
    void (*capture_hide)(int on);
    /* Tokens of kept values whose graphs are gone (their device memory may
     * be released): up to n into out; returns how many. */
    size_t (*capture_released)(int64_t *out, size_t n);
    /* Sampled sessions (sampled/sampling.c): turn capture off
     * (KSCOPE__GATE_SHUT), back on (KSCOPE__GATE_OPEN), or to
     * KSCOPE__GATE_QUIET, while the backend stays started. Quiet, new
     * launches are not followed but the work launched before (still queued
     * on the GPU when a window closes) keeps delivering its records. Shut,
     * a launch costs what it costs with no profiler: no callback, no
     * activity. Never synchronizes. Returns 0, or KSCOPE_EBUSY while the
     * program records a graph of GPU work (the core tries again later).
     * NULL: the backend cannot switch, and the core keeps only the records
     * of the windows. */
    int (*gate)(int state);
    /* `kscope bench`: time launches of an empty kernel from this process
     * as `loop` says (its floor: under the bare activity capture that any
     * tracer of this interface pays). 0, or a negative KSCOPE_E* (ENOGPU:
     * no device) with a message. NULL: the backend has no loop. */
    int (*bench)(const kscope__bench_loop *loop, kscope__bench_result *out);
    /* Device-side scopes on (on = 1, with the options of the first session
     * that asks) or off (on = 0, after the last). NULL: the backend has
     * none. 0 or a negative error with a message. */
    int (*device_scopes)(int on, const struct kscope__devscope_opts *o);
} kscope__backend;

/* The i-th backend of the registry (src/gpu/registry.c), then those added
 * by kscope__backend_register; NULL past the last. */
const kscope__backend *kscope__backend_at(size_t i);

/* Add a backend after the built-in ones (test stand-ins). Call before the
 * first kscope_start. Returns 0, or KSCOPE_ETOOMANY when full. */
int kscope__backend_register(const kscope__backend *b);

/* The registered backend called `name` (built or not), or NULL. */
const kscope__backend *kscope__backend_find(const char *name);

/* The first registered backend this build includes, or NULL. */
const kscope__backend *kscope__backend_default(void);

/* The device type of GPU nodes and devices in the output: that of the
 * backend started last, else of the default backend, else "GPU". */
const char *kscope__gpu_device_type(void);

/* ------------------------------------------------------------ range sources */

/* A domain of a range source: a stable pointer the source chooses (NULL:
 * the default domain). Push/pop levels are counted per domain. */
typedef const void *kscope__range_domain;

typedef struct kscope__range_source {
    const char *name; /* the API, for help texts and messages ("NVTX") */
    /* Environment variables that make the vendor's library load libkscope
     * as its tool (set by `kscope run` to the library's path), NULL-ended. */
    const char *const *inject_env;
    /* Ranges on (1) or off (0) in a process that starts its own sessions:
     * 0 or a negative KSCOPE_E* with a message saying why they cannot reach
     * kscope. */
    int (*enable)(int on);
} kscope__range_source;

/* The i-th range source of the registry; NULL past the last. */
const kscope__range_source *kscope__range_source_at(size_t i);

/* A source's calls (attrib/ranges.c), on the thread that made the range
 * call. push returns the domain's push level before it, pop the level
 * after it (-1: nothing to pop), as push/pop APIs do; start returns an id
 * for end, which any thread may call. */
int kscope__ranges_push(kscope__range_domain d, const char *name, uint32_t color);
int kscope__ranges_pop(kscope__range_domain d);
uint64_t kscope__ranges_start(kscope__range_domain d, const char *name, uint32_t color);
void kscope__ranges_end(uint64_t id);
void kscope__ranges_mark(const char *name);
/* Whether later ranges and marks become scopes (on by default). */
void kscope__ranges_enable(int on);
/* A source's library loaded libkscope through its injection entry: under
 * kscope run, the launcher session starts (a run hook; nothing elsewhere). */
void kscope__ranges_injected(void);

/* -------------------------------------------------------------- range sinks */

typedef struct kscope__range_sink {
    const char *name; /* the API, for messages ("NVTX") */
    /* Whether the sink can emit (may load its vendor's library): called
     * once; NULL: always. */
    int (*open)(void);
    /* A range named `name` in colour 0xRRGGBB (0: the tool's own) begins
     * or ends on the calling thread. */
    void (*push)(const char *name, uint32_t color);
    void (*pop)(void);
    /* A mark (kscope_mark) on the calling thread; NULL: not emitted. */
    void (*mark)(const char *name);
} kscope__range_sink;

/* The i-th range sink of the registry; NULL past the last. */
const kscope__range_sink *kscope__range_sink_at(size_t i);

#endif /* KSCOPE_GPU_BACKEND_H */
