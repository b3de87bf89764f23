/*
 * chrome-trace-read.c - the Chrome trace reader: the one place that reads
 * Chrome trace JSON, the {"traceEvents": [...]} object or the bare array
 * of events, streamed through yajl. Each event is handed on as it closes
 * (format/events.h: its kind, and what the file wrote, kscope__tev_read),
 * so memory follows one event, not the trace; the top-level "metadata"
 * object (the run's facts in kscope's traces) is handed on as a
 * KSCOPE__TEV_RUN event when it closes. What the events mean is for the
 * consumers: the tree of a trace (trace-tree.c), the HTML page's timeline
 * (report/trace-data.c), merge (merge-trace.c) and a trace writer.
 *
 * What no Chrome trace is, the reader refuses: JSON nested deeper than
 * TRACE_MAX_NESTING levels, an event that is no object, a document with no
 * events' array, and (as every reader, read.h) a value longer than
 * KSCOPE__READ_MAX_TOKEN; call stacks, when kept, deeper than
 * KSCOPE__READ_MAX_DEPTH.
 */
#define _GNU_SOURCE /* memmem */
#include "read/yajl-in.h"
#include "util/util.h"
#include "kscope.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_MAX_NESTING 64
#define META_MAX          64 /* strings and numbers of the metadata kept (all with FIELDS) */
#define PLACEABLE_US      4e15

typedef enum { T_DOC, T_EVENTS, T_EVENT, T_ARGS, T_STACK, T_META, T_SKIP } tstate;

/* A value of the event being read, as offsets: its text grows (and
 * moves) while the event is read. Scalars are in txt, objects and arrays
 * (when kept) in cap. */
typedef struct slot {
    kscope__tev_type type;
    size_t off, len;
} slot;

/* A member: its key in txt and its value. */
typedef struct member {
    size_t key, keylen;
    slot v;
} member;

typedef struct members {
    member *at;
    size_t n, cap;
} members;

struct kscope__chrome_read {
    kscope__yajl_in in; /* the parser, its counts and the first refusal */
    kscope__tev_fn fn;
    void *arg;
    unsigned keep;
    tstate st[TRACE_MAX_NESTING + 2];
    size_t depth;
    /* the last key, as far as matching goes (empty past 255 bytes), and
     * where it is in txt (members keep it whole) */
    char key[256];
    size_t keylen, key_off, key_len;
    int seen_events;
    size_t index; /* events seen */
    /* the event (or metadata object) being read */
    char *txt;
    size_t ntxt, captxt;
    slot name, ph, cat, pid, tid, ts, dur, id;
    members args, fields;
    size_t *stack; /* offsets in txt */
    size_t nstack, capstack;
    int has_stack, stack_bad;
    /* objects and arrays kept as JSON: cap_depth > 0 while inside one */
    kscope__jsonw cap;
    size_t cap_depth, cap_start;
    size_t cap_field; /* the member it is the value of: index + 1 in fields, or 0 */
    int cap_args;     /* the value captured is an args object */
    slot args_json;
    size_t *numbers; /* offset, length pairs in args_json */
    size_t nnumbers, capnumbers;
    /* pointers handed on with the event */
    kscope__tev_field *out_args, *out_fields;
    size_t cap_out_args, cap_out_fields;
    const char **out_stack;
    size_t cap_out_stack;
};
typedef struct kscope__chrome_read reader;

/* Refuse the input (the first refusal wins). 0, for yajl. */
#define rfail(p, code, ...) KSCOPE__YAJL_STOP(&(p)->in, (code), __VA_ARGS__)

static int nomem(reader *p)
{
    return rfail(p, KSCOPE_ENOMEM, "out of memory");
}

/* Room for `need` items of `size` bytes in *arr: 1, or 0 when out of
 * memory. An array that needs none stays as it is (NULL: no items). */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
    return need <= *cap || kscope__room(arr, cap, need, size, 16) == 0;
}

/* Append s[0..l) and a NUL to txt: its offset, or (size_t)-1. */
static size_t text(reader *p, const char *s, size_t l)
{
    if (!grow((void **)&p->txt, &p->captxt, p->ntxt + l + 1, 1))
        return (size_t)-1;
    size_t off = p->ntxt;
    if (l)
        memcpy(p->txt + off, s, l);
    p->txt[off + l] = '\0';
    p->ntxt += l + 1;
    return off;
}

static int key_is(const reader *p, const char *k)
{
    size_t l = strlen(k);
    return p->keylen == l && memcmp(p->key, k, l) == 0;
}

static int push(reader *p, tstate s)
{
    if (p->depth >= TRACE_MAX_NESTING)
        return rfail(p, KSCOPE_EPARSE, "JSON nested deeper than %d levels", TRACE_MAX_NESTING);
    p->st[p->depth++] = s;
    return 1;
}

static tstate cur(const reader *p)
{
    return p->depth ? p->st[p->depth - 1] : T_DOC;
}

/* A member (key: the last key) with the value in v. */
static int add_member(reader *p, members *m, slot v)
{
    if (!grow((void **)&m->at, &m->cap, m->n + 1, sizeof *m->at))
        return nomem(p);
    m->at[m->n++] = (member){p->key_off, p->key_len, v};
    return 1;
}

/* --------------------------------------------------- values kept as JSON */

/* Capture: objects and arrays written again as compact JSON, numbers as
 * written, so a copy of the event holds what the file did. */
static int capture_begin(reader *p, int is_args, int as_field)
{
    p->cap_depth = 1;
    p->cap.need_comma = 0;
    p->cap_start = p->cap.out.len;
    p->cap_args = is_args && (p->keep & KSCOPE__TREAD_ARGS);
    p->cap_field = 0;
    if (as_field) {
        if (!add_member(p, &p->fields, (slot){0, 0, 0}))
            return 0;
        p->cap_field = p->fields.n;
    }
    if (p->cap_args)
        p->nnumbers = 0;
    return 1;
}

static void cap_raw(reader *p, const char *s, size_t l)
{
    if (p->cap.need_comma)
        kscope__jw_raw(&p->cap, ",", 1);
    p->cap.need_comma = 0;
    kscope__jw_raw(&p->cap, s, l);
}

static void cap_key(reader *p, const char *k, size_t l)
{
    cap_raw(p, "\"", 1);
    kscope__jw_escape(&p->cap, k, l);
    kscope__jw_raw(&p->cap, "\":", 2);
}

static int cap_scalar(reader *p, const char *s, size_t l, kscope__tev_type type)
{
    if (type == KSCOPE__TEV_STRING) {
        cap_raw(p, "\"", 1);
        kscope__jw_escape(&p->cap, s, l);
        kscope__jw_raw(&p->cap, "\"", 1);
    } else if (type == KSCOPE__TEV_NUMBER && p->cap_args) {
        cap_raw(p, "", 0);
        if (!grow((void **)&p->numbers, &p->capnumbers, p->nnumbers + 2, sizeof *p->numbers))
            return nomem(p);
        p->numbers[p->nnumbers++] = p->cap.out.len - p->cap_start;
        p->numbers[p->nnumbers++] = l;
        kscope__jw_raw(&p->cap, s, l);
    } else {
        cap_raw(p, s, l);
    }
    p->cap.need_comma = 1;
    return 1;
}

/* The captured value closed: it goes to its member, and args_json. */
static int capture_end(reader *p, kscope__tev_type type)
{
    slot v = {type, p->cap_start, p->cap.out.len - p->cap_start};
    kscope__jw_raw(&p->cap, "", 1); /* its NUL */
    if (p->cap.out.failed)
        return nomem(p);
    if (p->cap_field)
        p->fields.at[p->cap_field - 1].v = v;
    if (p->cap_args)
        p->args_json = v;
    p->cap_args = 0;
    return 1;
}

/* --------------------------------------------------------- the event */

static void begin_event(reader *p)
{
    p->ntxt = 0;
    p->name = p->ph = p->cat = p->pid = p->tid = p->ts = p->dur = p->id = (slot){0, 0, 0};
    p->args.n = p->fields.n = p->nstack = p->nnumbers = 0;
    p->has_stack = p->stack_bad = 0;
    p->args_json = (slot){0, 0, 0};
    kscope__jw_clear(&p->cap);
}

#define NOT_KEPT ((size_t)-1) /* an object or array whose text was not kept */

static const char *at(const reader *p, slot s)
{
    if (s.type == KSCOPE__TEV_ABSENT || s.off == NOT_KEPT)
        return NULL;
    if (s.type == KSCOPE__TEV_OBJECT || s.type == KSCOPE__TEV_ARRAY)
        return p->cap.out.buf ? p->cap.out.buf + s.off : NULL;
    return p->txt + s.off;
}

static kscope__tev_value value(const reader *p, slot s)
{
    const char *t = at(p, s);
    return (kscope__tev_value){s.type, t, t ? s.len : 0};
}

/* Whether a member is the string `want` (read as C reads it: to its
 * first NUL, as every reader of these members always has). */
static int slot_is(const reader *p, slot s, const char *want)
{
    return s.type == KSCOPE__TEV_STRING && strcmp(p->txt + s.off, want) == 0;
}

/* Members as the event hands them on. */
static kscope__tev_field *out_members(reader *p, const members *m, kscope__tev_field **out,
                                      size_t *cap)
{
    if (!m->n)
        return NULL;
    if (!grow((void **)out, cap, m->n, sizeof **out))
        return NULL;
    for (size_t i = 0; i < m->n; i++)
        (*out)[i] =
            (kscope__tev_field){p->txt + m->at[i].key, m->at[i].keylen, value(p, m->at[i].v)};
    return *out;
}

/* The last scalar string (or number, with numbers) of args member `key`. */
static const kscope__tev_field *arg(const kscope__tev_read *r, const char *key, int numbers)
{
    const kscope__tev_field *found = NULL;
    for (size_t i = 0; i < r->nargs; i++)
        if (strcmp(r->args[i].key, key) == 0 &&
            (r->args[i].v.type == KSCOPE__TEV_STRING ||
             (numbers && r->args[i].v.type == KSCOPE__TEV_NUMBER)))
            found = &r->args[i];
    return found;
}

/* Whether an "X" event is GPU activity: by its category, or, when that
 * says nothing, by its call stack (Proton's kernels carry one). */
static int is_gpu(const char *cat, int has_stack)
{
    if (strstr(cat, "kernel") || strstr(cat, "memcpy") || strstr(cat, "memset") ||
        strcmp(cat, "gpu") == 0)
        return 1;
    if (strcmp(cat, "scope") == 0)
        return 0;
    return has_stack;
}

/* The event's kind, by its phase: one letter ("XY" is no "X"). */
static kscope__tev_kind kind_of(const reader *p, const char *cat)
{
    const char *ph = p->ph.type == KSCOPE__TEV_STRING ? p->txt + p->ph.off : "";
    switch (ph[0] && !ph[1] ? ph[0] : 0) {
    case 'X':
        return is_gpu(cat, p->has_stack) ? KSCOPE__TEV_GPU : KSCOPE__TEV_SLICE;
    case 'B':
        return KSCOPE__TEV_BEGIN;
    case 'E':
        return KSCOPE__TEV_END;
    case 'i':
    case 'I':
        return KSCOPE__TEV_MARK;
    case 'C':
        return KSCOPE__TEV_COUNTER;
    case 's':
        return KSCOPE__TEV_FLOW_START;
    case 'f':
        return KSCOPE__TEV_FLOW_END;
    case 'M':
        return slot_is(p, p->name, "process_name")         ? KSCOPE__TEV_PROCESS
               : slot_is(p, p->name, "thread_name")        ? KSCOPE__TEV_THREAD
               : slot_is(p, p->name, "process_sort_index") ? KSCOPE__TEV_PROCESS_SORT
               : slot_is(p, p->name, "thread_sort_index")  ? KSCOPE__TEV_THREAD_SORT
                                                           : KSCOPE__TEV_META;
    default:
        return KSCOPE__TEV_OTHER;
    }
}

/* A number's text as a double (0 when it is none). */
static double number(kscope__tev_value v)
{
    return v.type == KSCOPE__TEV_NUMBER ? strtod(v.text, NULL) : 0;
}

/* Microseconds as the events' nanoseconds (0 past what int64 holds). */
static int64_t ns(double us)
{
    return isfinite(us) && fabs(us) <= PLACEABLE_US ? (int64_t)llround(us * 1000.0) : 0;
}

/* The event's typed fields, for writers; consumers read r. */
static void typed(reader *p, kscope__tev *e, const kscope__tev_read *r)
{
    static char empty[1];
    const char *cat = p->cat.type == KSCOPE__TEV_STRING ? p->txt + p->cat.off : empty;
    char shortcat[64]; /* a category is judged on its first 63 bytes */
    snprintf(shortcat, sizeof shortcat, "%s", cat);
    e->kind = kind_of(p, shortcat);
    e->cat = cat;
    e->name = r->name.type == KSCOPE__TEV_STRING ? r->name.text : empty;
    const kscope__tev_field *a = NULL; /* what names a process, or sorts it */
    if (e->kind == KSCOPE__TEV_PROCESS || e->kind == KSCOPE__TEV_THREAD)
        e->name = (a = arg(r, "name", 0)) ? a->v.text : empty;
    else if (e->kind == KSCOPE__TEV_PROCESS_SORT || e->kind == KSCOPE__TEV_THREAD_SORT)
        e->value = (a = arg(r, "sort_index", 1)) ? strtod(a->v.text, NULL) : 0;
    else if (e->kind == KSCOPE__TEV_COUNTER)
        e->value = (a = arg(r, "value", 1)) ? number(a->v) : 0;
    e->pid = r->pid.type == KSCOPE__TEV_NUMBER ? (int)strtol(r->pid.text, NULL, 10) : 0;
    e->tid = r->tid.type == KSCOPE__TEV_NUMBER ? strtoull(r->tid.text, NULL, 10) : 0;
    e->ts_ns = ns(number(r->ts));
    e->dur_ns = ns(number(r->dur));
}

/* An event closed: hand it on. */
static int end_event(reader *p)
{
    kscope__tev_read r = {.index = p->index++};
    r.name = value(p, p->name);
    r.pid = value(p, p->pid);
    r.tid = value(p, p->tid);
    r.ts = value(p, p->ts);
    r.dur = value(p, p->dur);
    r.id = value(p, p->id);
    r.args = out_members(p, &p->args, &p->out_args, &p->cap_out_args);
    r.nargs = r.args ? p->args.n : 0;
    r.fields = out_members(p, &p->fields, &p->out_fields, &p->cap_out_fields);
    r.nfields = r.fields ? p->fields.n : 0;
    if ((p->args.n && !r.args) || (p->fields.n && !r.fields) ||
        !grow((void **)&p->out_stack, &p->cap_out_stack, p->nstack + 1, sizeof *p->out_stack))
        return nomem(p);
    r.has_stack = p->has_stack;
    r.stack_bad = p->stack_bad;
    r.args_json = value(p, p->args_json);
    r.numbers = r.args_json.text ? p->numbers : NULL;
    r.nnumbers = r.args_json.text ? p->nnumbers : 0;
    kscope__tev e = {.read = &r};
    typed(p, &e, &r);
    for (size_t i = 0; i < p->nstack; i++)
        p->out_stack[i] = p->txt + p->stack[i];
    e.stack = p->nstack ? p->out_stack : NULL;
    e.nstack = p->nstack;
    int rc = p->fn(&e, p->arg);
    if (rc != 0) /* the consumer says why */
        return rfail(p, rc < 0 ? rc : KSCOPE_ESTATE, "%s", "");
    return 1;
}

/* The metadata object closed: its members as the run's facts. */
static int end_meta(reader *p)
{
    kscope__tev_read r = {.index = p->index};
    r.fields = out_members(p, &p->fields, &p->out_fields, &p->cap_out_fields);
    r.nfields = r.fields ? p->fields.n : 0;
    if (p->fields.n && !r.fields)
        return nomem(p);
    kscope__tev e = {.kind = KSCOPE__TEV_RUN, .name = "", .cat = "", .read = &r};
    int rc = p->fn(&e, p->arg);
    if (rc != 0)
        return rfail(p, rc < 0 ? rc : KSCOPE_ESTATE, "%s", "");
    return 1;
}

/* ------------------------------------------------------- yajl callbacks */

/* Where the event keeps the member of the last key, when it is one that
 * every consumer reads; NULL when it is another. */
static slot *common(reader *p)
{
    return key_is(p, "name")                         ? &p->name
           : key_is(p, "ph")                         ? &p->ph
           : key_is(p, "cat")                        ? &p->cat
           : key_is(p, "pid")                        ? &p->pid
           : key_is(p, "tid")                        ? &p->tid
           : key_is(p, "ts")                         ? &p->ts
           : key_is(p, "dur")                        ? &p->dur
           : key_is(p, "id") || key_is(p, "bind_id") ? &p->id
                                                     : NULL;
}

/* A scalar of the event itself. */
static int event_scalar(reader *p, slot v)
{
    slot *c = common(p);
    if (c)
        *c = v;
    return !(p->keep & KSCOPE__TREAD_FIELDS) || add_member(p, &p->fields, v);
}

static int stack_entry(reader *p, const char *s, size_t l, kscope__tev_type type)
{
    if (type != KSCOPE__TEV_STRING || memchr(s, 0, l)) {
        p->stack_bad = 1;
        return 1;
    }
    if (!(p->keep & KSCOPE__TREAD_STACK))
        return 1;
    if (p->nstack + 1 >= KSCOPE__READ_MAX_DEPTH)
        return rfail(p, KSCOPE_EPARSE, "event %zu: call stack deeper than %d", p->index,
                     KSCOPE__READ_MAX_DEPTH);
    size_t off = text(p, s, l);
    if (off == (size_t)-1 ||
        !grow((void **)&p->stack, &p->capstack, p->nstack + 1, sizeof *p->stack))
        return nomem(p);
    p->stack[p->nstack++] = off;
    return 1;
}

static int on_scalar(void *ctx, kscope__tev_type type, const char *s, size_t l)
{
    reader *p = ctx;
    if (p->cap_depth && !cap_scalar(p, s, l, type))
        return 0;
    tstate c = cur(p);
    if (c == T_DOC && p->depth == 0)
        return rfail(p, KSCOPE_EPARSE, "not a Chrome trace: a single value");
    if (c == T_EVENTS)
        return rfail(p, KSCOPE_EPARSE, "event %zu is not an object", p->index++);
    if (c == T_STACK)
        return stack_entry(p, s, l, type);
    if (c != T_EVENT && c != T_ARGS && c != T_META)
        return 1;
    if (c == T_META && !(p->keep & KSCOPE__TREAD_FIELDS) &&
        (p->fields.n >= META_MAX || type == KSCOPE__TEV_LITERAL))
        return 1; /* the run's facts are strings and numbers */
    size_t off = text(p, s, l);
    if (off == (size_t)-1)
        return nomem(p);
    slot v = {type, off, l};
    if (c == T_EVENT)
        return event_scalar(p, v);
    return add_member(p, c == T_ARGS ? &p->args : &p->fields, v);
}

static int on_map_key(void *ctx, const char *k, size_t l)
{
    reader *p = ctx;
    if (p->cap_depth)
        cap_key(p, k, l);
    tstate c = cur(p);
    if (c == T_EVENT || c == T_ARGS || c == T_META) { /* kept whole with its member */
        p->key_off = text(p, k, l);
        p->key_len = l;
        if (p->key_off == (size_t)-1)
            return nomem(p);
    }
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

/* An object or array begins: where it leads, and whether it is kept (as
 * a member of the event or of the metadata, or as the event's args). */
static int open_value(reader *p, tstate next, int is_map)
{
    tstate c = cur(p);
    int fields = (p->keep & KSCOPE__TREAD_FIELDS) && (c == T_EVENT || c == T_META);
    int is_args = c == T_EVENT && is_map && next == T_ARGS;
    slot *member = c == T_EVENT ? common(p) : NULL;
    if (member) /* a member read by its type only */
        *member = (slot){is_map ? KSCOPE__TEV_OBJECT : KSCOPE__TEV_ARRAY, NOT_KEPT, 0};
    if (p->cap_depth) {
        p->cap_depth++;
        kscope__jw_open(&p->cap, is_map ? '{' : '[');
    } else if (fields || (is_args && (p->keep & KSCOPE__TREAD_ARGS))) {
        if (!capture_begin(p, is_args, fields))
            return 0;
        kscope__jw_open(&p->cap, is_map ? '{' : '[');
    }
    return push(p, next);
}

static int on_start_map(void *ctx)
{
    reader *p = ctx;
    if (p->depth == 0)
        return push(p, T_DOC);
    switch (cur(p)) {
    case T_EVENTS:
        begin_event(p);
        return push(p, T_EVENT);
    case T_EVENT:
        return open_value(p, key_is(p, "args") ? T_ARGS : T_SKIP, 1);
    case T_DOC:
        if (p->depth == 1 && key_is(p, "metadata")) {
            begin_event(p);
            return push(p, T_META);
        }
        return push(p, T_SKIP);
    default:
        return open_value(p, T_SKIP, 1);
    }
}

static int close_value(reader *p, int is_map)
{
    if (p->cap_depth) {
        kscope__jw_close(&p->cap, is_map ? '}' : ']');
        if (--p->cap_depth == 0 && !capture_end(p, is_map ? KSCOPE__TEV_OBJECT : KSCOPE__TEV_ARRAY))
            return 0;
    }
    return 1;
}

static int on_end_map(void *ctx)
{
    reader *p = ctx;
    tstate s = cur(p);
    p->depth--;
    if (s == T_EVENT)
        return end_event(p);
    if (s == T_META)
        return end_meta(p);
    return close_value(p, 1);
}

static int on_start_array(void *ctx)
{
    reader *p = ctx;
    if (p->depth == 0) { /* the bare-array form */
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
        return rfail(p, KSCOPE_EPARSE, "event %zu is not an object", p->index++);
    case T_ARGS:
        if (key_is(p, "call_stack")) {
            p->has_stack = 1;
            p->nstack = 0;
            return open_value(p, T_STACK, 0);
        }
        return open_value(p, T_SKIP, 0);
    case T_STACK:
        p->stack_bad = 1;
        return open_value(p, T_SKIP, 0);
    default:
        return open_value(p, T_SKIP, 0);
    }
}

static int on_end_array(void *ctx)
{
    reader *p = ctx;
    p->depth--;
    return close_value(p, 0);
}

/* The handlers of yajl's parse events (yajl-in.c). */
static const kscope__hevents handlers = {on_start_map,   on_map_key,   on_end_map,
                                         on_start_array, on_end_array, on_scalar};

/* ---------------------------------------------------------------- API */

void *kscope__chrome_read_new(kscope__tev_fn fn, void *arg, unsigned keep)
{
    reader *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->fn = fn;
    p->arg = arg;
    p->keep = keep;
    kscope__jw_init(&p->cap);
    if (kscope__yajl_in_init(&p->in, &handlers, p, "truncated: the JSON ends early",
                             "data after the end of the trace") != 0) {
        kscope__chrome_read_free(p);
        return NULL;
    }
    return p;
}

void kscope__chrome_read_free(void *reader_)
{
    reader *p = reader_;
    if (!p)
        return;
    kscope__yajl_in_free(&p->in);
    kscope__jw_free(&p->cap);
    free(p->txt), free(p->args.at), free(p->fields.at), free(p->stack), free(p->numbers);
    free(p->out_args), free(p->out_fields), free(p->out_stack);
    free(p);
}

int kscope__chrome_read_feed(void *reader_, const char *buf, size_t len, char *err, size_t errlen)
{
    reader *p = reader_;
    return kscope__yajl_in_feed(&p->in, buf, len, err, errlen);
}

int kscope__chrome_read_finish(void *reader_, char *err, size_t errlen)
{
    reader *p = reader_;
    int rc = kscope__yajl_in_finish(&p->in, err, errlen);
    if (rc == 0 && !p->seen_events) {
        snprintf(err, errlen, "not a Chrome trace: no \"traceEvents\" array");
        return KSCOPE_EPARSE;
    }
    return rc;
}

/* A JSON array is a .hatchet ([node, device info]) or a trace in the bare
 * array form ([event, ...]): the first key tells. */
static int array_is_trace(const char *head, size_t n)
{
    static const char *const trace_keys[] = {"\"ph\"", "\"ts\"", "\"pid\""};
    static const char *const tree_keys[] = {"\"frame\"", "\"children\"", "\"metrics\""};
    const char *first_trace = NULL, *first_tree = NULL;
    for (int k = 0; k < 3; k++) {
        const char *a = memmem(head, n, trace_keys[k], strlen(trace_keys[k]));
        const char *b = memmem(head, n, tree_keys[k], strlen(tree_keys[k]));
        if (a && (!first_trace || a < first_trace))
            first_trace = a;
        if (b && (!first_tree || b < first_tree))
            first_tree = b;
    }
    return first_trace && (!first_tree || first_trace < first_tree);
}

/* A Chrome trace is a JSON object, or an array whose first key is an
 * event's. */
static int sniff(const char *head, size_t n)
{
    size_t i = kscope__read_skip_space(head, n);
    if (i == n)
        return 0;
    return head[i] == '{' || (head[i] == '[' && array_is_trace(head, n)) ? 2 : 0;
}

const kscope__reader kscope__chrome_trace_reader = {
    .sniff = sniff,
    .looks = "a Chrome trace ('{')",
    .trace_new = kscope__chrome_read_new,
    .feed = kscope__chrome_read_feed,
    .trace_finish = kscope__chrome_read_finish,
    .free = kscope__chrome_read_free,
};
