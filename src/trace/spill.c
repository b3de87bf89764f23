/*
 * spill.c - a trace session's events in bounded memory: event chunks are
 * counted against the session's budget (KSCOPE_TRACE_BUFFER, default 64
 * MiB), and a writer thread of kscope's own moves every full chunk to a
 * spill file on disk while the program runs, so a run of any length holds
 * at most the budget. The hot path only ever fills a chunk it owns; when a
 * new chunk would pass the budget (the disk cannot keep up) the event is
 * dropped and counted, as a lost GPU record is.
 *
 * The spill file lies in the output's folder, unlinked as soon as it is
 * made (the space goes back when the process ends, whatever happens). It
 * holds records of whole chunks: a thread's host events (its own order
 * kept: chunks are spilled oldest first) or GPU events. The trace writer
 * (trace.c) reads the file, then what is still in memory
 * (kscope__trace_each). A completed phase keeps its file: it is read when
 * its data is asked for, or written at finalize.
 *
 * A forked child keeps its parent's file as a read-only part (what the
 * parent had spilled when it forked) and spills to a file of its own.
 */
#define _GNU_SOURCE
#include "core/core.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BUDGET ((size_t)64 << 20)
/* The writer spills a session once this share of its budget is held. */
#define SPILL_AT(budget) ((budget) / 4)
#define POLL_NS          (10 * 1000 * 1000)
#define CHUNK_BYTES      sizeof(kscope__evchunk)
#define GPU_CHUNK_BYTES  sizeof(kscope__gpu_chunk)

enum { REC_HOST = 1, REC_GPU = 2 };

/* Held while any spill file is written or read, and while a session's
 * events are taken or dropped (a phase ends): the writer thread never
 * works on a phase that is ending, and fork() waits for it. Order: the
 * session lock, then this, then a session's own, then the registry's. */
static pthread_mutex_t spill_lock = PTHREAD_MUTEX_INITIALIZER;

/* One record of a spill file: a chunk's events follow. */
typedef struct rec_head {
    uint32_t kind, n;
    uint64_t thread; /* REC_HOST: the kscope__thread's address */
} rec_head;

/* A forked child's trace sessions want the writer thread: started by the
 * first new chunk, not in the fork handler (a child that records nothing
 * gets no thread of ours). */
static _Atomic int writer_wanted;
static int writer_start(void);

/* -------------------------------------------------------------- budget */

int kscope__trace_budget(const char *text, size_t *out)
{
    const char *v = text && *text ? text : getenv("KSCOPE_TRACE_BUFFER");
    if (!v || !*v) {
        *out = DEFAULT_BUDGET;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    unsigned long long unit = 1;
    if (*end == 'k' || *end == 'K')
        unit = 1ull << 10;
    else if (*end == 'm' || *end == 'M')
        unit = 1ull << 20;
    else if (*end == 'g' || *end == 'G')
        unit = 1ull << 30;
    if (unit > 1)
        end++;
    if (errno || end == v || *end || v[0] == '-' || n == 0 || n > (1ull << 44) / unit)
        return kscope__fail(KSCOPE_EINVAL,
                            "trace buffer '%s'%s is not a size (bytes, or a number with k, M or G)",
                            v, text && *text ? "" : " (KSCOPE_TRACE_BUFFER)");
    *out = (size_t)(n * unit);
    if (*out < 4 * (CHUNK_BYTES + GPU_CHUNK_BYTES))
        *out = 4 * (CHUNK_BYTES + GPU_CHUNK_BYTES); /* a few chunks at least */
    return 0;
}

/* Take `bytes` of s's budget: 1, or 0 when they would pass it. */
static int budget_take(kscope__session *s, size_t bytes)
{
    size_t held = atomic_fetch_add_explicit(&s->held, bytes, memory_order_relaxed);
    if (held + bytes <= s->budget)
        return 1;
    atomic_fetch_sub_explicit(&s->held, bytes, memory_order_relaxed);
    return 0;
}

static void budget_give(kscope__session *s, size_t bytes)
{
    atomic_fetch_sub_explicit(&s->held, bytes, memory_order_relaxed);
}

/* A chunk of `bytes` out of s's budget (malloc'd, uninitialised): NULL
 * when the budget or memory runs out. Starts the spill writer first if a
 * session asked for it. */
static void *chunk_alloc(kscope__session *s, size_t bytes)
{
    if (atomic_load_explicit(&writer_wanted, memory_order_relaxed))
        writer_start();
    if (!budget_take(s, bytes))
        return NULL;
    void *c = malloc(bytes);
    if (!c)
        budget_give(s, bytes);
    return c;
}

kscope__evchunk *kscope__ev_chunk_new(kscope__session *s)
{
    kscope__evchunk *c = chunk_alloc(s, CHUNK_BYTES);
    if (!c)
        return NULL;
    c->next = NULL;
    atomic_store_explicit(&c->n, 0, memory_order_relaxed);
    return c;
}

void kscope__ev_chunks_free(kscope__session *s, kscope__evchunk *c)
{
    while (c) {
        kscope__evchunk *next = c->next;
        free(c);
        budget_give(s, CHUNK_BYTES);
        c = next;
    }
}

kscope__gpu_ev *kscope__gpu_ev_add(kscope__session *s)
{
    kscope__gpu_chunk *c = s->gev_tail;
    if (!c || c->n == KSCOPE__GPU_CHUNK) {
        kscope__gpu_chunk *nc = chunk_alloc(s, GPU_CHUNK_BYTES);
        if (!nc)
            return NULL;
        nc->next = NULL;
        nc->n = 0;
        if (c)
            c->next = nc;
        else
            s->gev = nc;
        s->gev_tail = c = nc;
    }
    s->ngev++;
    return &c->ev[c->n++];
}

static void gpu_chunks_free(kscope__session *s, kscope__gpu_chunk *c)
{
    while (c) {
        kscope__gpu_chunk *next = c->next;
        free(c);
        budget_give(s, GPU_CHUNK_BYTES);
        c = next;
    }
}

/* ---------------------------------------------------------- the file */

/* A new spill file in the folder of s's output, unlinked at once. */
static int file_open(const kscope__session *s)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", s->name);
    const char *d = dirname(dir);
    int fd = -1;
#ifdef O_TMPFILE
    fd = open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
#endif
    static _Atomic unsigned serial;
    char path[1200];
    snprintf(path, sizeof path, "%s/.kscope-spill.%ld.%u", d, (long)getpid(),
             atomic_fetch_add(&serial, 1));
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Whether fd is still the file it was when opened (dev, ino): a program
 * that closes every descriptor may have reused the number for its own. */
static int file_ours(int fd, const kscope__spill_part *id)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino;
}

/* Append n bytes to s's spill file (made when missing): 0, or -1 once the
 * disk refused (s->spill.err says why; nothing more is spilled). */
static int file_put(kscope__session *s, const void *buf, size_t n)
{
    kscope__spill *sp = &s->spill;
    if (sp->err)
        return -1;
    if (!sp->opened) {
        struct stat st;
        if ((sp->fd = file_open(s)) < 0 || fstat(sp->fd, &st) != 0) {
            sp->err = errno;
            return -1;
        }
        sp->opened = 1;
        sp->id = (kscope__spill_part){sp->fd, 0, st.st_dev, st.st_ino};
    }
    if (!file_ours(sp->fd, &sp->id)) {
        sp->err = EBADF;
        sp->opened = 0; /* the number is the program's now: never closed by us */
        return -1;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = pwrite(sp->fd, (const char *)buf + off, n - off, (off_t)(sp->len + off));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            sp->err = w < 0 ? errno : ENOSPC;
            return -1;
        }
        off += (size_t)w;
    }
    sp->len += n;
    return 0;
}

static int put_record(kscope__session *s, uint32_t kind, uint32_t n, uint64_t thread,
                      const void *events, size_t bytes)
{
    rec_head h = {kind, n, thread};
    return file_put(s, &h, sizeof h) == 0 && file_put(s, events, bytes) == 0 ? 0 : -1;
}

/* Forget what the spill holds (the caller has its file or drops it). */
static void spill_forget(kscope__spill *sp)
{
    sp->opened = 0;
    sp->fd = -1;
    sp->len = 0;
    sp->err = 0;
    sp->events = 0;
    sp->parts = NULL;
    sp->nparts = 0;
}

/* ------------------------------------------------------------ spilling */

typedef struct detached {
    kscope__thread *t;
    kscope__evchunk *first; /* up to and with last */
    uint32_t count;
} detached;

/* The full chunks of each thread's buffer for s, taken from their lists
 * (under the registry's lock, which only links); *out malloc'd. A chunk
 * is full once its owner linked the next one; the last one stays theirs. */
static size_t detach_host(kscope__session *s, detached **out)
{
    size_t n = 0, cap = 0;
    *out = NULL;
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t; t = t->next) {
        kscope__evbuf *b = &t->ev[s->slot];
        if (KSCOPE__LOAD(&b->gen) != s->gen)
            continue;
        kscope__evchunk *head = KSCOPE__LOAD(&b->head), *c = head, *next;
        uint32_t count = 0;
        while (c && (next = KSCOPE__LOAD(&c->next)) != NULL) {
            c = next;
            count++;
        }
        if (!count)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            detached *p = realloc(*out, ncap * sizeof *p);
            if (!p)
                break; /* the rest waits for the next pass */
            *out = p;
            cap = ncap;
        }
        (*out)[n++] = (detached){t, head, count};
        KSCOPE__STORE(&b->head, c);
    }
    kscope__threads_unlock();
    return n;
}

/* Spill what s holds: every full chunk and, with `all` (a phase ends), the
 * chunks still being filled too, as far as they are (they stay in memory:
 * the caller then drops them with the phase). Caller holds spill_lock.
 * Returns the events written; what the disk refused stays in memory. */
static uint64_t spill_tails(kscope__session *s);

static uint64_t spill(kscope__session *s, int all)
{
    uint64_t written = 0;
    if (s->spill.err)
        return 0; /* the disk refused: events wait in memory (then drop) */
    detached *d;
    size_t nd = detach_host(s, &d);
    for (size_t i = 0; i < nd; i++) {
        kscope__evchunk *c = d[i].first;
        for (uint32_t k = 0; k < d[i].count; k++) {
            kscope__evchunk *next = c->next;
            if (put_record(s, REC_HOST, KSCOPE__EV_CHUNK, (uint64_t)(uintptr_t)d[i].t, c->ev,
                           sizeof c->ev) == 0)
                written += KSCOPE__EV_CHUNK;
            else /* lost with its events: counted, the budget given back */
                __atomic_fetch_add(&s->dropped, KSCOPE__EV_CHUNK, __ATOMIC_RELAXED);
            free(c);
            budget_give(s, CHUNK_BYTES);
            c = next;
        }
    }
    free(d);
    pthread_mutex_lock(&s->lock);
    kscope__gpu_chunk *g = s->gev;
    if (all || !g || g == s->gev_tail) { /* all, or the full ones only */
        s->gev = s->gev_tail = NULL;
    } else {
        kscope__gpu_chunk *last = g;
        while (last->next != s->gev_tail)
            last = last->next;
        s->gev = s->gev_tail;
        last->next = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    for (kscope__gpu_chunk *c = g; c; c = c->next)
        if (c->n && put_record(s, REC_GPU, c->n, 0, c->ev, c->n * sizeof c->ev[0]) == 0)
            written += c->n;
        else if (c->n)
            __atomic_fetch_add(&s->dropped, c->n, __ATOMIC_RELAXED);
    gpu_chunks_free(s, g);
    if (all)
        written += spill_tails(s);
    s->spill.events += written;
    return written;
}

/* The chunks still being filled, as far as they are, into the file. */
static uint64_t spill_tails(kscope__session *s)
{
    uint64_t written = 0;
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t; t = t->next) {
        kscope__evbuf *b = &t->ev[s->slot];
        kscope__evchunk *c = KSCOPE__LOAD(&b->gen) == s->gen ? KSCOPE__LOAD(&b->head) : NULL;
        uint32_t n = c ? atomic_load_explicit(&c->n, memory_order_acquire) : 0;
        if (n &&
            put_record(s, REC_HOST, n, (uint64_t)(uintptr_t)t, c->ev, n * sizeof c->ev[0]) == 0)
            written += n;
    }
    kscope__threads_unlock();
    return written;
}

/* --------------------------------------------------------- the thread */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int on, stop;
    pthread_t th;
} W = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

/* Spill each trace session holding a quarter of its budget or more. A
 * session's bit in kscope__trace_mask is set once its storage is ready and
 * cleared (under spill_lock) before it is let go. */
static void spill_pass(void)
{
    pthread_mutex_lock(&spill_lock);
    uint32_t mask = atomic_load(&kscope__trace_mask);
    while (mask) {
        kscope__session *s = &kscope__sessions[__builtin_ctz(mask)];
        mask &= mask - 1;
        if (atomic_load_explicit(&s->held, memory_order_relaxed) >= SPILL_AT(s->budget))
            spill(s, 0);
    }
    pthread_mutex_unlock(&spill_lock);
}

static void *writer(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&W.lock);
    while (!W.stop) {
        /* every 10 ms while a trace session runs, every second else */
        long ns = atomic_load(&kscope__trace_mask) ? POLL_NS : 1000000000L;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec += ns % 1000000000L;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&W.cond, &W.lock, &ts);
        pthread_mutex_unlock(&W.lock);
        spill_pass();
        pthread_mutex_lock(&W.lock);
    }
    pthread_mutex_unlock(&W.lock);
    return NULL;
}

int kscope__spill_now(int id)
{
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_get(id);
    int rc = !s ? KSCOPE_ENOSESSION : !s->trace ? KSCOPE_EINVAL : 0;
    if (rc == 0) {
        pthread_mutex_lock(&spill_lock);
        spill(s, 0);
        rc = s->spill.err ? KSCOPE_EIO : 0;
        pthread_mutex_unlock(&spill_lock);
    }
    pthread_mutex_unlock(&kscope__session_lock);
    return rc;
}

/* Start the writer thread (once per process, again in a forked child). */
static int writer_start(void)
{
    pthread_mutex_lock(&W.lock);
    int rc = 0;
    atomic_store(&writer_wanted, 0);
    if (!W.on) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are not ours */
        rc = pthread_create(&W.th, NULL, writer, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc == 0) {
            W.on = 1;
            pthread_detach(W.th);
#ifdef __GLIBC__
            pthread_setname_np(W.th, "kscope-spill");
#endif
        }
    }
    pthread_mutex_unlock(&W.lock);
    return rc ? kscope__fail(KSCOPE_ENOMEM, "cannot start the trace writer thread: %s",
                             strerror(rc))
              : 0;
}

/* ------------------------------------------------------------ sessions */

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

static void register_fork(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Free the chunks of threads that ended while holding events of an
 * earlier session or phase in slot s (a live owner frees its own). */
static void free_orphans(kscope__session *s)
{
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t; t = t->next) {
        kscope__evbuf *b = &t->ev[s->slot];
        if (atomic_load(&t->alive) || KSCOPE__LOAD(&b->gen) == s->gen || !b->head)
            continue;
        kscope__ev_chunks_free(s, b->head);
        KSCOPE__STORE(&b->head, NULL);
        b->tail = NULL;
    }
    kscope__threads_unlock();
}

int kscope__spill_start(kscope__session *s, size_t budget)
{
    pthread_once(&fork_once, register_fork);
    pthread_mutex_lock(&spill_lock);
    spill_forget(&s->spill);
    pthread_mutex_lock(&s->lock);
    s->gev = s->gev_tail = NULL;
    s->ngev = 0;
    pthread_mutex_unlock(&s->lock);
    s->budget = budget; /* held counts what earlier sessions left until freed */
    free_orphans(s);
    pthread_mutex_unlock(&spill_lock);
    return s->trace ? writer_start() : 0;
}

void kscope__spill_end(kscope__session *s)
{
    pthread_mutex_lock(&spill_lock); /* a pass that saw its bit is done */
    atomic_fetch_and(&kscope__trace_mask, ~(1u << s->slot));
    pthread_mutex_unlock(&spill_lock);
    kscope__spill_drop(s);
}

void kscope__spill_close(kscope__spill *sp)
{
    if (sp->opened && file_ours(sp->fd, &sp->id))
        close(sp->fd);
    for (uint32_t i = 0; i < sp->nparts; i++)
        if (file_ours(sp->parts[i].fd, &sp->parts[i]))
            close(sp->parts[i].fd);
    free(sp->parts);
    spill_forget(sp);
}

/* A new phase: events still in memory from now on belong to no phase
 * (each owner drops its own when it next records); dead threads' go now.
 * Caller holds spill_lock. */
static void next_gen(kscope__session *s)
{
    pthread_mutex_lock(&s->lock);
    __atomic_fetch_add(&s->gen, 1, __ATOMIC_RELEASE); /* threads read it as they record */
    pthread_mutex_unlock(&s->lock);
    free_orphans(s);
}

int kscope__spill_take(kscope__session *s, kscope__spill *out)
{
    pthread_mutex_lock(&spill_lock);
    spill(s, 1);
    int err = s->spill.err;
    *out = s->spill;
    spill_forget(&s->spill);
    s->ngev = 0;
    next_gen(s);
    pthread_mutex_unlock(&spill_lock);
    if (err) {
        int rc = kscope__fail(KSCOPE_EIO, "cannot keep the trace of '%s' on disk: %s", s->name,
                              strerror(err));
        kscope__spill_close(out);
        return rc;
    }
    return 0;
}

void kscope__spill_drop(kscope__session *s)
{
    pthread_mutex_lock(&spill_lock);
    kscope__spill_close(&s->spill);
    pthread_mutex_lock(&s->lock);
    kscope__gpu_chunk *g = s->gev;
    s->gev = s->gev_tail = NULL;
    s->ngev = 0;
    pthread_mutex_unlock(&s->lock);
    gpu_chunks_free(s, g);
    next_gen(s);
    pthread_mutex_unlock(&spill_lock);
}

void kscope__spill_reset_child(kscope__session *s)
{
    kscope__spill_close(&s->spill);
    kscope__gpu_chunk *g = s->gev;
    s->gev = s->gev_tail = NULL;
    s->ngev = 0;
    gpu_chunks_free(s, g);
}

/* ------------------------------------------------------------- reading */

/* The records of one file part: host(thread, events, n) and gpu(events,
 * n) in the order written. */
static int read_part(const kscope__spill_part *part, const kscope__trace_visit *v)
{
    int fd = part->fd;
    uint64_t len = part->len;
    if (!file_ours(fd, part))
        return KSCOPE_EIO;
    size_t cap = sizeof(rec_head) + sizeof(kscope__evchunk) + sizeof(kscope__gpu_chunk);
    char *buf = malloc(cap);
    if (!buf)
        return KSCOPE_ENOMEM;
    uint64_t off = 0;
    int rc = 0;
    while (rc == 0 && off + sizeof(rec_head) <= len) {
        rec_head h;
        size_t esz = 0;
        if (pread(fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
            rc = KSCOPE_EIO;
        else if ((esz = h.kind == REC_HOST ? sizeof(kscope__ev) : sizeof(kscope__gpu_ev)) *
                     (size_t)h.n >
                 cap)
            rc = KSCOPE_EIO;
        else if (pread(fd, buf, esz * h.n, (off_t)(off + sizeof h)) != (ssize_t)(esz * h.n))
            rc = KSCOPE_EIO;
        else if (h.kind == REC_HOST)
            rc = v->host(v->arg, (const kscope__thread *)(uintptr_t)h.thread,
                         (const kscope__ev *)(void *)buf, h.n);
        else
            rc = v->gpu(v->arg, (const kscope__gpu_ev *)(void *)buf, h.n);
        off += sizeof h + esz * h.n;
    }
    free(buf);
    return rc;
}

int kscope__spill_read(const kscope__spill *sp, const kscope__trace_visit *v)
{
    int rc = 0;
    for (uint32_t i = 0; i < sp->nparts && rc == 0; i++)
        rc = read_part(&sp->parts[i], v);
    if (rc == 0 && sp->opened) {
        kscope__spill_part self = sp->id;
        self.len = sp->len;
        rc = read_part(&self, v);
    }
    return rc;
}

int kscope__trace_each(kscope__session *s, const kscope__trace_visit *v)
{
    pthread_mutex_lock(&spill_lock);
    int rc = kscope__spill_read(&s->spill, v);
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t && rc == 0; t = t->next) {
        const kscope__evbuf *b = &t->ev[s->slot];
        if (KSCOPE__LOAD(&b->gen) != s->gen)
            continue;
        /* What the thread had recorded when we looked, not what it goes
         * on recording as we read (we would never catch up). */
        const kscope__evchunk *head = KSCOPE__LOAD(&b->head), *last = head, *next;
        while (last && (next = KSCOPE__LOAD(&last->next)) != NULL)
            last = next;
        uint32_t last_n = last ? atomic_load_explicit(&last->n, memory_order_acquire) : 0;
        for (const kscope__evchunk *c = head; c && rc == 0; c = KSCOPE__LOAD(&c->next)) {
            uint32_t n = c == last ? last_n : atomic_load_explicit(&c->n, memory_order_acquire);
            if (n)
                rc = v->host(v->arg, t, c->ev, n);
            if (c == last)
                break;
        }
    }
    kscope__threads_unlock();
    pthread_mutex_lock(&s->lock);
    for (const kscope__gpu_chunk *c = s->gev; c && rc == 0; c = c->next)
        if (c->n)
            rc = v->gpu(v->arg, c->ev, c->n);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&spill_lock);
    return rc;
}

/* ---------------------------------------------------------------- fork */

/* Lock order: spill_lock, then a session's lock, then W.lock (a forked
 * child's first GPU event starts the writer under the session's lock). */
static void fork_prepare(void)
{
    pthread_mutex_lock(&spill_lock);
    pthread_mutex_lock(&W.lock);
}

static void fork_parent(void)
{
    pthread_mutex_unlock(&W.lock);
    pthread_mutex_unlock(&spill_lock);
}

/* The child's spill files are its own: what the parent had spilled stays
 * readable as a part, new events go to a file of the child's. The writer
 * thread did not come along: a trace session's next chunk starts it. */
static void fork_child(void)
{
    int trace = 0;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        kscope__session *s = &kscope__sessions[i];
        kscope__spill *sp = &s->spill;
        if (sp->opened) {
            kscope__spill_part *p = realloc(sp->parts, (sp->nparts + 1) * sizeof *p);
            if (p) {
                p[sp->nparts] = sp->id;
                p[sp->nparts++].len = sp->len;
                sp->parts = p;
            } else {
                close(sp->fd); /* what it held is lost to the child */
            }
            sp->opened = 0;
            sp->fd = -1;
            sp->len = 0;
        }
        trace |= s->in_use && s->trace;
    }
    pthread_mutex_unlock(&spill_lock); /* taken by fork_prepare, in this thread */
    pthread_cond_init(&W.cond, NULL);
    W.on = 0;
    pthread_mutex_unlock(&W.lock);
    atomic_store(&writer_wanted, trace);
}
