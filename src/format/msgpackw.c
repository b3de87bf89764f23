/*
 * msgpackw.c - the MessagePack encoder of msgpackw.h (big-endian lengths
 * and numbers; positive fixint, negative fixint and the sized int forms).
 */
#include "format/msgpackw.h"

#include <float.h>
#include <math.h>
#include <string.h>

void kscope__mp_init(kscope__mpw *w)
{
    kscope__outbuf_init(&w->out, NULL);
}

void kscope__mp_init_sink(kscope__mpw *w, const kscope__sink *sink)
{
    kscope__outbuf_init(&w->out, sink);
}

int kscope__mp_finish(kscope__mpw *w, char **out, size_t *len)
{
    return kscope__outbuf_finish(&w->out, out, len);
}

int kscope__mp_end(kscope__mpw *w)
{
    return kscope__outbuf_end(&w->out);
}

static unsigned char *room(kscope__mpw *w, size_t n)
{
    return (unsigned char *)kscope__outbuf_add(&w->out, n);
}

/* A type byte followed by `bytes` big-endian bytes of v. */
static void put_be(kscope__mpw *w, unsigned char type, uint64_t v, int bytes)
{
    unsigned char *p = room(w, 1 + (size_t)bytes);
    if (!p)
        return;
    p[0] = type;
    for (int i = 0; i < bytes; i++)
        p[1 + i] = (unsigned char)(v >> (8 * (bytes - 1 - i)));
}

/* A container or string header: the fix form when n fits, else 16 or 32
 * bit lengths (`type16`, then `type16 + 1` for 32 bits). */
static void put_len(kscope__mpw *w, unsigned char fix, uint32_t fixmax, unsigned char type16,
                    uint32_t n)
{
    if (n <= fixmax)
        put_be(w, (unsigned char)(fix | n), 0, 0);
    else if (n <= 0xFFFF)
        put_be(w, type16, n, 2);
    else
        put_be(w, (unsigned char)(type16 + 1), n, 4);
}

void kscope__mp_map(kscope__mpw *w, uint32_t n)
{
    put_len(w, 0x80, 15, 0xde, n);
}

void kscope__mp_array(kscope__mpw *w, uint32_t n)
{
    put_len(w, 0x90, 15, 0xdc, n);
}

void kscope__mp_str(kscope__mpw *w, const char *s)
{
    size_t n = strlen(s);
    if (n > UINT32_MAX) {
        w->out.failed = 1;
        return;
    }
    if (n <= 31)
        put_be(w, (unsigned char)(0xa0 | n), 0, 0);
    else if (n <= 0xFF)
        put_be(w, 0xd9, n, 1);
    else
        put_len(w, 0xa0, 31, 0xda, (uint32_t)n);
    unsigned char *p = room(w, n);
    if (p)
        memcpy(p, s, n);
}

void kscope__mp_int(kscope__mpw *w, int64_t v)
{
    if (v >= 0) {
        uint64_t u = (uint64_t)v;
        if (u <= 0x7F)
            put_be(w, (unsigned char)u, 0, 0);
        else if (u <= 0xFF)
            put_be(w, 0xcc, u, 1);
        else if (u <= 0xFFFF)
            put_be(w, 0xcd, u, 2);
        else if (u <= 0xFFFFFFFFu)
            put_be(w, 0xce, u, 4);
        else
            put_be(w, 0xcf, u, 8);
    } else if (v >= -32) {
        put_be(w, (unsigned char)(0xe0 | (v + 32)), 0, 0);
    } else if (v >= INT8_MIN) {
        put_be(w, 0xd0, (uint64_t)v & 0xFF, 1);
    } else if (v >= INT16_MIN) {
        put_be(w, 0xd1, (uint64_t)v & 0xFFFF, 2);
    } else if (v >= INT32_MIN) {
        put_be(w, 0xd2, (uint64_t)v & 0xFFFFFFFFu, 4);
    } else {
        put_be(w, 0xd3, (uint64_t)v, 8);
    }
}

void kscope__mp_double(kscope__mpw *w, double v)
{
    /* as kscope__jw_double: the readers take no infinity or NaN */
    if (isnan(v))
        v = 0.0;
    else if (isinf(v))
        v = v > 0 ? DBL_MAX : -DBL_MAX;
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    put_be(w, 0xcb, bits, 8);
}
