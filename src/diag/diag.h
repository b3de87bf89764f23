/*
 * diag.h - resource diagnostics inside libkscope: the recorder's samples
 * as the core's sampler interface hands them to sessions, and the NVML
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

/* Whether the loaded NVML can list a device's processes at all. */
int kscope__gpu_has_process_query(void);

/* What one GPU sample costs, call by call: times each NVML query that
 * kscope_gpu_get_stats makes on `device` (reps times each) and calls
 * emit(call name, mean microseconds, arg) for each available one. For
 * bench_recorder, to show which query makes a sample slow. 0 or an error. */
int kscope__gpu_call_costs(uint32_t device, int reps,
                           void (*emit)(const char *call, double us, void *arg), void *arg);

/* Samples and summaries as sessions take them; registered with the core
 * (kscope__set_sampler) when a recorder starts. */
extern const kscope__sampler kscope__diag_sampler;

#endif /* KSCOPE_DIAG_H */
