/*
 * yajl-in.c - feeding yajl's streaming parser, for both JSON readers
 * (yajl-in.h): the limit on a value's length and the failure lines live
 * here once.
 */
#include "read/yajl-in.h"
#include "kscope.h"

#include <stdio.h>
#include <string.h>

/* Each of yajl's callbacks, counted and handed on as a parse event. */
static int event(void *in_, kscope__hevent ev, const char *s, size_t len)
{
    kscope__yajl_in *in = in_;
    in->events++;
    return in->fn(in->ctx, ev, s, len);
}

static int cb_null(void *in)
{
    return event(in, KSCOPE__HEV_NULL, NULL, 0);
}

static int cb_boolean(void *in, int b)
{
    return event(in, KSCOPE__HEV_BOOL, NULL, b != 0);
}

static int cb_number(void *in, const char *s, size_t l)
{
    return event(in, KSCOPE__HEV_NUMBER, s, l);
}

static int cb_string(void *in, const unsigned char *s, size_t l)
{
    return event(in, KSCOPE__HEV_STRING, (const char *)s, l);
}

static int cb_start_map(void *in)
{
    return event(in, KSCOPE__HEV_START_MAP, NULL, 0);
}

static int cb_map_key(void *in, const unsigned char *k, size_t l)
{
    return event(in, KSCOPE__HEV_MAP_KEY, (const char *)k, l);
}

static int cb_end_map(void *in)
{
    return event(in, KSCOPE__HEV_END_MAP, NULL, 0);
}

static int cb_start_array(void *in)
{
    return event(in, KSCOPE__HEV_START_ARRAY, NULL, 0);
}

static int cb_end_array(void *in)
{
    return event(in, KSCOPE__HEV_END_ARRAY, NULL, 0);
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

int kscope__yajl_in_init(kscope__yajl_in *in, kscope__yajl_event_fn fn, void *ctx,
                         const char *truncated, const char *trailing)
{
    *in = (kscope__yajl_in){.fn = fn, .ctx = ctx, .truncated = truncated, .trailing = trailing};
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
