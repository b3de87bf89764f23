/*
 * pcs-data.c - PC samples to kernels and source lines: the GPU-free half
 * of PC sampling (pcs.h says how the halves meet).
 *
 * Three hash tables (util/table.h):
 *   PCs       (cubin CRC, function index, offset) -> where its samples go:
 *             the function and a frame, "file:line@function" or, without
 *             line information, "function+0xOFFSET"; asked of the cubin
 *             once per PC.
 *   samples   (function, frame, device) -> counts per metric slot, since
 *             the last delivery. Slot 0 is num_samples, 1
 *             num_stalled_samples, the others one stall reason each.
 *   functions readable name -> whether any of its PCs has a line, and the
 *             runs of its kernels: (context, node name, device, sessions)
 *             with their GPU time since the last delivery and in all.
 * A function whose PCs have no line at all (code built without line
 * information, e.g. most libraries' kernels) keeps its samples on the
 * kernel's own node, as Proton does; one with lines gets a frame per line
 * (and per PC where its code has none).
 */
#include "gpu/cupti/pcs.h"
#include "util/table.h"
#include "util/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS     KSCOPE__PCS_METRICS
#define NO_SLOT   0xFF
#define NAME_HINT 256 /* function pointer -> id cache of kernel records */

typedef struct pc_entry {
    uint64_t crc, pc;
    uint32_t findex;
    uint32_t fn;    /* interned readable function; 0: empty slot */
    uint32_t frame; /* interned frame name */
    uint8_t line;   /* the frame is a source line */
} pc_entry;

typedef struct agg {
    uint32_t fn, frame, device; /* fn 0: empty slot */
    uint8_t line, dirty;
    uint64_t *count; /* SLOTS counts */
} agg;

typedef struct run {
    uint64_t ctx;
    uint32_t name, device, sessions;
    uint64_t pending_ns, total_ns;
} run;

typedef struct func {
    uint32_t fn; /* 0: empty slot */
    uint8_t has_lines;
    run *runs;
    size_t nruns, capruns;
} func;

struct kscope__pcs_tab {
    kscope__table pcs;   /* pc_entry */
    kscope__table aggs;  /* agg */
    kscope__table funcs; /* func */
    uint32_t slot_name[SLOTS];
    size_t nslots;
    struct {
        const char *ptr;
        uint32_t id;
    } hint[NAME_HINT];
};

/* ---------------------------------------------------------- stall reasons */

int kscope__pcs_reason_name(const char *cupti, char *buf, size_t size)
{
    static const char not_issued[] = "_not_issued";
    size_t len = strlen(cupti), ni = sizeof not_issued - 1;
    if (len > ni && strcmp(cupti + len - ni, not_issued) == 0)
        return -1;
    const char *words = strstr(cupti, "stalled_");
    if (words) {
        words += 8;
    } else {
        const char *last = strrchr(cupti, '_');
        const char *issue = strstr(cupti, "issue_");
        words = issue ? issue + 6 : last ? last + 1 : cupti;
    }
    snprintf(buf, size, "stalled_%s", words);
    return strcmp(words, "selected") == 0 ? 0 : 1;
}

/* ----------------------------------------------------------------- tables */

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

kscope__pcs_tab *kscope__pcs_tab_new(void)
{
    kscope__pcs_tab *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->slot_name[0] = kscope__intern("num_samples");
    t->slot_name[1] = kscope__intern("num_stalled_samples");
    t->nslots = 2;
    return t;
}

void kscope__pcs_tab_free(kscope__pcs_tab *t)
{
    if (!t)
        return;
    agg *aggs = t->aggs.slots;
    for (size_t i = 0; i < t->aggs.cap; i++)
        free(aggs[i].count);
    func *funcs = t->funcs.slots;
    for (size_t i = 0; i < t->funcs.cap; i++)
        free(funcs[i].runs);
    kscope__table_free(&t->pcs);
    kscope__table_free(&t->aggs);
    kscope__table_free(&t->funcs);
    free(t);
}

static uint64_t pc_hash(const void *e)
{
    const pc_entry *p = e;
    return mix(p->crc ^ mix(p->pc + ((uint64_t)p->findex << 40)));
}

static uint64_t agg_hash(const void *e)
{
    const agg *a = e;
    return mix((uint64_t)a->fn << 32 ^ a->frame ^ (uint64_t)a->device << 20);
}

static uint64_t func_hash(const void *e)
{
    return mix(((const func *)e)->fn);
}

/* Whether an entry is the key's: a PC's, (fn, frame, device)'s. */
static int pc_same(const void *e, const void *key)
{
    const pc_entry *a = e, *b = key;
    return a->crc == b->crc && a->findex == b->findex && a->pc == b->pc;
}

static int agg_same(const void *e, const void *key)
{
    const agg *a = e, *b = key;
    return a->fn == b->fn && a->frame == b->frame && a->device == b->device;
}

/* Each table's entries are used while their fn is not 0 (funcs: keyed by fn). */
#define PCS_TABLE_KIND(type, hash_fn, same_fn)                                                     \
    {                                                                                              \
        .size = sizeof(type), .mark = offsetof(type, fn), .mark_size = sizeof(uint32_t),           \
        .key = offsetof(type, fn), .key_size = sizeof(uint32_t), .first = 256, .hash = hash_fn,    \
        .same = same_fn                                                                            \
    }
static const kscope__table_kind pcs_kind = PCS_TABLE_KIND(pc_entry, pc_hash, pc_same);
static const kscope__table_kind aggs_kind = PCS_TABLE_KIND(agg, agg_hash, agg_same);
static const kscope__table_kind funcs_kind = PCS_TABLE_KIND(func, func_hash, NULL);

/* The function's entry, made when missing (NULL out of memory). */
static func *func_get(kscope__pcs_tab *t, uint32_t fn, int create)
{
    func *f = kscope__table_find(&t->funcs, &funcs_kind, mix(fn), &fn);
    if (f || !create)
        return f;
    return kscope__table_add(&t->funcs, &funcs_kind, mix(fn), &(func){.fn = fn});
}

/* The frame name of a PC: its line, else function and offset. */
static uint32_t frame_of(const char *fn, const char *file, uint32_t line, uint64_t pc)
{
    size_t size = strlen(fn) + (file ? strlen(file) : 0) + 40;
    char *s = malloc(size);
    if (!s)
        return 0;
    if (file)
        snprintf(s, size, "%s:%u@%s", file, line, fn);
    else
        snprintf(s, size, "%s+0x%llx", fn, (unsigned long long)pc);
    uint32_t id = kscope__intern(s);
    free(s);
    return id;
}

/* Where a PC's samples go, resolved on first sight (NULL out of memory). */
static pc_entry *pc_get(kscope__pcs_tab *t, const CUpti_PCSamplingPCData *p,
                        kscope__pcs_where_fn where, void *arg)
{
    pc_entry key = {.crc = p->cubinCrc, .pc = p->pcOffset, .findex = p->functionIndex};
    pc_entry *e = kscope__table_find(&t->pcs, &pcs_kind, pc_hash(&key), &key);
    if (e || kscope__table_reserve(&t->pcs, &pcs_kind) != 0)
        return e; /* known, or no room for it (NULL) */
    const char *raw = p->functionName ? p->functionName : "<unknown>";
    const char *fn = kscope__demangle(raw);
    char file[2048] = "";
    uint32_t line = 0;
    int known = where && where(arg, p->cubinCrc, raw, p->pcOffset, file, sizeof file, &line) &&
                line > 0 && file[0];
    uint32_t fn_id = kscope__intern(fn);
    uint32_t frame = frame_of(fn, known ? file : NULL, line, p->pcOffset);
    func *f = fn_id && frame ? func_get(t, fn_id, 1) : NULL;
    if (!f)
        return NULL;
    f->has_lines |= (uint8_t)known;
    key.fn = fn_id;
    key.frame = frame;
    key.line = (uint8_t)known;
    return kscope__table_add(&t->pcs, &pcs_kind, pc_hash(&key), &key);
}

/* The counts of (fn, frame, device), made when missing (NULL out of memory). */
static agg *agg_get(kscope__pcs_tab *t, const pc_entry *e, uint32_t device)
{
    agg key = {e->fn, e->frame, device, e->line, 0, NULL};
    agg *a = kscope__table_find(&t->aggs, &aggs_kind, agg_hash(&key), &key);
    if (a)
        return a;
    key.count = calloc(SLOTS, sizeof *key.count);
    a = key.count ? kscope__table_add(&t->aggs, &aggs_kind, agg_hash(&key), &key) : NULL;
    if (!a)
        free(key.count);
    return a;
}

/* The slot of metric `name`, registered when new (NO_SLOT when full). */
static uint8_t slot_of(kscope__pcs_tab *t, uint32_t name)
{
    for (size_t i = 0; i < t->nslots; i++)
        if (t->slot_name[i] == name)
            return (uint8_t)i;
    if (t->nslots == SLOTS)
        return NO_SLOT;
    t->slot_name[t->nslots] = name;
    return (uint8_t)t->nslots++;
}

/* ------------------------------------------------------------- recording */

uint64_t kscope__pcs_tab_add(kscope__pcs_tab *t, const CUpti_PCSamplingData *d,
                             const kscope__pcs_reasons *r, uint32_t device,
                             kscope__pcs_where_fn where, void *arg)
{
    uint8_t slot[KSCOPE__PCS_REASONS];
    for (size_t i = 0; i < KSCOPE__PCS_REASONS; i++)
        slot[i] = r->metric[i] ? slot_of(t, r->metric[i]) : NO_SLOT;
    uint64_t kept = 0;
    for (size_t i = 0; d->pPcData && i < d->totalNumPcs; i++) {
        const CUpti_PCSamplingPCData *p = &d->pPcData[i];
        const pc_entry *e = pc_get(t, p, where, arg);
        agg *a = e ? agg_get(t, e, device) : NULL;
        for (size_t k = 0; a && p->stallReason && k < p->stallReasonCount; k++) {
            uint32_t idx = p->stallReason[k].pcSamplingStallReasonIndex;
            uint64_t n = p->stallReason[k].samples;
            uint8_t s = idx < KSCOPE__PCS_REASONS ? slot[idx] : NO_SLOT;
            if (s == NO_SLOT || !n)
                continue; /* a reason not asked for */
            a->count[s] += n;
            a->count[0] += n;
            if (r->stall[idx])
                a->count[1] += n;
            a->dirty = 1;
            kept += n;
        }
    }
    return kept;
}

int kscope__pcs_tab_kernel(kscope__pcs_tab *t, const char *function, const char *node, uint64_t ctx,
                           uint32_t device, uint32_t sessions, uint64_t ns)
{
    /* The demangler hands out one pointer per name: cache its id. */
    size_t h = (size_t)(mix((uintptr_t)function) & (NAME_HINT - 1));
    uint32_t fn = t->hint[h].ptr == function ? t->hint[h].id : 0;
    if (!fn) {
        if (!(fn = kscope__intern(function)))
            return -1;
        t->hint[h].ptr = function;
        t->hint[h].id = fn;
    }
    uint32_t name = node == function ? fn : kscope__intern(node);
    func *f = name ? func_get(t, fn, 1) : NULL;
    if (!f)
        return -1;
    for (size_t i = 0; i < f->nruns; i++) {
        run *u = &f->runs[i];
        if (u->ctx == ctx && u->name == name && u->device == device && u->sessions == sessions) {
            u->pending_ns += ns;
            u->total_ns += ns;
            return 0;
        }
    }
    if (f->nruns == f->capruns && KSCOPE__ROOM(f->runs, f->capruns, f->nruns + 1, 4) != 0)
        return -1;
    f->runs[f->nruns++] = (run){ctx, name, device, sessions, ns, ns};
    return 0;
}

/* ---------------------------------------------------------------- delivery */

/* The part of `count` that falls between cumulative weights lo and hi of
 * w: shares computed so cut, they add up to count exactly. */
static uint64_t share(uint64_t count, uint64_t lo, uint64_t hi, uint64_t w)
{
    unsigned __int128 a = (unsigned __int128)count * lo / w;
    unsigned __int128 b = (unsigned __int128)count * hi / w;
    return (uint64_t)(b - a);
}

/* A run's weight: its time since the last delivery, all its time, or 1. */
static uint64_t weight(const run *u, int basis)
{
    return basis == 0 ? u->pending_ns : basis == 1 ? u->total_ns : 1;
}

static uint64_t deliver_agg(kscope__pcs_tab *t, const agg *a, uint32_t want, uint32_t fallback,
                            kscope__pcs_deliver_fn deliver)
{
    const func *f = func_get(t, a->fn, 0);
    uint32_t frame = a->line || (f && f->has_lines) ? a->frame : 0;
    uint64_t values[SLOTS];
    kscope__pcs_record rec = {0,         a->fn,        a->device, frame, fallback & want,
                              t->nslots, t->slot_name, values};
    uint64_t w[3] = {0, 0, 0};
    size_t runs = 0;
    for (size_t i = 0; f && i < f->nruns; i++) {
        if (f->runs[i].device != a->device)
            continue;
        runs++;
        for (int b = 0; b < 3; b++)
            w[b] += weight(&f->runs[i], b);
    }
    if (!runs) { /* its kernels were never seen: a node of its own name */
        memcpy(values, a->count, t->nslots * sizeof *values);
        deliver(&rec);
        return a->count[0];
    }
    int basis = w[0] ? 0 : w[1] ? 1 : 2;
    uint64_t lo = 0, given = 0;
    for (size_t i = 0; i < f->nruns; i++) {
        const run *u = &f->runs[i];
        if (u->device != a->device)
            continue;
        uint64_t hi = lo + weight(u, basis);
        for (size_t s = 0; s < t->nslots; s++)
            values[s] = share(a->count[s], lo, hi, w[basis]);
        lo = hi;
        rec.ctx = u->ctx;
        rec.kernel = u->name;
        rec.sessions = u->sessions & want;
        if (rec.sessions && values[0]) {
            deliver(&rec);
            given += values[0];
        }
    }
    return given;
}

uint64_t kscope__pcs_tab_deliver(kscope__pcs_tab *t, uint32_t want, uint32_t fallback,
                                 kscope__pcs_deliver_fn deliver)
{
    if (!deliver)
        deliver = kscope__record_pcs;
    uint64_t given = 0;
    for (size_t i = 0; i < t->aggs.cap; i++) {
        agg *a = (agg *)t->aggs.slots + i;
        if (!a->fn || !a->dirty)
            continue;
        given += deliver_agg(t, a, want, fallback, deliver);
        memset(a->count, 0, SLOTS * sizeof *a->count);
        a->dirty = 0;
    }
    func *funcs = t->funcs.slots;
    for (size_t i = 0; i < t->funcs.cap; i++)
        for (size_t k = 0; k < funcs[i].nruns; k++)
            funcs[i].runs[k].pending_ns = 0;
    return given;
}
