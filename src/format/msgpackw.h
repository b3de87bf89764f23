/*
 * msgpackw.h - a small MessagePack encoder into a growable buffer.
 *
 * Ours because the recorder links no third-party library: a profiled
 * process must not get a msgpack-c of ours next to its own. It writes the
 * few shapes .hatchet_msgpack needs (maps and arrays with their sizes up
 * front, strings, int64, doubles) in the smallest encoding the format
 * allows, as msgpack-c would.
 */
#ifndef KSCOPE_MSGPACKW_H
#define KSCOPE_MSGPACKW_H

#include "format/sink.h"

#include <stddef.h>
#include <stdint.h>

typedef struct kscope__mpw {
    kscope__outbuf out; /* the bytes so far (out.failed: the rest is dropped) */
} kscope__mpw;

void kscope__mp_init(kscope__mpw *w);
/* Bytes go to `sink` in chunks as they are written (kscope__mp_end). */
void kscope__mp_init_sink(kscope__mpw *w, const kscope__sink *sink);
/* Hand over the buffer; 0 or KSCOPE_ENOMEM (the buffer is then freed). */
int kscope__mp_finish(kscope__mpw *w, char **out, size_t *len);
/* With a sink: hand the rest to it, free the buffer; 0 or an error. */
int kscope__mp_end(kscope__mpw *w);

void kscope__mp_map(kscope__mpw *w, uint32_t n);   /* n key/value pairs follow */
void kscope__mp_array(kscope__mpw *w, uint32_t n); /* n values follow */
void kscope__mp_str(kscope__mpw *w, const char *s);
void kscope__mp_int(kscope__mpw *w, int64_t v);
/* A float64; infinity and NaN as kscope__jw_double writes them (the
 * largest double, 0.0), so every file reads back. */
void kscope__mp_double(kscope__mpw *w, double v);

#endif
