/*
 * fuzz-msgpack.c - libFuzzer harness for the .hatchet_msgpack reader; a tree
 * read is written back.
 */
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    if (kscope__read_hatchet_msgpack((const char *)data, size, &t, err, sizeof err) == 0)
        fuzz_write_back(t);
    kscope__ptree_free(t);
    return 0;
}
