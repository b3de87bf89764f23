/*
 * yajl-in.c - feeding yajl's streaming parser, for both JSON readers
 * (yajl-in.h): the limit on a value's length and the failure lines live
 * here once.
 */
#include "read/yajl-in.h"
#include "kscope.h"

#include <stdio.h>
#include <string.h>

/* What yajl's callbacks say, handed on by event(). */
typedef enum {
    EV_NULL,
    EV_BOOL, /* len: 0 false, 1 true */
    EV_NUMBER,
    EV_STRING,
    EV_START_MAP,
    EV_MAP_KEY,
    EV_END_MAP,
    EV_START_ARRAY,
    EV_END_ARRAY,
} yajl_event;

/* Each of yajl's callbacks, counted (kscope__read_too_quiet) and handed to
 * the reader's handler; none after the reader has refused. */
static int event(void *in_, yajl_event ev, const char *s, size_t len)
{
    kscope__yajl_in *in = in_;
    const kscope__hevents *h = in->ev;
    in->events++;
    if (in->errcode)
        return 0;
    switch (ev) {
    case EV_NULL:
        return h->scalar(in->ctx, KSCOPE__TEV_LITERAL, "null", 4);
    case EV_BOOL:
        return h->scalar(in->ctx, KSCOPE__TEV_LITERAL, len ? "true" : "false", len ? 4 : 5);
    case EV_NUMBER:
        return h->scalar(in->ctx, KSCOPE__TEV_NUMBER, s, len);
    case EV_STRING:
        return h->scalar(in->ctx, KSCOPE__TEV_STRING, s, len);
    case EV_START_MAP:
        return h->start_map(in->ctx);
    case EV_MAP_KEY:
        return h->map_key(in->ctx, s, len);
    case EV_END_MAP:
        return h->end_map(in->ctx);
    case EV_START_ARRAY:
        return h->start_array(in->ctx);
    case EV_END_ARRAY:
        return h->end_array(in->ctx);
    }
    return 0;
}

static int cb_null(void *in)
{
    return event(in, EV_NULL, NULL, 0);
}

static int cb_boolean(void *in, int b)
{
    return event(in, EV_BOOL, NULL, b != 0);
}

static int cb_number(void *in, const char *s, size_t l)
{
    return event(in, EV_NUMBER, s, l);
}

static int cb_string(void *in, const unsigned char *s, size_t l)
{
    return event(in, EV_STRING, (const char *)s, l);
}

static int cb_start_map(void *in)
{
    return event(in, EV_START_MAP, NULL, 0);
}

static int cb_map_key(void *in, const unsigned char *k, size_t l)
{
    return event(in, EV_MAP_KEY, (const char *)k, l);
}

static int cb_end_map(void *in)
{
    return event(in, EV_END_MAP, NULL, 0);
}

static int cb_start_array(void *in)
{
    return event(in, EV_START_ARRAY, NULL, 0);
}

static int cb_end_array(void *in)
{
    return event(in, EV_END_ARRAY, NULL, 0);
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

int kscope__yajl_in_init(kscope__yajl_in *in, const kscope__hevents *ev, void *ctx,
                         const char *truncated, const char *trailing)
{
    *in = (kscope__yajl_in){.ev = ev, .ctx = ctx, .truncated = truncated, .trailing = trailing};
    in->y = yajl_alloc(&callbacks, NULL, in);
    return in->y ? 0 : KSCOPE_ENOMEM;
}

void kscope__yajl_in_free(kscope__yajl_in *in)
{
    if (in->y)
        yajl_free(in->y);
    in->y = NULL;
}

/* The reader's refusal, or yajl's verdict on buf[0..len) as one line. */
static int failure(kscope__yajl_in *in, const unsigned char *buf, size_t len, char *err,
                   size_t errlen)
{
    if (in->errcode) {
        snprintf(err, errlen, "%s", in->err);
        return in->errcode;
    }
    unsigned char *msg = yajl_get_error(in->y, 0, buf, len);
    const char *m = msg ? (const char *)msg : "parse error";
    if (strstr(m, "premature EOF"))
        snprintf(err, errlen, "%s", in->truncated);
    else if (strstr(m, "trailing garbage"))
        snprintf(err, errlen, "%s", in->trailing);
    else
        snprintf(err, errlen, "not valid JSON: %.*s", (int)strcspn(m, "\r\n"), m);
    if (msg)
        yajl_free_error(in->y, msg);
    return KSCOPE_EPARSE;
}

int kscope__yajl_in_feed(kscope__yajl_in *in, const char *buf, size_t len, char *err, size_t errlen)
{
    if (in->errcode)
        return failure(in, NULL, 0, err, errlen);
    in->fed += len;
    if (yajl_parse(in->y, (const unsigned char *)buf, len) != yajl_status_ok)
        return failure(in, (const unsigned char *)buf, len, err, errlen);
    if (kscope__read_too_quiet(in->events, &in->mark, &in->quiet, len)) {
        KSCOPE__YAJL_STOP(in, KSCOPE_EPARSE, "no JSON value ends within %d MiB (at byte %zu)",
                          KSCOPE__READ_MAX_TOKEN >> 20, in->fed);
        return failure(in, NULL, 0, err, errlen);
    }
    return 0;
}

int kscope__yajl_in_finish(kscope__yajl_in *in, char *err, size_t errlen)
{
    if (in->errcode)
        return failure(in, NULL, 0, err, errlen);
    if (in->fed == 0) {
        snprintf(err, errlen, "empty: no JSON at all");
        return KSCOPE_EPARSE;
    }
    if (yajl_complete_parse(in->y) != yajl_status_ok)
        return failure(in, NULL, 0, err, errlen);
    return 0;
}
