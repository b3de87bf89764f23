/*
 * trace-read.c - Chrome trace JSON into a calling-context tree.
 *
 * Complete events (ph "X") become tree nodes. A GPU activity (a kernel,
 * memcpy, memset or gpu category, or Proton's call-stacked kernels) lands at
 * the path its call stack names and adds "time (ns)" and "count". Other
 * slices are host scopes adding "calls" and "wall_time (ns)" (exclusive) and
 * their numeric args: placed by their own call stack when they carry one
 * (kscope's traces), else nested by time containment on their (pid, tid)
 * track.
 * The trace is parsed with yajl_tree after a bracket scan bounds its
 * nesting, so yajl_tree (which frees recursively) never sees deep input.
 */
#include "read/read.h"
#include "kscope.h"

#include <yajl/yajl_tree.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_MAX_NESTING 64

typedef struct slice {
    const char *pid, *tid; /* textual ids */
    double ts, dur;        /* us */
    const char *name;
    yajl_val ev;
    size_t index;
} slice;

static int tfail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int tfail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}

/* Deepest bracket nesting of a JSON text (strings skipped). */
static size_t json_nesting(const char *s, size_t len)
{
    size_t depth = 0, max = 0;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > max)
                max = depth;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return max;
}

/* A string value's text ("" for anything else). */
static const char *str_of(yajl_val v)
{
    const char *s = YAJL_IS_STRING(v) ? v->u.string : NULL;
    return s ? s : "";
}

static const char *id_text(yajl_val v, char *buf, size_t size)
{
    if (!v)
        return "";
    if (YAJL_IS_STRING(v))
        return str_of(v);
    if (YAJL_IS_NUMBER(v)) {
        snprintf(buf, size, "%s", YAJL_GET_NUMBER(v));
        return buf;
    }
    return "";
}

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

/* A GPU activity: a kernel/copy category, or (Proton, which writes no host
 * slices) a call stack on an event that is not a host scope. */
static int is_gpu(yajl_val ev, yajl_val args)
{
    const char *cp[] = {"cat", NULL}, *cs[] = {"call_stack", NULL};
    yajl_val cat = yajl_tree_get(ev, cp, yajl_t_string);
    const char *c = cat ? str_of(cat) : "";
    if (strstr(c, "kernel") || strstr(c, "memcpy") || strstr(c, "memset") || strcmp(c, "gpu") == 0)
        return 1;
    if (strcmp(c, "scope") == 0)
        return 0;
    return args && yajl_tree_get(args, cs, yajl_t_array) != NULL;
}

/* The node a call stack names (["ROOT", ..., leaf]); the event's own name
 * is added when the stack does not end with it. */
static kscope__pnode *stack_node(kscope__ptree *t, const slice *s, yajl_val stack, char *err,
                                 size_t errlen, int *rc)
{
    kscope__pnode *n = t->root;
    size_t len = YAJL_GET_ARRAY(stack)->len;
    *rc = 0;
    for (size_t i = 0; i < len; i++) {
        yajl_val e = YAJL_GET_ARRAY(stack)->values[i];
        if (!YAJL_IS_STRING(e) || has_control(str_of(e))) {
            *rc = tfail(err, errlen, KSCOPE_EPARSE,
                        "event %zu: call_stack entry %zu is not a plain string", s->index, i);
            return NULL;
        }
        if (i == 0 && strcmp(str_of(e), "ROOT") == 0)
            continue;
        if (i + 1 >= KSCOPE__READ_MAX_DEPTH) {
            *rc = tfail(err, errlen, KSCOPE_EPARSE, "event %zu: call stack deeper than %d",
                        s->index, KSCOPE__READ_MAX_DEPTH);
            return NULL;
        }
        const char *name = kscope__ptree_intern_cstr(t, str_of(e));
        n = name ? kscope__pnode_child(t, n, name) : NULL;
        if (!n)
            goto nomem;
    }
    if (n == t->root || strcmp(n->name, s->name) != 0) {
        const char *name = kscope__ptree_intern_cstr(t, s->name);
        n = name ? kscope__pnode_child(t, n, name) : NULL;
        if (!n)
            goto nomem;
    }
    return n;
nomem:
    *rc = tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    return NULL;
}

/* Numeric args of a host slice (its scope metrics) added to its node. */
static int add_args(kscope__ptree *t, kscope__pnode *n, yajl_val args)
{
    for (size_t i = 0; args && i < args->u.object.len; i++) {
        yajl_val v = args->u.object.values[i];
        const char *k = args->u.object.keys[i];
        if (!YAJL_IS_NUMBER(v) || has_control(k) || !isfinite(YAJL_GET_DOUBLE(v)))
            continue;
        int rc = YAJL_IS_INTEGER(v) ? kscope__pnode_add_int(t, n, k, YAJL_GET_INTEGER(v))
                                    : kscope__pnode_add_double(t, n, k, YAJL_GET_DOUBLE(v));
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int host_metrics(kscope__ptree *t, kscope__pnode *n, double dur_us)
{
    int rc = kscope__pnode_add_int(t, n, "calls", 1);
    if (rc == 0)
        rc = kscope__pnode_add_int(t, n, "wall_time (ns)", (int64_t)llround(dur_us * 1000.0));
    return rc;
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

static int add_gpu(kscope__ptree *t, const slice *s, yajl_val args, char *err, size_t errlen)
{
    const char *cs[] = {"call_stack", NULL};
    yajl_val stack = args ? yajl_tree_get(args, cs, yajl_t_array) : NULL;
    kscope__pnode *n;
    if (stack) {
        int rc;
        n = stack_node(t, s, stack, err, errlen, &rc);
        if (!n)
            return rc;
    } else {
        const char *name = kscope__ptree_intern_cstr(t, s->name);
        n = name ? kscope__pnode_child(t, t->root, name) : NULL;
    }
    if (!n)
        return tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = kscope__pnode_add_int(t, n, "time (ns)", (int64_t)llround(s->dur * 1000.0));
    if (rc == 0)
        rc = kscope__pnode_add_int(t, n, "count", 1);
    const char *did[] = {"device_id", NULL}, *dev[] = {"device", NULL},
               *dty[] = {"device_type", NULL};
    yajl_val dv = args ? yajl_tree_get(args, did, yajl_t_any) : NULL;
    if (!dv && args)
        dv = yajl_tree_get(args, dev, yajl_t_number); /* kscope's traces */
    yajl_val tv = args ? yajl_tree_get(args, dty, yajl_t_string) : NULL;
    char idbuf[32];
    if (rc == 0)
        rc = kscope__pnode_set_string(t, n, "device_id",
                                      dv ? id_text(dv, idbuf, sizeof idbuf) : "0");
    if (rc == 0)
        rc = kscope__pnode_set_string(t, n, "device_type", tv ? str_of(tv) : "CUDA");
    static const char *const sums[] = {"bytes", "flops", "flops8", "flops16", "flops32", "flops64"};
    for (size_t i = 0; rc == 0 && args && i < sizeof sums / sizeof *sums; i++) {
        const char *p[] = {sums[i], NULL};
        yajl_val v = yajl_tree_get(args, p, yajl_t_number);
        if (!v)
            continue;
        double d = YAJL_GET_DOUBLE(v);
        if (!isfinite(d) || d < 0)
            return tfail(err, errlen, KSCOPE_EPARSE,
                         "event %zu: args.%s is not a non-negative "
                         "number",
                         s->index, sums[i]);
        rc = YAJL_IS_INTEGER(v) ? kscope__pnode_add_int(t, n, sums[i], YAJL_GET_INTEGER(v))
                                : kscope__pnode_add_double(t, n, sums[i], d);
        if (rc == 0)
            rc = kscope__ptree_add_inclusive(t, sums[i]);
    }
    if (rc < 0)
        return tfail(err, errlen, rc, "out of memory");
    return 0;
}

/* Nest host slices by containment per track (slices sorted by track, time). */
static int add_host(kscope__ptree *t, slice *s, size_t n, char *err, size_t errlen)
{
    struct open {
        double end;
        kscope__pnode *node;
    } *stack = malloc((KSCOPE__READ_MAX_DEPTH + 1) * sizeof *stack);
    if (!stack)
        return tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(s[i].pid, s[i - 1].pid) || strcmp(s[i].tid, s[i - 1].tid))
            depth = 0;
        while (depth && stack[depth - 1].end <= s[i].ts + 1e-9)
            depth--;
        if (depth == KSCOPE__READ_MAX_DEPTH) {
            free(stack);
            return tfail(err, errlen, KSCOPE_EPARSE, "slices nested deeper than %d levels",
                         KSCOPE__READ_MAX_DEPTH);
        }
        kscope__pnode *parent = depth ? stack[depth - 1].node : t->root;
        const char *name = kscope__ptree_intern_cstr(t, s[i].name);
        kscope__pnode *node = name ? kscope__pnode_child(t, parent, name) : NULL;
        int rc = node ? host_metrics(t, node, s[i].dur) : KSCOPE_ENOMEM;
        if (rc < 0) {
            free(stack);
            return tfail(err, errlen, rc, "out of memory");
        }
        stack[depth].end = s[i].ts + s[i].dur;
        stack[depth].node = node;
        depth++;
    }
    free(stack);
    return 0;
}

static int build(kscope__ptree *t, yajl_val events, char *err, size_t errlen)
{
    size_t ne = YAJL_GET_ARRAY(events)->len;
    slice *host = malloc((ne ? ne : 1) * sizeof *host);
    char(*ids)[2][32] = malloc((ne ? ne : 1) * sizeof *ids);
    size_t nh = 0;
    int rc = 0, ngpu = 0;
    if (!host || !ids) {
        rc = tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ne && rc == 0; i++) {
        yajl_val ev = YAJL_GET_ARRAY(events)->values[i];
        if (!YAJL_IS_OBJECT(ev)) {
            rc = tfail(err, errlen, KSCOPE_EPARSE, "event %zu is not an object", i);
            break;
        }
        const char *pph[] = {"ph", NULL}, *pname[] = {"name", NULL}, *pts[] = {"ts", NULL},
                   *pdur[] = {"dur", NULL}, *pargs[] = {"args", NULL}, *ppid[] = {"pid", NULL},
                   *ptid[] = {"tid", NULL};
        yajl_val ph = yajl_tree_get(ev, pph, yajl_t_string);
        if (!ph || strcmp(str_of(ph), "X") != 0)
            continue; /* metadata, counters, flows, instants: not tree nodes */
        yajl_val name = yajl_tree_get(ev, pname, yajl_t_string);
        yajl_val ts = yajl_tree_get(ev, pts, yajl_t_number);
        yajl_val dur = yajl_tree_get(ev, pdur, yajl_t_number);
        yajl_val args = yajl_tree_get(ev, pargs, yajl_t_object);
        if (!name || has_control(str_of(name))) {
            rc = tfail(err, errlen, KSCOPE_EPARSE,
                       "event %zu: \"name\" is missing, not a string "
                       "or holds a control character",
                       i);
            break;
        }
        if (!ts || !dur || !isfinite(YAJL_GET_DOUBLE(ts)) || !isfinite(YAJL_GET_DOUBLE(dur)) ||
            YAJL_GET_DOUBLE(dur) < 0) {
            rc = tfail(err, errlen, KSCOPE_EPARSE,
                       "event %zu ('%.60s'): \"ts\" and \"dur\" must be numbers, dur >= 0", i,
                       str_of(name));
            break;
        }
        slice s = {.ts = YAJL_GET_DOUBLE(ts),
                   .dur = YAJL_GET_DOUBLE(dur),
                   .name = str_of(name),
                   .ev = ev,
                   .index = i};
        s.pid = id_text(yajl_tree_get(ev, ppid, yajl_t_any), ids[i][0], sizeof ids[i][0]);
        s.tid = id_text(yajl_tree_get(ev, ptid, yajl_t_any), ids[i][1], sizeof ids[i][1]);
        const char *pcs[] = {"call_stack", NULL};
        yajl_val stack = args ? yajl_tree_get(args, pcs, yajl_t_array) : NULL;
        if (is_gpu(ev, args)) {
            rc = add_gpu(t, &s, args, err, errlen);
            ngpu++;
        } else if (stack) { /* a host scope that says where it is */
            kscope__pnode *n = stack_node(t, &s, stack, err, errlen, &rc);
            if (n)
                rc = host_metrics(t, n, s.dur);
            if (rc == 0 && n && add_args(t, n, args) < 0)
                rc = tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
        } else {
            host[nh++] = s;
        }
    }
    if (rc == 0 && nh) {
        qsort(host, nh, sizeof *host, by_track_time);
        rc = add_host(t, host, nh, err, errlen);
    }
    if (rc == 0 && ngpu) {
        if (kscope__ptree_add_inclusive(t, "time (ns)") < 0 ||
            kscope__ptree_add_inclusive(t, "count") < 0)
            rc = tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    }
out:
    free(host);
    free(ids);
    return rc;
}

int kscope__read_chrome_trace(const char *buf, size_t len, kscope__ptree **out, char *err,
                              size_t errlen)
{
    *out = NULL;
    if (json_nesting(buf, len) > TRACE_MAX_NESTING)
        return tfail(err, errlen, KSCOPE_EPARSE, "JSON nested deeper than %d levels",
                     TRACE_MAX_NESTING);
    char *text = malloc(len + 1);
    if (!text)
        return tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    memcpy(text, buf, len);
    text[len] = '\0';
    if (strlen(text) != len) {
        free(text);
        return tfail(err, errlen, KSCOPE_EPARSE, "not valid JSON: a NUL byte in the text");
    }
    char yerr[256];
    yerr[0] = '\0';
    yajl_val doc = yajl_tree_parse(text, yerr, sizeof yerr);
    free(text);
    if (!doc) {
        yerr[strcspn(yerr, "\r\n")] = '\0'; /* the first line says it */
        if (strstr(yerr, "premature EOF"))
            return tfail(err, errlen, KSCOPE_EPARSE, "truncated: the JSON ends early");
        if (strstr(yerr, "trailing garbage"))
            return tfail(err, errlen, KSCOPE_EPARSE, "data after the end of the trace");
        return tfail(err, errlen, KSCOPE_EPARSE, "not valid JSON: %.200s",
                     yerr[0] ? yerr : "parse error");
    }
    const char *pe[] = {"traceEvents", NULL};
    yajl_val events = YAJL_IS_ARRAY(doc) ? doc : yajl_tree_get(doc, pe, yajl_t_array);
    int rc;
    if (!events) {
        rc = tfail(err, errlen, KSCOPE_EPARSE, "not a Chrome trace: no \"traceEvents\" array");
    } else {
        kscope__ptree *t = kscope__ptree_new();
        rc = t ? build(t, events, err, errlen) : tfail(err, errlen, KSCOPE_ENOMEM, "out of memory");
        if (rc == 0)
            *out = t;
        else
            kscope__ptree_free(t);
    }
    yajl_tree_free(doc);
    return rc;
}
