/*
 * devscope.h - device-side scopes in the CUPTI backend: what devscope.c
 * (the driver's calls: buffers, the modules' symbols, the launch hook) and
 * devscope-data.c (reading records out of a buffer, scope names, no CUDA
 * call) share.
 *
 * Each context gets one buffer of kscope_device_record slots in device
 * memory, cut into one share per SM (each a power of two); kernels claim
 * slots with one atomicAdd on their SM's counter (kscope/device.h).
 * devscope-read.c's thread copies the counters and the new slots into a
 * host mirror on a stream of kscope's own every few milliseconds while
 * kernels run, and reads each share like a ring: a slot is claim i's
 * record once both of its halves carry the claim's tag. Records whose
 * launch CUPTI has not reported yet wait on the host, so their slots are
 * free again: keep-first, the reader then moves each share's limit (what
 * kernels may claim without dropping) one lap past its read position. A
 * kernel never waits for the host, the host never waits for a kernel, and
 * the program's streams are never waited for.
 */
#ifndef KSCOPE_DEVSCOPE_H
#define KSCOPE_DEVSCOPE_H

#include <pthread.h>

#include "gpu/cupti/cupti-internal.h"

#include "kscope/device.h"
#include "util/table.h"

/* ------------------------------------------------------- reading (no CUDA) */

/* One share of a context's buffer (one SM's) as the host reads it. */
typedef struct kscope__dsbuf {
    volatile kscope_device_record *recs; /* host mirror: slot k at recs[k * stride] */
    volatile uint32_t *drops;            /* host mirror: claims dropped at slot k, same layout */
    uint64_t cap;                        /* slots, a power of two */
    uint32_t stride;                     /* the shares interleaved */
    uint32_t flags;                      /* KSCOPE_DEVICE_* */
    uint32_t context_id;                 /* CUPTI's id of the context */
    uint64_t w;                          /* claims below w are read, or counted lost */
    uint64_t hi;                         /* claims made, as the counter was copied */
    uint64_t hi_after; /* claims made, copied after the drop counts (drops_fresh) */
    uint64_t dropped;  /* the share's drop word, as copied */
    uint64_t acked;    /* drops accounted for: claims below w found dropped */
    uint8_t *taken;    /* per slot: read ahead of w */
    uint32_t *acks;    /* per slot: drops accounted for there */
    int drops_fresh;   /* this pass copied the unread claims' drop counts */
} kscope__dsbuf;

/* The launches whose records were read, by (context, grid): those CUPTI
 * reported finished (expected) and those not reported yet, whose records
 * wait here. */
typedef struct kscope__dsgrid {
    uint64_t key; /* context_id << 32 | grid, + 1; 0: empty */
    kscope__devscope_rec *recs;
    size_t n, cap;
    int expected; /* the launch was reported finished */
    int taken;    /* its records went to the core */
} kscope__dsgrid;

#define KSCOPE__DS_CONTEXTS 16

typedef struct kscope__dsgrids {
    kscope__table tab; /* kscope__dsgrid slots, by key (devscope-data.c) */
    size_t waiting;    /* records of launches not reported yet */
    struct {
        uint32_t context_id, grid;
    } last[KSCOPE__DS_CONTEXTS]; /* per context, the latest grid reported */
    int nlast;
} kscope__dsgrids;

/* Set up b over `recs` and `drops` (zeroed, cap slots `stride` entries
 * apart; drops NULL for keep-newest). 0 or KSCOPE_ENOMEM. */
int kscope__dsbuf_init(kscope__dsbuf *b, void *recs, uint32_t *drops, uint64_t cap, uint32_t stride,
                       uint32_t flags, uint32_t context_id);
void kscope__dsbuf_free(kscope__dsbuf *b);

/* The launch (context_id, grid) finished: its records go to it. 0 or
 * KSCOPE_ENOMEM. */
int kscope__dsgrids_expect(kscope__dsgrids *g, uint32_t context_id, uint32_t grid);

/* The share's counter word read `claims` and its drop word `dropped`. */
void kscope__dsbuf_claims(kscope__dsbuf *b, uint64_t claims, uint64_t dropped);

/* Whether drops are not yet placed: the reader then copies the unread
 * claims' drop counts, then the counter again (kscope__dsbuf_recount). */
int kscope__dsbuf_wants_drops(const kscope__dsbuf *b);

/* The counter read again after the drop counts were copied. */
void kscope__dsbuf_recount(kscope__dsbuf *b, uint64_t claims);

/* Claims [*from, *from + *n) are the ones whose slots a reader copies
 * now: those made and not yet read, one lap at most. */
void kscope__dsbuf_unread(const kscope__dsbuf *b, uint64_t *from, uint64_t *n);

/* Read b's whole records into their launch's list in g (expected or
 * not). w then moves over the claims read and those found dropped; with
 * final >= 1 (every launch finished) also over claims never written (a
 * kernel that died between claim and write), lost. Keep-newest: claims
 * overwritten before they were read are lost. Returns the records lost in
 * this call. */
int64_t kscope__dsbuf_scan(kscope__dsbuf *b, kscope__dsgrids *g, int final);

/* Keep-first: the first claim whose slot may hold a record not yet read
 * (what the share's limit becomes). */
uint64_t kscope__dsbuf_limit(const kscope__dsbuf *b);

/* The records read for launch (context_id, grid), or NULL; *n set. They
 * stay valid until kscope__dsgrids_end_pass. */
const kscope__devscope_rec *kscope__dsgrids_take(kscope__dsgrids *g, uint32_t context_id,
                                                 uint32_t grid, size_t *n);

/* After a pass: forget the launches taken, keep the records of the others
 * (reported or not) for a later pass. final = 1 (a flush: every launch up to now
 * was reported): records of a launch no later than its context's latest
 * reported one are lost; final = 2 (stop): every record left is lost.
 * Returns the records lost. */
int64_t kscope__dsgrids_end_pass(kscope__dsgrids *g, int final);

/* Forget everything; returns the records never taken. */
size_t kscope__dsgrids_clear(kscope__dsgrids *g);
void kscope__dsgrids_free(kscope__dsgrids *g);

/* Learn the scope names marked in a module's cubin (any bytes). */
void kscope__ds_names_cubin(const void *cubin, size_t size);

/* A scope id's interned name: the name learnt, else "scope_<hex id>". */
uint32_t kscope__ds_name(uint32_t id);

/* ------------------------------------------------------------- CUPTI side */

/* The driver's calls device scopes make, looked up when they turn on. */
typedef struct kscope__ds_driver {
    CUresult (*func_module)(CUmodule *, CUfunction);
    CUresult (*kernel_function)(CUfunction *, CUkernel);
    CUresult (*global)(CUdeviceptr *, size_t *, CUmodule, const char *);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t);
    CUresult (*host_alloc)(void **, size_t, unsigned int);
    CUresult (*free_host)(void *);
    CUresult (*htod)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*stream_create)(CUstream *, unsigned int);
    CUresult (*stream_query)(CUstream);
    CUptiResult (*flush_all)(uint32_t); /* cuptiActivityFlushAll, optional */
    CUresult (*ctx_push)(CUcontext);
    CUresult (*ctx_pop)(CUcontext *);
    CUresult (*ctx_device)(CUdevice *);
    CUresult (*attribute)(int *, CUdevice_attribute, CUdevice);
    CUptiResult (*stream_id)(CUcontext, CUstream, uint32_t *);
    int (*func_by_symbol)(void **, const void *); /* cudaGetFuncBySymbol, optional */
} kscope__ds_driver;

extern kscope__ds_driver kscope__ds_fn;

/* One context's buffer. */
typedef struct kscope__ds_ctx {
    CUcontext ctx;
    uint32_t uid, stream_id; /* CUPTI's ids of the context and of kscope's stream */
    CUstream stream;
    CUdeviceptr ctl;               /* the control block */
    kscope_device_ctl *host;       /* pinned: the control block's first copy */
    uint64_t *value;               /* pinned: 8 bytes copied in */
    uint32_t regions;              /* shares: the device's SMs */
    uint64_t slots;                /* per share */
    uint64_t room;                 /* records the buffers hold (regions * slots) */
    CUdeviceptr recs;              /* device memory: room records */
    CUdeviceptr counters;          /* device memory: a counter per share, 128 bytes apart */
    CUdeviceptr limits;            /* device memory: keep-first's limit per share */
    CUdeviceptr drops;             /* device memory: room drop counts */
    kscope_device_record *mirror;  /* pinned: the records as last copied */
    uint32_t *drop_mirror;         /* pinned: the drop counts as last copied */
    unsigned long long *counts;    /* pinned: the counters as last copied */
    unsigned long long *recounts;  /* pinned: the counters copied after the drop counts */
    unsigned long long *limit_out; /* pinned: the limits last sent */
    kscope__dsbuf *shares;         /* regions of them, over the mirror */
    double ns_per_cycle;
} kscope__ds_ctx;

/* The contexts with buffers: [0, *n). They are only ever added; their
 * buffers change under kscope__ds_read_lock. */
kscope__ds_ctx *kscope__ds_contexts(int *n);

/* Held while a context's buffers are copied, read or remade. */
extern pthread_mutex_t kscope__ds_read_lock;

/* Run on kscope's stream with the context current: wait for the stream
 * alone (polled: no call that could wait on the program's work). */
int kscope__ds_wait(const kscope__ds_ctx *c);

/* The backend's device_scopes (kscope-internal.h). */
int kscope__ds_switch(int on, const kscope__devscope_opts *o, CUpti_SubscriberHandle subscriber,
                      CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                            CUpti_CallbackId));

/* Whether device scopes are on (one load), and the options they run with. */
int kscope__ds_on(void);
const kscope__devscope_opts *kscope__ds_opts(void);

/* A launch call begins (its API-enter callback, the launching thread):
 * the first launch of each function attaches its module. */
void kscope__ds_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const CUpti_CallbackData *cb);

/* A stream capture ended: attach what waited for it. */
void kscope__ds_capture_ended(void);

/* Resource callbacks: modules loaded (names). */
void kscope__ds_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd);

/* ---------------------------------------------- reading (devscope-read.c) */

/* Start the reader thread (once). 0 or an error. */
int kscope__ds_reader_start(void);

/* Device scopes turned on: the reader begins its rounds. */
void kscope__ds_reader_wake(void);

/* A kernel was launched (the launch callback, with device scopes on): a
 * reader that backed off while nothing was written takes its short pace
 * again now, before the kernels fill the buffer. One relaxed load unless
 * the reader is napping, then one wake per nap. */
void kscope__ds_reader_kick(void);

/* Whether the reader is napping (waits longer than its pace between
 * passes): for the tests. */
int kscope__ds_reader_napping(void);

/* A record was delivered with context ctx (the buffer thread): a kernel's
 * launch waits for the reader, which hands its device scopes to the core.
 * Returns 1 for a record of kscope's own copies (drop it). */
int kscope__ds_delivered(uint64_t ctx, const kscope__gpu_record *r);

/* At a flush (every launch so far delivered) or stop (final = 2): read
 * every context's buffer now, on the calling thread. */
void kscope__ds_flush(int final);

#endif /* KSCOPE_DEVSCOPE_H */
