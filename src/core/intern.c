/*
 * intern.c - the process-wide name table and the metric-name registry.
 *
 * A name is stored once and known by a 32-bit id from then on. Lookups by
 * string take a mutex (they happen on a thread's first sight of a name);
 * lookups by id read a two-level array that never moves, so they need no
 * lock. The hot path reaches ids through per-call-site or per-thread caches.
 * Names are packed into blocks that are never freed (a name lives as long
 * as the process), so a million names cost their bytes and a few more,
 * not an allocation each.
 */
#include "kscope-internal.h"
#include "util/table.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 12
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define MAX_CHUNKS 65536 /* 256M names */

#define BLOCK_SIZE (64 * 1024) /* names are packed into blocks of this size */

static const char **_Atomic chunks[MAX_CHUNKS];
static uint32_t nnames; /* ids 1..nnames are in use */
static char *block;     /* the block names are packed into */
static size_t block_used;
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;

/* The low 32 bits of an FNV-1a, all the table's index uses (the
 * compiler's loop for them is a little shorter than for all 64). */
static uint32_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return (uint32_t)h;
}

const char *kscope__name(uint32_t id)
{
    if (id == 0)
        return "";
    const char **c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
    return c ? c[id & (CHUNK_SIZE - 1)] : "";
}

/* The table from a name to its id: slots hold ids, keyed by the name's text. */
static uint64_t id_hash(const void *slot)
{
    return hash_str(kscope__name(*(const uint32_t *)slot));
}

static int id_names(const void *slot, const void *name)
{
    return strcmp(kscope__name(*(const uint32_t *)slot), name) == 0;
}

static const kscope__table_kind ids_kind = {.size = sizeof(uint32_t),
                                            .mark = 0,
                                            .mark_size = sizeof(uint32_t),
                                            .first = 1024,
                                            .fill = 80,
                                            .hash = id_hash,
                                            .same = id_names};
static kscope__table ids; /* under intern_lock */

/* A copy of name in the current block (a new one when it is full; a long
 * name gets one of its own); caller holds intern_lock. */
static char *pack(const char *name)
{
    size_t n = strlen(name) + 1;
    if (n > BLOCK_SIZE / 16)
        return strdup(name);
    if (!block || block_used + n > BLOCK_SIZE) {
        char *b = malloc(BLOCK_SIZE);
        if (!b)
            return NULL;
        block = b; /* the full one stays: its names are in use */
        block_used = 0;
    }
    char *copy = block + block_used;
    memcpy(copy, name, n);
    block_used += n;
    return copy;
}

/* Append a copy of `name`; caller holds intern_lock. */
static uint32_t add_name(const char *name)
{
    uint32_t id = nnames + 1;
    if ((id >> CHUNK_BITS) >= MAX_CHUNKS)
        return 0;
    const char **c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_relaxed);
    if (!c) {
        c = calloc(CHUNK_SIZE, sizeof *c);
        if (!c)
            return 0;
        atomic_store_explicit(&chunks[id >> CHUNK_BITS], c, memory_order_release);
    }
    char *copy = pack(name);
    if (!copy)
        return 0;
    c[id & (CHUNK_SIZE - 1)] = copy;
    nnames = id;
    return id;
}

uint32_t kscope__intern(const char *name)
{
    if (!name)
        return 0;
    pthread_mutex_lock(&intern_lock);
    uint32_t hash = hash_str(name);
    const uint32_t *known = kscope__table_find(&ids, &ids_kind, hash, name);
    uint32_t id = known ? *known : 0;
    /* A new name: room in the table first, so that once added it is found. */
    if (!known && kscope__table_reserve(&ids, &ids_kind) == 0 && (id = add_name(name)) != 0)
        kscope__table_add(&ids, &ids_kind, hash, &id);
    pthread_mutex_unlock(&intern_lock);
    return id;
}

/* ------------------------------------------------------------ metric names */

#define MAX_METRIC_DEFS 4096

static kscope__metric_def defs[MAX_METRIC_DEFS];
static _Atomic uint32_t ndefs;
static pthread_mutex_t def_lock = PTHREAD_MUTEX_INITIALIZER;

/* Split "name (exc)" into base and kind. Units like "(ns)" stay part of the
 * base; only a trailing (inc)/(exc)/(pty) is a kind suffix. */
static uint32_t parse_metric_name(const char *name, kscope__metric_kind *kind)
{
    static const struct {
        const char *suffix;
        kscope__metric_kind kind;
    } suffixes[] = {
        {"(inc)", KSCOPE__MK_INC}, {"(exc)", KSCOPE__MK_EXC}, {"(pty)", KSCOPE__MK_PTY}};
    size_t len = strlen(name);
    *kind = KSCOPE__MK_INC;
    for (size_t i = 0; i < 3; i++) {
        if (len >= 5 && strcmp(name + len - 5, suffixes[i].suffix) == 0) {
            *kind = suffixes[i].kind;
            size_t blen = len - 5;
            while (blen > 0 && name[blen - 1] == ' ')
                blen--;
            char base[512];
            if (blen == 0 || blen >= sizeof base)
                return 0;
            memcpy(base, name, blen);
            base[blen] = 0;
            return kscope__intern(base);
        }
    }
    return kscope__intern(name);
}

const kscope__metric_def *kscope__metric_lookup(const char *name)
{
    if (!name || !*name) {
        kscope__fail(KSCOPE_EINVAL, "metric name is NULL or empty");
        return NULL;
    }
    uint32_t id = kscope__intern(name);
    if (!id) {
        kscope__fail(KSCOPE_ENOMEM, "out of memory interning metric '%s'", name);
        return NULL;
    }
    uint32_t n = atomic_load_explicit(&ndefs, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (defs[i].id == id)
            return &defs[i];
    pthread_mutex_lock(&def_lock);
    const kscope__metric_def *found = NULL;
    n = atomic_load(&ndefs);
    for (uint32_t i = 0; i < n && !found; i++)
        if (defs[i].id == id)
            found = &defs[i];
    if (!found && n < MAX_METRIC_DEFS) {
        kscope__metric_def *d = &defs[n];
        d->id = id;
        d->base = parse_metric_name(name, &d->kind);
        if (d->base) {
            atomic_store_explicit(&ndefs, n + 1, memory_order_release);
            found = d;
        }
    }
    pthread_mutex_unlock(&def_lock);
    if (!found)
        kscope__fail(KSCOPE_EINVAL, "metric name '%s' is not usable", name);
    return found;
}
