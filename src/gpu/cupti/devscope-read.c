/*
 * devscope-read.c - device-side scope records copied out of the GPU and
 * handed to the core, by a thread of kscope's own.
 *
 * CUPTI's buffer thread only notes each kernel launch it reports finished
 * (kscope__ds_delivered): it may hold CUPTI's own lock, so a CUDA call
 * there could deadlock. The reader thread wakes on those notes and runs
 * one pass:
 *   1. it takes the launches noted so far;
 *   2. for each context, on kscope's own stream (waited for alone: never
 *      the program's streams), it copies the SMs' claim counters, then the
 *      slots of claims made and not yet read into the host mirror;
 *   3. it reads each share (devscope-data.c) and hands each noted launch's
 *      records to the core with its kernel's record.
 * A launch noted before the pass began had finished before the counters
 * were copied, so all of its records are in that copy. Nothing is copied
 * while a stream of the process captures a graph: the launches wait for
 * the capture's end. A flush runs the same pass on its own thread, after
 * every launch was delivered (records nobody's launch claims are then
 * lost, and counted).
 */
#define _GNU_SOURCE
#include "gpu/cupti/devscope.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PACE_NS    2000000L  /* at least 2 ms between passes */
#define CAPTURE_NS 10000000L /* how often to look again while a capture is open */

/* A kernel launch whose records are to be read, with what the core needs
 * of its record (names interned: the CUPTI buffer is gone by then). */
typedef struct noted {
    uint64_t ctx;
    kscope__gpu_record r;
} noted;

typedef struct noted_list {
    noted *v;
    size_t n, cap;
} noted_list;

static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t note_cond = PTHREAD_COND_INITIALIZER;
static noted_list notes;      /* note_lock */
static noted_list work;       /* read lock: the pass's launches */
static kscope__dsgrids grids; /* read lock */
static int reader_started;    /* note_lock */

static kscope__ds_driver *const fn = &kscope__ds_fn;

/* ---------------------------------------------------------------- noting */

static int list_push(noted_list *l, const noted *x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        noted *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *x;
    return 0;
}

int kscope__ds_delivered(uint64_t ctx, const kscope__gpu_record *r)
{
    int n;
    const kscope__ds_ctx *c = kscope__ds_contexts(&n);
    if (!n)
        return 0;
    if (r->kind != KSCOPE__GPU_KERNEL) {
        for (int i = 0; i < n; i++) /* kscope's own copies */
            if (c[i].uid == r->context_id && c[i].stream_id == r->stream)
                return 1;
        return 0;
    }
    if (!kscope__ds_on())
        return 0;
    noted x = {ctx, *r};
    const char *name = r->meta && r->meta->name ? r->meta->name : r->name; /* its node's */
    x.r.name = name && *name ? kscope__name(kscope__intern(name)) : NULL;
    x.r.meta = NULL;
    x.r.function = NULL;
    pthread_mutex_lock(&note_lock);
    int rc = list_push(&notes, &x);
    pthread_cond_signal(&note_cond);
    pthread_mutex_unlock(&note_lock);
    if (rc != 0)
        kscope__warn_once("dscope-note", "device scopes: out of memory noting a launch; the "
                                         "records of some launches are counted lost");
    return 0;
}

/* ------------------------------------------------------------- a pass */

/* Move the launches noted so far into the pass (read lock held). */
static void take_notes(void)
{
    pthread_mutex_lock(&note_lock);
    noted_list t = work;
    work = notes;
    notes = t;
    notes.n = 0;
    pthread_mutex_unlock(&note_lock);
}

/* Launch x finished: its records are to be read; no record of its
 * context's launches up to it is still to come. */
static void expect(kscope__ds_ctx *cs, int n, const noted *x)
{
    uint32_t grid = (uint32_t)x->r.grid_id;
    kscope__dsgrids_expect(&grids, x->r.context_id, grid); /* ENOMEM: its records are lost */
    for (int i = 0; i < n; i++) {
        if (cs[i].uid != x->r.context_id)
            continue;
        for (uint32_t s = 0; s < cs[i].regions; s++) {
            kscope__dsbuf *b = &cs[i].shares[s];
            if (!b->any_grid || (int32_t)(grid - b->max_grid) > 0)
                b->max_grid = grid, b->any_grid = 1;
        }
    }
}

/* Rows further apart than this are copied separately (a row holds one
 * slot of every share: a few kB). */
#define ROW_GAP 8

typedef struct rows {
    uint64_t from, to; /* [from, to) */
} rows;

static int rows_cmp(const void *a, const void *b)
{
    uint64_t x = ((const rows *)a)->from, y = ((const rows *)b)->from;
    return x < y ? -1 : x > y;
}

/* Copy rows [from, to) of c's buffer into its mirror. */
static int copy_rows(kscope__ds_ctx *c, uint64_t from, uint64_t to)
{
    size_t row = (size_t)c->regions * sizeof(kscope_device_record);
    return fn->dtoh(c->mirror + from * c->regions, c->recs + from * row, (to - from) * row,
                    c->stream) == CUDA_SUCCESS
               ? 0
               : -1;
}

/* The rows holding the slots of the claims not yet read of every share
 * (at most two runs per share), sorted. Returns how many, or -1. */
static int unread_rows(kscope__ds_ctx *c, rows *out)
{
    int n = 0;
    for (uint32_t s = 0; s < c->regions; s++) {
        uint64_t from, k;
        kscope__dsbuf_unread(&c->shares[s], &from, &k);
        uint64_t r0 = from & (c->slots - 1);
        if (k >= c->slots)
            out[n++] = (rows){0, c->slots};
        else if (k && r0 + k <= c->slots)
            out[n++] = (rows){r0, r0 + k};
        else if (k)
            out[n++] = (rows){r0, c->slots}, out[n++] = (rows){0, r0 + k - c->slots};
    }
    qsort(out, (size_t)n, sizeof *out, rows_cmp);
    return n;
}

/* Copy c's counters, then the rows holding the slots of its claims made
 * and not yet read: the SMs claim at about the same pace, so these are
 * mostly one run, one copy (ctx current). Returns keep-first's claims
 * past a share's end, or -1. */
static int64_t copy_ctx(kscope__ds_ctx *c)
{
    size_t counters = (size_t)c->regions * KSCOPE_DEVICE_COUNTER_STRIDE * 8;
    if (fn->dtoh(c->counts, c->counters, counters, c->stream) != CUDA_SUCCESS ||
        kscope__ds_wait(c) != 0)
        return -1;
    int64_t over = 0;
    for (uint32_t s = 0; s < c->regions; s++)
        over += kscope__dsbuf_claims(&c->shares[s], c->counts[s * KSCOPE_DEVICE_COUNTER_STRIDE]);
    rows *run = malloc(2 * c->regions * sizeof *run);
    int n = run ? unread_rows(c, run) : -1, rc = n < 0 ? -1 : 0;
    for (int i = 0; i < n && rc == 0;) {
        uint64_t from = run[i].from, to = run[i].to;
        for (i++; i < n && run[i].from <= to + ROW_GAP; i++)
            to = run[i].to > to ? run[i].to : to;
        rc = copy_rows(c, from, to);
    }
    free(run);
    return rc == 0 && (n <= 0 || kscope__ds_wait(c) == 0) ? over : -1;
}

/* KSCOPE_DSCOPE_DEBUG=1: a line per context and pass. */
static void debug_line(const kscope__ds_ctx *c, size_t launches, int final)
{
    static int debug = -1;
    if (debug < 0) {
        const char *e = getenv("KSCOPE_DSCOPE_DEBUG");
        debug = e && *e && strcmp(e, "0") != 0;
    }
    if (!debug)
        return;
    uint64_t read = 0, made = 0;
    for (uint32_t s = 0; s < c->regions; s++)
        read += c->shares[s].w, made += c->shares[s].hi;
    fprintf(stderr,
            "kscope: device scopes %s: context %u, %zu launches, claims read %llu of %llu made\n",
            final >= 2 ? "stop"
            : final    ? "flush"
                       : "read",
            c->uid, launches, (unsigned long long)read, (unsigned long long)made);
}

/* Copy and read context c (read lock held). Returns the records lost. */
static int64_t read_ctx(kscope__ds_ctx *c, int final)
{
    CUcontext popped;
    int pushed = fn->ctx_push(c->ctx) == CUDA_SUCCESS;
    kscope__graphs_hide(1); /* kscope's own copies: not the program's work */
    int64_t lost = copy_ctx(c);
    kscope__graphs_hide(0);
    if (pushed)
        fn->ctx_pop(&popped);
    if (lost < 0) {
        kscope__warn_once("dscope-copy", "device scopes: cannot copy a context's records; the "
                                         "records of its launches are counted lost");
        lost = 0;
    }
    for (uint32_t s = 0; s < c->regions; s++)
        lost += kscope__dsbuf_scan(&c->shares[s], &grids, final);
    debug_line(c, work.n, final);
    return lost;
}

static double ns_per_cycle(const kscope__ds_ctx *cs, int n, uint32_t context_id)
{
    for (int i = 0; i < n; i++)
        if (cs[i].uid == context_id)
            return cs[i].ns_per_cycle;
    return 0;
}

/* One pass (read lock held, no capture open). */
static void pass(int final)
{
    take_notes();
    int n;
    kscope__ds_ctx *cs = kscope__ds_contexts(&n);
    for (size_t i = 0; i < work.n; i++)
        expect(cs, n, &work.v[i]);
    int64_t lost = 0;
    for (int i = 0; i < n; i++)
        lost += read_ctx(&cs[i], final);
    int cycles = (kscope__ds_opts()->flags & KSCOPE_DEVICE_CLOCK64) != 0;
    for (size_t i = 0; i < work.n; i++) {
        const noted *x = &work.v[i];
        size_t k = 0;
        const kscope__devscope_rec *recs =
            kscope__dsgrids_take(&grids, x->r.context_id, (uint32_t)x->r.grid_id, &k);
        if (k)
            kscope__record_devscopes(x->ctx, &x->r, recs, k, cycles,
                                     ns_per_cycle(cs, n, x->r.context_id));
    }
    lost += (int64_t)kscope__dsgrids_clear(&grids);
    work.n = 0;
    if (lost)
        kscope__add_devscope_lost(lost);
}

void kscope__ds_flush(int final)
{
    int n;
    kscope__ds_contexts(&n);
    if (!n)
        return;
    pthread_mutex_lock(&kscope__ds_read_lock);
    pass(final);
    pthread_mutex_unlock(&kscope__ds_read_lock);
}

/* --------------------------------------------------------------- thread */

static void pause_ns(long ns)
{
    struct timespec t = {0, ns};
    nanosleep(&t, NULL);
}

static void *reader_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the program's signals are not ours */
    for (;;) {
        pthread_mutex_lock(&note_lock);
        while (!notes.n)
            pthread_cond_wait(&note_cond, &note_lock);
        pthread_mutex_unlock(&note_lock);
        if (kscope__graphs_capturing(0)) {
            pause_ns(CAPTURE_NS);
            continue;
        }
        pthread_mutex_lock(&kscope__ds_read_lock);
        pass(0);
        pthread_mutex_unlock(&kscope__ds_read_lock);
        pause_ns(PACE_NS); /* launches gather meanwhile: fewer, larger copies */
    }
    return NULL;
}

/* In a child forked after the thread started, it is gone. */
static void after_fork_child(void)
{
    reader_started = 0;
}

static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

int kscope__ds_reader_start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, watch_forks);
    pthread_mutex_lock(&note_lock);
    int rc = 0;
    pthread_t th;
    pthread_attr_t attr;
    if (!reader_started) {
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &attr, reader_main, NULL) == 0)
            reader_started = 1;
        else
            rc = kscope__fail(KSCOPE_ENOMEM, "device scopes: cannot start their reader thread");
        pthread_attr_destroy(&attr);
    }
    pthread_mutex_unlock(&note_lock);
    return rc;
}
