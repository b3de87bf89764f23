/*
 * jsonw.h - a small streaming JSON writer into a growable buffer.
 *
 * Ours because writing a million trace events a second needs no DOM: the
 * writer appends text directly, escaping strings per RFC 8259 (quotes,
 * backslashes, control characters; invalid UTF-8 becomes U+FFFD).
 */
#ifndef KSCOPE_JSONW_H
#define KSCOPE_JSONW_H

#include "format/sink.h"

#include <stddef.h>
#include <stdint.h>

typedef struct kscope__jsonw {
    kscope__outbuf out; /* the text so far (out.failed: everything after is dropped) */
    int need_comma;
} kscope__jsonw;

void kscope__jw_init(kscope__jsonw *w);
/* Text goes to `sink` in chunks of KSCOPE__SINK_CHUNK as it is written;
 * kscope__jw_end hands over the rest. */
void kscope__jw_init_sink(kscope__jsonw *w, const kscope__sink *sink);
/* Hand over the buffer (NUL-terminated); 0 or KSCOPE_ENOMEM. */
int kscope__jw_finish(kscope__jsonw *w, char **out, size_t *len);
/* A writer with a sink: hand the rest to it and free the buffer; 0, the
 * sink's error, or KSCOPE_ENOMEM. */
int kscope__jw_end(kscope__jsonw *w);
void kscope__jw_free(kscope__jsonw *w);

void kscope__jw_raw(kscope__jsonw *w, const char *s, size_t n);
/* Forget the text written so far once it has been handed on (a long
 * document written out in parts), keeping the place in the document. */
void kscope__jw_clear(kscope__jsonw *w);
void kscope__jw_open(kscope__jsonw *w, char c);  /* '{' or '[' (after a comma if needed) */
void kscope__jw_close(kscope__jsonw *w, char c); /* '}' or ']' */
void kscope__jw_key(kscope__jsonw *w, const char *key);
void kscope__jw_str(kscope__jsonw *w, const char *s);
void kscope__jw_int(kscope__jsonw *w, int64_t v);
void kscope__jw_uint(kscope__jsonw *w, uint64_t v);
/* A value already in JSON form, copied as is: a number's text from a
 * parsed document (so "1.50" stays "1.50"), true, false or null. */
void kscope__jw_literal(kscope__jsonw *w, const char *text);
/* Doubles keep a decimal point ("2.0") so readers see a float. JSON has
 * no infinity, and a null where a number belongs makes a file no reader
 * takes back: a sum past the largest double (the recorder cannot refuse
 * one) is written as the largest double, +-1.7976931348623157e308, and NaN
 * as 0.0. The readers refuse values that would overflow, so no file a
 * command writes holds one it changed. */
void kscope__jw_double(kscope__jsonw *w, double v);
/* A double for a JavaScript reader (the HTML page's data): as
 * kscope__jw_double, but +-infinity as +-1e999 (JSON.parse reads
 * +-Infinity) and NaN as null. */
void kscope__jw_js_number(kscope__jsonw *w, double v);
/* Microseconds from nanoseconds, with ns precision and no trailing zeros
 * ("12.345", "12.3", "12"): a trace's times are most of its bytes. */
void kscope__jw_us(kscope__jsonw *w, int64_t ns);

/* A member of the object being written: its key, then its value as the
 * value writer of the same name above writes it. */
void kscope__jw_member_str(kscope__jsonw *w, const char *key, const char *s);
void kscope__jw_member_int(kscope__jsonw *w, const char *key, int64_t v);
void kscope__jw_member_uint(kscope__jsonw *w, const char *key, uint64_t v);
void kscope__jw_member_double(kscope__jsonw *w, const char *key, double v);
void kscope__jw_member_us(kscope__jsonw *w, const char *key, int64_t ns);

/* Append the escaped body of a string (no quotes). */
void kscope__jw_escape(kscope__jsonw *w, const char *s, size_t n);

#endif
