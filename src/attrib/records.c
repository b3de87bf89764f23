/*
 * records.c - where GPU records, device info and per-session metric types
 * enter the core. Called from the GPU backend's buffer thread (never from a
 * launch), so taking a session's lock here is fine.
 */
#include "core/core.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 64

static struct {
    int set;
    char arch[16];
    int64_t num_sms, clock_khz, mem_clock_khz, bus_width;
} devices[MAX_DEVICES];
static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;

void kscope__set_device_info(uint32_t device, const char *arch, int64_t num_sms, int64_t clock_khz,
                             int64_t mem_clock_khz, int64_t bus_width_bits)
{
    if (device >= MAX_DEVICES)
        return;
    pthread_mutex_lock(&device_lock);
    devices[device].set = 1;
    snprintf(devices[device].arch, sizeof devices[device].arch, "%s", arch ? arch : "");
    devices[device].num_sms = num_sms;
    devices[device].clock_khz = clock_khz;
    devices[device].mem_clock_khz = mem_clock_khz;
    devices[device].bus_width = bus_width_bits;
    pthread_mutex_unlock(&device_lock);
}

void kscope__devices_to_ptree(kscope__ptree *t)
{
    pthread_mutex_lock(&device_lock);
    for (uint32_t i = 0; i < MAX_DEVICES; i++) {
        if (!devices[i].set)
            continue;
        kscope__pdevice *d = kscope__ptree_device(t, kscope__gpu_device_type(), i);
        if (!d)
            break;
        d->arch = kscope__ptree_intern_cstr(t, devices[i].arch);
        d->num_sms = devices[i].num_sms;
        d->clock_rate = devices[i].clock_khz;
        d->memory_clock_rate = devices[i].mem_clock_khz;
        d->bus_width = devices[i].bus_width;
    }
    pthread_mutex_unlock(&device_lock);
}

void kscope__add_dropped(int64_t n)
{
    for (int s = 0; s < KSCOPE_MAX_SESSIONS; s++)
        if (kscope__sessions[s].in_use)
            __atomic_fetch_add(&kscope__sessions[s].dropped, n, __ATOMIC_RELAXED);
}

int kscope__metric_type_error(const kscope__metric_def *def, int had, int type, int negative)
{
    /* The value types by Proton's (C++) names, which its message uses. */
    static const char *names[] = {"int64_t", "double", "std::vector<int64_t>",
                                  "std::vector<double>", "std::string"};
    const char *now = type == KSCOPE__T_INT && !negative ? "uint64_t" : names[type];
    /* Proton's words (valueId 0: a user metric holds one value). */
    return kscope__fail(KSCOPE_EMETRICTYPE,
                        "Metric value type mismatch for valueId 0 (%s): current=%s, new=%s",
                        kscope__name(def->base), names[had], now);
}

int kscope__session_metric_type(kscope__session *s, const kscope__metric_def *def, int type,
                                int negative)
{
    int strict = s->trace || def->kind == KSCOPE__MK_INC;
    pthread_mutex_lock(&s->lock);
    size_t same = s->nmtypes;
    for (size_t i = 0; i < s->nmtypes; i++) {
        if (s->mtypes[i].base != def->base)
            continue;
        int had = s->mtypes[i].type;
        if (had == type) {
            same = i;
        } else if (strict || s->mtypes[i].strict) {
            pthread_mutex_unlock(&s->lock);
            return kscope__metric_type_error(def, had, type, negative);
        }
    }
    if (same < s->nmtypes) {
        s->mtypes[same].strict |= (uint8_t)strict;
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    if (s->nmtypes == s->capmtypes &&
        KSCOPE__ROOM(s->mtypes, s->capmtypes, s->nmtypes + 1, 16) != 0) {
        pthread_mutex_unlock(&s->lock);
        return kscope__fail(KSCOPE_ENOMEM, "out of memory recording a metric type");
    }
    s->mtypes[s->nmtypes].base = def->base;
    s->mtypes[s->nmtypes].type = (uint8_t)type;
    s->mtypes[s->nmtypes].strict = (uint8_t)strict;
    s->nmtypes++;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int kscope__recording_at(const kscope__session *s, uint64_t ns)
{
    for (size_t i = s->niv; i-- > 0;)
        if (ns >= s->iv[i].start_ns && ns < s->iv[i].end_ns)
            return 1;
    return 0;
}

static void add_custom(kscope__gpustats *g, uint32_t id, double value)
{
    kscope__custom *c = g->custom;
    while (c && c->name != id)
        c = c->next;
    if (!c && (c = calloc(1, sizeof *c)) != NULL) {
        c->name = id;
        c->next = g->custom;
        g->custom = c;
    }
    if (c)
        c->value += value;
}

void kscope__gpustats_add(kscope__gpustats *g, uint32_t name, double value)
{
    static const char *const flops[4] = {"flops8", "flops16", "flops32", "flops64"};
    const char *n = kscope__name(name);
    for (int i = 0; i < 4; i++)
        if (strcmp(n, flops[i]) == 0) {
            g->flops[i] += value;
            return;
        }
    if (strcmp(n, "bytes") == 0)
        g->meta_bytes += value;
    else
        add_custom(g, name, value);
}

static void add_meta(kscope__gpustats *g, const kscope_launch_meta *m)
{
    g->flops[0] += m->flops8;
    g->flops[1] += m->flops16;
    g->flops[2] += m->flops32;
    g->flops[3] += m->flops64;
    g->meta_bytes += m->bytes;
    for (size_t i = 0; i < m->n_custom; i++)
        add_custom(g, kscope__intern(m->custom_names[i]), m->custom_values[i]);
}

/* A record's interned display name. A peer copy's name carries its
 * direction ("Memcpy PtoP 0->1") so that copies each way between the same
 * devices stay apart: tree nodes are keyed by name and device only. */
uint32_t kscope__gpu_record_name(const kscope__gpu_record *r)
{
    const char *name = r->meta && r->meta->name ? r->meta->name : r->name;
    if (!name || !*name)
        name = "<unnamed>";
    if (r->src_device == r->dst_device)
        return kscope__intern(name);
    char buf[256];
    snprintf(buf, sizeof buf, "%s %u->%u", name, r->src_device, r->dst_device);
    return kscope__intern(buf);
}

static void tree_record(kscope__session *s, kscope__node *ctx, const kscope__gpu_record *r)
{
    uint32_t id = kscope__gpu_record_name(r);
    uint32_t kind = r->kind == KSCOPE__GPU_KERNEL ? KSCOPE__NODE_KERNEL : KSCOPE__NODE_COPY;
    kscope__node *n = kscope__node_child_locked(ctx, id, kind, r->device);
    if (!n) {
        s->dropped++;
        return;
    }
    kscope__gpustats *g = kscope__node_gpu_make(n, s->slot);
    if (!g) {
        s->dropped++;
        return;
    }
    kscope__gpustats_time(g, r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0);
    g->bytes += r->bytes;
    g->device = r->device;
    g->src_device = r->src_device;
    g->dst_device = r->dst_device;
    if (r->meta)
        add_meta(g, r->meta);
}

static void trace_record(kscope__session *s, uint64_t ctx, const kscope__gpu_record *r)
{
    kscope__gpu_ev *e = kscope__gpu_ev_add(s);
    if (!e) { /* its budget is full: the disk does not keep up */
        s->dropped++;
        return;
    }
    e->start_ns = r->start_ns;
    e->end_ns = r->end_ns;
    e->launch_ns = r->launch_ns;
    e->launch_end_ns = r->launch_end_ns;
    e->launch_ticks = r->launch_ticks;
    uint64_t lt = r->launch_end_ticks > r->launch_ticks ? r->launch_end_ticks - r->launch_ticks : 0;
    e->launch_ticks_dur = lt > UINT32_MAX ? UINT32_MAX : (uint32_t)lt;
    e->bytes = r->bytes;
    e->ctx = ctx;
    e->name = kscope__gpu_record_name(r);
    e->kind = r->kind;
    e->device = r->device;
    e->src_device = r->src_device;
    e->dst_device = r->dst_device;
    e->stream = r->stream;
    e->launch_tid = r->launch_tid;
    e->correlation = r->correlation;
    e->parent = 0;
}

/* Where session s puts r, launched at `when`: graph work captured while s
 * recorded goes under <captured_at>; captured while s was deactivated, it
 * is left out (as Proton does); captured before s started, s knows no
 * capture context for it and puts it under the launch, as it does the work
 * of a graph built before profiling. Caller holds s->lock. */
enum {
    SKIP = KSCOPE__PLACE_SKIP,
    AT_LAUNCH = KSCOPE__PLACE_LAUNCH,
    CAPTURED = KSCOPE__PLACE_CAPTURED
};

static int placement(const kscope__session *s, uint64_t when, const kscope__gpu_record *r)
{
    if (!kscope__recording_at(s, when))
        return SKIP;
    if (!r->captured || r->capture_ns < s->start_ns)
        return AT_LAUNCH;
    return kscope__recording_at(s, r->capture_ns) ? CAPTURED : SKIP;
}

int kscope__gpu_placement(const kscope__session *s, uint64_t when, const kscope__gpu_record *r)
{
    int where = placement(s, when, r);
    if (where != SKIP && s->sampled && !kscope__sampling_in_window(when))
        where = SKIP;
    return where;
}

uint32_t kscope__record_gpu(uint64_t ctx, const kscope__gpu_record *r)
{
    kscope__node *node = ctx ? (kscope__node *)(uintptr_t)ctx : &kscope__g.root;
    kscope__node *at = NULL; /* <captured_at>/... for graph work, made once */
    uint64_t when = r->launch_ns ? r->launch_ns : r->start_ns;
    uint32_t recorded = 0;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        kscope__session *s = &kscope__sessions[i];
        if (!s->in_use)
            continue;
        pthread_mutex_lock(&s->lock);
        int where = kscope__gpu_placement(s, when, r);
        if (where != SKIP && s->trace) {
            trace_record(s, ctx, r);
        } else if (where != SKIP) {
            if (where == CAPTURED && !at)
                at = kscope__captured_node(node, r->capture_ctx);
            tree_record(s, where == CAPTURED && at ? at : node, r);
        }
        if (where != SKIP)
            recorded |= 1u << i;
        pthread_mutex_unlock(&s->lock);
    }
    return recorded;
}
