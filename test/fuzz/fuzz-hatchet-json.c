/*
 * fuzz-hatchet-json.c - libFuzzer harness for the .hatchet JSON reader: the
 * input parsed whole and again fed in small chunks; both must agree on
 * success, and a tree read is written back.
 */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const fuzz_reader hjson = {kscope__read_hatchet_json, kscope__hjson_new,
                                      kscope__hjson_feed, kscope__hjson_finish, kscope__hjson_free};
    fuzz_read_both(&hjson, data, size);
    return 0;
}
