/*
 * yajl-in.c - feeding yajl's streaming parser, for both JSON readers
 * (yajl-in.h): the limit on a value's length and the failure lines live
 * here once.
 */
#include "read/yajl-in.h"
#include "kscope.h"

#include <stdio.h>
#include <string.h>

int kscope__yajl_in_init(kscope__yajl_in *in, const yajl_callbacks *cb, void *ctx,
                         const char *truncated, const char *trailing)
{
    *in = (kscope__yajl_in){.truncated = truncated, .trailing = trailing};
    in->y = yajl_alloc(cb, NULL, ctx);
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
