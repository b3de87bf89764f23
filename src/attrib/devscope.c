/*
 * devscope.c - device-side scopes in the core: the device_scopes option,
 * the records a backend decoded for one kernel launch (under the kernel's
 * node in a tree, nested as they ran on each warp; slices on per-SM tracks
 * in a trace), and the records lost.
 *
 * The backend reads a launch's records once the launch finished and hands
 * them over here with the launch's own record, on its reader thread: the
 * session's lock is taken, never on a launch.
 *
 * Nesting: a record is written when its scope ends, and a warp's records
 * lie in one SM's share in the order their scopes ended (seq). Walking one
 * warp slot's records in that order, each record is the parent of the
 * records ended before it that have no parent yet and began after it (or
 * at its first tick, lasting past it): the innermost scope ends first.
 * Scopes that only overlap (entered a, entered b, left a, left b) stay
 * siblings. With a coarse timer, a scope that began and ended within the
 * tick its enclosing scope began is taken for a predecessor.
 */
#include "core/core.h"

#include "../../include/kscope/device.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the option */

static int bad(const char *spec, const char *part, const char *why)
{
    return kscope__fail(KSCOPE_EINVAL, "device_scopes '%s': %s%s%s", spec, part ? part : "",
                        part ? ": " : "", why);
}

/* A count with an optional k (x1024) or M (x1048576) suffix in [lo, hi]. */
static int parse_count(const char *v, int suffix, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*v < '0' || *v > '9')
        return -1;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno)
        return -1;
    if (suffix && (*end == 'k' || *end == 'K'))
        n *= 1024ull, end++;
    else if (suffix && *end == 'M')
        n *= 1048576ull, end++;
    if (*end || n < lo || n > hi)
        return -1;
    *out = n;
    return 0;
}

/* The options that pick one of two values; the second sets `flag`. The
 * clock's names are the backend's (kscope__backend.devscope_clocks). */
static struct {
    const char *key, *off, *on;
    uint32_t flag;
} choices[] = {
    {"clock", "timer", "cycles", KSCOPE_DEVICE_CLOCK64},
    {"granularity", "warp", "cta", KSCOPE_DEVICE_CTA},
    {"full", "keep-first", "keep-newest", KSCOPE_DEVICE_RING},
};
static pthread_once_t clocks_once = PTHREAD_ONCE_INIT;

/* The clock names of the registry's first backend that has device scopes. */
static void clock_names(void)
{
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        if (b->devscope_clocks) {
            choices[0].off = b->devscope_clocks[0];
            choices[0].on = b->devscope_clocks[1];
            return;
        }
}

/* One key=value of the option into o. */
static int parse_pair(const char *spec, const char *pair, kscope__devscope_opts *o)
{
    const char *eq = strchr(pair, '=');
    if (!eq)
        return bad(spec, pair, "expected key=value (clock, granularity, sample, buffer, full)");
    size_t klen = (size_t)(eq - pair);
    const char *v = eq + 1;
    uint64_t n;
    pthread_once(&clocks_once, clock_names);
#define KEY(k) (klen == strlen(k) && strncmp(pair, k, klen) == 0)
    for (size_t i = 0; i < sizeof choices / sizeof *choices; i++) {
        if (!KEY(choices[i].key))
            continue;
        if (strcmp(v, choices[i].off) == 0)
            o->flags &= ~choices[i].flag;
        else if (strcmp(v, choices[i].on) == 0)
            o->flags |= choices[i].flag;
        else {
            char why[96];
            snprintf(why, sizeof why, "%s is %s or %s", choices[i].key, choices[i].off,
                     choices[i].on);
            return bad(spec, pair, why);
        }
        return 0;
    }
    if (KEY("sample")) {
        if (parse_count(v, 0, 1, 1u << 20, &n) != 0)
            return bad(spec, pair, "sample is a whole number of warps or CTAs from 1 to 1048576");
        o->every = (uint32_t)n;
    } else if (KEY("buffer")) {
        if (parse_count(v, 1, 1024, 1u << 28, &n) != 0)
            return bad(spec, pair, "buffer is a number of records from 1k to 256M (suffix k or M)");
        uint64_t p = 1;
        while (p < n)
            p <<= 1;
        o->records = p;
    } else {
        return bad(spec, pair, "unknown option (clock, granularity, sample, buffer, full)");
    }
#undef KEY
    return 0;
}

int kscope__devscope_parse(const char *spec, kscope__devscope_opts *o)
{
    *o = (kscope__devscope_opts){0, 1, KSCOPE__DEVSCOPE_RECORDS};
    if (!spec || !*spec || strcmp(spec, "on") == 0 || strcmp(spec, "1") == 0)
        return 0;
    char buf[512];
    if (strlen(spec) >= sizeof buf)
        return bad(spec, NULL, "longer than 511 characters");
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (parse_pair(spec, p, o) != 0)
            return KSCOPE_EINVAL;
    return 0;
}

/* ------------------------------------------------------------- recording */

int kscope__devscope_wanted(void)
{
    for (int s = 0; s < KSCOPE_MAX_SESSIONS; s++)
        if (kscope__sessions[s].in_use && kscope__sessions[s].dscope)
            return 1;
    return 0;
}

void kscope__add_devscope_lost(int64_t n)
{
    for (int s = 0; s < KSCOPE_MAX_SESSIONS; s++)
        if (kscope__sessions[s].in_use && kscope__sessions[s].dscope)
            __atomic_fetch_add(&kscope__sessions[s].dscope_lost, n, __ATOMIC_RELAXED);
}

int64_t kscope_device_scopes_lost(int session)
{
    KSCOPE__DEFER_VALUE(device_scopes_lost, session);
    return kscope__session_count(session, offsetof(kscope__session, dscope_lost));
}

/* Add one duration to a scope node's counters (made when missing). */
static int tree_add(kscope__session *s, kscope__node *n, uint64_t dur, uint32_t device)
{
    kscope__gpustats *g = kscope__node_gpu_make(n, s->slot);
    if (!g)
        return -1;
    g->device = g->src_device = g->dst_device = device;
    kscope__gpustats_time(g, dur);
    return 0;
}

#define NESTING_SLOTS (1u << 20) /* (SM, warp) pairs sorted over at most */

/* A launch's records arranged by warp slot: order[] lists them by (SM,
 * warp), each warp's in the order its scopes ended; parent[i] is the
 * record whose scope holds record i's (-1: the kernel). */
typedef struct nesting {
    uint32_t *order;
    int32_t *parent;
    size_t *bucket; /* counting sort: first index of each (SM, warp) */
    kscope__node **node;
} nesting;

static int seq_before(const kscope__devscope_rec *a, const kscope__devscope_rec *b)
{
    return (int32_t)(a->seq - b->seq) < 0;
}

/* Sort order[from, to) (one warp slot) by seq: nearly in order already. */
static void sort_warp(const kscope__devscope_rec *recs, uint32_t *order, size_t from, size_t to)
{
    for (size_t i = from + 1; i < to; i++) {
        uint32_t x = order[i];
        size_t j = i;
        while (j > from && seq_before(&recs[x], &recs[order[j - 1]])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
}

/* Whether p, which ended before r, ran inside r: it began after r did,
 * or at the same tick and lasted past it (a scope that began and ended
 * at the tick r began is taken to be r's predecessor). */
static int inside(const kscope__devscope_rec *p, const kscope__devscope_rec *r)
{
    return p->start > r->start || (p->start == r->start && p->dur > 0);
}

/* Parents of one warp slot's records order[from, to), in end order. */
static void link_warp(const kscope__devscope_rec *recs, const uint32_t *order, int32_t *parent,
                      uint32_t *stack, size_t from, size_t to)
{
    size_t top = 0;
    for (size_t j = from; j < to; j++) {
        uint32_t r = order[j];
        parent[r] = -1;
        while (top && inside(&recs[stack[top - 1]], &recs[r]))
            parent[stack[--top]] = (int32_t)r;
        stack[top++] = r;
    }
}

static void nesting_free(nesting *x)
{
    free(x->order);
    free(x->parent);
    free(x->bucket);
    free(x->node);
}

/* Arrange recs by warp slot (a counting sort over the slots seen) and link
 * each record to its parent. -1 out of memory. */
static int nesting_make(nesting *x, const kscope__devscope_rec *recs, size_t n)
{
    uint32_t max_sm = 0, max_warp = 0;
    for (size_t i = 0; i < n; i++) {
        max_sm = recs[i].sm > max_sm ? recs[i].sm : max_sm;
        max_warp = recs[i].warp > max_warp ? recs[i].warp : max_warp;
    }
    size_t warps = (size_t)max_warp + 1, slots = ((size_t)max_sm + 1) * warps;
    memset(x, 0, sizeof *x);
    int flat = slots > NESTING_SLOTS; /* ids no GPU has: not nested */
    if (flat)
        slots = 1;
    x->order = malloc(n * sizeof *x->order);
    x->parent = malloc(n * sizeof *x->parent);
    x->bucket = calloc(slots + 1, sizeof *x->bucket);
    x->node = malloc(n * sizeof *x->node);
    uint32_t *stack = malloc(n * sizeof *stack);
    if (!x->order || !x->parent || !x->bucket || !x->node || !stack) {
        free(stack);
        nesting_free(x);
        return -1;
    }
#define SLOT_OF(i) (flat ? 0 : recs[i].sm * warps + recs[i].warp)
    for (size_t i = 0; i < n; i++)
        x->bucket[SLOT_OF(i) + 1]++;
    for (size_t k = 0; k < slots; k++)
        x->bucket[k + 1] += x->bucket[k];
    for (size_t i = 0; i < n; i++) /* stable: arrival order within a slot */
        x->order[x->bucket[SLOT_OF(i)]++] = (uint32_t)i;
#undef SLOT_OF
    for (size_t k = slots; k > 0; k--) /* back to each slot's first index */
        x->bucket[k] = x->bucket[k - 1];
    x->bucket[0] = 0;
    for (size_t i = 0; flat && i < n; i++)
        x->parent[i] = -1;
    for (size_t k = 0; !flat && k < slots; k++) {
        if (x->bucket[k + 1] == x->bucket[k])
            continue;
        sort_warp(recs, x->order, x->bucket[k], x->bucket[k + 1]);
        link_warp(recs, x->order, x->parent, stack, x->bucket[k], x->bucket[k + 1]);
    }
    free(stack);
    return 0;
}

static void tree_records(kscope__session *s, kscope__node *at, const kscope__gpu_record *r,
                         const kscope__devscope_rec *recs, size_t n, nesting *x)
{
    uint32_t kname = kscope__gpu_record_name(r);
    kscope__node *k = kscope__node_child_locked(at, kname, KSCOPE__NODE_KERNEL, r->device);
    kscope__node *last = NULL, *last_parent = NULL;
    uint32_t last_name = 0;
    for (size_t j = n; j-- > 0;) { /* parents end after their children */
        uint32_t i = x->order[j];
        kscope__node *p = x->parent[i] < 0 ? k : x->node[x->parent[i]];
        if (!last || p != last_parent || recs[i].name != last_name) {
            last_parent = p;
            last_name = recs[i].name;
            last = p ? kscope__node_child_locked(p, last_name, KSCOPE__NODE_DEVSCOPE, r->device)
                     : NULL;
        }
        x->node[i] = last;
        if (!last || tree_add(s, last, recs[i].dur, r->device) != 0)
            s->dscope_lost++;
    }
}

/* Where the slices of one launch go on the kscope clock: the records'
 * earliest start (per SM for cycles, whose counters differ between SMs)
 * is placed so that their span sits centred in the kernel's. */
typedef struct placing {
    int cycles;
    double scale; /* ns per unit */
    uint64_t k0, k1;
    uint64_t lo[1024], hi[1024]; /* per SM (cycles) or [0] */
} placing;

static void place_init(placing *p, const kscope__gpu_record *r, const kscope__devscope_rec *recs,
                       size_t n, int cycles, double ns_per_cycle)
{
    p->cycles = cycles;
    p->scale = cycles ? (ns_per_cycle > 0 ? ns_per_cycle : 1.0) : 1.0;
    p->k0 = r->start_ns;
    p->k1 = r->end_ns > r->start_ns ? r->end_ns : r->start_ns;
    memset(p->lo, 0xff, sizeof p->lo);
    memset(p->hi, 0, sizeof p->hi);
    for (size_t i = 0; i < n; i++) {
        size_t k = cycles ? recs[i].sm % 1024u : 0;
        if (recs[i].start < p->lo[k])
            p->lo[k] = recs[i].start;
        if (recs[i].start + recs[i].dur > p->hi[k])
            p->hi[k] = recs[i].start + recs[i].dur;
    }
}

static uint64_t place(const placing *p, const kscope__devscope_rec *r, uint64_t *dur_ns)
{
    size_t k = p->cycles ? r->sm % 1024u : 0;
    double span = (double)(p->hi[k] - p->lo[k]) * p->scale;
    double room = (double)(p->k1 - p->k0) - span;
    double t = (double)p->k0 + (room > 0 ? room / 2 : 0) + (double)(r->start - p->lo[k]) * p->scale;
    *dur_ns = (uint64_t)((double)r->dur * p->scale + 0.5);
    return (uint64_t)t;
}

static void trace_records(kscope__session *s, uint64_t ctx, const kscope__gpu_record *r,
                          const placing *p, const kscope__devscope_rec *recs, size_t n)
{
    uint32_t kname = kscope__gpu_record_name(r);
    for (size_t i = 0; i < n; i++) {
        kscope__gpu_ev *g = kscope__gpu_ev_add(s);
        if (!g) {
            s->dscope_lost += (int64_t)(n - i);
            return;
        }
        uint64_t dur;
        uint64_t t = place(p, &recs[i], &dur);
        *g = (kscope__gpu_ev){
            .start_ns = t,
            .end_ns = t + dur,
            .ctx = ctx,
            .name = recs[i].name,
            .parent = kname,
            .kind = KSCOPE__GPU_DEVSCOPE,
            .device = r->device,
            .stream = KSCOPE__DEVSCOPE_TRACK(recs[i].sm, recs[i].warp),
            .src_device = r->device,
            .dst_device = r->device,
            .correlation = r->correlation,
        };
    }
}

void kscope__record_devscopes(uint64_t ctx, const kscope__gpu_record *r,
                              const kscope__devscope_rec *recs, size_t n, int cycles,
                              double ns_per_cycle)
{
    if (!n)
        return;
    kscope__node *node = ctx ? (kscope__node *)(uintptr_t)ctx : &kscope__g.root;
    placing *p = NULL;
    nesting x = {0};
    int nested = 0; /* 1 made, -1 out of memory */
    uint64_t when = r->launch_ns ? r->launch_ns : r->start_ns;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        kscope__session *s = &kscope__sessions[i];
        if (!s->in_use || !s->dscope)
            continue;
        pthread_mutex_lock(&s->lock);
        int where = kscope__gpu_placement(s, when, r);
        if (where == KSCOPE__PLACE_SKIP) {
            pthread_mutex_unlock(&s->lock);
            continue;
        }
        if (s->trace) {
            if (!p && (p = malloc(sizeof *p)) != NULL)
                place_init(p, r, recs, n, cycles, ns_per_cycle);
            if (p)
                trace_records(s, ctx, r, p, recs, n);
            else
                s->dscope_lost += (int64_t)n;
        } else {
            kscope__node *at = where == KSCOPE__PLACE_CAPTURED
                                   ? kscope__captured_node(node, r->capture_ctx)
                                   : node;
            if (!nested)
                nested = nesting_make(&x, recs, n) == 0 ? 1 : -1;
            if (nested > 0)
                tree_records(s, at ? at : node, r, recs, n, &x);
            else
                s->dscope_lost += (int64_t)n;
        }
        pthread_mutex_unlock(&s->lock);
    }
    free(p);
    if (nested > 0)
        nesting_free(&x);
}

/* ----------------------------------------------------------------- output */

int kscope__devscope_metrics(kscope__ptree *t, kscope__pnode *pn, const kscope__gpustats *g,
                             int cycles)
{
    const char *sum = cycles ? "device_cycles" : "device_time (ns)";
    const char *mn = cycles ? "device_min_cycles" : "device_min_time (ns)";
    const char *avg = cycles ? "device_avg_cycles" : "device_avg_time (ns)";
    const char *mx = cycles ? "device_max_cycles" : "device_max_time (ns)";
    int rc = kscope__ptree_add_inclusive(t, sum);
    rc = rc ? rc : kscope__ptree_add_inclusive(t, "device_count");
    rc = rc ? rc : kscope__pnode_add_int(t, pn, sum, (int64_t)g->time_ns);
    rc = rc ? rc : kscope__pnode_add_int(t, pn, "device_count", (int64_t)g->count);
    /* min, avg and max of one node: merged nodes (threads) combine them */
    kscope__pmetric *c = kscope__pnode_metric(pn, kscope__ptree_intern_cstr(t, "device_count"));
    kscope__pmetric *s = kscope__pnode_metric(pn, kscope__ptree_intern_cstr(t, sum));
    kscope__pmetric *lo = kscope__pnode_metric(pn, kscope__ptree_intern_cstr(t, mn));
    kscope__pmetric *hi = kscope__pnode_metric(pn, kscope__ptree_intern_cstr(t, mx));
    int64_t l = lo && lo->v.i < (int64_t)g->min_ns ? lo->v.i : (int64_t)g->min_ns;
    int64_t h = hi && hi->v.i > (int64_t)g->max_ns ? hi->v.i : (int64_t)g->max_ns;
    rc = rc ? rc : kscope__pnode_set_int(t, pn, mn, l);
    rc = rc ? rc : kscope__pnode_set_int(t, pn, mx, h);
    if (rc == 0 && c && s && c->v.i > 0)
        rc = kscope__pnode_set_double(t, pn, avg, (double)s->v.i / (double)c->v.i);
    char dev[16];
    snprintf(dev, sizeof dev, "%u", g->device);
    rc = rc ? rc : kscope__pnode_set_string(t, pn, "device_id", dev);
    return rc ? rc : kscope__pnode_set_string(t, pn, "device_type", kscope__gpu_device_type());
}
