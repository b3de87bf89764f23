/*
 * hatchet-msgpack-read.c - the .hatchet_msgpack reader.
 *
 * msgpack-c's ready-made unpacker stops at 32 levels of nesting, which a
 * real calling-context tree exceeds, so this file instantiates msgpack-c's
 * public unpack template (msgpack/unpack_template.h) with a stack deep
 * enough for KSCOPE__READ_MAX_DEPTH tree levels and callbacks that build
 * msgpack_object values in a msgpack_zone. The objects are then walked with
 * an explicit stack into the ptree.
 */
#include "read/read.h"
#include "kscope.h"

/* Each tree level is two msgpack levels (node map, children array). */
#define MSGPACK_EMBED_STACK_SIZE (2 * KSCOPE__READ_MAX_DEPTH + 16)
#include <msgpack/object.h>
#include <msgpack/unpack.h>
#include <msgpack/unpack_define.h>
#include <msgpack/zone.h>

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mp_user {
    msgpack_zone *zone;
    size_t input_len; /* no container can hold more items than bytes left */
} mp_user;

#define msgpack_unpack_struct(name)    struct kscope__mp##name
#define msgpack_unpack_func(ret, name) static ret kscope__mp##name
#define msgpack_unpack_callback(name)  mp_cb##name
#define msgpack_unpack_object          msgpack_object
#define msgpack_unpack_user            mp_user

static msgpack_object mp_cb_root(mp_user *u)
{
    (void)u;
    msgpack_object o = {.type = MSGPACK_OBJECT_NIL};
    return o;
}

static int mp_uint(msgpack_object *o, uint64_t v)
{
    o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
    o->via.u64 = v;
    return 0;
}

static int mp_int(msgpack_object *o, int64_t v)
{
    if (v >= 0)
        return mp_uint(o, (uint64_t)v);
    o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
    o->via.i64 = v;
    return 0;
}

static int mp_cb_uint8(mp_user *u, uint8_t d, msgpack_object *o)
{
    (void)u;
    return mp_uint(o, d);
}
static int mp_cb_uint16(mp_user *u, uint16_t d, msgpack_object *o)
{
    (void)u;
    return mp_uint(o, d);
}
static int mp_cb_uint32(mp_user *u, uint32_t d, msgpack_object *o)
{
    (void)u;
    return mp_uint(o, d);
}
static int mp_cb_uint64(mp_user *u, uint64_t d, msgpack_object *o)
{
    (void)u;
    return mp_uint(o, d);
}
static int mp_cb_int8(mp_user *u, int8_t d, msgpack_object *o)
{
    (void)u;
    return mp_int(o, d);
}
static int mp_cb_int16(mp_user *u, int16_t d, msgpack_object *o)
{
    (void)u;
    return mp_int(o, d);
}
static int mp_cb_int32(mp_user *u, int32_t d, msgpack_object *o)
{
    (void)u;
    return mp_int(o, d);
}
static int mp_cb_int64(mp_user *u, int64_t d, msgpack_object *o)
{
    (void)u;
    return mp_int(o, d);
}
static int mp_cb_float(mp_user *u, float d, msgpack_object *o)
{
    (void)u;
    o->type = MSGPACK_OBJECT_FLOAT64;
    o->via.f64 = d;
    return 0;
}
static int mp_cb_double(mp_user *u, double d, msgpack_object *o)
{
    (void)u;
    o->type = MSGPACK_OBJECT_FLOAT64;
    o->via.f64 = d;
    return 0;
}
static int mp_cb_nil(mp_user *u, msgpack_object *o)
{
    (void)u;
    o->type = MSGPACK_OBJECT_NIL;
    return 0;
}
static int mp_cb_true(mp_user *u, msgpack_object *o)
{
    (void)u;
    o->type = MSGPACK_OBJECT_BOOLEAN;
    o->via.boolean = true;
    return 0;
}
static int mp_cb_false(mp_user *u, msgpack_object *o)
{
    (void)u;
    o->type = MSGPACK_OBJECT_BOOLEAN;
    o->via.boolean = false;
    return 0;
}

static int mp_cb_array(mp_user *u, unsigned int n, msgpack_object *o)
{
    if (n > u->input_len)
        return MSGPACK_UNPACK_PARSE_ERROR;
    o->type = MSGPACK_OBJECT_ARRAY;
    o->via.array.size = 0;
    o->via.array.ptr = NULL;
    if (n) {
        o->via.array.ptr = msgpack_zone_malloc(u->zone, n * sizeof(msgpack_object));
        if (!o->via.array.ptr)
            return MSGPACK_UNPACK_NOMEM_ERROR;
    }
    return 0;
}

static int mp_cb_array_item(mp_user *u, msgpack_object *c, msgpack_object o)
{
    (void)u;
    c->via.array.ptr[c->via.array.size++] = o;
    return 0;
}

static int mp_cb_map(mp_user *u, unsigned int n, msgpack_object *o)
{
    if (n > u->input_len)
        return MSGPACK_UNPACK_PARSE_ERROR;
    o->type = MSGPACK_OBJECT_MAP;
    o->via.map.size = 0;
    o->via.map.ptr = NULL;
    if (n) {
        o->via.map.ptr = msgpack_zone_malloc(u->zone, n * sizeof(msgpack_object_kv));
        if (!o->via.map.ptr)
            return MSGPACK_UNPACK_NOMEM_ERROR;
    }
    return 0;
}

static int mp_cb_map_item(mp_user *u, msgpack_object *c, msgpack_object k, msgpack_object v)
{
    (void)u;
    c->via.map.ptr[c->via.map.size].key = k;
    c->via.map.ptr[c->via.map.size].val = v;
    c->via.map.size++;
    return 0;
}

/* Strings point into the input buffer, which outlives the objects. */
static int mp_cb_str(mp_user *u, const char *b, const char *p, unsigned int l, msgpack_object *o)
{
    (void)u;
    (void)b;
    o->type = MSGPACK_OBJECT_STR;
    o->via.str.ptr = p;
    o->via.str.size = l;
    return 0;
}

static int mp_cb_bin(mp_user *u, const char *b, const char *p, unsigned int l, msgpack_object *o)
{
    (void)u;
    (void)b;
    o->type = MSGPACK_OBJECT_BIN;
    o->via.bin.ptr = p;
    o->via.bin.size = l;
    return 0;
}

static int mp_cb_ext(mp_user *u, const char *b, const char *p, unsigned int l, msgpack_object *o)
{
    (void)u;
    (void)b;
    if (l < 1)
        return MSGPACK_UNPACK_PARSE_ERROR;
    o->type = MSGPACK_OBJECT_EXT;
    o->via.ext.type = (int8_t)p[0];
    o->via.ext.ptr = p + 1;
    o->via.ext.size = l - 1;
    return 0;
}

#include <msgpack/unpack_template.h>

/* ------------------------------------------------------- object walking */

typedef struct walker {
    kscope__ptree *t;
    char *err;
    size_t errlen;
} walker;

static int wfail(walker *w, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int wfail(walker *w, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
    return code;
}

static int is_key(const msgpack_object *k, const char *s)
{
    size_t l = strlen(s);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == l &&
           memcmp(k->via.str.ptr, s, l) == 0;
}

static const msgpack_object *map_get(const msgpack_object *m, const char *key)
{
    for (uint32_t i = 0; i < m->via.map.size; i++)
        if (is_key(&m->via.map.ptr[i].key, key))
            return &m->via.map.ptr[i].val;
    return NULL;
}

static int has_control(const char *s, size_t l)
{
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 1;
    return 0;
}

static const char *label(const kscope__pnode *n)
{
    return n && n->name && n->name[0] ? n->name : "(unnamed)";
}

static int is_number(const msgpack_object *o)
{
    return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ||
           o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER || o->type == MSGPACK_OBJECT_FLOAT64 ||
           o->type == MSGPACK_OBJECT_FLOAT32;
}

static int set_metric(walker *w, kscope__pnode *n, const char *key, const msgpack_object *v)
{
    int rc = 0;
    switch (v->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        if (v->via.u64 > INT64_MAX)
            return wfail(w, KSCOPE_EPARSE, "number %llu for metric '%s' of '%s' is out of range",
                         (unsigned long long)v->via.u64, key, label(n));
        rc = kscope__pnode_set_int(w->t, n, key, (int64_t)v->via.u64);
        break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        if (kscope__metric_nonnegative(key))
            return wfail(w, KSCOPE_EPARSE, "negative value %lld for metric '%s' of '%s'",
                         (long long)v->via.i64, key, label(n));
        rc = kscope__pnode_set_int(w->t, n, key, v->via.i64);
        break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        if (!isfinite(v->via.f64))
            return wfail(w, KSCOPE_EPARSE, "metric '%s' of '%s' is not a finite number", key,
                         label(n));
        if (v->via.f64 < 0 && kscope__metric_nonnegative(key))
            return wfail(w, KSCOPE_EPARSE, "negative value %g for metric '%s' of '%s'", v->via.f64,
                         key, label(n));
        rc = kscope__pnode_set_double(w->t, n, key, v->via.f64);
        break;
    case MSGPACK_OBJECT_STR: {
        const char *s = kscope__ptree_intern(w->t, v->via.str.ptr, v->via.str.size);
        if (!s)
            return wfail(w, KSCOPE_ENOMEM, "out of memory");
        rc = kscope__pnode_set_string(w->t, n, key, s);
        break;
    }
    case MSGPACK_OBJECT_ARRAY: {
        uint32_t cnt = v->via.array.size;
        int all_int = 1;
        for (uint32_t i = 0; i < cnt; i++) {
            const msgpack_object *e = &v->via.array.ptr[i];
            if (!is_number(e))
                return wfail(w, KSCOPE_EPARSE, "vector metric '%s' of '%s' holds a non-number", key,
                             label(n));
            if (e->type == MSGPACK_OBJECT_FLOAT64 || e->type == MSGPACK_OBJECT_FLOAT32 ||
                (e->type == MSGPACK_OBJECT_POSITIVE_INTEGER && e->via.u64 > INT64_MAX))
                all_int = 0;
        }
        if (all_int) {
            int64_t *iv = kscope__ptree_alloc(w->t, (cnt ? cnt : 1) * sizeof *iv);
            if (!iv)
                return wfail(w, KSCOPE_ENOMEM, "out of memory");
            for (uint32_t i = 0; i < cnt; i++)
                iv[i] = v->via.array.ptr[i].via.i64;
            rc = kscope__pnode_set_vec(w->t, n, key, KSCOPE__V_INTVEC, iv, cnt);
        } else {
            double *dv = kscope__ptree_alloc(w->t, (cnt ? cnt : 1) * sizeof *dv);
            if (!dv)
                return wfail(w, KSCOPE_ENOMEM, "out of memory");
            for (uint32_t i = 0; i < cnt; i++) {
                const msgpack_object *e = &v->via.array.ptr[i];
                dv[i] = e->type == MSGPACK_OBJECT_POSITIVE_INTEGER   ? (double)e->via.u64
                        : e->type == MSGPACK_OBJECT_NEGATIVE_INTEGER ? (double)e->via.i64
                                                                     : e->via.f64;
            }
            rc = kscope__pnode_set_vec(w->t, n, key, KSCOPE__V_DOUBLEVEC, dv, cnt);
        }
        break;
    }
    default:
        return wfail(w, KSCOPE_EPARSE, "metric '%s' of '%s' is not a number, string or vector", key,
                     label(n));
    }
    if (rc < 0)
        return wfail(w, rc, "cannot store metric '%s' of '%s'", key, label(n));
    return 0;
}

/* Name and metrics of one node object (children are handled by the caller). */
static int fill_node(walker *w, kscope__pnode *n, const msgpack_object *o)
{
    if (o->type != MSGPACK_OBJECT_MAP)
        return wfail(w, KSCOPE_EPARSE, "a child of '%s' is not a node map", label(n->parent));
    const msgpack_object *frame = map_get(o, "frame");
    const msgpack_object *name =
        frame && frame->type == MSGPACK_OBJECT_MAP ? map_get(frame, "name") : NULL;
    if (!name || name->type != MSGPACK_OBJECT_STR)
        return wfail(w, KSCOPE_EPARSE, "a node (child of '%s') has no \"frame\" with a \"name\"",
                     label(n->parent));
    if (has_control(name->via.str.ptr, name->via.str.size))
        return wfail(w, KSCOPE_EPARSE, "frame name under '%s' contains a control character",
                     label(n->parent));
    n->name = kscope__ptree_intern(w->t, name->via.str.ptr, name->via.str.size);
    const msgpack_object *type = map_get(frame, "type");
    if (type && type->type == MSGPACK_OBJECT_STR)
        n->type = kscope__ptree_intern(w->t, type->via.str.ptr, type->via.str.size);
    if (!n->name)
        return wfail(w, KSCOPE_ENOMEM, "out of memory");
    const msgpack_object *metrics = map_get(o, "metrics");
    if (metrics && metrics->type != MSGPACK_OBJECT_MAP)
        return wfail(w, KSCOPE_EPARSE, "node '%s': \"metrics\" is not a map", n->name);
    for (uint32_t i = 0; metrics && i < metrics->via.map.size; i++) {
        const msgpack_object_kv *kv = &metrics->via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_STR)
            return wfail(w, KSCOPE_EPARSE, "node '%s': a metric name is not a string", n->name);
        if (has_control(kv->key.via.str.ptr, kv->key.via.str.size))
            return wfail(w, KSCOPE_EPARSE, "a metric name of '%s' contains a control character",
                         n->name);
        const char *key = kscope__ptree_intern(w->t, kv->key.via.str.ptr, kv->key.via.str.size);
        if (!key)
            return wfail(w, KSCOPE_ENOMEM, "out of memory");
        int rc = set_metric(w, n, key, &kv->val);
        if (rc < 0)
            return rc;
    }
    return 0;
}

typedef struct pending {
    const msgpack_object *obj;
    kscope__pnode *node;
} pending;

static int walk_tree(walker *w, const msgpack_object *root_obj)
{
    size_t cap = 256, n = 0;
    pending *stack = malloc(cap * sizeof *stack);
    if (!stack)
        return wfail(w, KSCOPE_ENOMEM, "out of memory");
    const char *empty = kscope__ptree_intern(w->t, "", 0);
    stack[n++] = (pending){root_obj, w->t->root};
    int rc = empty ? 0 : wfail(w, KSCOPE_ENOMEM, "out of memory");
    while (rc == 0 && n) {
        pending cur = stack[--n];
        rc = fill_node(w, cur.node, cur.obj);
        if (rc < 0)
            break;
        const msgpack_object *kids = map_get(cur.obj, "children");
        if (!kids)
            continue;
        if (kids->type != MSGPACK_OBJECT_ARRAY) {
            rc = wfail(w, KSCOPE_EPARSE, "node '%s': \"children\" is not an array", cur.node->name);
            break;
        }
        uint32_t k = kids->via.array.size;
        if (n + k > cap) {
            while (n + k > cap)
                cap *= 2;
            pending *s = realloc(stack, cap * sizeof *s);
            if (!s) {
                rc = wfail(w, KSCOPE_ENOMEM, "out of memory");
                break;
            }
            stack = s;
        }
        /* create children in order, visit them in order (pushed reversed) */
        for (uint32_t i = 0; i < k; i++) {
            kscope__pnode *c = kscope__pnode_add(w->t, cur.node, empty);
            if (!c) {
                rc = wfail(w, KSCOPE_ENOMEM, "out of memory");
                break;
            }
            c->name = NULL;
            stack[n + (k - 1 - i)] = (pending){&kids->via.array.ptr[i], c};
        }
        if (rc == 0)
            n += k;
    }
    free(stack);
    return rc;
}

static int read_devices(walker *w, const msgpack_object *info)
{
    if (info->type != MSGPACK_OBJECT_MAP)
        return wfail(w, KSCOPE_EPARSE, "the device-info element is not a map");
    for (uint32_t i = 0; i < info->via.map.size; i++) {
        const msgpack_object_kv *tkv = &info->via.map.ptr[i];
        if (tkv->key.type != MSGPACK_OBJECT_STR || tkv->val.type != MSGPACK_OBJECT_MAP)
            return wfail(w, KSCOPE_EPARSE, "device info: a device type is not a named map");
        const char *type = kscope__ptree_intern(w->t, tkv->key.via.str.ptr, tkv->key.via.str.size);
        for (uint32_t j = 0; j < tkv->val.via.map.size; j++) {
            const msgpack_object_kv *dkv = &tkv->val.via.map.ptr[j];
            char idbuf[16];
            if (dkv->key.type != MSGPACK_OBJECT_STR || dkv->key.via.str.size == 0 ||
                dkv->key.via.str.size >= sizeof idbuf || dkv->val.type != MSGPACK_OBJECT_MAP)
                return wfail(w, KSCOPE_EPARSE, "device info: a %s device is not an indexed map",
                             type);
            memcpy(idbuf, dkv->key.via.str.ptr, dkv->key.via.str.size);
            idbuf[dkv->key.via.str.size] = '\0';
            char *end;
            unsigned long id = strtoul(idbuf, &end, 10);
            if (*end || idbuf[0] == '-' || id > UINT32_MAX)
                return wfail(w, KSCOPE_EPARSE,
                             "device info: device index \"%s\" of %s is not a "
                             "number",
                             idbuf, type);
            kscope__pdevice *d = kscope__ptree_device(w->t, type, (uint32_t)id);
            if (!d)
                return wfail(w, KSCOPE_ENOMEM, "out of memory");
            const msgpack_object *dev = &dkv->val;
            const msgpack_object *arch = map_get(dev, "arch");
            if (arch && arch->type == MSGPACK_OBJECT_STR)
                d->arch = kscope__ptree_intern(w->t, arch->via.str.ptr, arch->via.str.size);
            else if (arch && arch->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
                char a[24];
                snprintf(a, sizeof a, "%llu", (unsigned long long)arch->via.u64);
                d->arch = kscope__ptree_intern_cstr(w->t, a);
            }
            static const char *const fields[] = {"num_sms", "clock_rate", "memory_clock_rate",
                                                 "bus_width"};
            int64_t *dst[] = {&d->num_sms, &d->clock_rate, &d->memory_clock_rate, &d->bus_width};
            for (int f = 0; f < 4; f++) {
                const msgpack_object *v = map_get(dev, fields[f]);
                if (!v)
                    continue;
                if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER || v->via.u64 > 9000000000000000ull)
                    return wfail(w, KSCOPE_EPARSE,
                                 "device info: %s of %s device %lu is not a non-negative integer",
                                 fields[f], type, id);
                *dst[f] = (int64_t)v->via.u64;
            }
        }
    }
    return 0;
}

static int add_root_inclusive(walker *w)
{
    kscope__pnode *r = w->t->root;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < r->nmetrics; i++) {
        kscope__pmetric *m = &r->metrics[i];
        int zero = (m->type == KSCOPE__V_INT && m->v.i == 0) ||
                   (m->type == KSCOPE__V_DOUBLE && m->v.d == 0.0);
        if (zero) {
            if (kscope__ptree_add_inclusive(w->t, m->key) < 0)
                return wfail(w, KSCOPE_ENOMEM, "out of memory");
        } else {
            r->metrics[kept++] = *m;
        }
    }
    r->nmetrics = kept;
    return 0;
}

int kscope__read_hatchet_msgpack(const char *buf, size_t len, kscope__ptree **out, char *err,
                                 size_t errlen)
{
    *out = NULL;
    walker w = {.err = err, .errlen = errlen};
    struct kscope__mp_context *ctx = malloc(sizeof *ctx);
    msgpack_zone *zone = msgpack_zone_new(64 * 1024);
    int rc = 0;
    if (!ctx || !zone) {
        rc = wfail(&w, KSCOPE_ENOMEM, "out of memory");
        goto done;
    }
    kscope__mp_init(ctx);
    ctx->user.zone = zone;
    ctx->user.input_len = len;
    size_t off = 0;
    int r = kscope__mp_execute(ctx, buf, len, &off);
    if (r == 0) {
        rc = wfail(&w, KSCOPE_EPARSE,
                   "truncated: the MessagePack data ends before the profile "
                   "is complete");
        goto done;
    }
    if (r < 0) {
        if (ctx->top >= MSGPACK_EMBED_STACK_SIZE)
            rc = wfail(&w, KSCOPE_EPARSE, "calling contexts nested deeper than %d levels",
                       KSCOPE__READ_MAX_DEPTH);
        else
            rc = wfail(&w, r == MSGPACK_UNPACK_NOMEM_ERROR ? KSCOPE_ENOMEM : KSCOPE_EPARSE,
                       "not valid MessagePack (at byte %zu)", off);
        goto done;
    }
    if (off != len) {
        rc = wfail(&w, KSCOPE_EPARSE, "data after the end of the profile (byte %zu of %zu)", off,
                   len);
        goto done;
    }
    msgpack_object top = kscope__mp_data(ctx);
    if (top.type != MSGPACK_OBJECT_ARRAY) {
        rc = wfail(&w, KSCOPE_EPARSE, "the file is not a [tree, device info] array");
        goto done;
    }
    if (top.via.array.size == 0) {
        rc = wfail(&w, KSCOPE_EPARSE, "the top-level array is empty (no tree)");
        goto done;
    }
    if (top.via.array.size == 1) {
        rc = wfail(&w, KSCOPE_EPARSE,
                   "missing device-info object (the second element of the "
                   "top-level array)");
        goto done;
    }
    if (top.via.array.size > 2) {
        rc = wfail(&w, KSCOPE_EPARSE, "the top-level array has more than two elements");
        goto done;
    }
    w.t = kscope__ptree_new();
    if (!w.t) {
        rc = wfail(&w, KSCOPE_ENOMEM, "out of memory");
        goto done;
    }
    if (top.via.array.ptr[0].type != MSGPACK_OBJECT_MAP) {
        rc = wfail(&w, KSCOPE_EPARSE, "element 0 of the top-level array is not a node map");
        goto done;
    }
    rc = walk_tree(&w, &top.via.array.ptr[0]);
    if (rc == 0)
        rc = read_devices(&w, &top.via.array.ptr[1]);
    if (rc == 0)
        rc = add_root_inclusive(&w);
done:
    if (zone)
        msgpack_zone_free(zone);
    free(ctx);
    if (rc < 0 && w.t)
        kscope__ptree_free(w.t);
    else if (rc == 0)
        *out = w.t;
    return rc;
}
