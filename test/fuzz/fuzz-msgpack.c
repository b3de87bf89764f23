/*
 * fuzz-msgpack.c - libFuzzer harness for the .hatchet_msgpack reader: the
 * input parsed whole and again fed in small chunks (values cut anywhere,
 * resumed from where the parser stopped); both must agree on success, and
 * a tree read is written back.
 */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const fuzz_reader hmp = {kscope__read_hatchet_msgpack, kscope__hmp_new, kscope__hmp_feed,
                                    kscope__hmp_finish, kscope__hmp_free};
    fuzz_read_both(&hmp, data, size);
    return 0;
}
