/*
 * hatchet-msgpack-read.c - the .hatchet_msgpack reader.
 *
 * The file has the shape of a .hatchet in MessagePack. msgpack-c's public
 * unpack template (msgpack/unpack_template.h) does the decoding; the
 * callbacks given to it here build no msgpack objects but turn what it
 * decodes into the events of the .hatchet tree builder (hatchet-build.c),
 * so both encodings share every check and message and memory follows the
 * tree, not the file. The template reports a container's end only when it
 * hands the finished container to its parent, so a small stack of open
 * containers (map or array, expecting a key or a value) runs beside it.
 * The template resumes where a chunk ended, so files are read in chunks.
 */
#include "read/read.h"
#include "util/util.h"
#include "kscope.h"

/* Each tree level is two msgpack levels (node map, children array); the
 * builder refuses trees deeper than KSCOPE__READ_MAX_DEPTH before this. */
#define MSGPACK_EMBED_STACK_SIZE (2 * KSCOPE__READ_MAX_DEPTH + 16)
#include <msgpack/object.h>
#include <msgpack/unpack.h>
#include <msgpack/unpack_define.h>

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A value as the template sees it: all we need is whether it was a map or
 * an array (to close it when it is handed to its parent). */
typedef struct mobj {
    uint8_t container; /* 0 scalar, 1 map, 2 array */
} mobj;

typedef struct mframe {
    uint8_t is_map, want_key;
} mframe;

typedef struct mp_user {
    kscope__hjson *h;
    mframe *st;
    size_t depth, cap;
} mp_user;

#define msgpack_unpack_struct(name)    struct kscope__mp##name
#define msgpack_unpack_func(ret, name) static __attribute__((unused)) ret kscope__mp##name
#define msgpack_unpack_callback(name)  mp_cb##name
#define msgpack_unpack_object          mobj
#define msgpack_unpack_user            mp_user

/* What the builder's handler said of an event (kscope__hjson_events), as
 * the template takes it. */
static int went_on(int ok)
{
    return ok ? 0 : MSGPACK_UNPACK_PARSE_ERROR;
}

static int refuse(mp_user *u, const char *msg)
{
    kscope__hjson_fail(u->h, KSCOPE_EPARSE, msg);
    return MSGPACK_UNPACK_PARSE_ERROR;
}

/* A scalar: a map's key, or a value. */
static int scalar(mp_user *u, kscope__tev_type type, const char *s, size_t l, mobj *o)
{
    o->container = 0;
    mframe *f = u->depth ? &u->st[u->depth - 1] : NULL;
    if (f && f->is_map && f->want_key) {
        if (type != KSCOPE__TEV_STRING)
            return refuse(u, "a map key is not a string");
        f->want_key = 0;
        return went_on(kscope__hjson_events.map_key(u->h, s, l));
    }
    return went_on(kscope__hjson_events.scalar(u->h, type, s, l));
}

static int number_int(mp_user *u, int64_t v, mobj *o)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%" PRId64, v);
    return scalar(u, KSCOPE__TEV_NUMBER, buf, (size_t)n, o);
}

static int number_uint(mp_user *u, uint64_t v, mobj *o)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%" PRIu64, v);
    return scalar(u, KSCOPE__TEV_NUMBER, buf, (size_t)n, o);
}

static int number_double(mp_user *u, double v, mobj *o)
{
    if (!isfinite(v))
        return refuse(u, "a number is not finite (NaN or infinity)");
    char buf[40];
    int n = snprintf(buf, sizeof buf, "%.17g", v);
    if (!strpbrk(buf, ".eE")) /* keep it a floating-point number */
        n += snprintf(buf + n, sizeof buf - (size_t)n, ".0");
    return scalar(u, KSCOPE__TEV_NUMBER, buf, (size_t)n, o);
}

static mobj mp_cb_root(mp_user *u)
{
    (void)u;
    mobj o = {0};
    return o;
}
/* The template's number callbacks: every width is one of the builder's
 * three kinds of number (the value converted as a call converts it). */
#define mp_cb_uint8  number_uint
#define mp_cb_uint16 number_uint
#define mp_cb_uint32 number_uint
#define mp_cb_uint64 number_uint
#define mp_cb_int8   number_int
#define mp_cb_int16  number_int
#define mp_cb_int32  number_int
#define mp_cb_int64  number_int
#define mp_cb_float  number_double
#define mp_cb_double number_double
static int mp_cb_nil(mp_user *u, mobj *o)
{
    return scalar(u, KSCOPE__TEV_LITERAL, "null", 4, o);
}
static int mp_cb_true(mp_user *u, mobj *o)
{
    return scalar(u, KSCOPE__TEV_LITERAL, "true", 4, o);
}
static int mp_cb_false(mp_user *u, mobj *o)
{
    return scalar(u, KSCOPE__TEV_LITERAL, "false", 5, o);
}
static int mp_cb_str(mp_user *u, const char *b, const char *p, unsigned int l, mobj *o)
{
    (void)b;
    /* an empty string may come with no pointer (the first value a chunk
     * resumes with) */
    return scalar(u, KSCOPE__TEV_STRING, l ? p : "", l, o);
}
static int mp_cb_bin(mp_user *u, const char *b, const char *p, unsigned int l, mobj *o)
{
    (void)b, (void)p, (void)l, (void)o;
    return refuse(u, "binary data where a string or number belongs");
}
static int mp_cb_ext(mp_user *u, const char *b, const char *p, unsigned int l, mobj *o)
{
    (void)b, (void)p, (void)l, (void)o;
    return refuse(u, "a MessagePack extension value where a string or number belongs");
}

static int open_container(mp_user *u, int is_map, mobj *o)
{
    mframe *f = u->depth ? &u->st[u->depth - 1] : NULL;
    if (f && f->is_map && f->want_key)
        return refuse(u, "a map key is not a string");
    if (u->depth == u->cap && KSCOPE__ROOM(u->st, u->cap, u->depth + 1, 64) != 0)
        return MSGPACK_UNPACK_NOMEM_ERROR;
    u->st[u->depth++] = (mframe){(uint8_t)is_map, 1};
    o->container = is_map ? 1 : 2;
    const kscope__hevents *h = &kscope__hjson_events;
    return went_on(is_map ? h->start_map(u->h) : h->start_array(u->h));
}

static int mp_cb_array(mp_user *u, unsigned int n, mobj *o)
{
    (void)n;
    return open_container(u, 0, o);
}

static int mp_cb_map(mp_user *u, unsigned int n, mobj *o)
{
    (void)n;
    return open_container(u, 1, o);
}

/* An item of the innermost open container is complete: if it was itself a
 * container, that one has ended. */
static int item_done(mp_user *u, mobj item)
{
    if (item.container) {
        u->depth--;
        const kscope__hevents *h = &kscope__hjson_events;
        int rc = went_on(item.container == 1 ? h->end_map(u->h) : h->end_array(u->h));
        if (rc < 0)
            return rc;
    }
    if (u->depth && u->st[u->depth - 1].is_map)
        u->st[u->depth - 1].want_key = 1;
    return 0;
}

static int mp_cb_array_item(mp_user *u, mobj *c, mobj o)
{
    (void)c;
    return item_done(u, o);
}

static int mp_cb_map_item(mp_user *u, mobj *c, mobj k, mobj v)
{
    (void)c, (void)k;
    return item_done(u, v);
}

#include <msgpack/unpack_template.h>

/* The parser fed in chunks: bytes of a value not complete at a chunk's
 * end wait in `pending` for the next one (the template resumes where it
 * stopped), so memory follows the tree, and a value longer than
 * KSCOPE__READ_MAX_TOKEN is refused before it is read. */
struct kscope__hmp {
    struct kscope__mp_context ctx;
    kscope__hjson *h;
    char *pending;
    size_t npending, cap, fed;
    int done; /* the profile's outermost array is complete */
};

void *kscope__hmp_new(void)
{
    kscope__hmp *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->h = kscope__hjson_new();
    if (!p->h) {
        free(p);
        return NULL;
    }
    kscope__mp_init(&p->ctx);
    p->ctx.user = (mp_user){.h = p->h};
    return p;
}

void kscope__hmp_free(void *parser)
{
    kscope__hmp *p = parser;
    if (!p)
        return;
    free(p->ctx.user.st);
    free(p->pending);
    kscope__hjson_free(p->h);
    free(p);
}

/* The builder's refusal, or the template's verdict r, as one line. */
static int mp_failure(kscope__hmp *p, int r, size_t at, char *err, size_t errlen)
{
    int code;
    const char *why = kscope__hjson_error(p->h, &code);
    if (why) {
        snprintf(err, errlen, "%s", why);
        return code;
    }
    if (p->ctx.top >= MSGPACK_EMBED_STACK_SIZE) {
        snprintf(err, errlen, "calling contexts nested deeper than %d levels",
                 KSCOPE__READ_MAX_DEPTH);
        return KSCOPE_EPARSE;
    }
    if (r == MSGPACK_UNPACK_NOMEM_ERROR) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    snprintf(err, errlen, "not valid MessagePack (at byte %zu)", at);
    return KSCOPE_EPARSE;
}

int kscope__hmp_feed(void *parser, const char *buf, size_t len, char *err, size_t errlen)
{
    kscope__hmp *p = parser;
    if (len && p->done) {
        snprintf(err, errlen, "data after the end of the profile (byte %zu)", p->fed);
        return KSCOPE_EPARSE;
    }
    if (kscope__hjson_error(p->h, &(int){0})) /* refused: the builder takes no more events */
        return mp_failure(p, MSGPACK_UNPACK_PARSE_ERROR, p->fed, err, errlen);
    if (p->npending + len > p->cap &&
        KSCOPE__ROOM(p->pending, p->cap, p->npending + len, 4096) != 0) {
        snprintf(err, errlen, "out of memory");
        return KSCOPE_ENOMEM;
    }
    memcpy(p->pending + p->npending, buf, len);
    p->npending += len;
    size_t off = 0, start = p->fed - (p->npending - len); /* file offset of pending[0] */
    p->fed += len;
    int r = kscope__mp_execute(&p->ctx, p->pending, p->npending, &off);
    if (r < 0 || kscope__hjson_error(p->h, &(int){0}))
        return mp_failure(p, r, start + off, err, errlen);
    if (r > 0) {
        p->done = 1;
        if (off != p->npending) {
            snprintf(err, errlen, "data after the end of the profile (byte %zu)", start + off);
            return KSCOPE_EPARSE;
        }
    }
    if (p->ctx.trail > KSCOPE__READ_MAX_TOKEN) {
        snprintf(err, errlen, "a value of %u bytes at byte %zu (more than %d MiB in one string)",
                 p->ctx.trail, start + off, KSCOPE__READ_MAX_TOKEN >> 20);
        return KSCOPE_EPARSE;
    }
    memmove(p->pending, p->pending + off, p->npending - off);
    p->npending -= off;
    return 0;
}

int kscope__hmp_finish(void *parser, kscope__ptree **out, char *err, size_t errlen)
{
    kscope__hmp *p = parser;
    *out = NULL;
    if (!p->done) {
        snprintf(err, errlen, "%s",
                 p->fed ? "truncated: the MessagePack data ends before the profile is complete"
                        : "empty: no MessagePack at all");
        return KSCOPE_EPARSE;
    }
    /* the outermost container is never handed to a parent: close it */
    mp_user *u = &p->ctx.user;
    while (u->depth) {
        mobj top = {u->st[u->depth - 1].is_map ? 1 : 2};
        if (item_done(u, top) < 0)
            return mp_failure(p, MSGPACK_UNPACK_PARSE_ERROR, p->fed, err, errlen);
    }
    return kscope__hjson_end(p->h, out, err, errlen);
}

int kscope__read_hatchet_msgpack(const char *buf, size_t len, kscope__ptree **out, char *err,
                                 size_t errlen)
{
    /* in chunks, as a file is read */
    return kscope__read_tree_buffer(&kscope__hatchet_msgpack_reader, buf, len, 1 << 18, out, err,
                                    errlen);
}

/* A .hatchet_msgpack is a MessagePack array: fixarray, array 16 or 32. */
static int hmp_sniff(const char *head, size_t n)
{
    size_t i = kscope__read_skip_space(head, n);
    unsigned char c = i < n ? (unsigned char)head[i] : 0;
    return (c >= 0x90 && c <= 0x9f) || c == 0xdc || c == 0xdd ? 2 : 0;
}

const kscope__reader kscope__hatchet_msgpack_reader = {
    .sniff = hmp_sniff,
    .looks = ".hatchet_msgpack (an array)",
    .tree_new = kscope__hmp_new,
    .tree_finish = kscope__hmp_finish,
    .feed = kscope__hmp_feed,
    .free = kscope__hmp_free,
};
