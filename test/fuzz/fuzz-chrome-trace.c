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

/* The Chrome trace parser's streaming column in fuzz_reader's shape. */
static void *tjson_open(void)
{
    return kscope__tjson_new();
}

static int tjson_feed(void *p, const char *buf, size_t len, char *err, size_t errlen)
{
    return kscope__tjson_feed(p, buf, len, err, errlen);
}

static int tjson_finish(void *p, kscope__ptree **out, char *err, size_t errlen)
{
    return kscope__tjson_finish(p, out, err, errlen);
}

static void tjson_close(void *p)
{
    kscope__tjson_free(p);
}

/* The report's timeline and args of the trace, written to nowhere. */
static void report_trace(const uint8_t *data, size_t size)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__report_limits lim = kscope__report_default_limits();
    lim.max_track_events = 8; /* the longest-slices cut is taken too */
    kscope__report_out o = {.f = fopen("/dev/null", "w")}, args = {.f = fopen("/dev/null", "w")};
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
    static const fuzz_reader tjson = {kscope__read_chrome_trace, tjson_open, tjson_feed,
                                      tjson_finish, tjson_close};
    fuzz_read_both(&tjson, data, size);
    char err[KSCOPE__READ_ERRLEN];
    const char *buf = (const char *)data, *name = "fuzz";
    char *merged = NULL;
    size_t len = 0;
    if (kscope__merge_traces(&buf, &size, &name, 1, &merged, &len, err, sizeof err) == 0)
        free(merged);
    report_trace(data, size);
    return 0;
}
