/*
 * devscope.c - device-side scopes in the core: the device_scopes option,
 * the records a backend decoded for one kernel launch (children of the
 * kernel's node in a tree; slices on per-SM tracks in a trace), and the
 * records lost.
 *
 * The backend reads a launch's records once the launch finished and hands
 * them over here with the launch's own record, on its buffer thread: the
 * session's lock is taken, never on a launch.
 */
#include "core.h"

#include "../../include/kscope/device.h"

#include <errno.h>
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

/* The options that pick one of two values; the second sets `flag`. */
static const struct {
    const char *key, *off, *on;
    uint32_t flag;
} choices[] = {
    {"clock", "globaltimer", "clock64", KSCOPE_DEVICE_CLOCK64},
    {"granularity", "warp", "cta", KSCOPE_DEVICE_CTA},
    {"full", "keep-first", "keep-newest", KSCOPE_DEVICE_RING},
};

/* One key=value of the option into o. */
static int parse_pair(const char *spec, const char *pair, kscope__devscope_opts *o)
{
    const char *eq = strchr(pair, '=');
    if (!eq)
        return bad(spec, pair, "expected key=value (clock, granularity, sample, buffer, full)");
    size_t klen = (size_t)(eq - pair);
    const char *v = eq + 1;
    uint64_t n;
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
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_find(session);
    int64_t n = s ? __atomic_load_n(&s->dscope_lost, __ATOMIC_RELAXED) : 0;
    pthread_mutex_unlock(&kscope__session_lock);
    return n;
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

static void tree_records(kscope__session *s, kscope__node *at, const kscope__gpu_record *r,
                         const kscope__devscope_rec *recs, size_t n)
{
    uint32_t kname = kscope__gpu_record_name(r);
    kscope__node *k = kscope__node_child_locked(at, kname, KSCOPE__NODE_KERNEL, r->device);
    kscope__node *last = NULL;
    uint32_t last_name = 0;
    for (size_t i = 0; i < n; i++) {
        if (!last || recs[i].name != last_name) {
            last_name = recs[i].name;
            last = k ? kscope__node_child_locked(k, last_name, KSCOPE__NODE_DEVSCOPE, r->device)
                     : NULL;
        }
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
            tree_records(s, at ? at : node, r, recs, n);
        }
        pthread_mutex_unlock(&s->lock);
    }
    free(p);
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
