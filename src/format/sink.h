/*
 * sink.h - where a writer's bytes go as they are made: a growing buffer in
 * memory (kscope_data and the tests), a file (core/output.c), or the
 * gzip encoder in front of either (format/gzipw.c). A writer given a sink
 * holds a few hundred kilobytes at a time, however large the profile.
 */
#ifndef KSCOPE_SINK_H
#define KSCOPE_SINK_H

#include <stddef.h>

typedef struct kscope__sink {
    /* Take len bytes: 0, or a negative KSCOPE_E* with kscope_last_error's
     * message set (the writer stops). */
    int (*write)(void *arg, const void *buf, size_t len);
    void *arg;
} kscope__sink;

/* A sink into a malloc'd buffer: zero it, write, then take buf (NUL-ended,
 * len bytes) or free it. */
typedef struct kscope__membuf {
    char *buf;
    size_t len, cap;
} kscope__membuf;

int kscope__membuf_write(void *membuf, const void *buf, size_t len);

/* Writers hand their buffer to a sink once it holds this much. */
#define KSCOPE__SINK_CHUNK (256 * 1024)

/* What an encoder (format/jsonw.h, format/msgpackw.h) has made and not yet
 * handed on: with a sink, passed on a chunk at a time as it fills; without
 * one, kept whole for kscope__outbuf_finish. Always one byte spare, so the
 * text can be NUL-ended. */
typedef struct kscope__outbuf {
    char *buf;
    size_t len, cap;
    int failed;               /* out of memory, or the sink failed: the rest is dropped */
    const kscope__sink *sink; /* NULL: the whole output stays in buf */
    int rc;                   /* the sink's error */
} kscope__outbuf;

/* An empty buffer; sink may be NULL. */
void kscope__outbuf_init(kscope__outbuf *b, const kscope__sink *sink);
/* Room for n more bytes, counted as written: where they go, or NULL once
 * the buffer has failed (then nothing is added). */
char *kscope__outbuf_add(kscope__outbuf *b, size_t n);
/* No sink: hand over the buffer, NUL-ended; 0, or KSCOPE_ENOMEM with the
 * buffer freed. The buffer is empty after either. */
int kscope__outbuf_finish(kscope__outbuf *b, char **out, size_t *len);
/* With a sink: hand it the rest and free the buffer; 0, the sink's error,
 * or KSCOPE_ENOMEM. */
int kscope__outbuf_end(kscope__outbuf *b);
void kscope__outbuf_free(kscope__outbuf *b);

#endif
