/*
 * test-nomem.c - the reading toolkit when memory runs out. Each operation
 * (read a profile of every format, whole and in chunks; flatten, columns,
 * top kernels, hot lines, diff's union, merge of trees and traces, write a
 * profile; the profile tree's own calls) runs once per allocation it makes,
 * with that one allocation failing: every run must end in success (the
 * allocation was optional) or in KSCOPE_ENOMEM with "out of memory" in its
 * message, never a crash, another error or a half-built result; the
 * sanitizer build checks that nothing leaks on those paths. The binary is
 * linked with --wrap for malloc, calloc, realloc and strdup
 * (test/CMakeLists.txt), so the toolkit's calls come here; the C library's
 * and yajl's/msgpack-c's own allocations do not.
 */
#include "kscope.h"
#include "format/format.h"
#include "read/read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "support/readutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------- failing allocator */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);

static long alloc_count, fail_at; /* fail_at 0: nothing fails */
static int injected;

static int fail_now(void)
{
    if (fail_at <= 0 || ++alloc_count != fail_at)
        return 0;
    injected = 1;
    return 1;
}

void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s);
char *__wrap_strdup(const char *s)
{
    return fail_now() ? NULL : __real_strdup(s);
}

/* An operation under test: 0 on success, else a negative code with err
 * saying why. It frees whatever it made, on every path. */
typedef int (*op_fn)(const void *arg, char *err, size_t errlen);

/* Run op with its 1st, 2nd, ... allocation failing until a run makes no
 * failed allocation (and must succeed). Returns how many runs had one. */
static long each_failure(const char *what, op_fn op, const void *arg)
{
    for (long n = 1;; n++) {
        char err[KSCOPE__READ_ERRLEN] = "";
        alloc_count = 0;
        injected = 0;
        fail_at = n;
        int rc = op(arg, err, sizeof err);
        fail_at = 0;
        if (!injected) {
            if (rc != 0)
                fail_msg("%s: failed with no allocation failing: %d %s", what, rc, err);
            return n - 1;
        }
        if (rc == 0)
            continue; /* an allocation it can do without */
        if (rc != KSCOPE_ENOMEM || !strstr(err, "out of memory"))
            fail_msg("%s, allocation %ld failing: %d '%s', want KSCOPE_ENOMEM, 'out of memory'",
                     what, n, rc, err);
    }
}

/* ------------------------------------------------------------ inputs */

static char *slurp(const char *rel, size_t *len)
{
    char err[KSCOPE__READ_ERRLEN];
    char *buf = NULL;
    if (kscope__read_whole_file(data_path(rel), &buf, len, err, sizeof err) != 0)
        fail_msg("%s", err);
    return buf;
}

static char tmpdir[64];

static const char *tmp_path(const char *name)
{
    static char buf[128];
    snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
    return buf;
}

static int setup(void **state)
{
    (void)state;
    strcpy(tmpdir, "/tmp/kscope-test-nomem.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ readers */

static int op_read_profile(const void *arg, char *err, size_t errlen)
{
    kscope__ptree *t = NULL;
    int rc = kscope__read_profile(arg, &t, err, errlen);
    if (rc == 0 && !t)
        return kscope__read_fail(err, errlen, KSCOPE_EINVAL, "success without a tree");
    if (rc != 0 && t)
        return kscope__read_fail(err, errlen, KSCOPE_EINVAL, "a tree left after failing");
    kscope__ptree_free(t);
    return rc;
}

static void test_read_each_format(void **state)
{
    (void)state;
    static const char *const files[] = {
        "proton/rich_tree.hatchet", "proton/proton_run.hatchet", "proton/rich_trace.chrome_trace",
        "kscope/trace_host.json",   "kscope/pcsampling.hatchet", "kscope/frames.hatchet"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", data_path(files[i]));
        assert_true(each_failure(files[i], op_read_profile, path) > 0);
    }
    /* the same tree as MessagePack */
    kscope__ptree *t = read_ok("proton/rich_tree.hatchet");
    char err[KSCOPE__READ_ERRLEN];
    const char *mp = tmp_path("rich.hatchet_msgpack");
    assert_int_equal(kscope__write_profile(mp, t, kscope__format_by_path(mp), err, sizeof err), 0);
    kscope__ptree_free(t);
    char path[128];
    snprintf(path, sizeof path, "%s", mp);
    assert_true(each_failure("msgpack", op_read_profile, path) > 0);
}

/* The streaming .hatchet parser fed a few bytes at a time. */
typedef struct chunks {
    const char *buf;
    size_t len, step;
} chunks;

static int op_hjson_chunks(const void *arg, char *err, size_t errlen)
{
    const chunks *c = arg;
    kscope__hjson *p = kscope__hjson_new();
    if (!p)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < c->len; off += c->step) {
        size_t n = c->len - off < c->step ? c->len - off : c->step;
        rc = kscope__hjson_feed(p, c->buf + off, n, err, errlen);
    }
    kscope__ptree *t = NULL;
    if (rc == 0)
        rc = kscope__hjson_finish(p, &t, err, errlen);
    kscope__hjson_free(p);
    kscope__ptree_free(t);
    return rc;
}

static int op_tjson_chunks(const void *arg, char *err, size_t errlen)
{
    const chunks *c = arg;
    kscope__tjson *p = kscope__tjson_new();
    if (!p)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < c->len; off += c->step) {
        size_t n = c->len - off < c->step ? c->len - off : c->step;
        rc = kscope__tjson_feed(p, c->buf + off, n, err, errlen);
    }
    kscope__ptree *t = NULL;
    if (rc == 0)
        rc = kscope__tjson_finish(p, &t, err, errlen);
    kscope__tjson_free(p);
    kscope__ptree_free(t);
    return rc;
}

static void test_read_in_chunks(void **state)
{
    (void)state;
    chunks c = {.step = 61};
    char *buf = slurp("proton/rich_tree.hatchet", &c.len);
    c.buf = buf;
    assert_true(each_failure("hatchet in chunks", op_hjson_chunks, &c) > 0);
    free(buf);
    buf = slurp("proton/rich_trace.chrome_trace", &c.len);
    c.buf = buf;
    assert_true(each_failure("trace in chunks", op_tjson_chunks, &c) > 0);
    free(buf);
}

/* ----------------------------------------------------------- analysis */

static int op_analysis(const void *arg, char *err, size_t errlen)
{
    const kscope__ptree *t = arg;
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) != 0)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    kscope__metric_info *list = NULL;
    int n = kscope__metric_list_flat(t, &f, &list);
    free(list);
    list = NULL;
    if (n < 0)
        rc = kscope__read_fail(err, errlen, n, "out of memory");
    n = kscope__metric_list(t, &list);
    free(list);
    list = NULL;
    if (n < 0 && rc == 0)
        rc = kscope__read_fail(err, errlen, n, "out of memory");
    char name[96];
    if (rc == 0 && kscope__default_metric(t, name, sizeof name) < 0)
        rc = kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    static const char *const specs[] = {"time/ms", "avg_time/us", "tflop16/s", "gbyte/s",
                                        "util",    "count",       "time/%"};
    for (size_t i = 0; rc == 0 && i < sizeof specs / sizeof *specs; i++) {
        kscope__column col;
        rc = kscope__column_compute(t, &f, specs[i], &col, err, errlen);
        if (rc == 0)
            kscope__column_free(&col);
    }
    kscope__pflat_free(&f);
    return rc;
}

static int op_union(const void *arg, char *err, size_t errlen)
{
    kscope__ptree *const *two = arg;
    kscope__pflat fa, fb;
    kscope__punion u;
    if (kscope__pflat_build(two[0], &fa) != 0)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    if (kscope__pflat_build(two[1], &fb) != 0) {
        kscope__pflat_free(&fa);
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    }
    int rc = kscope__punion_build(&fa, &fb, &u);
    if (rc == 0)
        kscope__punion_free(&u);
    kscope__pflat_free(&fa);
    kscope__pflat_free(&fb);
    return rc ? kscope__read_fail(err, errlen, rc, "out of memory") : 0;
}

static FILE *devnull;

static int op_tables(const void *arg, char *err, size_t errlen)
{
    const kscope__ptree *t = arg;
    int n = kscope__top_print(devnull, t, 0, 0);
    if (n >= 0)
        n = kscope__lines_print(devnull, t, 0, KSCOPE__LINES_BY_KERNEL);
    if (n >= 0)
        n = kscope__lines_print(devnull, t, 3, 0);
    return n < 0 ? kscope__read_fail(err, errlen, n, "out of memory") : 0;
}

static void test_analysis(void **state)
{
    (void)state;
    devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    kscope__ptree *rich = read_ok("proton/rich_tree.hatchet");
    kscope__ptree *pcs = read_ok("kscope/pcsampling.hatchet");
    assert_true(each_failure("analysis", op_analysis, rich) > 0);
    assert_true(each_failure("top table", op_tables, rich) > 0);
    assert_true(each_failure("hot lines", op_tables, pcs) > 0);
    kscope__ptree *two[2] = {read_ok("kscope/run_a.hatchet"), read_ok("kscope/run_b.hatchet")};
    assert_true(each_failure("union", op_union, two) > 0);
    kscope__ptree_free(two[0]);
    kscope__ptree_free(two[1]);
    kscope__ptree_free(rich);
    kscope__ptree_free(pcs);
    fclose(devnull);
}

/* -------------------------------------------------------------- merge */

static int op_merge_trees(const void *arg, char *err, size_t errlen)
{
    kscope__ptree *const *two = arg;
    kscope__ptree *out = NULL;
    int rc = kscope__merge_trees(two, 2, &out, err, errlen);
    kscope__ptree_free(out);
    return rc;
}

static int op_merge_prepared(const void *arg, char *err, size_t errlen)
{
    kscope__ptree *const *two = arg;
    kscope__merger *mg = kscope__merger_new();
    if (!mg)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    for (int i = 0; rc == 0 && i < 2; i++) {
        kscope__merge_prep *p = kscope__merge_prepare(two[i]);
        rc = p ? kscope__merger_add_prepared(mg, p, err, errlen)
               : kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
        kscope__merge_prep_free(p);
    }
    kscope__ptree *out = NULL;
    if (rc == 0)
        rc = kscope__merger_finish(mg, &out, err, errlen);
    kscope__ptree_free(out);
    kscope__merger_free(mg);
    return rc;
}

typedef struct traces {
    const char *bufs[2];
    size_t lens[2];
} traces;

static int op_merge_traces(const void *arg, char *err, size_t errlen)
{
    const traces *tr = arg;
    static const char *const names[] = {"a.json", "b.json"};
    char *out = NULL;
    size_t outlen = 0;
    int rc = kscope__merge_traces(tr->bufs, tr->lens, names, 2, &out, &outlen, err, errlen);
    free(out);
    return rc;
}

static int op_trace_merger(const void *arg, char *err, size_t errlen)
{
    const traces *tr = arg;
    kscope__trace_merger *m = kscope__trace_merger_new(devnull);
    if (!m)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    for (int i = 0; rc == 0 && i < 2; i++)
        rc = kscope__trace_merger_add(m, tr->bufs[i], tr->lens[i], i ? "b.json" : "a.json", err,
                                      errlen);
    if (rc == 0)
        rc = kscope__trace_merger_finish(m, err, errlen);
    kscope__trace_merger_free(m);
    return rc;
}

static void test_merge(void **state)
{
    (void)state;
    devnull = fopen("/dev/null", "w");
    assert_non_null(devnull);
    kscope__ptree *two[2] = {read_ok("proton/rich_tree.hatchet"), read_ok("kscope/run_b.hatchet")};
    assert_true(each_failure("merge trees", op_merge_trees, two) > 0);
    assert_true(each_failure("merge prepared", op_merge_prepared, two) > 0);
    kscope__ptree_free(two[0]);
    kscope__ptree_free(two[1]);
    traces tr;
    char *a = slurp("kscope/trace_host.json", &tr.lens[0]);
    char *b = slurp("proton/rich_trace.chrome_trace", &tr.lens[1]);
    tr.bufs[0] = a;
    tr.bufs[1] = b;
    assert_true(each_failure("merge traces", op_merge_traces, &tr) > 0);
    assert_true(each_failure("trace merger", op_trace_merger, &tr) > 0);
    free(a);
    free(b);
    fclose(devnull);
}

/* -------------------------------------------------------------- write */

static int op_write(const void *arg, char *err, size_t errlen)
{
    const kscope__ptree *t = arg;
    int rc = 0;
    static const char *const names[] = {"w.hatchet", "w.hatchet_msgpack"};
    for (size_t i = 0; rc == 0 && i < 2; i++) {
        const char *path = tmp_path(names[i]);
        rc = kscope__write_profile(path, t, kscope__format_by_path(path), err, errlen);
    }
    return rc;
}

static void test_write(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/rich_tree.hatchet");
    assert_true(each_failure("write", op_write, t) > 0);
    kscope__ptree_free(t);
}

/* ------------------------------------------------------- profile tree */

/* Builds a tree by the profile tree's own calls: enough children and
 * metrics on one node for its indexes, every metric kind, inclusive
 * names, devices. */
static int op_ptree(const void *arg, char *err, size_t errlen)
{
    (void)arg;
    kscope__ptree *t = kscope__ptree_new();
    if (!t)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    kscope__pnode *n = NULL;
    char name[32];
    for (int i = 0; rc == 0 && i < 40; i++) {
        snprintf(name, sizeof name, "child%d", i);
        const char *k = kscope__ptree_intern_cstr(t, name);
        n = k ? kscope__pnode_child(t, t->root, k) : NULL;
        if (!n)
            rc = KSCOPE_ENOMEM;
        snprintf(name, sizeof name, "metric%d", i);
        if (rc == 0)
            rc = kscope__pnode_set_int(t, t->root, name, i);
        if (rc == 0)
            rc = kscope__pnode_add_int(t, n, "count", 1);
        if (rc == 0)
            rc = kscope__pnode_add_double(t, n, "time (ns)", 1.5);
        if (rc == 0)
            rc = kscope__pnode_set_double(t, n, "util", 0.5);
        if (rc == 0)
            rc = kscope__pnode_set_string(t, n, "device_type", "CUDA");
        if (rc == 0)
            rc = kscope__pnode_set_vec(t, n, "v", KSCOPE__V_INTVEC, (int64_t[]){1, 2}, 2);
        if (rc == 0)
            rc = kscope__ptree_add_inclusive(t, name);
        if (rc == 0 && !kscope__ptree_device(t, "CUDA", (uint32_t)i % 3))
            rc = KSCOPE_ENOMEM;
    }
    kscope__ptree_free(t);
    return rc ? kscope__read_fail(err, errlen, rc, "out of memory") : 0;
}

static void test_ptree(void **state)
{
    (void)state;
    assert_true(each_failure("profile tree", op_ptree, NULL) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_each_format),
        cmocka_unit_test(test_read_in_chunks),
        cmocka_unit_test(test_analysis),
        cmocka_unit_test(test_merge),
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_ptree),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
