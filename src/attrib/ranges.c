/*
 * ranges.c - ranges of a vendor's annotation API as kscope scopes: the
 * core's side of a range source (gpu/backend.h), vendor-neutral. A source
 * (gpu/nvtx/ for NVTX) turns the API's calls into the calls below, on the
 * thread that made them; this file keeps what the API promises and a
 * calling-context tree cannot hold.
 *
 * Such APIs keep one push/pop stack per domain and let start/end ranges
 * overlap or end on another thread; kscope has one scope stack per thread.
 * Each thread therefore keeps the ranges it opened, innermost last. A
 * range whose end arrives while ranges opened after it are still open is
 * marked ended and left when it becomes the innermost again; a start/end
 * range ended on another thread is handed back to its own thread, which
 * leaves it at its next range call (or at finalize).
 */
#include "core/core.h"

#include <stdio.h>

/* ------------------------------------------------------- open ranges */

#define OPEN_MAX   256
#define CROSS_ENDS 64
/* The default domain's handle: one object, so handles compare by address
 * (two "" literals need not be one object). A source names it NULL. */
static const char default_domain_name[] = "";
#define DEFAULT_DOM ((kscope__range_domain)default_domain_name)

typedef struct open_range {
    kscope__range_domain domain;
    uint64_t id; /* start/end ranges; 0 for push/pop */
    int depth;   /* kscope depth right after entering; 0: not entered */
    int ended;
} open_range;

#define CLOSED_IDS 16

typedef struct range_thread {
    open_range r[OPEN_MAX];
    int n;
    int overflow; /* pushes beyond OPEN_MAX still to be popped */
    int ignored;  /* pushes made while ranges were off, still to be popped */
    /* Start/end ranges closed early by an enclosing pop (see range_pop):
     * their own end, when it comes, has nothing left to do. */
    uint64_t closed[CLOSED_IDS];
    unsigned nclosed;
} range_thread;

static __thread range_thread tls_ranges;
static _Atomic uint64_t next_range_id = 1;
/* Whether new ranges and marks become scopes (kscope__ranges_enable). */
static _Atomic int ranges_on = 1;
/* A start/end range started while ranges were off: its end is ignored. */
#define IGNORED_ID (1ull << 63)
/* Start/end ranges ended on a thread other than their own. */
static _Atomic uint64_t cross_ends[CROSS_ENDS];
static _Atomic int cross_pending;

/* Leave every range at the top of the thread's list that has ended and is
 * the innermost kscope scope. */
static void sweep(range_thread *t)
{
    while (t->n > 0) {
        open_range *top = &t->r[t->n - 1];
        if (!top->ended)
            break;
        if (top->depth) {
            if (kscope_depth() != top->depth)
                break;
            kscope_exit(NULL);
        }
        t->n--;
    }
}

/* Collect ends that other threads recorded for this thread's ranges. */
static void take_cross_ends(range_thread *t)
{
    if (!atomic_load_explicit(&cross_pending, memory_order_relaxed))
        return;
    for (int i = 0; i < t->n; i++) {
        if (!t->r[i].id || t->r[i].ended)
            continue;
        for (int k = 0; k < CROSS_ENDS; k++) {
            uint64_t want = t->r[i].id;
            if (atomic_compare_exchange_strong(&cross_ends[k], &want, 0)) {
                t->r[i].ended = 1;
                atomic_fetch_sub(&cross_pending, 1);
                break;
            }
        }
    }
}

/* The range sources' names for messages ("NVTX", "A or B"). */
static const char *sources_name(char *buf, size_t size)
{
    const kscope__range_source *src;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; (src = kscope__range_source_at(i)) && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? " or " : "", src->name);
    return buf;
}

/* Enter a scope and remember it; returns the entry index or -1. */
static int open_range_enter(range_thread *t, kscope__range_domain dom, uint64_t id,
                            const char *name, uint32_t color)
{
    take_cross_ends(t);
    sweep(t);
    if (t->n == OPEN_MAX) {
        char api[64];
        kscope__warn_once("ranges-depth",
                          "more than %d %s ranges open on one thread; the "
                          "innermost ones are not recorded",
                          OPEN_MAX, sources_name(api, sizeof api));
        t->overflow++;
        return -1;
    }
    int before = kscope_depth();
    kscope_enter_ex(name, color, 0);
    int after = kscope_depth();
    open_range *r = &t->r[t->n];
    r->domain = dom;
    r->id = id;
    r->depth = after > before ? after : 0;
    r->ended = 0;
    return t->n++;
}

/* Number of open, not yet ended ranges of a domain (push/pop only). */
static int domain_level(const range_thread *t, kscope__range_domain dom)
{
    int level = 0;
    for (int i = 0; i < t->n; i++)
        level += t->r[i].domain == dom && !t->r[i].id && !t->r[i].ended;
    return level;
}

static int range_push(kscope__range_domain dom, const char *name, uint32_t color)
{
    range_thread *t = &tls_ranges;
    int level = domain_level(t, dom) + t->overflow + t->ignored;
    if (atomic_load_explicit(&ranges_on, memory_order_relaxed))
        open_range_enter(t, dom, 0, name, color);
    else
        t->ignored++;
    return level;
}

/* Ranges opened inside entry i and still open when i is popped. NVTX keeps
 * one stack per domain and lets start/end ranges overlap freely, but a
 * calling-context tree needs nesting: a range of another domain (say a
 * library's, left open by a call that never pops it) or a start/end range
 * still open when an enclosing push/pop range ends is closed there, so the
 * enclosing scope ends when the program says it does. */
static void close_inner(range_thread *t, int i)
{
    for (int j = t->n - 1; j > i; j--) {
        if (t->r[j].ended)
            continue;
        t->r[j].ended = 1;
        if (t->r[j].id)
            t->closed[t->nclosed++ % CLOSED_IDS] = t->r[j].id;
    }
}

static int range_pop(kscope__range_domain dom)
{
    range_thread *t = &tls_ranges;
    if (t->ignored > 0) { /* the innermost push was made while off */
        t->ignored--;
        return domain_level(t, dom) + t->overflow + t->ignored;
    }
    if (t->overflow > 0 && dom == DEFAULT_DOM) {
        t->overflow--;
        return domain_level(t, dom) + t->overflow;
    }
    take_cross_ends(t);
    for (int i = t->n - 1; i >= 0; i--) {
        if (t->r[i].domain == dom && !t->r[i].id && !t->r[i].ended) {
            t->r[i].ended = 1;
            close_inner(t, i);
            sweep(t);
            return domain_level(t, dom);
        }
    }
    return -1;
}

static int closed_early(const range_thread *t, uint64_t id)
{
    for (unsigned k = 0; k < CLOSED_IDS && k < t->nclosed; k++)
        if (t->closed[k] == id)
            return 1;
    return 0;
}

static uint64_t range_start(kscope__range_domain dom, const char *name, uint32_t color)
{
    uint64_t id = atomic_fetch_add(&next_range_id, 1);
    if (!atomic_load_explicit(&ranges_on, memory_order_relaxed))
        return id | IGNORED_ID;
    open_range_enter(&tls_ranges, dom, id, name, color);
    return id;
}

static void range_end(uint64_t id)
{
    range_thread *t = &tls_ranges;
    if (id & IGNORED_ID)
        return;
    for (int i = t->n - 1; i >= 0; i--) {
        if (t->r[i].id == id) {
            t->r[i].ended = 1;
            take_cross_ends(t);
            sweep(t);
            return;
        }
    }
    if (closed_early(t, id))
        return;
    /* Another thread's range: leave the end for it to collect. */
    for (int k = 0; k < CROSS_ENDS; k++) {
        uint64_t empty = 0;
        if (atomic_compare_exchange_strong(&cross_ends[k], &empty, id)) {
            atomic_fetch_add(&cross_pending, 1);
            return;
        }
    }
    char api[64];
    kscope__warn_once("ranges-cross",
                      "too many %s ranges ended on other threads than their "
                      "own; some stay open until the end of the run",
                      sources_name(api, sizeof api));
}

/* ------------------------------------------------------ a source's calls */

static kscope__range_domain domain(kscope__range_domain d)
{
    return d ? d : DEFAULT_DOM;
}

int kscope__ranges_push(kscope__range_domain d, const char *name, uint32_t color)
{
    return range_push(domain(d), name ? name : "", color);
}

int kscope__ranges_pop(kscope__range_domain d)
{
    return range_pop(domain(d));
}

uint64_t kscope__ranges_start(kscope__range_domain d, const char *name, uint32_t color)
{
    return range_start(domain(d), name ? name : "", color);
}

void kscope__ranges_end(uint64_t id)
{
    range_end(id);
}

void kscope__ranges_mark(const char *name)
{
    if (atomic_load_explicit(&ranges_on, memory_order_relaxed))
        kscope_mark(name ? name : "");
}

void kscope__ranges_enable(int on)
{
    atomic_store(&ranges_on, on != 0);
}
