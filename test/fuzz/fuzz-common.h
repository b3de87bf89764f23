/*
 * fuzz-common.h - what the reader fuzz harnesses share: feeding a streaming
 * parser in chunks whose sizes come from the input, and writing back a tree
 * that was read (so the writers see every shape the readers accept).
 */
#ifndef KSCOPE_FUZZ_COMMON_H
#define KSCOPE_FUZZ_COMMON_H

#include "read/read.h"

#include <stdint.h>
#include <stdlib.h>

/* Chunk sizes 1..8 chosen by the input's bytes, so chunk boundaries fall
 * everywhere (mid-token, mid-escape, mid-key) across runs. */
static inline size_t fuzz_chunk(const uint8_t *data, size_t size, size_t off)
{
    size_t n = (size_t)(data[off % size] & 7) + 1;
    return n < size - off ? n : size - off;
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

#endif
