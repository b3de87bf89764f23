/*
 * devscope-data.c - device-side scope records out of a context's buffer,
 * and scope names out of cubins. No CUDA or CUPTI call: tests fill
 * buffers with the device header's own code compiled for the host.
 *
 * Reading a share walks the claims from the first one not yet read (w) up
 * to the claims made (hi, from the share's counter), one lap at most: a
 * slot whose two halves carry claim i's tag is claim i's record, whole. It
 * is taken into its launch's list, reported finished or not (then it waits
 * on the host), so that its slot is free once w passes it. w moves over
 * taken slots, over claims found dropped and, keep-newest, over claims
 * overwritten (those are lost).
 *
 * Keep-first drops a claim whose slot may hold a record not yet read: its
 * slot's drop count and the share's drop word grow by one. Claim i (w = i,
 * not written) is known dropped from the counts: every later claim of
 * its slot (i + cap, i + 2 cap, ...) is dropped too while w <= i, since
 * the limit kernels see is never past w + cap. The drop counts are copied
 * before the counter is read again (hi_after), so they hold at most the
 * later claims made by then plus claim i's own drop: when they exceed the
 * later claims, i was dropped; otherwise it may still be being written,
 * and w waits for a later pass.
 */
#define _GNU_SOURCE
#include "gpu/cupti/devscope.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kscope__dsbuf_init(kscope__dsbuf *b, void *recs, uint32_t *drops, uint64_t cap, uint32_t stride,
                       uint32_t flags, uint32_t context_id)
{
    memset(b, 0, sizeof *b);
    b->taken = calloc(cap, 1);
    b->acks = drops ? calloc(cap, sizeof *b->acks) : NULL;
    if (!b->taken || (drops && !b->acks)) {
        kscope__dsbuf_free(b);
        return kscope__fail(KSCOPE_ENOMEM, "device scopes: out of memory for %llu slots",
                            (unsigned long long)cap);
    }
    b->recs = recs;
    b->drops = drops;
    b->cap = cap;
    b->stride = stride;
    b->flags = flags;
    b->context_id = context_id;
    return 0;
}

void kscope__dsbuf_free(kscope__dsbuf *b)
{
    free(b->taken);
    free(b->acks);
    b->taken = NULL;
    b->acks = NULL;
}

/* ------------------------------------------------------------- launches */

static uint64_t grid_slot_hash(const void *slot)
{
    return kscope__number_hash(((const kscope__dsgrid *)slot)->key);
}

static const kscope__table_kind grids_kind = {.size = sizeof(kscope__dsgrid),
                                              .mark = offsetof(kscope__dsgrid, key),
                                              .mark_size = sizeof(uint64_t),
                                              .first = 64,
                                              .key = offsetof(kscope__dsgrid, key),
                                              .key_size = sizeof(uint64_t),
                                              .hash = grid_slot_hash};

static uint64_t grid_key(uint32_t context_id, uint32_t grid)
{
    return ((uint64_t)context_id << 32 | grid) + 1;
}

static kscope__dsgrid *grid_find(const kscope__dsgrids *g, uint64_t key)
{
    return g ? kscope__table_find(&g->tab, &grids_kind, kscope__number_hash(key), &key) : NULL;
}

/* The entry of `key`, made (not expected) when missing; NULL out of memory. */
static kscope__dsgrid *grid_entry(kscope__dsgrids *g, uint64_t key)
{
    kscope__dsgrid *d = grid_find(g, key);
    kscope__dsgrid fresh = {.key = key};
    return d ? d : kscope__table_add(&g->tab, &grids_kind, kscope__number_hash(key), &fresh);
}

/* Note grid as context_id's latest reported launch when it is later. */
static void note_last(kscope__dsgrids *g, uint32_t context_id, uint32_t grid)
{
    int i = 0;
    while (i < g->nlast && g->last[i].context_id != context_id)
        i++;
    if (i == g->nlast) {
        if (g->nlast == KSCOPE__DS_CONTEXTS)
            return;
        g->nlast++;
        g->last[i].context_id = context_id;
        g->last[i].grid = grid;
    } else if ((int32_t)(grid - g->last[i].grid) > 0) {
        g->last[i].grid = grid;
    }
}

int kscope__dsgrids_expect(kscope__dsgrids *g, uint32_t context_id, uint32_t grid)
{
    note_last(g, context_id, grid);
    kscope__dsgrid *d = grid_entry(g, grid_key(context_id, grid));
    if (!d)
        return KSCOPE_ENOMEM;
    if (!d->expected)
        g->waiting -= d->n;
    d->expected = 1;
    return 0;
}

static int grid_add(kscope__dsgrids *g, kscope__dsgrid *d, const kscope__devscope_rec *r)
{
    if (d->n == d->cap && KSCOPE__ROOM(d->recs, d->cap, d->n + 1, 64) != 0)
        return -1;
    d->recs[d->n++] = *r;
    g->waiting += !d->expected;
    return 0;
}

const kscope__devscope_rec *kscope__dsgrids_take(kscope__dsgrids *g, uint32_t context_id,
                                                 uint32_t grid, size_t *n)
{
    kscope__dsgrid *d = grid_find(g, grid_key(context_id, grid));
    *n = 0;
    if (!d || !d->expected)
        return NULL;
    d->taken = 1;
    if (!d->n)
        return NULL;
    *n = d->n;
    d->n = 0; /* the records stay until the pass ends */
    return d->recs;
}

/* Whether the records of a launch nobody reported are lost now. */
static int orphan_lost(const kscope__dsgrids *g, uint64_t key, int final)
{
    if (final >= 2)
        return 1;
    if (final != 1)
        return 0;
    uint32_t context_id = (uint32_t)((key - 1) >> 32), grid = (uint32_t)(key - 1);
    for (int i = 0; i < g->nlast; i++)
        if (g->last[i].context_id == context_id)
            return (int32_t)(grid - g->last[i].grid) <= 0;
    return 0;
}

int64_t kscope__dsgrids_end_pass(kscope__dsgrids *g, int final)
{
    int64_t lost = 0;
    size_t kept = 0;
    kscope__dsgrid *slot = g->tab.slots;
    for (size_t i = 0; i < g->tab.cap; i++) {
        kscope__dsgrid *d = &slot[i];
        if (!d->key)
            continue;
        int drop = d->taken || (d->expected ? final >= 1 : orphan_lost(g, d->key, final));
        if (!drop) {
            slot[kept++] = *d; /* gathered at the front, put back below */
            continue;
        }
        lost += (int64_t)d->n;
        if (!d->expected)
            g->waiting -= d->n;
        free(d->recs);
    }
    kscope__dsgrid *keep = kept ? malloc(kept * sizeof *keep) : NULL;
    if (kept && !keep) { /* out of memory: they are lost */
        for (size_t i = 0; i < kept; i++) {
            lost += (int64_t)slot[i].n;
            free(slot[i].recs);
        }
        kept = 0;
        g->waiting = 0;
    }
    if (keep)
        memcpy(keep, slot, kept * sizeof *keep);
    kscope__table_clear(&g->tab, &grids_kind);
    for (size_t i = 0; i < kept; i++) /* fewer than it held: no growth, cannot fail */
        kscope__table_add(&g->tab, &grids_kind, kscope__number_hash(keep[i].key), &keep[i]);
    free(keep);
    if (final >= 2)
        g->nlast = 0;
    return lost;
}

size_t kscope__dsgrids_clear(kscope__dsgrids *g)
{
    size_t left = 0;
    kscope__dsgrid *slot = g->tab.slots;
    for (size_t i = 0; i < g->tab.cap; i++) {
        left += slot[i].n;
        free(slot[i].recs);
    }
    kscope__table_clear(&g->tab, &grids_kind);
    g->waiting = 0;
    g->nlast = 0;
    return left;
}

void kscope__dsgrids_free(kscope__dsgrids *g)
{
    kscope__dsgrids_clear(g);
    kscope__table_free(&g->tab);
    memset(g, 0, sizeof *g);
}

/* -------------------------------------------------------------- reading */

/* Claim i's record when its slot holds it whole (1), else 0; *later is
 * set when a later claim's record is there (keep-newest overwrote i). */
static int read_claim(const kscope__dsbuf *b, uint64_t i, kscope_device_record *out, int *later)
{
    const volatile kscope_device_record *r = &b->recs[(i & (b->cap - 1)) * b->stride];
    uint32_t want = (uint32_t)(i + 1);
    uint32_t a = __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE);
    uint32_t c = __atomic_load_n(&r->tag2, __ATOMIC_ACQUIRE);
    *later = (a && (int32_t)(a - want) > 0) || (c && (int32_t)(c - want) > 0);
    if (a != want || c != want)
        return 0;
    out->grid = r->grid;
    out->start = r->start;
    out->scope = r->scope;
    out->dur = r->dur;
    out->sm = r->sm;
    out->warp = r->warp;
    /* A kernel may have begun overwriting it meanwhile (keep-newest). */
    return __atomic_load_n(&r->tag, __ATOMIC_ACQUIRE) == want &&
           __atomic_load_n(&r->tag2, __ATOMIC_ACQUIRE) == want;
}

/* One lap at most, and no claim not yet made. */
static uint64_t scan_end(const kscope__dsbuf *b)
{
    uint64_t end = b->w + b->cap;
    return end < b->hi ? end : b->hi;
}

/* Whether claim i (= w, not written) was dropped, by its slot's drop
 * count (see the top of the file). */
static int was_dropped(kscope__dsbuf *b, uint64_t i)
{
    if (!b->drops || !b->drops_fresh || b->dropped == b->acked)
        return 0;
    uint64_t s = i & (b->cap - 1);
    uint32_t count = __atomic_load_n(&b->drops[s * b->stride], __ATOMIC_RELAXED);
    uint32_t unplaced = count - b->acks[s];
    uint64_t later = b->hi_after > i ? (b->hi_after - i - 1) / b->cap : 0;
    if ((uint64_t)unplaced <= later)
        return 0;
    b->acks[s]++;
    b->acked++;
    return 1;
}

/* Move w over claims read, dropped and (keep-newest) overwritten; final
 * >= 1 (every launch finished): also over claims never written, lost.
 * Returns the claims lost. */
static int64_t advance(kscope__dsbuf *b, uint64_t end, int final)
{
    int64_t lost = 0;
    while (b->w < end) {
        uint64_t s = b->w & (b->cap - 1);
        kscope_device_record r;
        int later;
        if (b->taken[s]) {
            b->taken[s] = 0;
        } else if (read_claim(b, b->w, &r, &later)) {
            break; /* whole, not taken: out of memory for its list */
        } else if (later || was_dropped(b, b->w) || final >= 1) {
            lost++;
        } else {
            break; /* still being written */
        }
        b->w++;
    }
    return lost;
}

/* One pass: at most one lap of the buffer from w. */
static int64_t scan_once(kscope__dsbuf *b, kscope__dsgrids *g, int final)
{
    int64_t lost = 0;
    uint64_t end = scan_end(b);
    uint64_t last_key = 0;
    kscope__dsgrid *d = NULL;
    uint32_t last_id = 0, last_name = 0;
    for (uint64_t i = b->w; i < end; i++) {
        uint64_t s = i & (b->cap - 1);
        kscope_device_record r;
        int later;
        if (b->taken[s] || !read_claim(b, i, &r, &later))
            continue;
        uint64_t key = grid_key(b->context_id, r.grid);
        if (key != last_key || !d) {
            d = grid_entry(g, key); /* may move the table: looked up per launch */
            last_key = key;
        }
        if (!d)
            break; /* out of memory: the rest waits */
        if (!last_name || r.scope != last_id) {
            last_id = r.scope;
            last_name = kscope__ds_name(r.scope);
        }
        kscope__devscope_rec out = {last_name, r.sm, r.warp, r.start, r.dur, (uint32_t)(i + 1)};
        if (grid_add(g, d, &out) != 0)
            break;
        b->taken[s] = 1;
    }
    return lost + advance(b, end, final);
}

int64_t kscope__dsbuf_scan(kscope__dsbuf *b, kscope__dsgrids *g, int final)
{
    int64_t lost = 0;
    uint64_t before;
    do { /* the next lap may hold more (then the whole buffer was copied) */
        before = b->w;
        lost += scan_once(b, g, final);
    } while (b->w > before && b->w < b->hi);
    b->drops_fresh = 0;
    return lost;
}

void kscope__dsbuf_claims(kscope__dsbuf *b, uint64_t claims, uint64_t dropped)
{
    if (claims > b->hi)
        b->hi = claims;
    if (dropped > b->dropped)
        b->dropped = dropped;
}

int kscope__dsbuf_wants_drops(const kscope__dsbuf *b)
{
    return b->drops && b->dropped > b->acked;
}

void kscope__dsbuf_recount(kscope__dsbuf *b, uint64_t claims)
{
    b->hi_after = claims;
    b->drops_fresh = 1;
}

void kscope__dsbuf_unread(const kscope__dsbuf *b, uint64_t *from, uint64_t *n)
{
    *from = b->w;
    *n = scan_end(b) > b->w ? scan_end(b) - b->w : 0;
}

uint64_t kscope__dsbuf_limit(const kscope__dsbuf *b)
{
    return b->w + b->cap;
}

/* ------------------------------------------------------------------ names */

typedef struct name_slot {
    uint32_t id;   /* kscope_device_hash of the name */
    uint32_t name; /* interned; 0: empty */
} name_slot;

static uint64_t name_slot_hash(const void *slot)
{
    return kscope__number_hash(((const name_slot *)slot)->id);
}

static const kscope__table_kind names_kind = {.size = sizeof(name_slot),
                                              .mark = offsetof(name_slot, name),
                                              .mark_size = sizeof(uint32_t),
                                              .first = 256,
                                              .key = offsetof(name_slot, id),
                                              .key_size = sizeof(uint32_t),
                                              .hash = name_slot_hash};

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static kscope__table names; /* name_slot */

static name_slot *name_find(uint32_t id)
{
    return kscope__table_find(&names, &names_kind, kscope__number_hash(id), &id);
}

/* Add id -> name (lock held); a second name for an id keeps the first
 * (and out of memory, the id keeps its "scope_%08x" name). */
static void name_put(uint32_t id, uint32_t name)
{
    if (!name_find(id))
        kscope__table_add(&names, &names_kind, kscope__number_hash(id), &(name_slot){id, name});
}

void kscope__ds_names_cubin(const void *cubin, size_t size)
{
    static const char mark[] = KSCOPE_DEVICE_MARK;
    const size_t mlen = sizeof mark - 1;
    const char *p = cubin, *end = p + size;
    pthread_mutex_lock(&names_lock);
    while (p && (size_t)(end - p) > mlen) {
        const char *m = memmem(p, (size_t)(end - p), mark, mlen);
        if (!m)
            break;
        const char *name = m + mlen;
        const char *nul = memchr(name, '\0', (size_t)(end - name));
        if (!nul)
            break;
        if (nul > name && nul - name < 256) {
            uint32_t id = kscope_device_hash(name, KSCOPE_DEVICE_HASH_SEED);
            uint32_t interned = kscope__intern(name);
            if (interned)
                name_put(id, interned);
        }
        p = nul + 1;
    }
    pthread_mutex_unlock(&names_lock);
}

uint32_t kscope__ds_name(uint32_t id)
{
    pthread_mutex_lock(&names_lock);
    name_slot *s = name_find(id);
    uint32_t name = s ? s->name : 0;
    pthread_mutex_unlock(&names_lock);
    if (name)
        return name;
    char buf[32];
    snprintf(buf, sizeof buf, "scope_%08x", id);
    return kscope__intern(buf);
}
