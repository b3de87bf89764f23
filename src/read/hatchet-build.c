/*
 * hatchet-build.c - the .hatchet tree builder: the events of a streaming
 * parser (maps, keys, arrays, scalars) in, the ptree out.
 *
 * The file is `[ROOT node, device-info object]`; a node is
 * {"frame": {"name", "type"}, "metrics": {...}, "children": [...]} with its
 * keys in any order (Proton writes "children" before "frame"), so a node is
 * created when its object opens and named when its frame is seen. Nothing
 * here recurses: the nesting is an explicit stack, capped at
 * KSCOPE__READ_MAX_DEPTH tree levels. Both .hatchet encodings drive it:
 * JSON through yajl (hatchet-json-read.c) and MessagePack
 * (hatchet-msgpack-read.c), so they share every check and message.
 */
#include "read/hatchet-build.h"
#include "format/hatchet-root.h"
#include "util/util.h"
#include "kscope.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record the first error; the feeding parser then stops. 0, for yajl. */
#define fail(p, code, ...) KSCOPE__YAJL_STOP(&(p)->in, (code), __VA_ARGS__)

static hlevel *top(kscope__hjson *p)
{
    return p->depth ? &p->stack[p->depth - 1] : NULL;
}

static int push(kscope__hjson *p, hstate st)
{
    if (p->depth == p->cap && KSCOPE__ROOM(p->stack, p->cap, p->depth + 1, 64) != 0)
        return fail(p, KSCOPE_ENOMEM, "out of memory");
    p->stack[p->depth++] = (hlevel){.st = st};
    return 1;
}

/* A level that belongs to node n: its frame, metrics, children... */
static int push_node(kscope__hjson *p, hstate st, kscope__pnode *n)
{
    if (!push(p, st))
        return 0;
    top(p)->node = n;
    return 1;
}

int kscope__metric_nonnegative(const char *key)
{
    static const char *const prefixes[] = {"time",      "count",    "calls",    "bytes",   "flops",
                                           "wall_time", "cpu_time", "min_time", "max_time"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t l = strlen(prefixes[i]);
        if (strncmp(key, prefixes[i], l) == 0 &&
            (key[l] == '\0' || key[l] == ' ' || (key[l] >= '0' && key[l] <= '9')))
            return 1;
    }
    return 0;
}

/* A NUL in a name would cut it short in every C string that holds it.
 * Other control characters are kept (JSON writes them escaped); the
 * printers show them escaped. */
static int has_nul(const char *s, size_t len)
{
    return memchr(s, 0, len) != NULL;
}

static const char *node_label(const kscope__pnode *n)
{
    return n && n->name && n->name[0] ? n->name : "(unnamed)";
}

/* The interned metric key for s[0..l), from the list of keys seen. */
static const char *metric_key(kscope__hjson *p, const char *s, size_t l)
{
    for (int i = 0; i < p->nkeys; i++)
        if (p->keylen[i] == l && memcmp(p->keys[i], s, l) == 0)
            return p->keys[i];
    const char *k = kscope__ptree_intern(p->t, s, l);
    if (k && p->nkeys < 32) {
        p->keys[p->nkeys] = k;
        p->keylen[p->nkeys++] = l;
    }
    return k;
}

/* ---------------------------------------------------------- node values */

static int open_node(kscope__hjson *p, kscope__pnode *parent)
{
    if (p->tree_depth >= KSCOPE__READ_MAX_DEPTH)
        return fail(p, KSCOPE_EPARSE, "calling contexts nested deeper than %d levels",
                    KSCOPE__READ_MAX_DEPTH);
    kscope__pnode *n = parent ? kscope__pnode_add(p->t, parent, p->empty) : p->t->root;
    if (!n)
        return fail(p, KSCOPE_ENOMEM, "out of memory");
    n->name = NULL; /* named by its frame; ROOT too */
    if (!push_node(p, ST_NODE, n))
        return 0;
    p->tree_depth++;
    return 1;
}

static int close_node(kscope__hjson *p, kscope__pnode *n)
{
    if (!n->name)
        return fail(p, KSCOPE_EPARSE, "a node (child of '%s') has no \"frame\" with a \"name\"",
                    node_label(n->parent));
    p->tree_depth--;
    return 1;
}

/* A scalar metric value for the pending key on node n. */
static int metric_number(kscope__hjson *p, kscope__pnode *n, const char *s, size_t l)
{
    char buf[64];
    if (l >= sizeof buf)
        return fail(p, KSCOPE_EPARSE, "number '%.20s...' for metric '%s' of '%s' is too long", s,
                    p->mkey, node_label(n));
    memcpy(buf, s, l);
    buf[l] = '\0';
    int is_int = strpbrk(buf, ".eE") == NULL;
    errno = 0;
    int rc;
    double d;
    if (is_int && l <= 18 && buf[0] != '-') {
        /* the common case, without strtoll's generality */
        int64_t v = 0;
        for (size_t i = 0; i < l; i++)
            v = v * 10 + (buf[i] - '0');
        rc = kscope__pnode_put_number(p->t, n, p->mkey, KSCOPE__V_INT, v, 0);
        if (rc < 0)
            return fail(p, rc, "cannot store metric '%s': %s", p->mkey, kscope_strerror(rc));
        return 1;
    }
    long long v = 0;
    if (is_int) {
        v = strtoll(buf, NULL, 10);
        is_int = errno != ERANGE; /* past int64 (a uint64): read as floating point */
    }
    if (is_int) {
        d = (double)v;
        if (d < 0 && kscope__metric_nonnegative(p->mkey))
            goto negative;
        rc = kscope__pnode_put_number(p->t, n, p->mkey, KSCOPE__V_INT, (int64_t)v, 0);
    } else {
        errno = 0;
        d = strtod(buf, NULL);
        if (errno == ERANGE && fabs(d) > 1.0)
            return fail(p, KSCOPE_EPARSE, "number %s for metric '%s' of '%s' is out of range", buf,
                        p->mkey, node_label(n));
        if (d < 0 && kscope__metric_nonnegative(p->mkey))
            goto negative;
        rc = kscope__pnode_put_number(p->t, n, p->mkey, KSCOPE__V_DOUBLE, 0, d);
    }
    if (rc < 0)
        return fail(p, rc, "cannot store metric '%s': %s", p->mkey, kscope_strerror(rc));
    return 1;
negative:
    return fail(p, KSCOPE_EPARSE, "negative value %s for metric '%s' of '%s'", buf, p->mkey,
                node_label(n));
}

static int vec_push(kscope__hjson *p, const char *s, size_t l)
{
    char buf[64];
    if (l >= sizeof buf)
        return fail(p, KSCOPE_EPARSE, "number in vector metric '%s' is too long", p->mkey);
    memcpy(buf, s, l);
    buf[l] = '\0';
    errno = 0;
    double d = strtod(buf, NULL);
    if (errno == ERANGE && fabs(d) > 1.0)
        return fail(p, KSCOPE_EPARSE, "number %s in vector metric '%s' is out of range", buf,
                    p->mkey);
    /* an integer past int64 is kept as the floating-point number it parsed to */
    if (strpbrk(buf, ".eE") || fabs(d) >= 9.2e18)
        p->vec_all_int = 0;
    if (p->nvec == p->capvec && KSCOPE__ROOM(p->vec, p->capvec, p->nvec + 1, 16) != 0)
        return fail(p, KSCOPE_ENOMEM, "out of memory");
    p->vec[p->nvec++] = d;
    return 1;
}

static int vec_store(kscope__hjson *p, kscope__pnode *n)
{
    int rc;
    if (p->vec_all_int) {
        int64_t *iv = kscope__ptree_alloc(p->t, (p->nvec ? p->nvec : 1) * sizeof *iv);
        if (!iv)
            return fail(p, KSCOPE_ENOMEM, "out of memory");
        for (size_t i = 0; i < p->nvec; i++)
            iv[i] = (int64_t)p->vec[i];
        rc = kscope__pnode_set_vec(p->t, n, p->mkey, KSCOPE__V_INTVEC, iv, (uint32_t)p->nvec);
    } else {
        rc =
            kscope__pnode_set_vec(p->t, n, p->mkey, KSCOPE__V_DOUBLEVEC, p->vec, (uint32_t)p->nvec);
    }
    if (rc < 0)
        return fail(p, rc, "cannot store metric '%s': %s", p->mkey, kscope_strerror(rc));
    return 1;
}

/* ---------------------------------------------------------- device info */

static int device_field(kscope__hjson *p, kscope__pdevice *d, const char *s, size_t l, int is_str)
{
    const char *f = p->devfield;
    size_t fl = p->devfield_len;
    if (fl == 4 && memcmp(f, "arch", 4) == 0) {
        d->arch = kscope__ptree_intern(p->t, s, l);
        return d->arch ? 1 : fail(p, KSCOPE_ENOMEM, "out of memory");
    }
    int64_t *dst = NULL;
    if (fl == 7 && memcmp(f, "num_sms", 7) == 0)
        dst = &d->num_sms;
    else if (fl == 10 && memcmp(f, "clock_rate", 10) == 0)
        dst = &d->clock_rate;
    else if (fl == 17 && memcmp(f, "memory_clock_rate", 17) == 0)
        dst = &d->memory_clock_rate;
    else if (fl == 9 && memcmp(f, "bus_width", 9) == 0)
        dst = &d->bus_width;
    if (!dst)
        return 1; /* other device fields are not used */
    char buf[32];
    if (is_str || l >= sizeof buf)
        return fail(p, KSCOPE_EPARSE, "device info: %.*s of %s device %u is not a number", (int)fl,
                    f, d->type, d->id);
    memcpy(buf, s, l);
    buf[l] = '\0';
    errno = 0;
    char *end;
    double v = strtod(buf, &end);
    if (errno == ERANGE || v < 0 || v > 9.0e15)
        return fail(p, KSCOPE_EPARSE, "device info: %.*s of %s device %u is out of range (%s)",
                    (int)fl, f, d->type, d->id, buf);
    *dst = (int64_t)v;
    return 1;
}

/* ----------------------------------------------- ROOT's "kscope" object */

static int is_key(const char *s, size_t l, const char *key)
{
    return strlen(key) == l && memcmp(s, key, l) == 0;
}

/* "inclusive" or "metrics" under ROOT's "kscope" holds the wrong kind of value. */
static int aside_shape(kscope__hjson *p, hkey key)
{
    return fail(p, KSCOPE_EPARSE, "ROOT: \"%s\" in \"%s\" is not %s",
                key == K_INCLUSIVE ? KSCOPE__HROOT_INCLUSIVE : KSCOPE__HROOT_METRICS,
                KSCOPE__HROOT_KEY, key == K_INCLUSIVE ? "an array of names" : "an object");
}

/* One name of ROOT's list of inclusive metrics (s NULL: not a string). */
static int listed_inclusive(kscope__hjson *p, const char *s, size_t l, int is_str)
{
    if (!s || !is_str)
        return aside_shape(p, K_INCLUSIVE);
    if (has_nul(s, l))
        return fail(p, KSCOPE_EPARSE, "ROOT: an inclusive metric name contains a NUL character");
    const char *k = kscope__ptree_intern(p->t, s, l);
    if (!k || kscope__ptree_add_inclusive(p->t, k) < 0)
        return fail(p, KSCOPE_ENOMEM, "out of memory");
    return 1;
}

/* -------------------------------------------------------------- events */

/* The level a value starts in; none when the value is the document,
 * which must be the [tree, device info] array: NULL then, refused with
 * why. */
static hlevel *level_of_value(kscope__hjson *p, const char *why)
{
    hlevel *lv = top(p);
    if (!lv)
        fail(p, KSCOPE_EPARSE, "%s", why);
    return lv;
}

static int scalar(kscope__hjson *p, const char *s, size_t l, int is_str, int is_num)
{
    hlevel *lv = level_of_value(p, "the file is a single value, not a [tree, device info] array");
    if (!lv)
        return 0;
    switch (lv->st) {
    case ST_TOP:
        return fail(p, KSCOPE_EPARSE, "element %zu of the top-level array is not an object",
                    p->top_index++);
    case ST_NODE:
        if (lv->key == K_FRAME || lv->key == K_METRICS || lv->key == K_CHILDREN ||
            lv->key == K_ASIDE)
            return fail(p, KSCOPE_EPARSE, "node '%s': \"%s\" is not %s", node_label(lv->node),
                        lv->key == K_FRAME     ? "frame"
                        : lv->key == K_METRICS ? "metrics"
                        : lv->key == K_ASIDE   ? KSCOPE__HROOT_KEY
                                               : "children",
                        lv->key == K_CHILDREN ? "an array" : "an object");
        return 1;
    case ST_ASIDE:
        if (lv->key == K_INCLUSIVE || lv->key == K_METRICS)
            return aside_shape(p, lv->key);
        return 1;
    case ST_INCLIST:
        return listed_inclusive(p, s, l, is_str);
    case ST_FRAME:
        if (lv->key == K_NAME || lv->key == K_TYPE) {
            if (!is_str)
                return fail(p, KSCOPE_EPARSE, "a frame %s under '%s' is not a string",
                            lv->key == K_NAME ? "name" : "type", node_label(lv->node->parent));
            if (has_nul(s, l))
                return fail(p, KSCOPE_EPARSE, "frame name under '%s' contains a NUL character",
                            node_label(lv->node->parent));
            const char *v = kscope__ptree_intern(p->t, s, l);
            if (v && lv->key == K_NAME)
                v = kscope__demangled(&p->names, p->t, v);
            if (!v)
                return fail(p, KSCOPE_ENOMEM, "out of memory");
            if (lv->key == K_NAME)
                lv->node->name = v;
            else if (kscope__pnode_set_type(p->t, lv->node, v) != 0)
                return fail(p, KSCOPE_ENOMEM, "out of memory");
        }
        return 1;
    case ST_METRICS:
        if (is_num)
            return metric_number(p, lv->node, s, l);
        if (is_str && kscope__metric_nonnegative(p->mkey))
            return fail(p, KSCOPE_EPARSE,
                        "metric '%s' of '%s' is a string (\"%.*s\"), not a number", p->mkey,
                        node_label(lv->node), (int)(l > 40 ? 40 : l), s);
        if (is_str) {
            char *v = malloc(l + 1);
            if (!v)
                return fail(p, KSCOPE_ENOMEM, "out of memory");
            memcpy(v, s, l);
            v[l] = '\0';
            int rc = strlen(v) == l ? kscope__pnode_set_string(p->t, lv->node, p->mkey, v)
                                    : KSCOPE_EPARSE;
            free(v);
            if (rc < 0)
                return fail(p, rc, "cannot store metric '%s' of '%s'", p->mkey,
                            node_label(lv->node));
            return 1;
        }
        return fail(p, KSCOPE_EPARSE, "metric '%s' of '%s' is null or boolean, not a number",
                    p->mkey, node_label(lv->node));
    case ST_VEC:
        if (!is_num)
            return fail(p, KSCOPE_EPARSE, "vector metric '%s' holds a non-number", p->mkey);
        return vec_push(p, s, l);
    case ST_CHILDREN:
        return fail(p, KSCOPE_EPARSE, "a child of '%s' is not a node object", node_label(lv->node));
    case ST_DEVINFO:
    case ST_DEVTYPE:
        return fail(p, KSCOPE_EPARSE, "device info: expected an object, found a scalar");
    case ST_DEVICE:
        return device_field(p, lv->dev, s, l, is_str);
    case ST_SKIP:
        return 1;
    }
    return 1;
}

static int on_scalar(void *ctx, kscope__tev_type type, const char *s, size_t l)
{
    return scalar(ctx, s, l, type == KSCOPE__TEV_STRING, type == KSCOPE__TEV_NUMBER);
}

static int on_start_map(void *ctx)
{
    kscope__hjson *p = ctx;
    hlevel *lv = level_of_value(p, "the top level is an object, not a [tree, device info] "
                                   "array (is this a Chrome trace?)");
    if (!lv)
        return 0;
    switch (lv->st) {
    case ST_TOP:
        if (p->top_index == 0) {
            p->top_index++;
            return open_node(p, NULL);
        }
        if (p->top_index == 1) {
            p->top_index++;
            p->seen_devinfo = 1;
            return push(p, ST_DEVINFO);
        }
        return fail(p, KSCOPE_EPARSE, "the top-level array has more than two elements");
    case ST_NODE: {
        kscope__pnode *n = lv->node;
        if (lv->key == K_FRAME)
            return push_node(p, ST_FRAME, n);
        if (lv->key == K_METRICS)
            return push_node(p, ST_METRICS, n);
        if (lv->key == K_CHILDREN)
            return fail(p, KSCOPE_EPARSE, "node '%s': \"children\" is not an array", node_label(n));
        if (lv->key == K_ASIDE)
            return push_node(p, ST_ASIDE, n);
        return push(p, ST_SKIP);
    }
    case ST_ASIDE: {
        kscope__pnode *n = lv->node;
        if (lv->key == K_INCLUSIVE)
            return aside_shape(p, lv->key);
        if (lv->key != K_METRICS)
            return push(p, ST_SKIP);
        /* ROOT's own strings and vectors: read as its metrics */
        return push_node(p, ST_METRICS, n);
    }
    case ST_INCLIST:
        return listed_inclusive(p, NULL, 0, 0);
    case ST_CHILDREN:
        return open_node(p, lv->node);
    case ST_METRICS:
        return fail(p, KSCOPE_EPARSE, "metric '%s' of '%s' is an object, not a number", p->mkey,
                    node_label(lv->node));
    case ST_VEC:
        return fail(p, KSCOPE_EPARSE, "vector metric '%s' holds an object", p->mkey);
    case ST_DEVINFO:
        return push(p, ST_DEVTYPE);
    case ST_DEVTYPE: {
        kscope__pdevice *d = kscope__ptree_device(p->t, p->devtype, p->devid);
        if (!d)
            return fail(p, KSCOPE_ENOMEM, "out of memory");
        if (!push(p, ST_DEVICE))
            return 0;
        top(p)->dev = d;
        return 1;
    }
    case ST_FRAME:
    case ST_DEVICE:
    case ST_SKIP:
        return push(p, ST_SKIP);
    }
    return 1;
}

static int on_map_key(void *ctx, const char *s, size_t l)
{
    kscope__hjson *p = ctx;
    hlevel *lv = top(p);
    switch (lv->st) {
    case ST_NODE:
        lv->key = l == 5 && memcmp(s, "frame", 5) == 0      ? K_FRAME
                  : l == 7 && memcmp(s, "metrics", 7) == 0  ? K_METRICS
                  : l == 8 && memcmp(s, "children", 8) == 0 ? K_CHILDREN
                                                            : K_OTHER;
        if (lv->key == K_OTHER && lv->node == p->t->root && is_key(s, l, KSCOPE__HROOT_KEY))
            lv->key = K_ASIDE;
        return 1;
    case ST_ASIDE:
        lv->key = is_key(s, l, KSCOPE__HROOT_INCLUSIVE) ? K_INCLUSIVE
                  : is_key(s, l, KSCOPE__HROOT_METRICS) ? K_METRICS
                                                        : K_OTHER;
        return 1;
    case ST_FRAME:
        lv->key = l == 4 && memcmp(s, "name", 4) == 0   ? K_NAME
                  : l == 4 && memcmp(s, "type", 4) == 0 ? K_TYPE
                                                        : K_OTHER;
        return 1;
    case ST_METRICS:
        if (has_nul(s, l))
            return fail(p, KSCOPE_EPARSE, "a metric name of '%s' contains a NUL character",
                        node_label(lv->node));
        p->mkey = metric_key(p, s, l);
        return p->mkey ? 1 : fail(p, KSCOPE_ENOMEM, "out of memory");
    case ST_DEVINFO:
        p->devtype = kscope__ptree_intern(p->t, s, l);
        return p->devtype ? 1 : fail(p, KSCOPE_ENOMEM, "out of memory");
    case ST_DEVTYPE: {
        /* the key is the device index; the device object follows */
        char buf[16];
        char *end;
        if (l == 0 || l >= sizeof buf)
            goto bad_id;
        memcpy(buf, s, l);
        buf[l] = '\0';
        errno = 0;
        unsigned long id = strtoul(buf, &end, 10);
        if (*end || errno || id > UINT32_MAX || buf[0] == '-')
            goto bad_id;
        p->devid = (uint32_t)id; /* the device is created when its object opens */
        return 1;
    bad_id:
        return fail(p, KSCOPE_EPARSE, "device info: device index \"%.*s\" of %s is not a number",
                    (int)(l > 20 ? 20 : l), s, p->devtype);
    }
    case ST_DEVICE:
        p->devfield_len = l < sizeof p->devfield ? l : 0;
        memcpy(p->devfield, s, p->devfield_len);
        return 1;
    default:
        return 1;
    }
}

static int on_start_array(void *ctx)
{
    kscope__hjson *p = ctx;
    hlevel *lv = top(p);
    if (!lv)
        return push(p, ST_TOP);
    switch (lv->st) {
    case ST_TOP:
        return fail(p, KSCOPE_EPARSE,
                    "element %zu of the top-level array is an array, not an "
                    "object",
                    p->top_index);
    case ST_NODE:
        if (lv->key == K_CHILDREN)
            return push_node(p, ST_CHILDREN, lv->node);
        if (lv->key == K_FRAME || lv->key == K_METRICS || lv->key == K_ASIDE)
            return fail(p, KSCOPE_EPARSE, "node '%s': \"%s\" is an array, not an object",
                        node_label(lv->node),
                        lv->key == K_FRAME     ? "frame"
                        : lv->key == K_METRICS ? "metrics"
                                               : KSCOPE__HROOT_KEY);
        return push(p, ST_SKIP);
    case ST_ASIDE:
        if (lv->key == K_METRICS)
            return aside_shape(p, lv->key);
        if (lv->key != K_INCLUSIVE)
            return push(p, ST_SKIP);
        p->listed_inclusive = 1;
        return push(p, ST_INCLIST);
    case ST_INCLIST:
        return listed_inclusive(p, NULL, 0, 0);
    case ST_METRICS:
        p->nvec = 0;
        p->vec_all_int = 1;
        return push_node(p, ST_VEC, lv->node);
    case ST_VEC:
        return fail(p, KSCOPE_EPARSE, "vector metric '%s' holds a nested array", p->mkey);
    case ST_CHILDREN:
        return fail(p, KSCOPE_EPARSE, "a child of '%s' is an array, not a node object",
                    node_label(lv->node));
    case ST_DEVINFO:
    case ST_DEVTYPE:
        return fail(p, KSCOPE_EPARSE, "device info: expected an object, found an array");
    case ST_FRAME:
    case ST_DEVICE:
    case ST_SKIP:
        return push(p, ST_SKIP);
    }
    return 1;
}

/* The end of an object or an array, the innermost level open: a node is
 * complete, a vector metric stored, the top-level array done. */
static int on_end(void *ctx)
{
    kscope__hjson *p = ctx;
    hlevel *lv = top(p);
    int ok = 1;
    if (lv->st == ST_NODE)
        ok = close_node(p, lv->node);
    else if (lv->st == ST_VEC)
        ok = vec_store(p, lv->node);
    else if (lv->st == ST_TOP)
        p->done = 1;
    p->depth--;
    return ok;
}

const kscope__hevents kscope__hjson_events = {on_start_map,   on_map_key, on_end,
                                              on_start_array, on_end,     on_scalar};

/* ------------------------------------------------------- at the end */

static void note_values(const kscope__pnode *n, void *arg)
{
    *(int *)arg |= n->nmetrics > 0;
}

/* ROOT's placeholders. A 0 there names an inclusive metric (the rule of
 * Proton's files and of kscope's older ones); where ROOT lists its
 * inclusive metrics ("kscope"), a 0 of any other metric is ROOT's own.
 * A tree that holds no value at all is empty: the placeholders that let
 * proton-viewer open it name nothing. 0 or KSCOPE_ENOMEM. */
static int root_placeholders(kscope__hjson *p)
{
    kscope__pnode *r = p->t->root;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < r->nmetrics; i++) {
        kscope__pmetric *m = &r->metrics[i];
        int zero = (m->type == KSCOPE__V_INT && m->v.i == 0) ||
                   (m->type == KSCOPE__V_DOUBLE && m->v.d == 0.0);
        if (zero && !p->listed_inclusive && kscope__ptree_add_inclusive(p->t, m->key) < 0)
            return KSCOPE_ENOMEM;
        if (!zero || !kscope__ptree_is_inclusive(p->t, m->key))
            r->metrics[kept++] = *m;
    }
    r->nmetrics = kept;
    kscope__pnode_reindex(r);
    int values = 0;
    if (kscope__ptree_walk(p->t, note_values, NULL, &values) != 0)
        return KSCOPE_ENOMEM;
    if (!values)
        kscope__ptree_clear_inclusive(p->t);
    return 0;
}

/* ---------------------------------------------------------------- API */

int kscope__hbuild_init(kscope__hjson *p)
{
    p->t = kscope__ptree_new();
    p->empty = p->t ? kscope__ptree_intern(p->t, "", 0) : NULL;
    return p->empty ? 0 : KSCOPE_ENOMEM;
}

void kscope__hbuild_release(kscope__hjson *p)
{
    if (p->t)
        kscope__ptree_free(p->t);
    p->t = NULL;
    free(p->stack);
    free(p->vec);
    kscope__demangler_free(&p->names);
}

int kscope__hjson_fail(kscope__hjson *p, int code, const char *msg)
{
    return fail(p, code, "%s", msg);
}

const char *kscope__hjson_error(const kscope__hjson *p, int *code)
{
    *code = p->in.errcode;
    return p->in.errcode ? p->in.err : NULL;
}

int kscope__hjson_end(kscope__hjson *p, kscope__ptree **out, char *err, size_t errlen)
{
    *out = NULL;
    if (p->in.errcode) {
        snprintf(err, errlen, "%s", p->in.err);
        return p->in.errcode;
    }
    if (!p->done) {
        snprintf(err, errlen, "the file is not a [tree, device info] array");
        return KSCOPE_EPARSE;
    }
    if (p->top_index == 0) {
        snprintf(err, errlen, "the top-level array is empty (no tree)");
        return KSCOPE_EPARSE;
    }
    if (!p->seen_devinfo) {
        snprintf(err, errlen,
                 "missing device-info object (the second element of the "
                 "top-level array)");
        return KSCOPE_EPARSE;
    }
    if (root_placeholders(p) < 0) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    *out = p->t;
    p->t = NULL;
    return 0;
}
