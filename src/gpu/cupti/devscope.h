/*
 * devscope.h - device-side scopes in the CUPTI backend: what devscope.c
 * (the driver's calls: buffers, the modules' symbols, the launch hook) and
 * devscope-data.c (reading records out of a buffer, scope names, no CUDA
 * call) share.
 *
 * Each context gets one buffer of kscope_device_record slots (capacity a
 * power of two) in host-mapped memory; kernels claim slots with one
 * atomicAdd on a counter in device memory (kscope/device.h). The host
 * reads a claim's slot once both of its halves carry the claim's tag and
 * the launch that wrote it is known to have finished (its CUPTI kernel
 * record arrived): a kernel never waits for the host, the host never
 * waits for a kernel.
 */
#ifndef KSCOPE_DEVSCOPE_H
#define KSCOPE_DEVSCOPE_H

#include "gpu/cupti/cupti-internal.h"

#include "kscope/device.h"

/* ------------------------------------------------------- reading (no CUDA) */

/* One context's buffer as the host reads it. */
typedef struct kscope__dsbuf {
    volatile kscope_device_record *recs; /* host view, cap slots */
    uint64_t cap;                        /* a power of two */
    uint32_t flags;                      /* KSCOPE_DEVICE_* */
    uint32_t context_id;                 /* CUPTI's id of the context */
    uint64_t w;                          /* claims below w are read or counted lost */
    uint64_t hi;                         /* 1 + the highest claim seen written */
    uint8_t *taken;                      /* per slot: read ahead of w */
    uint64_t over;                       /* keep-first: claims past cap counted so far */
    uint32_t max_grid;                   /* highest grid whose launch finished */
    int any_grid;                        /* max_grid is set */
} kscope__dsbuf;

/* The launches one batch of CUPTI records reports finished, by (context,
 * grid), each with the records read for it. */
typedef struct kscope__dsgrid {
    uint64_t key; /* context_id << 32 | grid, + 1; 0: empty */
    kscope__devscope_rec *recs;
    size_t n, cap;
} kscope__dsgrid;

typedef struct kscope__dsgrids {
    kscope__dsgrid *slot;
    size_t cap, used;
} kscope__dsgrids;

/* Set up b over `recs` (zeroed, cap slots). 0 or KSCOPE_ENOMEM. */
int kscope__dsbuf_init(kscope__dsbuf *b, void *recs, uint64_t cap, uint32_t flags,
                       uint32_t context_id);
void kscope__dsbuf_free(kscope__dsbuf *b);

/* The launch (context_id, grid) finished: its records are to be read.
 * 0 or KSCOPE_ENOMEM. */
int kscope__dsgrids_expect(kscope__dsgrids *g, uint32_t context_id, uint32_t grid);

/* Read b's whole records: those of expected launches move to their
 * launch's list. final = 1 (a flush: every launch up to now finished and
 * was reported): records of a launch up to the last one reported that
 * nobody expects are lost; final = 2 (stop): every record left is lost.
 * Keep-newest: claims overwritten before they were read are lost.
 * Returns the records lost in this call. */
int64_t kscope__dsbuf_scan(kscope__dsbuf *b, kscope__dsgrids *g, int final);

/* Keep-first: the claims past the buffer's end, from the device's claim
 * counter `next`, not counted before. */
int64_t kscope__dsbuf_overflow(kscope__dsbuf *b, uint64_t next);

/* The records read for launch (context_id, grid), or NULL; *n set. They
 * stay valid until kscope__dsgrids_clear. */
const kscope__devscope_rec *kscope__dsgrids_take(kscope__dsgrids *g, uint32_t context_id,
                                                 uint32_t grid, size_t *n);

/* Forget every launch; returns the records never taken. */
size_t kscope__dsgrids_clear(kscope__dsgrids *g);
void kscope__dsgrids_free(kscope__dsgrids *g);

/* Learn the scope names marked in a module's cubin (any bytes). */
void kscope__ds_names_cubin(const void *cubin, size_t size);

/* A scope id's interned name: the name learnt, else "scope_<hex id>". */
uint32_t kscope__ds_name(uint32_t id);

/* ------------------------------------------------------------- CUPTI side */

/* The backend's device_scopes (kscope-internal.h). */
int kscope__ds_switch(int on, const kscope__devscope_opts *o, CUpti_SubscriberHandle subscriber,
                      CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                            CUpti_CallbackId));

/* Whether device scopes are on (one load). */
int kscope__ds_on(void);

/* A launch call begins (its API-enter callback, the launching thread):
 * the first launch of each function attaches its module. */
void kscope__ds_launch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const CUpti_CallbackData *cb);

/* A stream capture ended: attach what waited for it. */
void kscope__ds_capture_ended(void);

/* Resource callbacks: modules loaded (names), contexts destroyed. */
void kscope__ds_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd);

/* Before a buffer of CUPTI records is fed: note the launches it reports
 * finished and read their records. */
typedef CUptiResult (*kscope__ds_next_fn)(uint8_t *, size_t, CUpti_Activity **);
void kscope__ds_buffer_begin(uint8_t *buffer, size_t valid, kscope__ds_next_fn next);
/* A record was delivered with context ctx: a kernel's device scopes go to
 * the core. Returns 1 for a record of kscope's own copies (drop it). */
int kscope__ds_delivered(uint64_t ctx, const kscope__gpu_record *r);
/* After the buffer: records of launches never delivered are lost. */
void kscope__ds_buffer_end(void);

/* At a flush (every launch so far delivered) or stop (final = 2). */
void kscope__ds_flush(int final);

#endif /* KSCOPE_DEVSCOPE_H */
