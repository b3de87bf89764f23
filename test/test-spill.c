/*
 * test-spill.c - a trace session's events in bounded memory (trace/spill.c):
 * what is spilled to disk while the program runs comes back whole in the
 * file (slices nested, metrics, marks, the metadata), across phases and
 * fork(); the budget option and its errors; events past the budget drop,
 * counted; a gzip-compressed trace (format chrome_trace_gz) and its
 * reading.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/core.h"
#include "kscope.h"
#include "read/read.h"
#include "support/testutil.h"
#include "support/session-util.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static int start_trace(const char *name, const char *budget, int compress)
{
    return tu_start_opts((kscope_session_opts){.name = name,
                                               .data = "trace",
                                               .backend = "none",
                                               .trace_buffer = budget,
                                               .compress = compress});
}

/* `rounds` of an outer slice holding an inner one, a metric and a mark. */
static void record(const char *outer, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        kscope_enter(outer);
        kscope_metric_int("n", i);
        kscope_enter("inner");
        kscope_mark("tick");
        kscope_exit("inner");
        kscope_exit(outer);
    }
}

static uint64_t spilled(int s)
{
    return kscope__session_find(s)->spill.events;
}

/* What a Chrome trace holds: slices by name, nesting checked per track. */
typedef struct summary {
    long outer, inner, marks, other_x, meta, with_metric, not_nested;
    int has_metadata;
} summary;

static double num(yajl_val e, const char *key)
{
    yajl_val v = tu_get(e, key);
    return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : -1;
}

static summary summarize(yajl_val doc, const char *outer)
{
    summary r = {0};
    yajl_val ev = tu_get(doc, "traceEvents");
    assert_non_null(ev);
    r.has_metadata = tu_get(tu_get(doc, "metadata"), "command") != NULL;
    double outer_ts = -1, outer_end = -1;
    for (size_t i = 0; i < ev->u.array.len; i++) {
        yajl_val e = ev->u.array.values[i];
        const char *ph = YAJL_GET_STRING(tu_get(e, "ph"));
        const char *name = YAJL_GET_STRING(tu_get(e, "name"));
        if (strcmp(ph, "M") == 0) {
            r.meta++;
        } else if (strcmp(ph, "i") == 0) {
            r.marks++;
        } else if (strcmp(ph, "X") == 0 && strcmp(name, "inner") == 0) {
            /* inner slices come out as they close: before their outer */
            r.inner++;
            outer_ts = num(e, "ts");
            outer_end = outer_ts + num(e, "dur");
        } else if (strcmp(ph, "X") == 0 && strcmp(name, outer) == 0) {
            r.outer++;
            double ts = num(e, "ts"), end = ts + num(e, "dur");
            if (outer_ts < 0 || outer_ts < ts - 1e-3 || outer_end > end + 1e-3)
                r.not_nested++;
            outer_ts = outer_end = -1;
            r.with_metric += tu_get(tu_get(e, "args"), "n") != NULL;
        } else if (strcmp(ph, "X") == 0) {
            r.other_x++;
        }
    }
    return r;
}

/* Events spilled to disk while the program ran come back whole and in
 * their order: every slice nested in its parent, its metric, its mark,
 * the track names and the run's facts. */
static void test_spilled_trace_is_whole(void **state)
{
    (void)state;
    int s = start_trace("t_spill", "1M", 0);
    for (int round = 0; round < 10; round++) {
        record("outer", 3000);
        assert_int_equal(kscope__spill_now(s), 0);
    }
    record("outer", 1000); /* and some left in memory */
    assert_true(spilled(s) >= 10 * 3000 * 5 - 10 * KSCOPE__EV_CHUNK);
    assert_int_equal(kscope_dropped(s), 0);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_spill.chrome_trace");
    assert_non_null(doc);
    summary r = summarize(doc, "outer");
    assert_int_equal(r.outer, 31000);
    assert_int_equal(r.inner, 31000);
    assert_int_equal(r.marks, 31000);
    assert_int_equal(r.with_metric, 31000);
    assert_int_equal(r.not_nested, 0);
    assert_true(r.meta >= 2); /* the host process and its thread */
    assert_true(r.has_metadata);
    yajl_tree_free(doc);
    unlink("t_spill.chrome_trace");
}

/* kscope_data reads what was spilled too, and leaves it there. */
static void test_data_reads_spilled_events(void **state)
{
    (void)state;
    int s = start_trace("t_spill_data", "1M", 0);
    record("outer", 5000);
    assert_int_equal(kscope__spill_now(s), 0);
    assert_true(spilled(s) > 0);
    for (int i = 0; i < 2; i++) {
        char *json;
        size_t len;
        assert_int_equal(kscope_data(s, NULL, &json, &len), 0);
        yajl_val doc = tu_parse(json);
        kscope_free(json);
        summary r = summarize(doc, "outer");
        assert_int_equal(r.outer, 5000);
        assert_int_equal(r.not_nested, 0);
        yajl_tree_free(doc);
    }
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_spill_data.chrome_trace");
}

/* Phase p of session s as its trace, parsed (the caller frees it with
 * yajl_tree_free). */
static yajl_val phase_doc(int s, int p)
{
    char *json;
    size_t len;
    assert_int_equal(kscope_data_phase(s, p, NULL, &json, &len), 0);
    yajl_val doc = tu_parse(json);
    kscope_free(json);
    return doc;
}

/* A phase ends with its events on disk: kept there (its data read back),
 * or written to its part (periodic flushing); the next phase starts with
 * none of them. */
static void test_phases_of_a_spilled_trace(void **state)
{
    (void)state;
    for (int periodic = 0; periodic < 2; periodic++) {
        kscope_session_opts o = {.name = "t_spill_ph",
                                 .data = "trace",
                                 .backend = "none",
                                 .trace_buffer = "1M",
                                 .mode = periodic ? "periodic_flushing" : NULL};
        int s = kscope_start(&o);
        assert_true(s >= 0);
        record("p0", 4000);
        assert_int_equal(kscope__spill_now(s), 0);
        record("p0", 500);
        assert_int_equal(kscope_advance_phase(s), 1);
        record("p1", 700);
        yajl_val doc = periodic ? tu_parse_file("t_spill_ph.part_0.chrome_trace") : phase_doc(s, 0);
        assert_non_null(doc);
        summary r0 = summarize(doc, "p0");
        assert_int_equal(r0.outer, 4500);
        assert_int_equal(r0.other_x, 0);
        assert_int_equal(r0.not_nested, 0);
        yajl_tree_free(doc);
        doc = phase_doc(s, 1);
        summary r1 = summarize(doc, "p1");
        assert_int_equal(r1.outer, 700);
        assert_int_equal(r1.other_x, 0);
        yajl_tree_free(doc);
        assert_int_equal(kscope_finalize(s, NULL), 0);
        doc = tu_parse_file("t_spill_ph.part_0.chrome_trace"); /* kept: written at finalize */
        assert_non_null(doc);
        assert_int_equal(summarize(doc, "p0").outer, 4500);
        yajl_tree_free(doc);
        unlink("t_spill_ph.part_0.chrome_trace");
        unlink("t_spill_ph.part_1.chrome_trace");
    }
}

/* A child forked without exec keeps what its parent had spilled and
 * spills to a file of its own: the parent's trace has none of the child's
 * events, the child's has the parent's from before the fork and its own. */
static void test_fork_child_spills_apart(void **state)
{
    (void)state;
    int s = start_trace("t_spill_fork", "1M", 0);
    record("before", 4000);
    assert_int_equal(kscope__spill_now(s), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        record("child", 4000);
        int ok = kscope__spill_now(s) == 0;
        char *json;
        size_t len;
        ok = ok && kscope_data(s, NULL, &json, &len) == 0;
        yajl_val doc = ok ? tu_parse(json) : NULL;
        ok = doc && summarize(doc, "before").outer == 4000 &&
             summarize(doc, "child").outer == 4000 && summarize(doc, "after").outer == 0;
        _exit(ok ? 0 : 1);
    }
    record("after", 4000);
    assert_int_equal(kscope__spill_now(s), 0);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_spill_fork.chrome_trace");
    assert_non_null(doc);
    assert_int_equal(summarize(doc, "before").outer, 4000);
    assert_int_equal(summarize(doc, "after").outer, 4000);
    assert_int_equal(summarize(doc, "child").outer, 0);
    yajl_tree_free(doc);
    unlink("t_spill_fork.chrome_trace");
}

/* The threads of this process named as kscope's trace writer names its
 * own (pthread_setname_np). */
static int writer_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[300], comm[32] = "";
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f) && strncmp(comm, "kscope-spill", 12) == 0)
            n++;
        if (f)
            fclose(f);
    }
    closedir(d);
    return n;
}

/* A forked child that records nothing gets no thread of kscope's: the
 * writer thread starts again with the child's first new chunk of events,
 * not in the fork handler. */
static void test_fork_child_starts_writer_when_it_records(void **state)
{
    (void)state;
#ifndef __GLIBC__
    skip(); /* the writer thread is found by its name */
#endif
    int s = start_trace("t_spill_fork_idle", "1M", 0);
    record("before", 100);
    assert_int_equal(writer_threads(), 1);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int idle = writer_threads();
        record("child", 4000); /* more than one chunk */
        int busy = writer_threads();
        _exit(idle == 0 && busy == 1 ? 0 : 10 + idle * 3 + busy);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0); /* 10 + 3 * idle + busy otherwise */
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_spill_fork_idle.chrome_trace");
}

/* The disk refuses (the file size limit, as a full disk would): events wait
 * in memory up to the budget, then drop, counted; what was kept is
 * written. */
static void test_events_past_the_budget_drop_counted(void **state)
{
    (void)state;
    int s = start_trace("t_spill_full", "1M", 0);
    struct rlimit old, none = {0, 0};
    getrlimit(RLIMIT_FSIZE, &old);
    none.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &none), 0);
    record("outer", 10000); /* 50k events: 800 kB, over the budget in chunks */
    assert_int_not_equal(kscope__spill_now(s), 0);
    record("outer", 10000);
    setrlimit(RLIMIT_FSIZE, &old);
    int64_t dropped = kscope_dropped(s);
    assert_true(dropped > 0);
    assert_true(kscope__session_find(s)->held <= (size_t)1 << 20);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_spill_full.chrome_trace");
    assert_non_null(doc);
    summary r = summarize(doc, "outer");
    assert_true(r.outer > 0 && r.outer < 20000);
    assert_true(r.inner * 5 + dropped >= 20000 * 5 - 5); /* every event kept or counted */
    yajl_tree_free(doc);
    unlink("t_spill_full.chrome_trace");
}

/* The budget's text: a size with an optional k, M or G; anything else is
 * refused naming it, from the option or the variable. */
static void test_trace_buffer_sizes(void **state)
{
    (void)state;
    size_t b;
    assert_int_equal(kscope__trace_budget("64M", &b), 0);
    assert_int_equal(b, (size_t)64 << 20);
    assert_int_equal(kscope__trace_budget("3g", &b), 0);
    assert_int_equal(b, (size_t)3 << 30);
    assert_int_equal(kscope__trace_budget("123456789", &b), 0);
    assert_int_equal(b, 123456789);
    static const char *const bad[] = {"0", "-5M", "12X", "M", "1.5G", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kscope_session_opts o = {
            .name = "t_spill_bad", .data = "trace", .backend = "none", .trace_buffer = bad[i]};
        assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
        assert_non_null(strstr(kscope_last_error(), bad[i]));
    }
    setenv("KSCOPE_TRACE_BUFFER", "lots", 1);
    kscope_session_opts o = {.name = "t_spill_bad", .data = "trace", .backend = "none"};
    assert_int_equal(kscope_start(&o), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "KSCOPE_TRACE_BUFFER"));
    o.data = "tree"; /* a tree has no trace buffer */
    int s = kscope_start(&o);
    assert_true(s >= 0);
    unsetenv("KSCOPE_TRACE_BUFFER");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink("t_spill_bad.hatchet");
}

/* The whole of a gzip file, inflated (NULL when it is not one). */
static char *gunzip(const char *path)
{
    gzFile z = gzopen(path, "rb");
    size_t cap = 1 << 20, len = 0;
    char *buf = z ? malloc(cap + 1) : NULL;
    for (int n; buf && (n = gzread(z, buf + len, (unsigned)(cap - len))) > 0;) {
        len += (size_t)n;
        if (len == cap)
            buf = realloc(buf, (cap *= 2) + 1);
    }
    if (z)
        gzclose(z);
    if (buf)
        buf[len] = 0;
    return buf;
}

/* compress=1 writes <name>.chrome_trace.gz, a gzip file holding the same
 * trace; kscope's readers open it; chrome_trace_gz is a format by name. */
static void test_compressed_trace(void **state)
{
    (void)state;
    int s = start_trace("t_spill_gz", "1M", 1);
    char path[256];
    assert_true(kscope_output_path(s, NULL, path, sizeof path) > 0);
    assert_string_equal(path, "t_spill_gz.chrome_trace.gz");
    record("outer", 3000);
    assert_int_equal(kscope__spill_now(s), 0);
    record("outer", 100);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    size_t zlen;
    char *raw = tu_read_file(path, &zlen);
    assert_non_null(raw);
    assert_true(zlen > 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b);
    free(raw);
    char *text = gunzip(path);
    assert_non_null(text);
    yajl_val doc = tu_parse(text);
    free(text);
    assert_non_null(doc);
    summary r = summarize(doc, "outer");
    assert_int_equal(r.outer, 3100);
    assert_int_equal(r.not_nested, 0);
    assert_true(r.has_metadata);
    yajl_tree_free(doc);
    kscope__ptree *t = NULL;
    char err[KSCOPE__READ_ERRLEN];
    assert_int_equal(kscope__read_profile(path, &t, err, sizeof err), 0);
    kscope__pnode *outer = kscope__pnode_child(t, t->root, kscope__ptree_intern_cstr(t, "outer"));
    assert_int_equal(kscope__pnode_metric(outer, kscope__ptree_intern_cstr(t, "calls"))->v.i, 3100);
    kscope__ptree_free(t);
    unlink(path);
    /* by name, from a session that does not compress by default */
    s = start_trace("t_spill_gz2", NULL, 0);
    record("outer", 10);
    assert_int_equal(kscope_finalize(s, "chrome_trace_gz"), 0);
    text = gunzip("t_spill_gz2.chrome_trace.gz");
    assert_non_null(text);
    assert_non_null(strstr(text, "\"outer\""));
    free(text);
    unlink("t_spill_gz2.chrome_trace.gz");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_spilled_trace_is_whole, tu_teardown),
        cmocka_unit_test_teardown(test_data_reads_spilled_events, tu_teardown),
        cmocka_unit_test_teardown(test_phases_of_a_spilled_trace, tu_teardown),
        cmocka_unit_test_teardown(test_fork_child_spills_apart, tu_teardown),
        cmocka_unit_test_teardown(test_fork_child_starts_writer_when_it_records, tu_teardown),
        cmocka_unit_test_teardown(test_events_past_the_budget_drop_counted, tu_teardown),
        cmocka_unit_test_teardown(test_trace_buffer_sizes, tu_teardown),
        cmocka_unit_test_teardown(test_compressed_trace, tu_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
