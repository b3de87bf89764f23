/*
 * devscope-read.c - device-side scope records copied out of the GPU and
 * handed to the core, by a thread of kscope's own.
 *
 * CUPTI's buffer thread only notes each kernel launch it reports finished
 * (kscope__ds_delivered): it may hold CUPTI's own lock, so a CUDA call
 * there could deadlock. CUPTI reports launches late (when an activity
 * buffer fills, or at a flush), so the reader thread does not wait for
 * them: every few milliseconds while kernels write records, and when
 * launches are noted, it runs one pass:
 *   1. it takes the launches noted so far;
 *   2. for each context, on kscope's own stream (waited for alone: never
 *      the program's streams), it copies the SMs' claim counters, then the
 *      slots of claims made and not yet read into the host mirror (and,
 *      when some claims were dropped, their drop counts first and the
 *      counters again);
 *   3. it reads each share (devscope-data.c): records whose launch was not
 *      noted yet wait on the host; keep-first, each share's limit moves one
 *      lap past its read position (one small copy), so kernels write the
 *      slots read again;
 *   4. it hands each noted launch's records to the core with its kernel's
 *      record.
 * A launch noted before the pass began had finished before the counters
 * were copied, so all of its records are in that copy. Nothing is copied
 * while a stream of the process captures a graph: the launches wait for
 * the capture's end. While device scopes are on, CUPTI hands its buffers
 * over after a few records (cupti.c), and when the records waiting on the
 * host outgrow the device's buffer the reader asks CUPTI for the buffers
 * whose records are complete (no forced flush, no synchronisation), so the
 * launches they wait for are reported soon. A flush runs the same pass on its own thread,
 * after every launch was delivered (records nobody's launch claims are
 * then lost, and counted).
 */
#define _GNU_SOURCE
#include "gpu/cupti/devscope.h"
#include "util/util.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PACE_NS    1000000L  /* between passes while kernels write records */
#define IDLE_NS    32000000L /* at most, while none did (doubling from PACE_NS) */
#define CAPTURE_NS 10000000L /* how often to look again while a capture is open */
#define ASK_PASSES 8         /* passes between two requests for CUPTI's buffers */
/* Records handed to the core per pass, at most (a launch is handed whole):
 * building the tree takes time, and the buffers must be copied meanwhile. */
#define HANDOVER_RECORDS (1u << 18)

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
    if (l->n == l->cap && KSCOPE__ROOM(l->v, l->cap, l->n + 1, 256) != 0)
        return -1;
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

/* Move the launches noted so far into the pass, after those an earlier
 * pass left to hand over (read lock held). */
static void take_notes(void)
{
    pthread_mutex_lock(&note_lock);
    if (!work.n) {
        noted_list t = work;
        work = notes;
        notes = t;
        notes.n = 0;
    } else {
        size_t i = 0;
        while (i < notes.n && list_push(&work, &notes.v[i]) == 0)
            i++;
        if (i && i < notes.n) /* the rest: next pass */
            memmove(notes.v, notes.v + i, (notes.n - i) * sizeof *notes.v);
        notes.n -= i;
    }
    pthread_mutex_unlock(&note_lock);
}

/* Launch x finished: its records are to be read. */
static void expect(const noted *x)
{
    kscope__dsgrids_expect(&grids, x->r.context_id, (uint32_t)x->r.grid_id); /* ENOMEM: lost */
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

/* Copy rows [from, to) of c's buffer (or of its drop counts) into the
 * mirror. */
static int copy_rows(kscope__ds_ctx *c, uint64_t from, uint64_t to, int drops)
{
    size_t row = (size_t)c->regions * (drops ? sizeof(uint32_t) : sizeof(kscope_device_record));
    void *dst = drops ? (void *)(c->drop_mirror + from * c->regions)
                      : (void *)(c->mirror + from * c->regions);
    CUdeviceptr src = (drops ? c->drops : c->recs) + from * row;
    return fn->dtoh(dst, src, (to - from) * row, c->stream) == CUDA_SUCCESS ? 0 : -1;
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

/* Copy the rows of runs [0, n), merged where close (drops: the drop
 * counts). */
static int copy_runs(kscope__ds_ctx *c, const rows *run, int n, int drops)
{
    int rc = 0;
    for (int i = 0; i < n && rc == 0;) {
        uint64_t from = run[i].from, to = run[i].to;
        for (i++; i < n && run[i].from <= to + ROW_GAP; i++)
            to = run[i].to > to ? run[i].to : to;
        rc = copy_rows(c, from, to, drops);
    }
    return rc;
}

static size_t counter_bytes(const kscope__ds_ctx *c)
{
    return (size_t)c->regions * KSCOPE_DEVICE_COUNTER_STRIDE * 8;
}

/* Copy c's counters, then the rows holding the slots of its claims made
 * and not yet read: the SMs claim at about the same pace, so these are
 * mostly one run, one copy (ctx current). Where claims were dropped, the
 * same rows' drop counts are copied first and the counters after them.
 * Returns 1 when some share has claims not yet read, 0 when none, -1 when
 * a copy failed. */
static int copy_ctx(kscope__ds_ctx *c)
{
    if (fn->dtoh(c->counts, c->counters, counter_bytes(c), c->stream) != CUDA_SUCCESS ||
        kscope__ds_wait(c) != 0)
        return -1;
    int drops = 0;
    for (uint32_t s = 0; s < c->regions; s++) {
        const unsigned long long *w = &c->counts[s * KSCOPE_DEVICE_COUNTER_STRIDE];
        kscope__dsbuf_claims(&c->shares[s], w[0], w[1]);
        drops |= kscope__dsbuf_wants_drops(&c->shares[s]);
    }
    rows *run = malloc(2 * c->regions * sizeof *run);
    int n = run ? unread_rows(c, run) : -1, rc = n < 0 ? -1 : 0;
    if (n > 0 && drops) {
        rc = copy_runs(c, run, n, 1);
        if (rc == 0 &&
            fn->dtoh(c->recounts, c->counters, counter_bytes(c), c->stream) != CUDA_SUCCESS)
            rc = -1;
    }
    if (rc == 0)
        rc = copy_runs(c, run, n, 0);
    free(run);
    if (rc != 0 || (n > 0 && kscope__ds_wait(c) != 0))
        return -1;
    for (uint32_t s = 0; n > 0 && drops && s < c->regions; s++)
        kscope__dsbuf_recount(&c->shares[s], c->recounts[s * KSCOPE_DEVICE_COUNTER_STRIDE]);
    return n > 0;
}

/* Keep-first: move each share's limit one lap past its read position
 * (ctx current). The copy is waited for by the next pass's first wait,
 * before limit_out changes again. */
static void send_limits(kscope__ds_ctx *c)
{
    if (!c->shares[0].drops)
        return;
    int changed = 0;
    for (uint32_t s = 0; s < c->regions; s++) {
        uint64_t limit = kscope__dsbuf_limit(&c->shares[s]);
        changed |= limit != c->limit_out[s];
        c->limit_out[s] = limit;
    }
    if (changed &&
        fn->htod(c->limits, c->limit_out, (size_t)c->regions * 8, c->stream) != CUDA_SUCCESS)
        kscope__warn_once("dscope-limit", "device scopes: cannot move a buffer's read "
                                          "position; later records may be dropped");
}

/* KSCOPE_DSCOPE_DEBUG=1: a line per context and pass, and one per pass
 * with its time. */
static int debugging(void)
{
    static int debug = -1;
    if (debug < 0) {
        const char *e = getenv("KSCOPE_DSCOPE_DEBUG");
        debug = e && *e && strcmp(e, "0") != 0;
    }
    return debug;
}

static void debug_line(const kscope__ds_ctx *c, size_t launches, int final)
{
    if (!debugging())
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

static uint64_t copy_ns; /* KSCOPE_DSCOPE_DEBUG: this pass's time copying (read lock) */

/* Copy and read context c (read lock held). Returns the records lost;
 * *busy is set when c had claims not yet read. */
static int64_t read_ctx(kscope__ds_ctx *c, int final, int *busy)
{
    CUcontext popped;
    int pushed = fn->ctx_push(c->ctx) == CUDA_SUCCESS;
    kscope__graphs_hide(1); /* kscope's own copies: not the program's work */
    uint64_t t0 = debugging() ? kscope_now_ns() : 0;
    int copied = copy_ctx(c);
    if (t0)
        copy_ns += kscope_now_ns() - t0;
    int64_t lost = 0;
    if (copied < 0)
        kscope__warn_once("dscope-copy", "device scopes: cannot copy a context's records; the "
                                         "records of its launches are counted lost");
    else
        *busy |= copied;
    for (uint32_t s = 0; copied >= 0 && s < c->regions; s++)
        lost += kscope__dsbuf_scan(&c->shares[s], &grids, final);
    if (copied >= 0 && final < 2)
        send_limits(c);
    kscope__graphs_hide(0);
    if (pushed)
        fn->ctx_pop(&popped);
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

/* One pass (read lock held, no capture open). Returns whether some
 * context had claims not yet read, or launches wait to be handed over. */
static int pass(int final)
{
    uint64_t t_pass = debugging() ? kscope_now_ns() : 0;
    copy_ns = 0;
    size_t old = work.n; /* expected already */
    take_notes();
    int n, busy = 0;
    kscope__ds_ctx *cs = kscope__ds_contexts(&n);
    for (size_t i = old; i < work.n; i++)
        expect(&work.v[i]);
    int64_t lost = 0;
    for (int i = 0; i < n; i++)
        lost += read_ctx(&cs[i], final, &busy);
    uint64_t t_read = debugging() ? kscope_now_ns() : 0;
    int cycles = (kscope__ds_opts()->flags & KSCOPE_DEVICE_CLOCK64) != 0;
    size_t i = 0, handed = 0;
    for (; i < work.n && (final || handed < HANDOVER_RECORDS); i++) {
        const noted *x = &work.v[i];
        size_t k = 0;
        const kscope__devscope_rec *recs =
            kscope__dsgrids_take(&grids, x->r.context_id, (uint32_t)x->r.grid_id, &k);
        if (k)
            kscope__record_devscopes(x->ctx, &x->r, recs, k, cycles,
                                     ns_per_cycle(cs, n, x->r.context_id));
        handed += k;
    }
    /* the others go to the core in the next passes, between copies */
    if (i && i < work.n)
        memmove(work.v, work.v + i, (work.n - i) * sizeof *work.v);
    work.n -= i;
    lost += kscope__dsgrids_end_pass(&grids, final);
    if (lost)
        kscope__add_devscope_lost(lost);
    if (t_read)
        fprintf(stderr,
                "kscope: device scopes pass: copied in %.3f ms and read in %.3f ms, %zu "
                "records of %zu launches handed over in %.3f ms, %lld lost, %llu waiting\n",
                (double)copy_ns / 1e6, (double)(t_read - t_pass - copy_ns) / 1e6, handed, i,
                (double)(kscope_now_ns() - t_read) / 1e6, (long long)lost,
                (unsigned long long)grids.waiting);
    return busy || work.n > 0;
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

/* Records waiting on the host for their launches, against the room of
 * every context's buffer (read lock held). */
static int waiting_outgrew(void)
{
    int n;
    const kscope__ds_ctx *cs = kscope__ds_contexts(&n);
    uint64_t room = 0;
    for (int i = 0; i < n; i++)
        room += cs[i].room;
    return n && grids.waiting > room;
}

/* --------------------------------------------------------------- thread */

static void pause_ns(long ns)
{
    struct timespec t = {0, ns};
    nanosleep(&t, NULL);
}

/* Wait for launches noted, at most `ns` while device scopes are on
 * (note_lock held; turning them on wakes the reader). */
static void wait_notes(long ns)
{
    if (!kscope__ds_on()) {
        pthread_cond_wait(&note_cond, &note_lock);
        return;
    }
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += ns;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&note_cond, &note_lock, &t);
}

/* Set while the reader waits longer than PACE_NS; a launch clears it and
 * wakes the reader (kscope__ds_reader_kick). */
static _Atomic int napping;

void kscope__ds_reader_kick(void)
{
    if (atomic_load_explicit(&napping, memory_order_relaxed) && atomic_exchange(&napping, 0))
        kscope__ds_reader_wake();
}

int kscope__ds_reader_napping(void)
{
    return atomic_load(&napping);
}

void kscope__ds_reader_wake(void)
{
    pthread_mutex_lock(&note_lock);
    pthread_cond_signal(&note_cond);
    pthread_mutex_unlock(&note_lock);
}

static void *reader_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the program's signals are not ours */
    long pace = PACE_NS;
    int asked = 0; /* passes since CUPTI was last asked for its buffers */
    for (;;) {
        pthread_mutex_lock(&note_lock);
        if (pace > PACE_NS)
            atomic_store(&napping, 1);
        if (!notes.n)
            wait_notes(pace);
        pthread_mutex_unlock(&note_lock);
        /* A launch came while it napped: kernels are about to write, and
         * a long nap now would let them fill the buffer (records lost). */
        if (!atomic_exchange(&napping, 0))
            pace = PACE_NS;
        int n;
        kscope__ds_contexts(&n);
        if (!n) { /* no kernel attached yet */
            pace = IDLE_NS;
            continue;
        }
        if (kscope__graphs_capturing(0)) {
            pause_ns(CAPTURE_NS);
            continue;
        }
        pthread_mutex_lock(&kscope__ds_read_lock);
        int busy = pass(0);
        int ask = waiting_outgrew();
        pthread_mutex_unlock(&kscope__ds_read_lock);
        /* the launches of the records waiting: CUPTI may hold their
         * records (asked at most every ASK_PASSES passes) */
        asked = ask && asked < ASK_PASSES ? asked + 1 : 0;
        if (asked == 1 && fn->flush_all && !kscope__graphs_capturing(0))
            fn->flush_all(0);
        pace = busy ? PACE_NS : (pace * 2 > IDLE_NS ? IDLE_NS : pace * 2);
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
