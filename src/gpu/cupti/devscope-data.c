/*
 * devscope-data.c - device-side scope records out of a context's buffer,
 * and scope names out of cubins. No CUDA or CUPTI call: tests fill
 * buffers with the device header's own code compiled for the host.
 *
 * Reading a share walks the claims from the first one not yet read (w) up
 * to the claims made (hi, from the share's counter):
 * a slot whose two halves carry claim i's tag is claim i's record, whole.
 * It is taken when its launch is expected (finished), else left for a
 * later pass. w moves over taken slots and, keep-newest, over slots that
 * a later claim overwrote (those claims are lost). The records read are
 * the reader's copy of the share (kernels may still be writing the
 * share's slots of claims not yet read: those wait for a later copy).
 */
#define _GNU_SOURCE
#include "gpu/cupti/devscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many unwritten slots in a row end a pass: claims are written right
 * after they are made, so gaps are as long as the warps in flight. */
#define GAP (1u << 16)

int kscope__dsbuf_init(kscope__dsbuf *b, void *recs, uint64_t cap, uint32_t stride, uint32_t flags,
                       uint32_t context_id)
{
    memset(b, 0, sizeof *b);
    b->taken = calloc(cap, 1);
    if (!b->taken)
        return kscope__fail(KSCOPE_ENOMEM, "device scopes: out of memory for %llu slots",
                            (unsigned long long)cap);
    b->recs = recs;
    b->cap = cap;
    b->stride = stride;
    b->flags = flags;
    b->context_id = context_id;
    return 0;
}

void kscope__dsbuf_free(kscope__dsbuf *b)
{
    free(b->taken);
    b->taken = NULL;
}

/* ------------------------------------------------------------- launches */

static size_t grid_hash(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static kscope__dsgrid *grid_find(const kscope__dsgrids *g, uint64_t key)
{
    if (!g || !g->cap)
        return NULL;
    for (size_t j = grid_hash(key, g->cap); g->slot[j].key; j = (j + 1) & (g->cap - 1))
        if (g->slot[j].key == key)
            return &g->slot[j];
    return NULL;
}

static int grids_grow(kscope__dsgrids *g)
{
    size_t cap = g->cap ? g->cap * 2 : 64;
    kscope__dsgrid *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return KSCOPE_ENOMEM;
    for (size_t i = 0; i < g->cap; i++) {
        if (!g->slot[i].key)
            continue;
        size_t j = grid_hash(g->slot[i].key, cap);
        while (slot[j].key)
            j = (j + 1) & (cap - 1);
        slot[j] = g->slot[i];
    }
    free(g->slot);
    g->slot = slot;
    g->cap = cap;
    return 0;
}

int kscope__dsgrids_expect(kscope__dsgrids *g, uint32_t context_id, uint32_t grid)
{
    uint64_t key = ((uint64_t)context_id << 32 | grid) + 1;
    if (grid_find(g, key))
        return 0;
    if ((g->used + 1) * 2 > g->cap && grids_grow(g) != 0)
        return KSCOPE_ENOMEM;
    size_t j = grid_hash(key, g->cap);
    while (g->slot[j].key)
        j = (j + 1) & (g->cap - 1);
    g->slot[j].key = key;
    g->used++;
    return 0;
}

static int grid_add(kscope__dsgrid *d, const kscope__devscope_rec *r)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        kscope__devscope_rec *p = realloc(d->recs, cap * sizeof *p);
        if (!p)
            return -1;
        d->recs = p;
        d->cap = cap;
    }
    d->recs[d->n++] = *r;
    return 0;
}

const kscope__devscope_rec *kscope__dsgrids_take(kscope__dsgrids *g, uint32_t context_id,
                                                 uint32_t grid, size_t *n)
{
    kscope__dsgrid *d = grid_find(g, ((uint64_t)context_id << 32 | grid) + 1);
    *n = 0;
    if (!d || !d->n)
        return NULL;
    *n = d->n;
    d->n = 0; /* taken: the records stay until clear */
    return d->recs;
}

size_t kscope__dsgrids_clear(kscope__dsgrids *g)
{
    size_t left = 0;
    for (size_t i = 0; i < g->cap; i++) {
        left += g->slot[i].n;
        free(g->slot[i].recs);
    }
    memset(g->slot, 0, g->cap * sizeof *g->slot);
    g->used = 0;
    return left;
}

void kscope__dsgrids_free(kscope__dsgrids *g)
{
    kscope__dsgrids_clear(g);
    free(g->slot);
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

/* Whether a record of a launch nobody expects is lost now. */
static int orphan_lost(const kscope__dsbuf *b, uint32_t grid, int final)
{
    if (final >= 2)
        return 1;
    return final == 1 && b->any_grid && (int32_t)(grid - b->max_grid) <= 0;
}

/* One lap at most, and no claim not yet made. */
static uint64_t scan_end(const kscope__dsbuf *b)
{
    uint64_t end = b->w + b->cap;
    return end < b->hi ? end : b->hi;
}

/* Move w over claims read, and (keep-newest) over claims overwritten;
 * final >= 1 (every launch finished): also over claims never written (a
 * kernel that died between claim and write), lost. Returns the claims
 * lost. */
static int64_t advance(kscope__dsbuf *b, uint64_t end, int final)
{
    int64_t lost = 0;
    while (b->w < end) {
        uint64_t s = b->w & (b->cap - 1);
        kscope_device_record r;
        int later;
        if (b->taken[s]) {
            b->taken[s] = 0;
        } else if (read_claim(b, b->w, &r, &later) == 0 &&
                   (later || (final >= 1 && b->w < b->hi))) {
            lost++;
        } else {
            break;
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
    uint32_t gap = 0;
    uint32_t last_id = 0, last_name = 0;
    for (uint64_t i = b->w; i < end && gap < GAP; i++) {
        uint64_t s = i & (b->cap - 1);
        kscope_device_record r;
        int later;
        if (b->taken[s] || !read_claim(b, i, &r, &later)) {
            gap = b->taken[s] ? 0 : gap + 1;
            continue;
        }
        gap = 0;
        kscope__dsgrid *d = grid_find(g, ((uint64_t)b->context_id << 32 | r.grid) + 1);
        if (!d) {
            if (orphan_lost(b, r.grid, final)) {
                b->taken[s] = 1;
                lost++;
            }
            continue;
        }
        if (!last_name || r.scope != last_id) {
            last_id = r.scope;
            last_name = kscope__ds_name(r.scope);
        }
        kscope__devscope_rec out = {last_name, r.sm, r.warp, r.start, r.dur};
        b->taken[s] = 1;
        if (grid_add(d, &out) != 0)
            lost++;
    }
    return lost + advance(b, end, final);
}

int64_t kscope__dsbuf_scan(kscope__dsbuf *b, kscope__dsgrids *g, int final)
{
    int64_t lost = 0;
    uint64_t before;
    do { /* keep-newest: the next lap may hold more */
        before = b->w;
        lost += scan_once(b, g, final);
    } while ((b->flags & KSCOPE_DEVICE_RING) && b->w > before);
    return lost;
}

int64_t kscope__dsbuf_claims(kscope__dsbuf *b, uint64_t next)
{
    int ring = (b->flags & KSCOPE_DEVICE_RING) != 0;
    uint64_t made = ring || next < b->cap ? next : b->cap;
    if (made > b->hi)
        b->hi = made;
    if (ring || next <= b->cap)
        return 0;
    uint64_t over = next - b->cap;
    int64_t fresh = over > b->over ? (int64_t)(over - b->over) : 0;
    b->over = over > b->over ? over : b->over;
    return fresh;
}

void kscope__dsbuf_unread(const kscope__dsbuf *b, uint64_t *from, uint64_t *n)
{
    *from = b->w;
    *n = scan_end(b) > b->w ? scan_end(b) - b->w : 0;
}

/* ------------------------------------------------------------------ names */

typedef struct name_slot {
    uint32_t id;   /* 0 with name 0: empty */
    uint32_t name; /* interned */
} name_slot;

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static name_slot *names;
static size_t names_cap, names_used;

static name_slot *name_find(uint32_t id)
{
    if (!names_cap)
        return NULL;
    for (size_t j = grid_hash(id, names_cap); names[j].name; j = (j + 1) & (names_cap - 1))
        if (names[j].id == id)
            return &names[j];
    return NULL;
}

/* Add id -> name (lock held); a second name for an id keeps the first. */
static void name_put(uint32_t id, uint32_t name)
{
    if (name_find(id))
        return;
    if ((names_used + 1) * 2 > names_cap) {
        size_t cap = names_cap ? names_cap * 2 : 256;
        name_slot *p = calloc(cap, sizeof *p);
        if (!p)
            return;
        for (size_t i = 0; i < names_cap; i++) {
            if (!names[i].name)
                continue;
            size_t j = grid_hash(names[i].id, cap);
            while (p[j].name)
                j = (j + 1) & (cap - 1);
            p[j] = names[i];
        }
        free(names);
        names = p;
        names_cap = cap;
    }
    size_t j = grid_hash(id, names_cap);
    while (names[j].name)
        j = (j + 1) & (names_cap - 1);
    names[j] = (name_slot){id, name};
    names_used++;
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
