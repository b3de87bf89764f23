/*
 * trace-read.c - Chrome trace JSON into a calling-context tree, streamed.
 *
 * yajl's streaming parser feeds a small state machine (document ->
 * traceEvents -> event -> args -> call_stack); each event's fields are kept
 * only until the event closes, so memory follows the tree, not the trace.
 * Complete events (ph "X") become tree nodes:
 *   - a GPU activity (a kernel, memcpy, memset or gpu category, or Proton's
 *     call-stacked kernels) lands at the path its call stack names and adds
 *     "time (ns)" and "count" (plus bytes/flops args);
 *   - other slices are host scopes adding "calls", "wall_time (ns)"
 *     (exclusive) and their numeric args: placed by their own call stack
 *     when they carry one (kscope's traces), else nested by time containment
 *     on their (pid, tid) track once the whole trace is read.
 * Both the {"traceEvents": [...]} and the bare-array forms are read.
 */
#include "gpu/devices/devices.h"
#include "read/read.h"
#include "kscope.h"

#include <yajl/yajl_parse.h>

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_MAX_NESTING 64

typedef enum { T_DOC, T_EVENTS, T_EVENT, T_ARGS, T_STACK, T_SKIP } tstate;

/* One number from an event's args. */
typedef struct targ {
    const char *key; /* interned in the tree */
    double d;
    int64_t i;
    int is_int;
} targ;

/* The event being read: its fields as they arrive, in any order. */
typedef struct tevent {
    char name[512], cat[64], ph[8], pid[64], tid[64], device_id[32], device_type[32];
    int has_name, name_bad, has_ts, has_dur, ts_bad, has_stack, stack_bad;
    double ts, dur;
    const char **stack; /* interned names */
    size_t nstack, capstack;
    targ *args;
    size_t nargs, capargs;
} tevent;

/* A host slice without a call stack, nested by time after the parse. */
typedef struct slice {
    const char *pid, *tid, *name; /* interned */
    double ts, dur;               /* us */
    size_t index;
} slice;

struct kscope__tjson {
    yajl_handle y;
    kscope__ptree *t;
    tstate st[TRACE_MAX_NESTING + 2];
    size_t depth;
    /* the last key, copied: yajl's text is gone after the callback (and
     * the value may come in the next chunk) */
    char key[256];
    size_t keylen;
    int seen_events, doc_array;
    size_t index; /* events seen */
    size_t ngpu;
    tevent ev;
    slice *host;
    size_t nhost, caphost;
    size_t fed, events, mark, quiet; /* events: values the parser finished */
    kscope__demangler names;         /* slice and call-stack names as read */
    char err[KSCOPE__READ_ERRLEN];
    int errcode;
};
typedef struct kscope__tjson tjson;

static int tfail(tjson *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int tfail(tjson *p, int code, const char *fmt, ...)
{
    if (!p->errcode) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, sizeof p->err, fmt, ap);
        va_end(ap);
        kscope__escape_in_place(p->err, sizeof p->err); /* names may hold any byte */
        p->errcode = code;
    }
    return 0;
}

/* A NUL would cut a name short; other control characters are kept (the
 * printers show them escaped). */
static int has_nul(const char *s, size_t l)
{
    return memchr(s, 0, l) != NULL;
}

static int key_is(const tjson *p, const char *k)
{
    size_t l = strlen(k);
    return p->keylen == l && memcmp(p->key, k, l) == 0;
}

static void copy_text(char *dst, size_t size, const char *s, size_t l)
{
    if (l >= size)
        l = size - 1;
    memcpy(dst, s, l);
    dst[l] = '\0';
}

static int push(tjson *p, tstate s)
{
    if (p->depth >= TRACE_MAX_NESTING)
        return tfail(p, KSCOPE_EPARSE, "JSON nested deeper than %d levels", TRACE_MAX_NESTING);
    p->st[p->depth++] = s;
    return 1;
}

static tstate cur(const tjson *p)
{
    return p->depth ? p->st[p->depth - 1] : T_DOC;
}

/* --------------------------------------------------------- tree updates */

/* The node a call stack names (["ROOT", ..., leaf]); the event's own name
 * is added when the stack does not end with it. */
static kscope__pnode *stack_node(tjson *p, const char *name)
{
    kscope__ptree *t = p->t;
    kscope__pnode *n = t->root;
    for (size_t i = 0; i < p->ev.nstack; i++) {
        if (i == 0 && strcmp(p->ev.stack[0], "ROOT") == 0)
            continue;
        n = kscope__pnode_child(t, n, p->ev.stack[i]);
        if (!n)
            return NULL;
    }
    if (n == t->root || n->name != name)
        n = kscope__pnode_child(t, n, name);
    return n;
}

static int is_gpu(const tevent *e)
{
    const char *c = e->cat;
    if (strstr(c, "kernel") || strstr(c, "memcpy") || strstr(c, "memset") || strcmp(c, "gpu") == 0)
        return 1;
    if (strcmp(c, "scope") == 0)
        return 0;
    return e->has_stack;
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
static int update_failed(tjson *p, int rc, const char *key, const char *name)
{
    if (rc == KSCOPE_EPARSE)
        return tfail(p, rc, "event %zu ('%.60s'): metric '%s' sums past the largest number (%.4g)",
                     p->index - 1, name, key, DBL_MAX);
    return tfail(p, rc, "out of memory");
}

static int add_gpu(tjson *p, kscope__pnode *n)
{
    kscope__ptree *t = p->t;
    const tevent *e = &p->ev;
    const char *what = "time (ns)";
    int rc = add_us(t, n, what, e->dur);
    if (rc == 0)
        rc = kscope__pnode_add_int(t, n, "count", 1);
    if (rc == 0)
        rc = kscope__pnode_set_string(t, n, "device_id", e->device_id[0] ? e->device_id : "0");
    if (rc == 0)
        rc = kscope__pnode_set_string(t, n, "device_type",
                                      e->device_type[0] ? e->device_type
                                                        : kscope__device_default_type());
    static const char *const sums[] = {"bytes", "flops", "flops8", "flops16", "flops32", "flops64"};
    for (size_t a = 0; rc == 0 && a < e->nargs; a++) {
        const targ *g = &e->args[a];
        size_t k = 0;
        while (k < sizeof sums / sizeof *sums && strcmp(sums[k], g->key) != 0)
            k++;
        if (k == sizeof sums / sizeof *sums)
            continue;
        if (g->d < 0)
            return tfail(p, KSCOPE_EPARSE, "event %zu: args.%s is negative", p->index - 1, g->key);
        what = g->key;
        rc = add_number(t, n, g->key, g->d, g->i, g->is_int);
        if (rc == 0)
            rc = kscope__ptree_add_inclusive(t, g->key);
    }
    if (rc < 0)
        return update_failed(p, rc, what, n->name);
    p->ngpu++;
    return 1;
}

static int host_metrics(kscope__ptree *t, kscope__pnode *n, double dur_us)
{
    int rc = kscope__pnode_add_int(t, n, "calls", 1);
    if (rc == 0)
        rc = add_us(t, n, "wall_time (ns)", dur_us);
    return rc;
}

/* A host scope that says where it is: its numeric args become metrics. */
static int add_host_placed(tjson *p, kscope__pnode *n)
{
    const char *what = "wall_time (ns)";
    int rc = host_metrics(p->t, n, p->ev.dur);
    for (size_t a = 0; rc == 0 && a < p->ev.nargs; a++) {
        const targ *g = &p->ev.args[a];
        what = g->key;
        rc = add_number(p->t, n, g->key, g->d, g->i, g->is_int);
    }
    return rc < 0 ? update_failed(p, rc, what, n->name) : 1;
}

static int keep_host(tjson *p, const char *name)
{
    if (p->nhost == p->caphost) {
        size_t cap = p->caphost ? p->caphost * 2 : 256;
        slice *h = realloc(p->host, cap * sizeof *h);
        if (!h)
            return tfail(p, KSCOPE_ENOMEM, "out of memory");
        p->host = h;
        p->caphost = cap;
    }
    const char *pid = kscope__ptree_intern_cstr(p->t, p->ev.pid);
    const char *tid = kscope__ptree_intern_cstr(p->t, p->ev.tid);
    if (!pid || !tid)
        return tfail(p, KSCOPE_ENOMEM, "out of memory");
    p->host[p->nhost++] = (slice){pid, tid, name, p->ev.ts, p->ev.dur, p->index};
    return 1;
}

/* An event closed: a complete slice becomes (part of) a node. */
static int end_event(tjson *p)
{
    tevent *e = &p->ev;
    size_t i = p->index++;
    if (strcmp(e->ph, "X") != 0)
        return 1; /* metadata, counters, flows, instants: not tree nodes */
    if (!e->has_name || e->name_bad)
        return tfail(p, KSCOPE_EPARSE,
                     "event %zu: \"name\" is missing, not a string or holds a NUL character", i);
    if (!e->has_ts || !e->has_dur || e->ts_bad || !isfinite(e->ts) || !isfinite(e->dur) ||
        e->dur < 0)
        return tfail(p, KSCOPE_EPARSE,
                     "event %zu ('%.60s'): \"ts\" and \"dur\" must be numbers, dur >= 0", i,
                     e->name);
    if (e->stack_bad)
        return tfail(p, KSCOPE_EPARSE, "event %zu: call_stack entry is not a plain string", i);
    const char *name = kscope__ptree_intern_cstr(p->t, e->name);
    if (name)
        name = kscope__demangled(&p->names, p->t, name);
    if (!name)
        return tfail(p, KSCOPE_ENOMEM, "out of memory");
    if (is_gpu(e)) {
        kscope__pnode *n =
            e->has_stack ? stack_node(p, name) : kscope__pnode_child(p->t, p->t->root, name);
        return n ? add_gpu(p, n) : tfail(p, KSCOPE_ENOMEM, "out of memory");
    }
    if (e->has_stack) {
        kscope__pnode *n = stack_node(p, name);
        return n ? add_host_placed(p, n) : tfail(p, KSCOPE_ENOMEM, "out of memory");
    }
    return keep_host(p, name);
}

static void begin_event(tjson *p)
{
    tevent *e = &p->ev;
    const char **stack = e->stack;
    size_t capstack = e->capstack, capargs = e->capargs;
    targ *args = e->args;
    memset(e, 0, sizeof *e);
    e->stack = stack;
    e->capstack = capstack;
    e->args = args;
    e->capargs = capargs;
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
static int nest_host(tjson *p)
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
        return tfail(p, KSCOPE_ENOMEM, "out of memory");
    size_t depth = 0;
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        if (i == 0 || s[i].pid != s[i - 1].pid || s[i].tid != s[i - 1].tid)
            depth = 0;
        while (depth && stack[depth - 1].end <= s[i].ts + 1e-9)
            depth--;
        if (depth == KSCOPE__READ_MAX_DEPTH) {
            ok = tfail(p, KSCOPE_EPARSE, "slices nested deeper than %d levels",
                       KSCOPE__READ_MAX_DEPTH);
            break;
        }
        kscope__pnode *parent = depth ? stack[depth - 1].node : t->root;
        kscope__pnode *node = kscope__pnode_child(t, parent, s[i].name);
        int rc = node ? host_metrics(t, node, s[i].dur) : KSCOPE_ENOMEM;
        if (rc < 0) {
            p->index = s[i].index; /* one past the event, as end_event leaves it */
            ok = update_failed(p, rc, "wall_time (ns)", s[i].name);
            break;
        }
        stack[depth].end = s[i].ts + s[i].dur;
        stack[depth].node = node;
        depth++;
    }
    free(stack);
    return ok;
}

/* ------------------------------------------------------- yajl callbacks */

static int number_value(tjson *p, const char *s, size_t l, double *d, int64_t *i, int *is_int)
{
    char buf[64];
    if (l >= sizeof buf)
        return 0;
    memcpy(buf, s, l);
    buf[l] = '\0';
    errno = 0;
    *is_int = strpbrk(buf, ".eE") == NULL;
    if (*is_int) {
        long long v = strtoll(buf, NULL, 10);
        if (errno == ERANGE)
            *is_int = 0;
        *i = v;
    }
    errno = 0;
    *d = strtod(buf, NULL);
    (void)p;
    return !(errno == ERANGE && fabs(*d) > 1.0);
}

static int add_arg(tjson *p, const char *s, size_t l)
{
    tevent *e = &p->ev;
    double d;
    int64_t i = 0;
    int is_int;
    if (!number_value(p, s, l, &d, &i, &is_int) || p->keylen == 0 || has_nul(p->key, p->keylen))
        return 1; /* an arg we cannot use is not an error */
    if (key_is(p, "device_id") || key_is(p, "device")) {
        copy_text(e->device_id, sizeof e->device_id, s, l);
        return 1;
    }
    if (e->nargs == e->capargs) {
        size_t cap = e->capargs ? e->capargs * 2 : 8;
        targ *a = realloc(e->args, cap * sizeof *a);
        if (!a)
            return tfail(p, KSCOPE_ENOMEM, "out of memory");
        e->args = a;
        e->capargs = cap;
    }
    const char *key = kscope__ptree_intern(p->t, p->key, p->keylen);
    if (!key)
        return tfail(p, KSCOPE_ENOMEM, "out of memory");
    e->args[e->nargs++] = (targ){key, d, i, is_int};
    return 1;
}

static int event_scalar(tjson *p, const char *s, size_t l, int is_str, int is_num)
{
    tevent *e = &p->ev;
    if (key_is(p, "name")) {
        e->has_name = is_str;
        e->name_bad = !is_str || has_nul(s, l) || l >= sizeof e->name;
        if (is_str)
            copy_text(e->name, sizeof e->name, s, l);
    } else if (key_is(p, "ph") && is_str) {
        copy_text(e->ph, sizeof e->ph, s, l);
    } else if (key_is(p, "cat") && is_str) {
        copy_text(e->cat, sizeof e->cat, s, l);
    } else if (key_is(p, "pid") && (is_str || is_num)) {
        copy_text(e->pid, sizeof e->pid, s, l);
    } else if (key_is(p, "tid") && (is_str || is_num)) {
        copy_text(e->tid, sizeof e->tid, s, l);
    } else if (key_is(p, "ts") || key_is(p, "dur")) {
        double d = 0;
        int64_t i;
        int is_int;
        int good = is_num && number_value(p, s, l, &d, &i, &is_int);
        if (key_is(p, "ts")) {
            e->has_ts = 1;
            e->ts = d;
        } else {
            e->has_dur = 1;
            e->dur = d;
        }
        e->ts_bad |= !good;
    }
    return 1;
}

static int on_scalar(tjson *p, const char *s, size_t l, int is_str, int is_num)
{
    p->events++;
    switch (cur(p)) {
    case T_DOC:
        if (p->depth == 0)
            return tfail(p, KSCOPE_EPARSE, "not a Chrome trace: a single value");
        return 1;
    case T_EVENTS:
        return tfail(p, KSCOPE_EPARSE, "event %zu is not an object", p->index++);
    case T_EVENT:
        return event_scalar(p, s, l, is_str, is_num);
    case T_ARGS:
        if (is_num)
            return add_arg(p, s, l);
        if (is_str && key_is(p, "device_type"))
            copy_text(p->ev.device_type, sizeof p->ev.device_type, s, l);
        else if (is_str && key_is(p, "device_id"))
            copy_text(p->ev.device_id, sizeof p->ev.device_id, s, l);
        return 1;
    case T_STACK: {
        tevent *e = &p->ev;
        if (!is_str || has_nul(s, l)) {
            e->stack_bad = 1;
            return 1;
        }
        if (e->nstack + 1 >= KSCOPE__READ_MAX_DEPTH)
            return tfail(p, KSCOPE_EPARSE, "event %zu: call stack deeper than %d", p->index,
                         KSCOPE__READ_MAX_DEPTH);
        if (e->nstack == e->capstack) {
            size_t cap = e->capstack ? e->capstack * 2 : 16;
            const char **a = realloc(e->stack, cap * sizeof *a);
            if (!a)
                return tfail(p, KSCOPE_ENOMEM, "out of memory");
            e->stack = a;
            e->capstack = cap;
        }
        const char *name = kscope__ptree_intern(p->t, s, l);
        if (name)
            name = kscope__demangled(&p->names, p->t, name);
        if (!name)
            return tfail(p, KSCOPE_ENOMEM, "out of memory");
        e->stack[e->nstack++] = name;
        return 1;
    }
    case T_SKIP:
        return 1;
    }
    return 1;
}

static int cb_null(void *ctx)
{
    return on_scalar(ctx, "null", 4, 0, 0);
}

static int cb_boolean(void *ctx, int b)
{
    return on_scalar(ctx, b ? "true" : "false", b ? 4 : 5, 0, 0);
}

static int cb_number(void *ctx, const char *s, size_t l)
{
    return on_scalar(ctx, s, l, 0, 1);
}

static int cb_string(void *ctx, const unsigned char *s, size_t l)
{
    return on_scalar(ctx, (const char *)s, l, 1, 0);
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t l)
{
    tjson *p = ctx;
    p->events++;
    if (l >= sizeof p->key) { /* no key we act on is this long */
        p->key[0] = '\0';
        p->keylen = 0;
        return 1;
    }
    memcpy(p->key, k, l);
    p->key[l] = '\0';
    p->keylen = l;
    return 1;
}

static int cb_start_map(void *ctx)
{
    tjson *p = ctx;
    p->events++;
    if (p->depth == 0)
        return push(p, T_DOC);
    switch (cur(p)) {
    case T_EVENTS:
        begin_event(p);
        return push(p, T_EVENT);
    case T_EVENT:
        return push(p, key_is(p, "args") ? T_ARGS : T_SKIP);
    default:
        return push(p, T_SKIP);
    }
}

static int cb_end_map(void *ctx)
{
    tjson *p = ctx;
    p->events++;
    tstate s = cur(p);
    p->depth--;
    return s == T_EVENT ? end_event(p) : 1;
}

static int cb_start_array(void *ctx)
{
    tjson *p = ctx;
    p->events++;
    if (p->depth == 0) { /* the bare-array form */
        p->doc_array = 1;
        p->seen_events = 1;
        return push(p, T_EVENTS);
    }
    switch (cur(p)) {
    case T_DOC:
        if (p->depth == 1 && key_is(p, "traceEvents")) {
            p->seen_events = 1;
            return push(p, T_EVENTS);
        }
        return push(p, T_SKIP);
    case T_EVENTS:
        return tfail(p, KSCOPE_EPARSE, "event %zu is not an object", p->index++);
    case T_ARGS:
        if (key_is(p, "call_stack")) {
            p->ev.has_stack = 1;
            p->ev.nstack = 0;
            return push(p, T_STACK);
        }
        return push(p, T_SKIP);
    case T_STACK:
        p->ev.stack_bad = 1;
        return push(p, T_SKIP);
    default:
        return push(p, T_SKIP);
    }
}

static int cb_end_array(void *ctx)
{
    tjson *p = ctx;
    p->events++;
    p->depth--;
    return 1;
}

static const yajl_callbacks callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_boolean,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_map_key,
    .yajl_end_map = cb_end_map,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end_array,
};

/* ---------------------------------------------------------------- API */

kscope__tjson *kscope__tjson_new(void)
{
    tjson *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->t = kscope__ptree_new();
    p->y = p->t ? yajl_alloc(&callbacks, NULL, p) : NULL;
    if (!p->y) {
        kscope__tjson_free(p);
        return NULL;
    }
    return p;
}

void kscope__tjson_free(kscope__tjson *p)
{
    if (!p)
        return;
    if (p->y)
        yajl_free(p->y);
    kscope__ptree_free(p->t);
    free(p->ev.stack);
    free(p->ev.args);
    free(p->host);
    kscope__demangler_free(&p->names);
    free(p);
}

static int failure(tjson *p, const unsigned char *buf, size_t len, char *err, size_t errlen)
{
    if (p->errcode) {
        snprintf(err, errlen, "%s", p->err);
        return p->errcode;
    }
    unsigned char *msg = yajl_get_error(p->y, 0, buf, len);
    const char *m = msg ? (const char *)msg : "parse error";
    if (strstr(m, "premature EOF"))
        snprintf(err, errlen, "truncated: the JSON ends early");
    else if (strstr(m, "trailing garbage"))
        snprintf(err, errlen, "data after the end of the trace");
    else
        snprintf(err, errlen, "not valid JSON: %.*s", (int)strcspn(m, "\r\n"), m);
    if (msg)
        yajl_free_error(p->y, msg);
    return KSCOPE_EPARSE;
}

int kscope__tjson_feed(kscope__tjson *p, const char *buf, size_t len, char *err, size_t errlen)
{
    if (p->errcode)
        return failure(p, NULL, 0, err, errlen);
    p->fed += len;
    if (yajl_parse(p->y, (const unsigned char *)buf, len) != yajl_status_ok)
        return failure(p, (const unsigned char *)buf, len, err, errlen);
    if (kscope__read_too_quiet(p->events, &p->mark, &p->quiet, len)) {
        tfail(p, KSCOPE_EPARSE, "no JSON value ends within %d MiB (at byte %zu)",
              KSCOPE__READ_MAX_TOKEN >> 20, p->fed);
        return failure(p, NULL, 0, err, errlen);
    }
    return 0;
}

int kscope__tjson_finish(kscope__tjson *p, kscope__ptree **out, char *err, size_t errlen)
{
    *out = NULL;
    if (p->errcode)
        return failure(p, NULL, 0, err, errlen);
    if (p->fed == 0) {
        snprintf(err, errlen, "empty: no JSON at all");
        return KSCOPE_EPARSE;
    }
    if (yajl_complete_parse(p->y) != yajl_status_ok)
        return failure(p, NULL, 0, err, errlen);
    if (!p->seen_events) {
        snprintf(err, errlen, "not a Chrome trace: no \"traceEvents\" array");
        return KSCOPE_EPARSE;
    }
    if (p->nhost && !nest_host(p))
        return failure(p, NULL, 0, err, errlen);
    if (p->ngpu && (kscope__ptree_add_inclusive(p->t, "time (ns)") < 0 ||
                    kscope__ptree_add_inclusive(p->t, "count") < 0)) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    *out = p->t;
    p->t = NULL;
    return 0;
}

int kscope__read_chrome_trace(const char *buf, size_t len, kscope__ptree **out, char *err,
                              size_t errlen)
{
    *out = NULL;
    tjson *p = kscope__tjson_new();
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
