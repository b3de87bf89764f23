/*
 * fuzz-msgpack.c - libFuzzer harness for the .hatchet_msgpack reader: the
 * input parsed whole and again fed in small chunks (values cut anywhere,
 * resumed from where the parser stopped); both must agree on success, and
 * a tree read is written back.
 */
#include "fuzz-common.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *whole = NULL, *chunked = NULL;
    int rc_whole = kscope__read_hatchet_msgpack((const char *)data, size, &whole, err, sizeof err);
    kscope__hmp *p = kscope__hmp_new();
    int rc = 0;
    for (size_t off = 0; p && rc == 0 && off < size;) {
        size_t n = fuzz_chunk(data, size, off);
        rc = kscope__hmp_feed(p, (const char *)data + off, n, err, sizeof err);
        off += n;
    }
    if (p && rc == 0)
        rc = kscope__hmp_finish(p, &chunked, err, sizeof err);
    kscope__hmp_free(p);
    if (p && (rc_whole == 0) != (rc == 0)) {
        fprintf(stderr, "whole and chunked reads disagree: %d vs %d\n", rc_whole, rc);
        abort();
    }
    if (whole)
        fuzz_write_back(whole);
    kscope__ptree_free(whole);
    kscope__ptree_free(chunked);
    return 0;
}
