/*
 * diag.h - resource diagnostics inside libkscope: the recorder's samples
 * as the core's sampler interface hands them to sessions, the GPU vendors'
 * libraries the GPU figures come from (kscope__gpu_vendor), and the
 * queries the benchmarks and tests look at.
 *
 * Every recorder (running, or stopped but not yet freed) is listed in a
 * process-wide registry, so a session that is finalized can ask for the
 * samples taken while it was active without knowing who started the
 * recorder. Samples carry kscope_now_ns() timestamps.
 */
#ifndef KSCOPE_DIAG_H
#define KSCOPE_DIAG_H

#include "kscope-internal.h"

/* Call fn(sample, arg) for every sample with t0_ns <= t_ns <= t1_ns held by
 * any live recorder, oldest first within each recorder. Returns the number
 * of samples visited. Safe while recorders run. */
size_t kscope__recorder_each(uint64_t t0_ns, uint64_t t1_ns,
                             void (*fn)(const kscope_sample *s, void *arg), void *arg);

/* Each sampled value in [t0_ns, t1_ns] as fn(series, t_ns, value, arg),
 * series named "nv0 gpu_usage_percent" (per GPU: util, memory used, SM
 * clock, power, temperature) or "cpu_percent"/"rss_bytes" (the processes
 * followed). Returns the number of values. */
size_t kscope__diag_counters(uint64_t t0_ns, uint64_t t1_ns, kscope__sample_fn fn, void *arg);

/* The summary for a tree session: for every sampled metric, calls
 * emit(name, value, arg) twice, with "<metric>.mean" and "<metric>.max"
 * names such as "nv0.gpu_usage_percent.mean" or "cpu_percent.max".
 * Returns the number of samples summarised (0: emit never called). */
size_t kscope__diag_summary(uint64_t t0_ns, uint64_t t1_ns,
                            void (*emit)(const char *name, double value, void *arg), void *arg);

/* GPU memory used on `device` by any of pids[0..n), into *bytes (0 when
 * none runs there). KSCOPE_ENOTSUP when the driver does not say. */
int kscope__gpu_pids_memory(uint32_t device, const int *pids, size_t n, uint64_t *bytes);

/* Whether a loaded vendor library can list a device's processes at all. */
int kscope__gpu_has_process_query(void);

/* What one GPU sample costs, call by call: times each vendor query that
 * kscope_gpu_get_stats makes on `device` (reps times each) and calls
 * emit(call name, mean microseconds, arg) for each available one. For
 * bench_recorder, to show which query makes a sample slow. 0 or an error. */
int kscope__gpu_call_costs(uint32_t device, int reps,
                           void (*emit)(const char *call, double us, void *arg), void *arg);

/* --------------------------------------------------------- GPU vendors */

/* The most GPUs one vendor's library is asked about. */
#define KSCOPE__VENDOR_GPUS 64

/* One GPU vendor's diagnostics library, as src/diag/gpu.c drives it: a file
 * src/diag/<vendor>.c defines one and src/diag/gpu.c lists it, once. The
 * library is loaded with dlopen at run time, so a build needs nothing of
 * it. The public kscope_gpu_* calls number every vendor's GPUs one after
 * the other, in the list's order; the functions here take the vendor's own
 * index (0 .. what load returned - 1). gpu.c holds its lock around load and
 * unload; the others run while a kscope_gpu_init reference is held.
 *
 *   found         whether the library loads (unloaded again; nothing
 *                 started): what detect_backend reports
 *   load          load the library, start it, read what never changes
 *                 (maximum clocks); the number of GPUs (>= 0), or a
 *                 negative KSCOPE_E* with a message naming the library and
 *                 why ("cannot load NVML: ..."), everything undone
 *   unload        stop the library and unload it
 *   name          the product name into buf (its length), or < 0 when the
 *                 library does not say
 *   stats         fill `out` (zeroed, device set): a metric not reported
 *                 leaves its KSCOPE_GPU_HAS_* bit out; an error only when
 *                 the GPU stopped answering
 *   has_process_query  whether the loaded library can list a GPU's
 *                 processes at all
 *   pids_memory   GPU memory of the processes pids[0..n) on the GPU (0 when
 *                 none runs there); KSCOPE_ENOTSUP when the library cannot
 *                 say
 *   call_costs    time each query `stats` makes (see kscope__gpu_call_costs)
 */
typedef struct kscope__gpu_vendor {
    const char *id;    /* MAX's prefix of its GPUs' names: "nv" gives nv0, nv1 */
    const char *label; /* how messages and help texts name its library */
    int (*found)(void);
    int (*load)(void);
    void (*unload)(void);
    int (*name)(uint32_t dev, char *buf, size_t size);
    int (*stats)(uint32_t dev, kscope_gpu_stats *out);
    int (*has_process_query)(void);
    int (*pids_memory)(uint32_t dev, const int *pids, size_t n, uint64_t *bytes);
    int (*call_costs)(uint32_t dev, int reps, void (*emit)(const char *call, double us, void *arg),
                      void *arg);
} kscope__gpu_vendor;

/* A vendor's call_costs, the timing shared: for each of its n queries
 * that the loaded library has (have[c]), call(dev, c) made reps times,
 * then emit(names[c], mean microseconds, arg). Returns 0. */
int kscope__gpu_time_calls(uint32_t dev, int reps, int n, const char *const *names, const int *have,
                           void (*call)(uint32_t dev, int c),
                           void (*emit)(const char *call, double us, void *arg), void *arg);

/* The i-th vendor of the list, NULL past the last. */
const kscope__gpu_vendor *kscope__gpu_vendor_at(size_t i);

/* Why vendor i's library did not load at the last kscope_gpu_init that
 * tried it ("" when it loaded or was not tried). */
const char *kscope__gpu_vendor_error(size_t i);

/* Samples and summaries as sessions take them; registered with the core
 * (kscope__set_sampler) when a recorder starts. */
extern const kscope__sampler kscope__diag_sampler;

#endif /* KSCOPE_DIAG_H */
