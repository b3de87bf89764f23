/*
 * pcs.h - PC sampling in the CUPTI backend: what pcsampling.c (CUPTI's
 * PC Sampling API, the drain thread, the modules' cubins) and pcs-data.c
 * (samples to kernels and source lines, no CUPTI calls) share.
 *
 * CUPTI samples every SM's warps continuously while a context has PC
 * sampling enabled; each record names a PC (cubin CRC, function, offset)
 * and counts its samples per stall reason, but not the launch they came
 * from. pcs-data.c adds the records up per source line and, when the
 * backend flushes, shares each function's samples among the calling
 * contexts its kernels ran under since the last flush, in proportion to
 * their GPU time (the kernel records of the same window), and hands them
 * to the core. The GPU-free half takes CUPTI's record structs as they
 * are, so tests feed it synthetic ones; pcsampling.c reaches CUPTI only
 * through a kscope__pcs_api table, which tests fill with stand-ins.
 */
#ifndef KSCOPE_PCS_H
#define KSCOPE_PCS_H

#include "gpu/cupti/cupti-internal.h"

#include <cupti_pcsampling.h>

/* ---------------------------------------------------------- stall reasons */

/* The stable metric name of a CUPTI stall reason into buf: the words
 * after "stalled_" ("smsp__pcsamp_warps_issue_stalled_long_scoreboard" ->
 * "stalled_long_scoreboard"; a name without them keeps its last part,
 * prefixed "stalled_"). Returns 1 for a stall, 0 for "selected" (the warp
 * issued: a sample, not a stall), -1 for a reason kscope does not collect
 * (the "_not_issued" variants, which count some samples a second time). */
int kscope__pcs_reason_name(const char *cupti, char *buf, size_t size);

/* The reasons a context collects: for CUPTI's reason index i (< 256),
 * metric[i] is the interned metric name (0: not collected) and stall[i]
 * whether it counts in num_stalled_samples. */
#define KSCOPE__PCS_REASONS 256
typedef struct kscope__pcs_reasons {
    uint32_t metric[KSCOPE__PCS_REASONS];
    uint8_t stall[KSCOPE__PCS_REASONS];
} kscope__pcs_reasons;

/* ------------------------------------------------------- samples (no CUPTI) */

typedef struct kscope__pcs_tab kscope__pcs_tab;

/* Where a PC is in the source: its file (directory joined) into file and
 * its line into *line; 1 when known, 0 when the cubin has no line
 * information there (or is unknown). */
typedef int (*kscope__pcs_where_fn)(void *arg, uint64_t crc, const char *function, uint64_t pc,
                                    char *file, size_t size, uint32_t *line);

/* A new empty table (NULL out of memory). Not thread-safe: callers
 * serialise every call on one table. */
kscope__pcs_tab *kscope__pcs_tab_new(void);
void kscope__pcs_tab_free(kscope__pcs_tab *t);

/* Add the PC records of one buffer CUPTI filled, from a context of device
 * `device`: each PC's samples go to its source line (asked of `where` once
 * per PC). Returns the samples added. */
uint64_t kscope__pcs_tab_add(kscope__pcs_tab *t, const CUpti_PCSamplingData *d,
                             const kscope__pcs_reasons *r, uint32_t device,
                             kscope__pcs_where_fn where, void *arg);

/* A kernel of (readable) function `function` ran `ns` on `device` under
 * calling context `ctx`, its node named `name` (the same pointer as
 * function when it has no other name), recorded by the sessions in
 * `sessions`. Returns 0, or -1 out of memory. */
int kscope__pcs_tab_kernel(kscope__pcs_tab *t, const char *function, const char *name, uint64_t ctx,
                           uint32_t device, uint32_t sessions, uint64_t ns);

/* Hand every sample added since the last delivery to the core (or to
 * `deliver`, for tests: NULL is kscope__record_pcs), each function's
 * shared among the contexts its kernels ran under since then (if none
 * ran since, over all time; if none ever, a node of the function's name
 * at the root, for the sessions in `fallback`). Only the sessions in
 * `want` get samples. Returns the samples delivered. */
typedef void (*kscope__pcs_deliver_fn)(const kscope__pcs_record *r);
uint64_t kscope__pcs_tab_deliver(kscope__pcs_tab *t, uint32_t want, uint32_t fallback,
                                 kscope__pcs_deliver_fn deliver);

/* -------------------------------------------------------------- CUPTI side */

/* CUPTI's calls that PC sampling makes, loaded at run time (cupti.c) or
 * stand-ins (tests). */
typedef struct kscope__pcs_api {
    CUptiResult (*enable)(CUpti_PCSamplingEnableParams *);
    CUptiResult (*disable)(CUpti_PCSamplingDisableParams *);
    CUptiResult (*num_stall_reasons)(CUpti_PCSamplingGetNumStallReasonsParams *);
    CUptiResult (*stall_reasons)(CUpti_PCSamplingGetStallReasonsParams *);
    CUptiResult (*set_config)(CUpti_PCSamplingConfigurationInfoParams *);
    CUptiResult (*get_data)(CUpti_PCSamplingGetDataParams *);
    CUptiResult (*sass_to_source)(CUpti_GetSassToSourceCorrelationParams *);
    CUptiResult (*cubin_crc)(CUpti_GetCubinCrcParams *);
    CUptiResult (*device_id)(CUcontext, uint32_t *);
    CUptiResult (*version)(uint32_t *);
    /* the driver's, to make a context current around cuptiPCSamplingGetData
     * on the drain thread (NULL: not done) */
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    const char *(*error)(CUptiResult); /* CUPTI's message for a result */
} kscope__pcs_api;

/* Start sampling with `api` every `interval` cycles (a power of two):
 * contexts are set up as they are created (kscope__pcs_resource) or, for
 * those that existed before, at their first launch (kscope__pcs_launch),
 * on a thread where they are current, sampling continuously; a
 * drain thread empties CUPTI's buffers every few milliseconds. A second
 * start keeps the first interval (said once). 0, KSCOPE_ENOGPUTOOL (a CUPTI
 * too old for the record layout) or KSCOPE_ENOMEM, with a message. */
int kscope__pcs_start(const kscope__pcs_api *api, uint32_t interval);

/* Whether sampling is on (read without a lock). */
int kscope__pcs_on(void);

/* Set up sampling on context ctx, current on the calling thread (once per
 * context; one that refused is not asked again). */
void kscope__pcs_context(CUcontext ctx);

/* A kernel launch on ctx begins (launch callback, the launching thread):
 * sets ctx up if it is not yet. Lock-free after the first launch of each
 * thread on a context: one thread-local compare. */
void kscope__pcs_launch(CUcontext ctx);

/* CUPTI's resource callbacks: a context created (set it up) or about to
 * be destroyed (empty and drop it), a module loaded (a copy of its cubin,
 * when it has line information, for source lines: CUPTI's is valid during
 * the callback only). Modules are followed from the first start on, also
 * while sampling is off. */
void kscope__pcs_resource(CUpti_CallbackId cbid, const void *data);

/* A kernel record reached the core (buffer thread): note its context. */
void kscope__pcs_kernel(const kscope__gpu_record *r, uint64_t ctx, uint32_t sessions);

/* Empty CUPTI's buffers (after one period of its decoding thread, so the
 * samples of the work done so far are in) and deliver everything to the
 * sessions. The caller has waited for the devices and delivered the
 * kernel records. */
void kscope__pcs_flush(void);

/* Flush, then end sampling on every context and stop the drain thread;
 * with forget_modules (the backend unsubscribes), drop the modules too. */
void kscope__pcs_stop(int forget_modules);

/* ------------------------------------------------------------- loading */

/* Look PC sampling's calls up in the CUPTI library `lib` (pcs-load.c);
 * a CUPTI without them still records kernels. */
void kscope__pcs_load(void *lib);

typedef CUptiResult (*kscope__pcs_enable_fn)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                             CUpti_CallbackId);

/* The backend's pc_sampling (kscope-internal.h): on, with the loaded
 * calls, the resource callbacks enabled on `subscriber` (NULL: the
 * backend is not capturing) and the primary contexts already active; or
 * off. 0 or a negative error with a message naming the cause. */
int kscope__pcs_switch(int on, uint32_t interval, CUpti_SubscriberHandle subscriber,
                       kscope__pcs_enable_fn enable_callback);

#endif /* KSCOPE_PCS_H */
