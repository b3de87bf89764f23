/*
 * diag-util.h - what the diagnostics tests (test-diag*.c) share: short
 * sleeps while the recorder samples, finding the stand-in vendor
 * libraries, and the summary metrics a session's tree gets
 * (kscope__diag_summary). Include after cmocka.h and diag/diag.h.
 */
#ifndef KSCOPE_TEST_DIAG_UTIL_H
#define KSCOPE_TEST_DIAG_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline void td_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Until r holds n samples, checking every step_ms (up to 10 s: a loaded
 * machine samples late; the caller asserts on the count). */
static inline void td_wait_samples(kscope_recorder *r, size_t n, int step_ms)
{
    for (int waited = 0; kscope_recorder_count(r) < n && waited < 10000; waited += step_ms)
        td_sleep_ms(step_ms);
}

/* Where the stand-in library `name` is, into out: $env when set, else
 * $KSCOPE_BINARY_DIR/test/name. Returns 0, or -1 (said on stderr, with
 * the test program's name) when it cannot be read. */
static inline int td_stand_in(char *out, size_t size, const char *env, const char *name,
                              const char *program)
{
    const char *given = getenv(env);
    const char *bin = getenv("KSCOPE_BINARY_DIR");
    if (given)
        snprintf(out, size, "%s", given);
    else
        snprintf(out, size, "%s/test/%s", bin ? bin : ".", name);
    if (access(out, R_OK) == 0)
        return 0;
    fprintf(stderr, "%s: the stand-in %s is missing\n", program, out);
    return -1;
}

/* The metrics kscope__diag_summary emits, as emitted (pass td_collect as
 * its callback and the summary, zeroed, as its argument). */
typedef struct td_metric {
    char name[64];
    double value;
} td_metric;

typedef struct td_summary {
    td_metric m[64];
    int n;
} td_summary;

static inline void td_collect(const char *name, double value, void *summary)
{
    td_summary *s = summary;
    assert_true(s->n < 64);
    snprintf(s->m[s->n].name, sizeof s->m[s->n].name, "%s", name);
    s->m[s->n++].value = value;
}

/* The metric of that name, or NULL. */
static inline const td_metric *td_find(const td_summary *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->m[i].name, name) == 0)
            return &s->m[i];
    return NULL;
}

/* The value of the metric of that name; fails the test when there is none. */
static inline double td_value(const td_summary *s, const char *name)
{
    const td_metric *m = td_find(s, name);
    if (!m)
        fail_msg("no metric %s", name);
    return m ? m->value : 0;
}

/* A summary metric a test expects: its value, give or take `within`. */
typedef struct td_expect {
    const char *name;
    double value, within;
} td_expect;

/* kscope__diag_summary over [t0, t1]: it reports `samples` samples and
 * `nmetrics` metrics, each of `expect` (n rows) among them with its
 * value. Fails the test naming the metric that is wrong. */
static inline void td_check_summary(uint64_t t0, uint64_t t1, size_t samples, int nmetrics,
                                    const td_expect *expect, size_t n)
{
    td_summary sum = {0};
    assert_int_equal(kscope__diag_summary(t0, t1, td_collect, &sum), samples);
    assert_int_equal(sum.n, nmetrics);
    for (size_t i = 0; i < n; i++) {
        double v = td_value(&sum, expect[i].name);
        if (!(fabs(v - expect[i].value) < expect[i].within))
            fail_msg("summary metric %s is %.17g, expected %.17g", expect[i].name, v,
                     expect[i].value);
    }
}

#endif
