/*
 * text.c - how the reading commands put text on a terminal: durations
 * with a unit, names and paths with their control characters escaped (no
 * byte of a file's names, or of a path the user gave, reaches the terminal
 * raw), long kernel names folded, colour only where it is wanted.
 */
#include "read/read.h"
#include "kscope.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void kscope__format_ns(double ns, char *buf, size_t size)
{
    if (isnan(ns) || isinf(ns)) {
        snprintf(buf, size, "%s", isnan(ns) ? "-" : ns > 0 ? "inf" : "-inf");
        return;
    }
    double a = fabs(ns);
    if (a < 1e3)
        snprintf(buf, size, "%.0f ns", ns);
    else if (a < 1e6)
        snprintf(buf, size, "%.3f us", ns / 1e3);
    else if (a < 1e9)
        snprintf(buf, size, "%.3f ms", ns / 1e6);
    else if (a < 1e15) /* up to 11 days: "987654.321 s" */
        snprintf(buf, size, "%.3f s", ns / 1e9);
    else
        snprintf(buf, size, "%.3e s", ns / 1e9);
}

int kscope__color_auto(void)
{
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
    if (no && *no)
        return 0;
    if (term && strcmp(term, "dumb") == 0)
        return 0;
    return isatty(STDOUT_FILENO);
}

/* The escape for control character c ("\\t", "\\x1b"): no control byte
 * reaches a terminal, where it could move the cursor or change colours. */
static void escape_char(unsigned char c, char out[5])
{
    const char *named = c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : NULL;
    if (named)
        memcpy(out, named, 3);
    else
        snprintf(out, 5, "\\x%02x", c);
}

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

void kscope__print_escaped(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *run = p;
    for (; *p; p++) {
        if (!is_control(*p))
            continue;
        char esc[5];
        escape_char(*p, esc);
        fwrite(run, 1, (size_t)(p - run), out);
        fputs(esc, out);
        run = p + 1;
    }
    fwrite(run, 1, (size_t)(p - run), out);
}

/* The end of the bracketed group opening at p ('<' or '('), just past its
 * closing bracket, or NULL when it does not close. The '>' of "->" closes
 * nothing. */
static const char *group_end(const char *p)
{
    char open = *p, close = open == '<' ? '>' : ')';
    int depth = 0;
    for (const char *q = p; *q; q++) {
        if (*q == open)
            depth++;
        else if (*q == close && !(close == '>' && q > p && q[-1] == '-') && --depth == 0)
            return q + 1;
    }
    return NULL;
}

const char *kscope__fold_name(const char *s, char *buf, size_t size)
{
    if (strlen(s) <= KSCOPE__NAME_FOLD || size < KSCOPE__NAME_FOLD + 1)
        return s;
    size_t o = 0;
    for (const char *p = s; *p && o + 6 < size;) { /* a name folded past buf is cut */
        const char *end = (*p == '<' || *p == '(') ? group_end(p) : NULL;
        if (end && end - p > 2) {
            o += (size_t)snprintf(buf + o, size - o, "%c...%c", *p, end[-1]);
            p = end;
            continue;
        }
        buf[o++] = *p++;
    }
    buf[o] = 0;
    return buf;
}

void kscope__print_name(FILE *out, const char *s, int full)
{
    char buf[KSCOPE__NAME_FOLD * 4];
    kscope__print_escaped(out, full ? s : kscope__fold_name(s, buf, sizeof buf));
}

const char *kscope__escape(const char *s, char *buf, size_t size)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 5 < size; p++) {
        if (is_control(*p)) {
            char esc[5];
            escape_char(*p, esc);
            n += (size_t)snprintf(buf + n, size - n, "%s", esc);
        } else {
            buf[n++] = (char)*p;
        }
    }
    if (size)
        buf[n < size ? n : size - 1] = '\0';
    return buf;
}

void kscope__escape_in_place(char *s, size_t size)
{
    char tmp[KSCOPE__READ_ERRLEN];
    if (size > sizeof tmp)
        size = sizeof tmp;
    kscope__escape(s, tmp, size);
    memcpy(s, tmp, strlen(tmp) + 1);
}

kscope__shown kscope__shown_path(const char *path)
{
    kscope__shown s;
    kscope__escape(path ? path : "(null)", s.s, sizeof s.s);
    return s;
}

static void refuse(char *err, size_t size, int *errcode, int code, const char *fmt, va_list ap)
{
    if (!*errcode) {
        vsnprintf(err, size, fmt, ap);
        kscope__escape_in_place(err, size);
        *errcode = code;
    }
}

int kscope__read_refuse(char *err, size_t size, int *errcode, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    refuse(err, size, errcode, code, fmt, ap);
    va_end(ap);
    return code;
}

int kscope__read_stop(char *err, size_t size, int *errcode, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    refuse(err, size, errcode, code, fmt, ap);
    va_end(ap);
    return 0;
}
