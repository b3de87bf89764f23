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

#endif
