/*
 * fuzz-chrome-trace.c - libFuzzer harness for the Chrome trace reader (whole
 * and fed in small chunks; both must agree), for merging a trace and for
 * the HTML report's reading of a trace (its timeline, args, B/E pairs and
 * metadata).
 */
#include "fuzz-common.h"
#include "report/report.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int read_chunked(const uint8_t *data, size_t size, kscope__ptree **out)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__tjson *p = kscope__tjson_new();
    if (!p)
        return -1;
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < size;) {
        size_t n = fuzz_chunk(data, size, off);
        rc = kscope__tjson_feed(p, (const char *)data + off, n, err, sizeof err);
        off += n;
    }
    if (rc == 0)
        rc = kscope__tjson_finish(p, out, err, sizeof err);
    kscope__tjson_free(p);
    return rc;
}

/* The report's timeline and args of the trace, written to nowhere. */
static void report_trace(const uint8_t *data, size_t size)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__report_limits lim = kscope__report_default_limits();
    lim.max_track_events = 8; /* the longest-slices cut is taken too */
    kscope__report_out o = {fopen("/dev/null", "w"), {0}}, args = {fopen("/dev/null", "w"), {0}};
    if (o.f && args.f) {
        kscope__jw_init(&o.w);
        kscope__jw_init(&args.w);
        kscope__report_trace(&o, &args, (const char *)data, size, &lim, err, sizeof err);
        kscope__jw_free(&o.w);
        kscope__jw_free(&args.w);
    }
    if (o.f)
        fclose(o.f);
    if (args.f)
        fclose(args.f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *whole = NULL, *chunked = NULL;
    int rc_whole = kscope__read_chrome_trace((const char *)data, size, &whole, err, sizeof err);
    int rc = read_chunked(data, size, &chunked);
    if (rc != -1 && (rc_whole == 0) != (rc == 0)) {
        fprintf(stderr, "whole and chunked reads disagree: %d vs %d\n", rc_whole, rc);
        abort();
    }
    if (whole)
        fuzz_write_back(whole);
    kscope__ptree_free(whole);
    kscope__ptree_free(chunked);
    const char *buf = (const char *)data, *name = "fuzz";
    char *merged = NULL;
    size_t len = 0;
    if (kscope__merge_traces(&buf, &size, &name, 1, &merged, &len, err, sizeof err) == 0)
        free(merged);
    report_trace(data, size);
    return 0;
}
