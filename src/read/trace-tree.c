/*
 * trace-tree.c - a trace's calling-context tree, built from its events as
 * a trace reader hands them over (format/events.h), so every trace format
 * becomes a tree the same way:
 *   - a GPU activity (a kernel, memcpy, memset or gpu category, or
 *     Proton's call-stacked kernels: KSCOPE__TEV_GPU) lands at the path its
 *     call stack names and adds "time (ns)" and "count" (plus bytes/flops
 *     args);
 *   - other slices (KSCOPE__TEV_SLICE) are host scopes adding "calls",
 *     "wall_time (ns)" (exclusive) and their numeric args: placed by their
 *     own call stack when they carry one (kscope's traces), else nested by
 *     time containment on their (pid, tid) track once the whole trace is
 *     read.
 * Events of other kinds are no tree nodes. A slice whose name, times or
 * call stack cannot be read is refused, naming the event.
 */
#include "gpu/devices/devices.h"
#include "read/read.h"
#include "util/util.h"
#include "kscope.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One number from an event's args. */
typedef struct targ {
    const char *key; /* interned in the tree */
    double d;
    int64_t i;
    int is_int;
} targ;

/* A host slice without a call stack, nested by time at the end. */
typedef struct slice {
    const char *pid, *tid, *name; /* interned */
    double ts, dur;               /* us */
    size_t index;
} slice;

struct kscope__trace_tree {
    kscope__ptree *t;
    size_t ngpu;
    slice *host;
    size_t nhost, caphost;
    kscope__demangler names; /* slice and call-stack names as read */
    /* the event being placed: its names interned, its numeric args */
    const char **stack;
    size_t capstack;
    targ *args;
    size_t nargs, capargs;
    char device_id[32], device_type[32];
    size_t index; /* the event's, for messages */
    char err[KSCOPE__READ_ERRLEN];
    int errcode;
};
typedef struct kscope__trace_tree ttree;

/* Refuse (the first refusal wins). Returns code. */
#define tfail(p, code, ...)                                                                        \
    kscope__read_refuse((p)->err, sizeof(p)->err, &(p)->errcode, (code), __VA_ARGS__)

static int nomem(ttree *p)
{
    return tfail(p, KSCOPE_ENOMEM, "out of memory");
}

/* A number as the trees take it: up to 63 characters, not past the
 * largest double (a tiny one reads as 0). 0 when it is none. */
static int number_value(kscope__tev_value v, double *d, int64_t *i, int *is_int)
{
    if (v.type != KSCOPE__TEV_NUMBER || v.len >= 64)
        return 0;
    errno = 0;
    *is_int = strpbrk(v.text, ".eE") == NULL;
    if (*is_int) {
        long long n = strtoll(v.text, NULL, 10);
        if (errno == ERANGE)
            *is_int = 0;
        *i = n;
    }
    errno = 0;
    *d = strtod(v.text, NULL);
    return !(errno == ERANGE && fabs(*d) > 1.0);
}

static void copy_text(char *dst, size_t size, const char *s, size_t l)
{
    if (l >= size)
        l = size - 1;
    memcpy(dst, s, l);
    dst[l] = '\0';
}

/* --------------------------------------------------------- tree updates */

/* The node a call stack names (["ROOT", ..., leaf]); the event's own name
 * is added when the stack does not end with it. */
static kscope__pnode *stack_node(ttree *p, size_t nstack, const char *name)
{
    kscope__ptree *t = p->t;
    kscope__pnode *n = t->root;
    for (size_t i = 0; i < nstack; i++) {
        if (i == 0 && strcmp(p->stack[0], "ROOT") == 0)
            continue;
        n = kscope__pnode_child(t, n, p->stack[i]);
        if (!n)
            return NULL;
    }
    if (n == t->root || n->name != name)
        n = kscope__pnode_child(t, n, name);
    return n;
}

/* Add a number to a metric of n: KSCOPE_EPARSE when the sum passes the
 * largest double (refused: a file written from it would not say it). */
static int add_number(kscope__ptree *t, kscope__pnode *n, const char *key, double d, int64_t i,
                      int is_int)
{
    int rc = is_int ? kscope__pnode_add_int(t, n, key, i) : kscope__pnode_add_double(t, n, key, d);
    if (rc < 0)
        return rc;
    const kscope__pmetric *m = kscope__pnode_metric(n, kscope__ptree_intern_cstr(t, key));
    return m && !isfinite(kscope__pmetric_number(m)) ? KSCOPE_EPARSE : 0;
}

/* Add a duration in µs as integer ns; one past int64 is added as a
 * floating-point number (converting it would be undefined). */
static int add_us(kscope__ptree *t, kscope__pnode *n, const char *key, double us)
{
    double ns = us * 1000.0;
    if (ns < 9.2e18)
        return kscope__pnode_add_int(t, n, key, (int64_t)llround(ns));
    return add_number(t, n, key, ns, 0, 0);
}

/* A failure of the tree updates as one line: a sum past the largest
 * double, else out of memory. */
static int update_failed(ttree *p, int rc, const char *key, const char *name)
{
    if (rc == KSCOPE_EPARSE)
        return tfail(p, rc, "event %zu ('%.60s'): metric '%s' sums past the largest number (%.4g)",
                     p->index, name, key, DBL_MAX);
    return nomem(p);
}

static int add_gpu(ttree *p, kscope__pnode *n, double dur)
{
    kscope__ptree *t = p->t;
    const char *what = "time (ns)";
    int rc = add_us(t, n, what, dur);
    if (rc == 0)
        rc = kscope__pnode_add_int(t, n, "count", 1);
    if (rc == 0)
        rc = kscope__pnode_set_string(t, n, "device_id", p->device_id[0] ? p->device_id : "0");
    if (rc == 0)
        rc = kscope__pnode_set_string(t, n, "device_type",
                                      p->device_type[0] ? p->device_type
                                                        : kscope__device_default_type());
    static const char *const sums[] = {"bytes", "flops", "flops8", "flops16", "flops32", "flops64"};
    for (size_t a = 0; rc == 0 && a < p->nargs; a++) {
        const targ *g = &p->args[a];
        size_t k = 0;
        while (k < sizeof sums / sizeof *sums && strcmp(sums[k], g->key) != 0)
            k++;
        if (k == sizeof sums / sizeof *sums)
            continue;
        if (g->d < 0)
            return tfail(p, KSCOPE_EPARSE, "event %zu: args.%s is negative", p->index, g->key);
        what = g->key;
        rc = add_number(t, n, g->key, g->d, g->i, g->is_int);
        if (rc == 0)
            rc = kscope__ptree_add_inclusive(t, g->key);
    }
    if (rc < 0)
        return update_failed(p, rc, what, n->name);
    p->ngpu++;
    return 0;
}

static int host_metrics(kscope__ptree *t, kscope__pnode *n, double dur_us)
{
    int rc = kscope__pnode_add_int(t, n, "calls", 1);
    if (rc == 0)
        rc = add_us(t, n, "wall_time (ns)", dur_us);
    return rc;
}

/* A host scope that says where it is: its numeric args become metrics. */
static int add_host_placed(ttree *p, kscope__pnode *n, double dur)
{
    const char *what = "wall_time (ns)";
    int rc = host_metrics(p->t, n, dur);
    for (size_t a = 0; rc == 0 && a < p->nargs; a++) {
        const targ *g = &p->args[a];
        what = g->key;
        rc = add_number(p->t, n, g->key, g->d, g->i, g->is_int);
    }
    return rc < 0 ? update_failed(p, rc, what, n->name) : 0;
}

/* A track's pid or tid as text: a string's or number's first 63 bytes. */
static const char *track_text(ttree *p, kscope__tev_value v)
{
    char s[64] = "";
    if (v.type == KSCOPE__TEV_STRING || v.type == KSCOPE__TEV_NUMBER)
        copy_text(s, sizeof s, v.text, v.len);
    return kscope__ptree_intern_cstr(p->t, s);
}

static int keep_host(ttree *p, const kscope__tev_read *r, const char *name, double ts, double dur)
{
    if (p->nhost == p->caphost && KSCOPE__ROOM(p->host, p->caphost, p->nhost + 1, 256) != 0)
        return nomem(p);
    const char *pid = track_text(p, r->pid), *tid = track_text(p, r->tid);
    if (!pid || !tid)
        return nomem(p);
    p->host[p->nhost++] = (slice){pid, tid, name, ts, dur, p->index};
    return 0;
}

/* The event's numeric args (each at most 255 bytes of key, no NUL) and
 * the device it names. */
static int read_args(ttree *p, const kscope__tev_read *r)
{
    p->nargs = 0;
    p->device_id[0] = p->device_type[0] = '\0';
    for (size_t a = 0; a < r->nargs; a++) {
        const kscope__tev_field *f = &r->args[a];
        int is_id = strcmp(f->key, "device_id") == 0 && f->keylen == 9;
        if (f->v.type == KSCOPE__TEV_STRING) {
            if (strcmp(f->key, "device_type") == 0 && f->keylen == 11)
                copy_text(p->device_type, sizeof p->device_type, f->v.text, f->v.len);
            else if (is_id)
                copy_text(p->device_id, sizeof p->device_id, f->v.text, f->v.len);
            continue;
        }
        double d;
        int64_t i = 0;
        int is_int;
        if (!number_value(f->v, &d, &i, &is_int) || f->keylen == 0 || f->keylen >= 256 ||
            memchr(f->key, 0, f->keylen))
            continue; /* an arg we cannot use is not an error */
        if (is_id || (strcmp(f->key, "device") == 0 && f->keylen == 6)) {
            copy_text(p->device_id, sizeof p->device_id, f->v.text, f->v.len);
            continue;
        }
        if (p->nargs == p->capargs && KSCOPE__ROOM(p->args, p->capargs, p->nargs + 1, 8) != 0)
            return nomem(p);
        const char *key = kscope__ptree_intern(p->t, f->key, f->keylen);
        if (!key)
            return nomem(p);
        p->args[p->nargs++] = (targ){key, d, i, is_int};
    }
    return 0;
}

/* The event's call stack, its names interned (and demangled) in the tree. */
static int read_stack(ttree *p, const kscope__tev *e)
{
    if (e->nstack > p->capstack) {
        const char **s = realloc(p->stack, e->nstack * sizeof *s);
        if (!s)
            return nomem(p);
        p->stack = s;
        p->capstack = e->nstack;
    }
    for (size_t i = 0; i < e->nstack; i++) {
        const char *name = kscope__ptree_intern_cstr(p->t, e->stack[i]);
        if (name)
            name = kscope__demangled(&p->names, p->t, name);
        if (!name)
            return nomem(p);
        p->stack[i] = name;
    }
    return 0;
}

/* A slice's time ("ts" or "dur") in µs: 0 when it is no number. */
static int read_time(kscope__tev_value v, double *us)
{
    int64_t i;
    int is_int;
    *us = 0;
    return number_value(v, us, &i, &is_int) && isfinite(*us);
}

int kscope__trace_tree_event(const kscope__tev *e, void *tree)
{
    ttree *p = tree;
    const kscope__tev_read *r = e->read;
    if ((e->kind != KSCOPE__TEV_SLICE && e->kind != KSCOPE__TEV_GPU) || !r)
        return 0; /* metadata, counters, flows, instants: not tree nodes */
    size_t i = p->index = r->index;
    if (r->name.type != KSCOPE__TEV_STRING || memchr(r->name.text, 0, r->name.len) ||
        r->name.len >= 512)
        return tfail(p, KSCOPE_EPARSE,
                     "event %zu: \"name\" is missing, not a string or holds a NUL character", i);
    double ts, dur;
    int times = read_time(r->ts, &ts);
    times = read_time(r->dur, &dur) && times;
    if (!times || dur < 0)
        return tfail(p, KSCOPE_EPARSE,
                     "event %zu ('%.60s'): \"ts\" and \"dur\" must be numbers, dur >= 0", i,
                     r->name.text);
    if (r->stack_bad)
        return tfail(p, KSCOPE_EPARSE, "event %zu: call_stack entry is not a plain string", i);
    const char *name = kscope__ptree_intern(p->t, r->name.text, r->name.len);
    if (name)
        name = kscope__demangled(&p->names, p->t, name);
    if (!name)
        return nomem(p);
    int rc = read_args(p, r);
    if (rc == 0 && r->has_stack)
        rc = read_stack(p, e);
    if (rc < 0)
        return rc;
    if (e->kind == KSCOPE__TEV_GPU) {
        kscope__pnode *n = r->has_stack ? stack_node(p, e->nstack, name)
                                        : kscope__pnode_child(p->t, p->t->root, name);
        return n ? add_gpu(p, n, dur) : nomem(p);
    }
    if (r->has_stack) {
        kscope__pnode *n = stack_node(p, e->nstack, name);
        return n ? add_host_placed(p, n, dur) : nomem(p);
    }
    return keep_host(p, r, name, ts, dur);
}

static int by_track_time(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    int c = strcmp(x->pid, y->pid);
    if (c == 0)
        c = strcmp(x->tid, y->tid);
    if (c)
        return c;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur > y->dur ? -1 : 1; /* the enclosing slice first */
    return x->index < y->index ? -1 : 1;
}

/* Nest the host slices without a call stack by containment per track. */
static int nest_host(ttree *p)
{
    kscope__ptree *t = p->t;
    slice *s = p->host;
    size_t n = p->nhost;
    qsort(s, n, sizeof *s, by_track_time);
    struct open {
        double end;
        kscope__pnode *node;
    } *stack = malloc((KSCOPE__READ_MAX_DEPTH + 1) * sizeof *stack);
    if (!stack)
        return nomem(p);
    size_t depth = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (i == 0 || s[i].pid != s[i - 1].pid || s[i].tid != s[i - 1].tid)
            depth = 0;
        while (depth && stack[depth - 1].end <= s[i].ts + 1e-9)
            depth--;
        if (depth == KSCOPE__READ_MAX_DEPTH) {
            rc = tfail(p, KSCOPE_EPARSE, "slices nested deeper than %d levels",
                       KSCOPE__READ_MAX_DEPTH);
            break;
        }
        kscope__pnode *parent = depth ? stack[depth - 1].node : t->root;
        kscope__pnode *node = kscope__pnode_child(t, parent, s[i].name);
        rc = node ? host_metrics(t, node, s[i].dur) : KSCOPE_ENOMEM;
        if (rc < 0) {
            p->index = s[i].index;
            rc = update_failed(p, rc, "wall_time (ns)", s[i].name);
            break;
        }
        stack[depth].end = s[i].ts + s[i].dur;
        stack[depth].node = node;
        depth++;
    }
    free(stack);
    return rc;
}

/* ---------------------------------------------------------------- API */

kscope__trace_tree *kscope__trace_tree_new(void)
{
    ttree *p = calloc(1, sizeof *p);
    if (p && !(p->t = kscope__ptree_new())) {
        free(p);
        return NULL;
    }
    return p;
}

const char *kscope__trace_tree_why(void *tree)
{
    return ((ttree *)tree)->err;
}

int kscope__trace_tree_finish(kscope__trace_tree *p, kscope__ptree **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc = p->errcode;
    if (rc == 0 && p->nhost)
        rc = nest_host(p);
    if (rc == 0 && p->ngpu &&
        (kscope__ptree_add_inclusive(p->t, "time (ns)") < 0 ||
         kscope__ptree_add_inclusive(p->t, "count") < 0))
        rc = nomem(p);
    if (rc < 0) {
        snprintf(err, errlen, "%s", p->err);
        return rc;
    }
    *out = p->t;
    p->t = NULL;
    return 0;
}

void kscope__trace_tree_free(kscope__trace_tree *p)
{
    if (!p)
        return;
    kscope__ptree_free(p->t);
    free(p->host);
    free(p->stack);
    free(p->args);
    kscope__demangler_free(&p->names);
    free(p);
}

/* ------------------------------------------- Chrome trace JSON to a tree */

struct kscope__tjson {
    void *reader;
    ttree *tree;
};

/* The reader's verdict, or the builder's when it stopped the reading. */
static int tjson_failed(kscope__tjson *p, int rc, char *err, size_t errlen)
{
    if (rc != 0 && !err[0])
        snprintf(err, errlen, "%s", p->tree->err);
    return rc;
}

kscope__tjson *kscope__tjson_new(void)
{
    kscope__tjson *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->tree = kscope__trace_tree_new();
    p->reader = p->tree ? kscope__chrome_trace_reader.trace_new(kscope__trace_tree_event, p->tree,
                                                                KSCOPE__TREAD_STACK)
                        : NULL;
    if (!p->reader) {
        kscope__tjson_free(p);
        return NULL;
    }
    return p;
}

int kscope__tjson_feed(kscope__tjson *p, const char *buf, size_t len, char *err, size_t errlen)
{
    return tjson_failed(p, kscope__chrome_trace_reader.feed(p->reader, buf, len, err, errlen), err,
                        errlen);
}

int kscope__tjson_finish(kscope__tjson *p, kscope__ptree **out, char *err, size_t errlen)
{
    *out = NULL;
    int rc = kscope__chrome_trace_reader.trace_finish(p->reader, err, errlen);
    if (rc == 0)
        return kscope__trace_tree_finish(p->tree, out, err, errlen);
    return tjson_failed(p, rc, err, errlen);
}

void kscope__tjson_free(kscope__tjson *p)
{
    if (!p)
        return;
    if (p->reader)
        kscope__chrome_trace_reader.free(p->reader);
    kscope__trace_tree_free(p->tree);
    free(p);
}

int kscope__read_chrome_trace(const char *buf, size_t len, kscope__ptree **out, char *err,
                              size_t errlen)
{
    *out = NULL;
    kscope__tjson *p = kscope__tjson_new();
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    int rc = kscope__tjson_feed(p, buf, len, err, errlen);
    if (rc == 0)
        rc = kscope__tjson_finish(p, out, err, errlen);
    kscope__tjson_free(p);
    return rc;
}
