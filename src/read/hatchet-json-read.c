/*
 * hatchet-json-read.c - the .hatchet JSON reader: yajl's streaming parser
 * feeding the tree builder (hatchet-build.c) its events as they are. Input is fed in
 * chunks, so a large file never has to be held in memory.
 */
#include "read/hatchet-build.h"
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- API */

/* What the reader says when yajl finds the JSON ends early, or goes on. */
static const char truncated[] = "truncated: the JSON ends before the profile is complete";
static const char trailing[] = "data after the end of the profile (two documents back to back?)";

void *kscope__hjson_new(void)
{
    kscope__hjson *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    if (kscope__hbuild_init(p) != 0 ||
        kscope__yajl_in_init(&p->in, &kscope__hjson_events, p, truncated, trailing) != 0) {
        kscope__hjson_free(p);
        return NULL;
    }
    return p;
}

void kscope__hjson_free(void *parser)
{
    kscope__hjson *p = parser;
    if (!p)
        return;
    kscope__yajl_in_free(&p->in);
    kscope__hbuild_release(p);
    free(p);
}

int kscope__hjson_feed(void *parser, const char *buf, size_t len, char *err, size_t errlen)
{
    kscope__hjson *p = parser;
    return kscope__yajl_in_feed(&p->in, buf, len, err, errlen);
}

int kscope__hjson_finish(void *parser, kscope__ptree **out, char *err, size_t errlen)
{
    kscope__hjson *p = parser;
    *out = NULL;
    int rc = kscope__yajl_in_finish(&p->in, err, errlen);
    return rc ? rc : kscope__hjson_end(p, out, err, errlen);
}

int kscope__read_hatchet_json(const char *buf, size_t len, kscope__ptree **out, char *err,
                              size_t errlen)
{
    return kscope__read_tree_buffer(&kscope__hatchet_json_reader, buf, len, SIZE_MAX, out, err,
                                    errlen);
}

/* A .hatchet is a JSON array (as a trace's bare array is: its reader says
 * so surely); white space as far as we looked is left to the parser. */
static int hjson_sniff(const char *head, size_t n)
{
    size_t i = kscope__read_skip_space(head, n);
    return i == n || head[i] == '[';
}

const kscope__reader kscope__hatchet_json_reader = {
    .sniff = hjson_sniff,
    .looks = ".hatchet JSON ('[')",
    .tree_new = kscope__hjson_new,
    .tree_finish = kscope__hjson_finish,
    .feed = kscope__hjson_feed,
    .free = kscope__hjson_free,
};
