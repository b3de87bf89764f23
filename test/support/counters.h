/*
 * counters.h - for the diagnostics tests: the recorder's samples in a time
 * window written as a Chrome trace's counter events, the way a trace
 * session writes them (the core's sampler interface feeding the trace
 * writer of src/format/). Include after cmocka.h.
 */
#ifndef KSCOPE_TEST_COUNTERS_H
#define KSCOPE_TEST_COUNTERS_H

#include "diag/diag.h"
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

typedef struct tc_window {
    uint64_t t0, t1, base;
    int pid;
    int events;
    kscope__tev_fn fn;
    void *arg;
} tc_window;

static void tc_counter(const char *series, uint64_t t_ns, double value, void *arg)
{
    tc_window *w = arg;
    kscope__tev e = {.kind = KSCOPE__TEV_COUNTER,
                     .name = series,
                     .pid = w->pid,
                     .ts_ns = (int64_t)(t_ns - w->base),
                     .value = value};
    w->fn(&e, w->arg);
    w->events++;
}

static int tc_source(void *source_arg, kscope__tev_fn fn, void *fn_arg)
{
    tc_window *w = source_arg;
    w->fn = fn;
    w->arg = fn_arg;
    kscope__sampler_each(w->t0, w->t1, tc_counter, w);
    return 0;
}

/* The counters of [t0, t1] as a whole Chrome trace (caller frees); *events
 * gets their number. ts is relative to base. */
static inline char *tc_counters_json(uint64_t t0, uint64_t t1, uint64_t base, int pid, int *events)
{
    tc_window w = {t0, t1, base, pid, 0, NULL, NULL};
    char *out = NULL;
    size_t len = 0;
    if (kscope__chrome_trace_write(tc_source, &w, &out, &len) != 0)
        return NULL;
    *events = w.events;
    return out;
}

/* Checks the counter tracks of [t0, t1] (the samples of recorder r): the
 * trace has `series` events for each sample, holds each text of `present`
 * and none of `absent` (NULL-terminated lists). Fails the test naming the
 * text that is wrong. */
static inline void tc_check_tracks(kscope_recorder *r, uint64_t t0, uint64_t t1, int series,
                                   const char *const *present, const char *const *absent)
{
    int events = 0;
    char *text = tc_counters_json(t0, t1, t0, 7, &events);
    assert_non_null(text);
    assert_int_equal(events, (int)kscope_recorder_count(r) * series);
    for (; *present; present++)
        if (!strstr(text, *present))
            fail_msg("the counter trace lacks %s", *present);
    for (; *absent; absent++)
        if (strstr(text, *absent))
            fail_msg("the counter trace has %s", *absent);
    free(text);
}

#endif
