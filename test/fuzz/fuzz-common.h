/*
 * fuzz-common.h - what the reader fuzz harnesses share: feeding a streaming
 * parser in chunks whose sizes come from the input, checking that a whole
 * read and a chunked one agree, and writing back a tree that was read (so
 * the writers see every shape the readers accept).
 */
#ifndef KSCOPE_FUZZ_COMMON_H
#define KSCOPE_FUZZ_COMMON_H

#include "read/read.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* What a chunked read returns when no parser could be made (readers
 * return 0 or a negative code). */
#define FUZZ_NOT_RUN 1

/* Chunk sizes 1..8 chosen by the input's bytes, so chunk boundaries fall
 * everywhere (mid-token, mid-escape, mid-key) across runs. */
static inline size_t fuzz_chunk(const uint8_t *data, size_t size, size_t off)
{
    size_t n = (size_t)(data[off % size] & 7) + 1;
    return n < size - off ? n : size - off;
}

/* A tree reader: its parser over a whole buffer and its streaming column
 * (the .hatchet JSON and MessagePack parsers share these signatures). */
typedef struct fuzz_reader {
    int (*read)(const char *buf, size_t len, kscope__ptree **out, char *err, size_t errlen);
    void *(*open)(void);
    int (*feed)(void *p, const char *buf, size_t len, char *err, size_t errlen);
    int (*finish)(void *p, kscope__ptree **out, char *err, size_t errlen);
    void (*close)(void *p);
} fuzz_reader;

/* The input fed to r's stream in fuzz_chunk's chunks: the reader's code
 * (the tree in *out on success), or FUZZ_NOT_RUN. */
static inline int fuzz_read_chunked(const fuzz_reader *r, const uint8_t *data, size_t size,
                                    kscope__ptree **out)
{
    char err[KSCOPE__READ_ERRLEN];
    void *p = r->open();
    if (!p)
        return FUZZ_NOT_RUN;
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < size;) {
        size_t n = fuzz_chunk(data, size, off);
        rc = r->feed(p, (const char *)data + off, n, err, sizeof err);
        off += n;
    }
    if (rc == 0)
        rc = r->finish(p, out, err, sizeof err);
    r->close(p);
    return rc;
}

/* Encode t in both tree formats and free what they made. */
static inline void fuzz_write_back(const kscope__ptree *t)
{
    char *buf = NULL;
    size_t len = 0;
    if (kscope__hatchet_write_json(t, &buf, &len) == 0)
        free(buf);
    buf = NULL;
    if (kscope__hatchet_write_msgpack(t, &buf, &len) == 0)
        free(buf);
}

/* The input read whole and read in chunks by r: both must succeed or both
 * fail (abort otherwise); the tree read whole is written back. */
static inline void fuzz_read_both(const fuzz_reader *r, const uint8_t *data, size_t size)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *whole = NULL, *chunked = NULL;
    int rc_whole = r->read((const char *)data, size, &whole, err, sizeof err);
    int rc = fuzz_read_chunked(r, data, size, &chunked);
    if (rc != FUZZ_NOT_RUN && (rc_whole == 0) != (rc == 0)) {
        fprintf(stderr, "whole and chunked reads disagree: %d vs %d\n", rc_whole, rc);
        abort();
    }
    if (whole)
        fuzz_write_back(whole);
    kscope__ptree_free(whole);
    kscope__ptree_free(chunked);
}

#endif
