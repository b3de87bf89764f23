/*
 * jsonw.c - the streaming JSON writer (see jsonw.h).
 */
#include "format/jsonw.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kscope__jw_init(kscope__jsonw *w)
{
    kscope__jw_init_sink(w, NULL);
}

void kscope__jw_init_sink(kscope__jsonw *w, const kscope__sink *sink)
{
    kscope__outbuf_init(&w->out, sink);
    w->need_comma = 0;
}

void kscope__jw_free(kscope__jsonw *w)
{
    kscope__outbuf_free(&w->out);
    w->need_comma = 0;
}

int kscope__jw_finish(kscope__jsonw *w, char **out, size_t *len)
{
    w->need_comma = 0;
    return kscope__outbuf_finish(&w->out, out, len);
}

int kscope__jw_end(kscope__jsonw *w)
{
    w->need_comma = 0;
    return kscope__outbuf_end(&w->out);
}

void kscope__jw_raw(kscope__jsonw *w, const char *s, size_t n)
{
    char *at = kscope__outbuf_add(&w->out, n);
    if (at)
        memcpy(at, s, n);
}

void kscope__jw_clear(kscope__jsonw *w)
{
    w->out.len = 0;
}

static void put(kscope__jsonw *w, char c)
{
    char *at = kscope__outbuf_add(&w->out, 1);
    if (at)
        *at = c;
}

static void comma(kscope__jsonw *w)
{
    if (w->need_comma)
        put(w, ',');
    w->need_comma = 0;
}

void kscope__jw_open(kscope__jsonw *w, char c)
{
    comma(w);
    put(w, c);
}

void kscope__jw_close(kscope__jsonw *w, char c)
{
    put(w, c);
    w->need_comma = 1;
}

/* Length of a valid UTF-8 sequence starting at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || len > n || (len == 2 && c < 0xC2) || (len == 4 && c > 0xF4))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    if (len == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0)))
        return 0; /* overlong or surrogate */
    if (len == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90)))
        return 0;
    return len;
}

void kscope__jw_escape(kscope__jsonw *w, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
            run++;
        kscope__jw_raw(w, str + i, run - i);
        i = run;
        if (i >= n)
            break;
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            kscope__jw_raw(w, esc, 2);
            i++;
        } else if (c < 0x20) {
            char esc[8];
            const char *named = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (named)
                kscope__jw_raw(w, named, 2);
            else
                kscope__jw_raw(w, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", c));
            i++;
        } else {
            size_t len = utf8_len(s + i, n - i);
            if (len) {
                kscope__jw_raw(w, str + i, len);
                i += len;
            } else {
                kscope__jw_raw(w, "\xEF\xBF\xBD", 3); /* U+FFFD */
                i++;
            }
        }
    }
}

void kscope__jw_key(kscope__jsonw *w, const char *key)
{
    comma(w);
    put(w, '"');
    kscope__jw_escape(w, key, strlen(key));
    kscope__jw_raw(w, "\":", 2);
}

void kscope__jw_str(kscope__jsonw *w, const char *s)
{
    comma(w);
    put(w, '"');
    kscope__jw_escape(w, s, strlen(s));
    put(w, '"');
    w->need_comma = 1;
}

void kscope__jw_int(kscope__jsonw *w, int64_t v)
{
    char b[24];
    comma(w);
    kscope__jw_raw(w, b, (size_t)snprintf(b, sizeof b, "%lld", (long long)v));
    w->need_comma = 1;
}

void kscope__jw_uint(kscope__jsonw *w, uint64_t v)
{
    char b[24];
    comma(w);
    kscope__jw_raw(w, b, (size_t)snprintf(b, sizeof b, "%llu", (unsigned long long)v));
    w->need_comma = 1;
}

void kscope__jw_literal(kscope__jsonw *w, const char *text)
{
    comma(w);
    kscope__jw_raw(w, text, strlen(text));
    w->need_comma = 1;
}

void kscope__jw_double(kscope__jsonw *w, double v)
{
    comma(w);
    w->need_comma = 1;
    if (isnan(v))
        v = 0.0;
    else if (isinf(v))
        v = v > 0 ? DBL_MAX : -DBL_MAX;
    char b[40];
    int n = snprintf(b, sizeof b, "%.17g", v);
    /* Shortest form that reads back to the same double. */
    for (int prec = 1; prec < 17; prec++) {
        char t[40];
        int m = snprintf(t, sizeof t, "%.*g", prec, v);
        if (strtod(t, NULL) == v) {
            memcpy(b, t, (size_t)m + 1);
            n = m;
            break;
        }
    }
    kscope__jw_raw(w, b, (size_t)n);
    if (!strpbrk(b, ".eEn"))
        kscope__jw_raw(w, ".0", 2);
}

void kscope__jw_js_number(kscope__jsonw *w, double v)
{
    if (isfinite(v))
        kscope__jw_double(w, v);
    else
        kscope__jw_literal(w, isnan(v) ? "null" : v > 0 ? "1e999" : "-1e999");
}

void kscope__jw_us(kscope__jsonw *w, int64_t ns)
{
    char b[40], *end = b + sizeof b, *p = end;
    comma(w);
    w->need_comma = 1;
    uint64_t a = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(a % 1000);
    int digits = frac == 0 ? 0 : frac % 100 == 0 ? 1 : frac % 10 == 0 ? 2 : 3;
    for (int i = 3; i > digits; i--)
        frac /= 10;
    for (int i = 0; i < digits; i++, frac /= 10)
        *--p = (char)('0' + frac % 10);
    if (digits)
        *--p = '.';
    uint64_t us = a / 1000;
    do
        *--p = (char)('0' + us % 10);
    while ((us /= 10) != 0);
    if (ns < 0)
        *--p = '-';
    kscope__jw_raw(w, p, (size_t)(end - p));
}

/* The member writers of jsonw.h: a key, then the value writer of the same
 * name (C has no generic function, so one definition for the five). */
#define MEMBER_WRITER(kind, type)                                                                  \
    void kscope__jw_member_##kind(kscope__jsonw *w, const char *key, type v)                       \
    {                                                                                              \
        kscope__jw_key(w, key);                                                                    \
        kscope__jw_##kind(w, v);                                                                   \
    }
MEMBER_WRITER(str, const char *)
MEMBER_WRITER(int, int64_t)
MEMBER_WRITER(uint, uint64_t)
MEMBER_WRITER(double, double)
MEMBER_WRITER(us, int64_t)
