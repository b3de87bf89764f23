/*
 * test-read.c - the profile readers (.hatchet JSON, .hatchet_msgpack,
 * Chrome traces), every bad-input case they must refuse, and the analysis
 * built on them: derived metrics against hand-computed values (util on
 * arch 90 with the Proton fixture's device info), tree matching, merging
 * and the top-kernels table.
 */
#include "kscope.h"
#include "read/read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static char *data_path(const char *rel)
{
    const char *src = getenv("KSCOPE_SOURCE_DIR");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/test/data/%s", src ? src : "..", rel);
    return buf;
}

static kscope__ptree *read_ok(const char *rel)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    int rc = kscope__read_profile(data_path(rel), &t, err, sizeof err);
    if (rc < 0)
        fail_msg("%s: %s", rel, err);
    assert_non_null(t);
    return t;
}

static kscope__ptree *json_ok(const char *text)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    int rc = kscope__read_hatchet_json(text, strlen(text), &t, err, sizeof err);
    if (rc < 0)
        fail_msg("unexpected error: %s", err);
    return t;
}

/* The reader refuses text with an error containing `want`. */
static void json_bad(const char *text, size_t len, const char *want)
{
    char err[KSCOPE__READ_ERRLEN] = "";
    kscope__ptree *t = (kscope__ptree *)1;
    int rc = kscope__read_hatchet_json(text, len, &t, err, sizeof err);
    assert_int_equal(rc, KSCOPE_EPARSE);
    assert_null(t);
    if (!strstr(err, want))
        fail_msg("error '%s' does not mention '%s'", err, want);
    assert_null(strchr(err, '\n'));
}

#define JBAD(text, want) json_bad((text), strlen(text), (want))

static kscope__pnode *child(kscope__pnode *n, const char *name)
{
    for (uint32_t i = 0; i < n->nchildren; i++)
        if (strcmp(n->children[i]->name, name) == 0)
            return n->children[i];
    fail_msg("no child '%s' under '%s'", name, n->name);
    return NULL;
}

#define PATH(t, ...) path_of((t), (const char *const[]){__VA_ARGS__, NULL})
static kscope__pnode *path_of(kscope__ptree *t, const char *const *names)
{
    kscope__pnode *n = t->root;
    for (; *names; names++)
        n = child(n, *names);
    return n;
}

static double metric(const kscope__pnode *n, const char *key)
{
    for (uint32_t i = 0; i < n->nmetrics; i++)
        if (strcmp(n->metrics[i].key, key) == 0)
            return kscope__pmetric_number(&n->metrics[i]);
    return NAN;
}

static const char *metric_str(const kscope__pnode *n, const char *key)
{
    for (uint32_t i = 0; i < n->nmetrics; i++)
        if (strcmp(n->metrics[i].key, key) == 0 && n->metrics[i].type == KSCOPE__V_STRING)
            return n->metrics[i].v.s;
    return NULL;
}

/* Column values of `spec` for t, by preorder index. */
static double *column(kscope__ptree *t, kscope__pflat *f, const char *spec, kscope__column *c)
{
    char err[KSCOPE__READ_ERRLEN];
    int rc = kscope__column_compute(t, f, spec, c, err, sizeof err);
    if (rc < 0)
        fail_msg("%s: %s", spec, err);
    return c->vals;
}

static size_t index_of(const kscope__pflat *f, const kscope__pnode *n)
{
    for (size_t i = 0; i < f->n; i++)
        if (f->node[i] == n)
            return i;
    fail_msg("node not in the flattened tree");
    return 0;
}

static void assert_close(double got, double want)
{
    double tol = fabs(want) * 1e-9 + 1e-12;
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.12g, want %.12g", got, want);
}

/* ------------------------------------------------------- JSON reader */

static void test_proton_run_fixture(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/proton_run.hatchet");
    assert_string_equal(t->root->name, "ROOT");
    assert_int_equal(t->root->nchildren, 1);
    kscope__pnode *k = t->root->children[0];
    assert_true(strncmp(k->name, "_ZN2at6native29vectorized", 25) == 0);
    assert_close(metric(k, "time (ns)"), 51704748);
    assert_close(metric(k, "count"), 60000);
    assert_string_equal(metric_str(k, "device_id"), "0");
    assert_string_equal(metric_str(k, "device_type"), "CUDA");
    /* ROOT's zeros name the inclusive metrics and are not kept as values */
    assert_true(kscope__ptree_is_inclusive(t, "time (ns)"));
    assert_true(kscope__ptree_is_inclusive(t, "count"));
    assert_int_equal(t->root->nmetrics, 0);
    assert_int_equal(t->ndevices, 1);
    assert_string_equal(t->devices[0].type, "CUDA");
    assert_string_equal(t->devices[0].arch, "90");
    assert_int_equal(t->devices[0].num_sms, 132);
    assert_int_equal(t->devices[0].clock_rate, 1980000);
    assert_int_equal(t->devices[0].memory_clock_rate, 3201000);
    assert_int_equal(t->devices[0].bus_width, 6016);
    kscope__ptree_free(t);
}

static void test_rich_tree_fixture(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/rich_tree.hatchet");
    kscope__pnode *inner = PATH(t, "train", "step", "inner", "add_kernel<n=4194304>");
    assert_close(metric(inner, "time (ns)"), 40832);
    assert_close(metric(inner, "flops32"), 12582912.0);
    assert_close(metric(PATH(t, "train", "step", "host_prep"), "cpu_time (ns)"), 3226670);
    assert_close(metric(PATH(t, "train", "step", "inner"), "cpu_wait (ns)"), 270);
    assert_close(metric(PATH(t, "train"), "tokens"), 4096);
    /* exclusive metrics are not in ROOT's list */
    assert_false(kscope__ptree_is_inclusive(t, "cpu_time (ns)"));
    assert_true(kscope__ptree_is_inclusive(t, "tokens"));
    /* children keep their order (Proton writes "children" before "frame") */
    kscope__pnode *step = PATH(t, "train", "step");
    assert_int_equal(step->nchildren, 5);
    assert_string_equal(step->children[1]->name, "host_prep");
    kscope__ptree_free(t);
}

static void test_keys_in_any_order_and_extra_keys(void **state)
{
    (void)state;
    kscope__ptree *t =
        json_ok("[{\"metrics\":{\"time (ns)\":0},\"extra\":{\"a\":[1,{\"b\":2}]},"
                "\"children\":[{\"children\":[],\"metrics\":{\"time (ns)\":5,\"v\":[1,2,3],"
                "\"w\":[1.5,2]},\"frame\":{\"type\":\"function\",\"name\":\"k\",\"line\":3}}],"
                "\"frame\":{\"name\":\"ROOT\"}},{}]");
    kscope__pnode *k = PATH(t, "k");
    assert_close(metric(k, "time (ns)"), 5);
    kscope__pmetric *v = kscope__pnode_metric(k, kscope__ptree_intern_cstr(t, "v"));
    assert_non_null(v);
    assert_int_equal(v->type, KSCOPE__V_INTVEC);
    assert_int_equal(v->n, 3);
    assert_int_equal(v->v.iv[2], 3);
    kscope__pmetric *w = kscope__pnode_metric(k, kscope__ptree_intern_cstr(t, "w"));
    assert_int_equal(w->type, KSCOPE__V_DOUBLEVEC);
    assert_close(w->v.dv[0], 1.5);
    assert_int_equal(t->ndevices, 0);
    kscope__ptree_free(t);
}

static void test_chunked_feed_matches_whole(void **state)
{
    (void)state;
    size_t len;
    FILE *f = fopen(data_path("proton/rich_tree.hatchet"), "rb");
    assert_non_null(f);
    static char buf[1 << 16];
    len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    char err[KSCOPE__READ_ERRLEN];
    kscope__hjson *p = kscope__hjson_new();
    for (size_t i = 0; i < len; i++) { /* one byte at a time, the buffer reused */
        char one = buf[i];
        assert_int_equal(kscope__hjson_feed(p, &one, 1, err, sizeof err), 0);
    }
    kscope__ptree *t;
    assert_int_equal(kscope__hjson_finish(p, &t, err, sizeof err), 0);
    kscope__hjson_free(p);
    assert_close(metric(PATH(t, "train", "step", "matmul"), "flops16"), 51539607552.0);
    kscope__ptree_free(t);
}

static void test_json_bad_inputs(void **state)
{
    (void)state;
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"children\":[", "truncated");
    JBAD("this is not json", "not valid JSON");
    JBAD("", "empty");
    JBAD("  \n ", "truncated");
    JBAD("{\"traceEvents\":[]}", "Chrome trace");
    JBAD("42", "single value");
    JBAD("[]", "empty");
    JBAD("[1,{}]", "not an object");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{}}]", "missing device-info");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"}},{},{}]", "more than two");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"children\":{}},{}]", "not an array");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"children\":[{\"metrics\":{}}]},{}]", "no \"frame\"");
    JBAD("[{\"frame\":{\"name\":5}},{}]", "not a string");
    json_bad(
        "[{\"frame\":{\"name\":\"ROOT\"},\"children\":[{\"frame\":{\"name\":\"a\\u0007b\"}}]},{}]",
        strlen("[{\"frame\":{\"name\":\"ROOT\"},\"children\":[{\"frame\":{\"name\":\"a\\u0007b\"}}]"
               "},{}]"),
        "control character");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"time (ns)\":-5}},{}]",
         "negative value -5 for metric 'time (ns)'");
    json_bad(
        "[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"count\":99999999999999999999999}},{}]",
        strlen(
            "[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"count\":99999999999999999999999}},{}]"),
        "out of range");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"time (ns)\":1e999}},{}]", "out of range");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"x\":{}}},{}]", "is an object");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"x\":null}},{}]", "null");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"}},{\"CUDA\":{\"x\":{}}}]", "device index");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"}},{\"CUDA\":{\"0\":{\"num_sms\":-1}}}]", "out of range");
    /* two documents back to back, as two ranks writing one file leave it */
    const char *one = "[{\"frame\":{\"name\":\"ROOT\"}},{}]";
    char two[128];
    snprintf(two, sizeof two, "%s%s", one, one);
    json_bad(two, strlen(two), "two documents");
    /* a negative custom metric is data, not an error */
    kscope__ptree *t = json_ok("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"delta\":-3}},{}]");
    assert_close(metric(t->root, "delta"), -3);
    kscope__ptree_free(t);
}

static void test_json_nesting_100000_levels(void **state)
{
    (void)state;
    const char *open = "{\"frame\":{\"name\":\"a\"},\"children\":[";
    size_t levels = 100000, ol = strlen(open);
    size_t cap = levels * (ol + 2) + 64, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    text[len++] = '[';
    for (size_t i = 0; i < levels; i++, len += ol)
        memcpy(text + len, open, ol);
    for (size_t i = 0; i < levels; i++) {
        text[len++] = ']';
        text[len++] = '}';
    }
    memcpy(text + len, ",{}]", 4);
    len += 4;
    json_bad(text, len, "nested deeper than 4096");
    free(text);
}

static void test_read_profile_file_errors(void **state)
{
    (void)state;
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t;
    assert_int_equal(kscope__read_profile("/nonexistent/x.hatchet", &t, err, sizeof err),
                     KSCOPE_EIO);
    assert_non_null(strstr(err, "/nonexistent/x.hatchet: No such file"));
    const char *dir = getenv("KSCOPE_SOURCE_DIR") ? getenv("KSCOPE_SOURCE_DIR") : "..";
    assert_true(kscope__read_profile(dir, &t, err, sizeof err) < 0);
    assert_non_null(strstr(err, "is a directory"));
    char path[] = "/tmp/kscope-test-read-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(kscope__read_profile(path, &t, err, sizeof err), KSCOPE_EPARSE);
    assert_non_null(strstr(err, "empty file"));
    FILE *f = fopen(path, "wb");
    fputs("   \n\t ", f);
    fclose(f);
    assert_int_equal(kscope__read_profile(path, &t, err, sizeof err), KSCOPE_EPARSE);
    assert_non_null(strstr(err, "empty file"));
    f = fopen(path, "wb");
    fputs("# hello", f);
    fclose(f);
    assert_int_equal(kscope__read_profile(path, &t, err, sizeof err), KSCOPE_EPARSE);
    assert_non_null(strstr(err, "not a profile"));
    assert_true(strncmp(err, path, strlen(path)) == 0);
    unlink(path);
}

/* What kscope itself writes (tree and trace, no GPU) reads back. */
static void test_reads_kscope_writer_output(void **state)
{
    (void)state;
    char dir[] = "/tmp/kscope-test-read-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *data[] = {"tree", "trace"};
    for (int d = 0; d < 2; d++) {
        char name[128];
        snprintf(name, sizeof name, "%s/p%d", dir, d);
        kscope_session_opts o = {.name = name, .data = data[d], .backend = "none"};
        int s = kscope_start(&o);
        if (s < 0)
            fail_msg("kscope_start: %s", kscope_last_error());
        assert_int_equal(kscope_enter("main"), 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(kscope_enter("step"), 0);
            assert_int_equal(kscope_metric_int("tokens", 100), 0);
            assert_int_equal(kscope_enter("inner"), 0);
            assert_int_equal(kscope_exit("inner"), 0);
            assert_int_equal(kscope_exit("step"), 0);
        }
        assert_int_equal(kscope_exit("main"), 0);
        char path[256];
        assert_true(kscope_output_path(s, NULL, path, sizeof path) > 0);
        assert_int_equal(kscope_finalize(s, NULL), 0);
        char err[KSCOPE__READ_ERRLEN];
        kscope__ptree *t;
        if (kscope__read_profile(path, &t, err, sizeof err) < 0)
            fail_msg("%s", err);
        kscope__pnode *step = PATH(t, "main", "step");
        assert_close(metric(step, "calls"), 3);
        assert_close(metric(step, "tokens"), 300);
        assert_true(metric(step, "wall_time (ns)") > 0);
        assert_true(metric(PATH(t, "main"), "wall_time (ns)") >=
                    metric(PATH(t, "main", "step", "inner"), "wall_time (ns)"));
        assert_close(metric(PATH(t, "main", "step", "inner"), "calls"), 3);
        kscope__ptree_free(t);
        unlink(path);
    }
    rmdir(dir);
}

/* --------------------------------------------------- msgpack reader */

static void test_msgpack_round_trip(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/rich_tree.hatchet");
    char *buf;
    size_t len;
    assert_int_equal(kscope__hatchet_write_msgpack(t, &buf, &len), 0);
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *u;
    int rc = kscope__read_hatchet_msgpack(buf, len, &u, err, sizeof err);
    if (rc < 0)
        fail_msg("%s", err);
    kscope__pflat fa, fb;
    assert_int_equal(kscope__pflat_build(t, &fa), 0);
    assert_int_equal(kscope__pflat_build(u, &fb), 0);
    assert_int_equal(fa.n, fb.n);
    for (size_t i = 0; i < fa.n; i++) {
        assert_string_equal(fa.node[i]->name, fb.node[i]->name);
        assert_int_equal(fa.node[i]->nmetrics, fb.node[i]->nmetrics);
        for (uint32_t k = 0; k < fa.node[i]->nmetrics; k++) {
            const kscope__pmetric *m = &fa.node[i]->metrics[k];
            if (m->type == KSCOPE__V_STRING)
                assert_string_equal(metric_str(fb.node[i], m->key), m->v.s);
            else
                assert_close(metric(fb.node[i], m->key), kscope__pmetric_number(m));
        }
    }
    assert_int_equal(u->ninclusive, t->ninclusive);
    assert_int_equal(u->devices[0].bus_width, 6016);
    /* every truncation is refused, none crashes */
    for (size_t cut = 0; cut < len; cut += 7) {
        kscope__ptree *v = NULL;
        assert_int_equal(kscope__read_hatchet_msgpack(buf, cut, &v, err, sizeof err),
                         KSCOPE_EPARSE);
        assert_null(v);
    }
    kscope__pflat_free(&fa);
    kscope__pflat_free(&fb);
    free(buf);
    kscope__ptree_free(t);
    kscope__ptree_free(u);
}

static void pack_str(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str(pk, strlen(s));
    msgpack_pack_str_body(pk, s, strlen(s));
}

static void msgpack_bad(msgpack_sbuffer *sb, const char *want)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    assert_int_equal(kscope__read_hatchet_msgpack(sb->data, sb->size, &t, err, sizeof err),
                     KSCOPE_EPARSE);
    assert_null(t);
    if (!strstr(err, want))
        fail_msg("error '%s' does not mention '%s'", err, want);
}

static void test_msgpack_bad_inputs(void **state)
{
    (void)state;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    /* 100,000 levels deep */
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 2);
    for (int i = 0; i < 100000; i++) {
        msgpack_pack_map(&pk, 2);
        pack_str(&pk, "frame");
        msgpack_pack_map(&pk, 1);
        pack_str(&pk, "name");
        pack_str(&pk, "a");
        pack_str(&pk, "children");
        msgpack_pack_array(&pk, i + 1 < 100000 ? 1 : 0);
    }
    msgpack_pack_map(&pk, 0);
    msgpack_bad(&sb, "nested deeper than 4096");
    msgpack_sbuffer_destroy(&sb);
    /* missing device info, wrong shape, negative time, trailing data */
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 1);
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "frame");
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "name");
    pack_str(&pk, "ROOT");
    msgpack_bad(&sb, "missing device-info");
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_int(&pk, 3);
    msgpack_pack_map(&pk, 0);
    msgpack_bad(&sb, "element 0 of the top-level array is not an object");
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_map(&pk, 2);
    pack_str(&pk, "frame");
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "name");
    pack_str(&pk, "ROOT");
    pack_str(&pk, "metrics");
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "time (ns)");
    msgpack_pack_int(&pk, -7);
    msgpack_pack_map(&pk, 0);
    msgpack_bad(&sb, "negative value -7");
    msgpack_pack_int(&pk, 1);
    msgpack_bad(&sb, "negative value"); /* the first problem met is told */
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "frame");
    msgpack_pack_map(&pk, 1);
    pack_str(&pk, "name");
    pack_str(&pk, "ROOT");
    msgpack_pack_map(&pk, 0);
    msgpack_pack_int(&pk, 1);
    msgpack_bad(&sb, "data after the end");
    /* a huge declared container is refused, not allocated */
    const char huge[] = {(char)0x92, (char)0xdd, (char)0xff, (char)0xff, (char)0xff, (char)0xff};
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t;
    assert_int_equal(kscope__read_hatchet_msgpack(huge, sizeof huge, &t, err, sizeof err),
                     KSCOPE_EPARSE);
    msgpack_sbuffer_destroy(&sb);
}

/* ------------------------------------------------------ trace reader */

static void test_trace_to_tree_proton(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/rich_trace.chrome_trace");
    kscope__pnode *k = PATH(t, "train", "step", "add_kernel<n=4194304>");
    assert_close(metric(k, "count"), 3);
    assert_close(metric(k, "time (ns)"), 12000 + 13184 + 12992);
    assert_string_equal(metric_str(k, "device_type"), "CUDA");
    assert_close(metric(PATH(t, "manual", "add_kernel<n=4194304>"), "time (ns)"), 13248);
    assert_true(kscope__ptree_is_inclusive(t, "time (ns)"));
    kscope__ptree_free(t);
}

static void test_trace_host_nesting(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("kscope/trace_host.json");
    kscope__pnode *step = PATH(t, "main", "step");
    assert_close(metric(step, "calls"), 2);
    assert_close(metric(step, "wall_time (ns)"), 70000);
    assert_close(metric(PATH(t, "main", "step", "inner"), "calls"), 1);
    assert_close(metric(PATH(t, "worker"), "wall_time (ns)"), 20000);
    kscope__pnode *g = PATH(t, "main", "step", "gemm");
    assert_close(metric(g, "time (ns)"), 8000);
    assert_close(metric(g, "bytes"), 1024);
    assert_string_equal(metric_str(g, "device_id"), "1");
    assert_false(kscope__ptree_is_inclusive(t, "calls"));
    kscope__ptree_free(t);
}

/* The JSON Array Format (a bare list of events) is told from .hatchet. */
static void test_trace_bare_array_file(void **state)
{
    (void)state;
    char path[] = "/tmp/kscope-test-read-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "[{\"name\": \"outer\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 0, "
                       "\"dur\": 10}, {\"name\": \"in\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, "
                       "\"ts\": 2, \"dur\": 3, \"args\": {\"frame\": 1}}]";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t;
    if (kscope__read_profile(path, &t, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_close(metric(PATH(t, "outer", "in"), "wall_time (ns)"), 3000);
    kscope__ptree_free(t);
    unlink(path);
}

/* Keys and values split across chunks (the caller reuses its buffer). */
static void test_trace_chunked_feed(void **state)
{
    (void)state;
    char *buf, err[KSCOPE__READ_ERRLEN];
    size_t len;
    assert_int_equal(
        kscope__read_whole_file(data_path("kscope/trace_host.json"), &buf, &len, err, sizeof err),
        0);
    kscope__tjson *p = kscope__tjson_new();
    for (size_t i = 0; i < len; i++) {
        char one = buf[i];
        assert_int_equal(kscope__tjson_feed(p, &one, 1, err, sizeof err), 0);
    }
    kscope__ptree *t;
    if (kscope__tjson_finish(p, &t, err, sizeof err) < 0)
        fail_msg("%s", err);
    kscope__tjson_free(p);
    assert_close(metric(PATH(t, "main", "step"), "wall_time (ns)"), 70000);
    assert_close(metric(PATH(t, "main", "step", "gemm"), "bytes"), 1024);
    kscope__ptree_free(t);
    free(buf);
}

static void trace_bad(const char *text, const char *want)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    assert_int_equal(kscope__read_chrome_trace(text, strlen(text), &t, err, sizeof err),
                     KSCOPE_EPARSE);
    assert_null(t);
    if (!strstr(err, want))
        fail_msg("error '%s' does not mention '%s'", err, want);
}

static void test_trace_bad_inputs(void **state)
{
    (void)state;
    trace_bad("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":1},{\"ph",
              "truncated");
    trace_bad("", "empty");
    trace_bad("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":1}] x", "data after the end");
    trace_bad("{\"other\":1}", "no \"traceEvents\"");
    trace_bad("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0,\"dur\":-1}]}", "dur >= 0");
    trace_bad("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":0,\"dur\":1}]}", "\"name\"");
    trace_bad("{\"traceEvents\":[7]}", "not an object");
    char deep[300] = "{\"traceEvents\":[{\"args\":{\"a\":";
    size_t dl = strlen(deep);
    memset(deep + dl, '[', 200);
    deep[dl + 200] = '\0';
    trace_bad(deep, "nested deeper");
}

/* --------------------------------------------------- derived metrics */

static void test_util_arch90_hand_computed(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/rich_tree.hatchet");
    kscope__pflat f;
    assert_int_equal(kscope__pflat_build(t, &f), 0);
    kscope__column c;
    double *util = column(t, &f, "util", &c);
    /* H200 from the fixture: 132 SMs at 1980 MHz, scaled from H100 PCIe */
    double peak32 = (132.0 / 114.0 * 1980000.0 / 1755e3 * 1513.0) * 1e12 / 4.0;
    double bw = 2.0 * 6016.0 * 3201000.0 * 1e3 / 8.0; /* 4.814 TB/s */
    assert_close(kscope__peak_flops(&t->devices[0], 32), peak32);
    assert_close(kscope__peak_bytes(&t->devices[0]), bw);
    /* manual/add_kernel: 50331648 bytes, 4194304 flops32 in 13728 ns */
    size_t i = index_of(&f, PATH(t, "manual", "add_kernel<n=4194304>"));
    double want = fmax(4194304.0 / peak32, 50331648.0 / bw) / 13728e-9;
    assert_close(util[i], want);
    assert_true(util[i] > 0.76 && util[i] < 0.77);
    /* nvjet (no flops, no bytes): 0; frames that are not kernels: none */
    assert_close(util[index_of(&f, PATH(t, "train", "step", "matmul",
                                        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"))],
                 0.0);
    assert_true(isnan(util[index_of(&f, PATH(t, "train", "step", "matmul"))]));
    assert_true(isnan(util[0]));
    kscope__column_free(&c);
    kscope__pflat_free(&f);
    kscope__ptree_free(t);
}

static void test_peak_flops_per_arch(void **state)
{
    (void)state;
    kscope__pdevice d = {.type = "CUDA", .arch = "80"};
    assert_close(kscope__peak_flops(&d, 16), 312e12);
    d.arch = "89";
    assert_close(kscope__peak_flops(&d, 8), 330.3e12);
    d.arch = "100";
    d.num_sms = 148;
    d.clock_rate = 1965000;
    assert_close(kscope__peak_flops(&d, 16), 148.0 * 16384 * 1965.0 * 1e6 / 2.0);
    d.arch = "75";
    assert_close(kscope__peak_flops(&d, 16), 0);
    kscope__pdevice h = {.type = "HIP", .arch = "gfx942"};
    assert_close(kscope__peak_flops(&h, 8), 2614.9e12);
}

static void test_time_count_rate_and_percent(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/rich_tree.hatchet");
    kscope__pflat f;
    assert_int_equal(kscope__pflat_build(t, &f), 0);
    kscope__column c;
    size_t step = index_of(&f, PATH(t, "train", "step"));
    size_t inner = index_of(&f, PATH(t, "train", "step", "inner", "add_kernel<n=4194304>"));
    double total = 13728 + 37888 + 40832 + 70624 + 73632;
    double *v = column(t, &f, "time/ms", &c);
    assert_close(v[0], total / 1e6);
    assert_close(v[step], (total - 13728) / 1e6);
    assert_true(c.inclusive);
    kscope__column_free(&c);
    v = column(t, &f, "avg_time/us", &c);
    assert_close(v[step], (total - 13728) / 12 / 1e3);
    kscope__column_free(&c);
    v = column(t, &f, "COUNT", &c); /* names ignore case */
    assert_close(v[0], 13);
    assert_true(c.integral);
    kscope__column_free(&c);
    v = column(t, &f, "time/%", &c);
    assert_close(v[0], 100);
    assert_close(v[inner], 40832 / total * 100);
    kscope__column_free(&c);
    v = column(t, &f, "gflop32/s", &c);
    assert_close(v[inner], 12582912.0 / 40832e-9 / 1e9);
    kscope__column_free(&c);
    /* no plain "flops": flop/s sums the widths */
    v = column(t, &f, "flop/s", &c);
    assert_close(v[step], (51539607552.0 + 2 * 12582912.0) / ((total - 13728) * 1e-9));
    kscope__column_free(&c);
    v = column(t, &f, "tbyte/s", &c);
    assert_close(v[0], (50331648.0 + 150994944.0 * 2 + 75497472.0) / (total * 1e-9) / 1e12);
    kscope__column_free(&c);
    /* an exclusive metric stays on its node; its percent is of the sum */
    size_t prep = index_of(&f, PATH(t, "train", "step", "host_prep"));
    v = column(t, &f, "cpu_time/ms", &c);
    assert_close(v[prep], 3.22667);
    assert_true(isnan(v[step]));
    assert_false(c.inclusive);
    kscope__column_free(&c);
    v = column(t, &f, "cpu_wait/%", &c);
    assert_close(v[index_of(&f, PATH(t, "train", "step", "inner"))], 100);
    kscope__column_free(&c);
    v = column(t, &f, "cpu_time (ns)", &c); /* the raw name, unit included */
    assert_close(v[prep], 3226670);
    kscope__column_free(&c);
    /* problems are named */
    char err[KSCOPE__READ_ERRLEN];
    assert_int_equal(kscope__column_compute(t, &f, "nosuch", &c, err, sizeof err), KSCOPE_EINVAL);
    assert_non_null(strstr(err, "'nosuch' is not in this file"));
    assert_int_equal(kscope__column_compute(t, &f, "wall_time/ms", &c, err, sizeof err),
                     KSCOPE_EINVAL);
    assert_non_null(strstr(err, "wall_time"));
    kscope__pflat_free(&f);
    kscope__ptree_free(t);
}

static void test_kscope_host_metrics(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("kscope/run_a.hatchet");
    kscope__pflat f;
    assert_int_equal(kscope__pflat_build(t, &f), 0);
    kscope__column c;
    size_t ts = index_of(&f, PATH(t, "main", "train_step"));
    double *v = column(t, &f, "wall_time/ms", &c);
    assert_close(v[ts], 3.6); /* not rolled up: measured inclusive already */
    assert_close(v[index_of(&f, PATH(t, "main"))], 5.0);
    kscope__column_free(&c);
    v = column(t, &f, "avg_wall_time/us", &c);
    assert_close(v[ts], 900);
    kscope__column_free(&c);
    v = column(t, &f, "calls", &c);
    assert_close(v[ts], 4);
    assert_true(isnan(v[0]));
    kscope__column_free(&c);
    /* util uses each kernel's own device: softmax ran on device 1 (arch 80) */
    v = column(t, &f, "util", &c);
    double bw80 = 2.0 * 5120 * 1593000 * 1e3 / 8;
    assert_close(v[index_of(&f, PATH(t, "main", "train_step", "softmax"))],
                 400000000.0 / bw80 / 400000e-9);
    kscope__pdevice *d0 = &t->devices[0];
    double want = fmax(1e12 / kscope__peak_flops(d0, 16), 1e8 / kscope__peak_bytes(d0)) / 2e-3;
    assert_close(v[index_of(&f, PATH(t, "main", "train_step", "gemm_f16"))], want);
    kscope__column_free(&c);
    kscope__pflat_free(&f);
    kscope__ptree_free(t);
}

static void test_metric_list(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("kscope/run_a.hatchet");
    kscope__metric_info *list;
    int n = kscope__metric_list(t, &list);
    assert_true(n > 0);
    int inc_time = 0, exc_calls = 0, strings = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(list[i].name, "time (ns)") == 0)
            inc_time = list[i].inclusive;
        if (strcmp(list[i].name, "calls") == 0)
            exc_calls = !list[i].inclusive;
        if (strcmp(list[i].name, "device_id") == 0)
            strings++;
    }
    assert_true(inc_time);
    assert_true(exc_calls);
    assert_int_equal(strings, 0);
    free(list);
    kscope__ptree_free(t);
}

/* ------------------------------------------------ union, merge, top */

static void test_union_marks_one_sided_nodes(void **state)
{
    (void)state;
    kscope__ptree *a = read_ok("kscope/run_a.hatchet"), *b = read_ok("kscope/run_b.hatchet");
    kscope__pflat fa, fb;
    kscope__punion u;
    assert_int_equal(kscope__pflat_build(a, &fa), 0);
    assert_int_equal(kscope__pflat_build(b, &fb), 0);
    assert_int_equal(kscope__punion_build(&fa, &fb, &u), 0);
    assert_int_equal(u.n, fa.n + 1); /* softmax_fused is new */
    int only_a = 0, only_b = 0;
    for (size_t i = 0; i < u.n; i++) {
        if (u.b[i] < 0) {
            assert_string_equal(u.name[i], "softmax");
            only_a++;
        }
        if (u.a[i] < 0) {
            assert_string_equal(u.name[i], "softmax_fused");
            only_b++;
        }
        if (i > 0)
            assert_true(u.parent[i] < (int32_t)i); /* preorder */
    }
    assert_int_equal(only_a, 1);
    assert_int_equal(only_b, 1);
    kscope__punion_free(&u);
    kscope__pflat_free(&fa);
    kscope__pflat_free(&fb);
    kscope__ptree_free(a);
    kscope__ptree_free(b);
}

static void test_merge_trees_stats(void **state)
{
    (void)state;
    kscope__ptree *r[3] = {read_ok("kscope/run_a.hatchet"), read_ok("kscope/run_b.hatchet"),
                           read_ok("kscope/run_a.hatchet")};
    kscope__ptree *m;
    char err[KSCOPE__READ_ERRLEN];
    assert_int_equal(kscope__merge_trees(r, 3, &m, err, sizeof err), 0);
    kscope__pnode *g = PATH(m, "main", "train_step", "gemm_f16");
    assert_close(metric(g, "time (ns)"), 2000000 + 2600000 + 2000000);
    assert_close(metric(g, "count"), 12);
    assert_close(metric(g, "min_time (ns)"), 450000); /* extremes, not sums */
    assert_close(metric(g, "max_time (ns)"), 560000);
    assert_close(metric(g, "time_rank_min (ns)"), 2000000);
    assert_close(metric(g, "time_rank_max (ns)"), 2600000);
    assert_close(metric(g, "time_rank_mean (ns)"), 6600000.0 / 3);
    assert_close(metric(g, "time_imbalance"), 2600000 / (6600000.0 / 3));
    assert_string_equal(metric_str(g, "device_id"), "0");
    /* inclusive per rank at a scope: train_step = 2.7 ms, 3.3 ms (b), 2.7 ms */
    kscope__pnode *ts = PATH(m, "main", "train_step");
    assert_close(metric(ts, "time_rank_max (ns)"), 2600000 + 400000 + 300000);
    assert_close(metric(ts, "wall_time_rank_min (ns)"), 3600000);
    assert_close(metric(ts, "calls"), 12);
    /* a node missing from a rank counts 0 there */
    kscope__pnode *sm = PATH(m, "main", "train_step", "softmax");
    assert_close(metric(sm, "time_rank_min (ns)"), 0);
    assert_close(metric(sm, "time_rank_mean (ns)"), 800000.0 / 3);
    assert_close(metric(PATH(m, "main", "train_step", "softmax_fused"), "time_imbalance"), 3.0);
    assert_true(kscope__ptree_is_inclusive(m, "time (ns)"));
    assert_false(kscope__ptree_is_inclusive(m, "time_rank_max (ns)"));
    assert_int_equal(m->ndevices, 2);
    kscope__ptree_free(m);
    /* a rank with no GPU time: ROOT gets no zero (it would read back as an
     * inclusive-metric marker), the other statistics stay */
    kscope__ptree *empty =
        json_ok("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"time (ns)\":0}},{}]");
    kscope__ptree *two[2] = {r[0], empty};
    assert_int_equal(kscope__merge_trees(two, 2, &m, err, sizeof err), 0);
    assert_true(isnan(metric(m->root, "time_rank_min (ns)")));
    assert_close(metric(m->root, "time_rank_max (ns)"), 3400000);
    assert_close(metric(m->root, "time_imbalance"), 2.0);
    char *buf;
    size_t len;
    assert_int_equal(kscope__hatchet_write_json(m, &buf, &len), 0);
    kscope__ptree *back;
    assert_int_equal(kscope__read_hatchet_json(buf, len, &back, err, sizeof err), 0);
    assert_false(kscope__ptree_is_inclusive(back, "time_rank_max (ns)"));
    assert_true(kscope__ptree_is_inclusive(back, "time (ns)"));
    free(buf);
    kscope__ptree_free(back);
    kscope__ptree_free(empty);
    kscope__ptree_free(m);
    for (int i = 0; i < 3; i++)
        kscope__ptree_free(r[i]);
}

static void test_merge_traces_one_process_per_rank(void **state)
{
    (void)state;
    char *a, *b, err[KSCOPE__READ_ERRLEN];
    size_t la, lb;
    assert_int_equal(
        kscope__read_whole_file(data_path("kscope/trace_host.json"), &a, &la, err, sizeof err), 0);
    assert_int_equal(kscope__read_whole_file(data_path("proton/rich_trace.chrome_trace"), &b, &lb,
                                             err, sizeof err),
                     0);
    const char *bufs[] = {a, b}, *names[] = {"a.json", "b.json"};
    size_t lens[] = {la, lb};
    char *out;
    size_t len;
    assert_int_equal(kscope__merge_traces(bufs, lens, names, 2, &out, &len, err, sizeof err), 0);
    assert_non_null(strstr(out, "\"rank 0: host\""));
    assert_non_null(strstr(out, "\"rank 1 (b.json)\""));
    assert_non_null(strstr(out, "\"rank 0 (a.json)\"")); /* pid 20 had no name */
    /* the merged trace is itself a readable trace with both ranks' kernels */
    kscope__ptree *t;
    assert_int_equal(kscope__read_chrome_trace(out, len, &t, err, sizeof err), 0);
    assert_close(metric(PATH(t, "main", "step", "gemm"), "count"), 1);
    assert_close(metric(PATH(t, "train", "step", "add_kernel<n=4194304>"), "count"), 3);
    kscope__ptree_free(t);
    free(out);
    /* a bad rank is named */
    const char *bad[] = {a, "{\"traceEvents\": 3}"};
    size_t blens[] = {la, strlen(bad[1])};
    assert_int_equal(kscope__merge_traces(bad, blens, names, 2, &out, &len, err, sizeof err),
                     KSCOPE_EPARSE);
    assert_non_null(strstr(err, "b.json"));
    free(a);
    free(b);
}

static void test_top_table(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("kscope/run_a.hatchet");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(kscope__top_print(f, t, 2, 0), 4);
    fclose(f);
    /* gemm_f16 in two contexts: 2.5 ms of 3.4 ms, 5 calls, min/max of both */
    assert_non_null(strstr(text, " 73.53%     2.500 ms          5   500.000 us   450.000 us   "
                                 "560.000 us  gemm_f16\n"));
    assert_non_null(strstr(text, "softmax\n"));
    assert_null(strstr(text, "adam_kernel"));
    assert_non_null(strstr(text, "(2 more; -n 0 shows all)"));
    assert_null(strchr(text, '\033'));
    free(text);
    kscope__ptree_free(t);
    /* Proton files have no min/max: the per-context average stands in */
    t = read_ok("proton/proton_run.hatchet");
    f = open_memstream(&text, &len);
    assert_int_equal(kscope__top_print(f, t, 0, 1), 1);
    fclose(f);
    assert_non_null(strstr(text, "862 ns"));
    assert_non_null(strchr(text, '\033'));
    free(text);
    kscope__ptree_free(t);
}

static void test_format_ns_and_escapes(void **state)
{
    (void)state;
    char b[32];
    kscope__format_ns(999, b, sizeof b);
    assert_string_equal(b, "999 ns");
    kscope__format_ns(1500, b, sizeof b);
    assert_string_equal(b, "1.500 us");
    kscope__format_ns(2.5e9, b, sizeof b);
    assert_string_equal(b, "2.500 s");
    kscope__format_ns(NAN, b, sizeof b);
    assert_string_equal(b, "-");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kscope__print_escaped(f, "a\033[31mb\n");
    fclose(f);
    assert_string_equal(text, "a\\x1b[31mb\\x0a");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proton_run_fixture),
        cmocka_unit_test(test_rich_tree_fixture),
        cmocka_unit_test(test_keys_in_any_order_and_extra_keys),
        cmocka_unit_test(test_chunked_feed_matches_whole),
        cmocka_unit_test(test_json_bad_inputs),
        cmocka_unit_test(test_json_nesting_100000_levels),
        cmocka_unit_test(test_read_profile_file_errors),
        cmocka_unit_test(test_reads_kscope_writer_output),
        cmocka_unit_test(test_msgpack_round_trip),
        cmocka_unit_test(test_msgpack_bad_inputs),
        cmocka_unit_test(test_trace_to_tree_proton),
        cmocka_unit_test(test_trace_host_nesting),
        cmocka_unit_test(test_trace_bad_inputs),
        cmocka_unit_test(test_trace_bare_array_file),
        cmocka_unit_test(test_trace_chunked_feed),
        cmocka_unit_test(test_util_arch90_hand_computed),
        cmocka_unit_test(test_peak_flops_per_arch),
        cmocka_unit_test(test_time_count_rate_and_percent),
        cmocka_unit_test(test_kscope_host_metrics),
        cmocka_unit_test(test_metric_list),
        cmocka_unit_test(test_union_marks_one_sided_nodes),
        cmocka_unit_test(test_merge_trees_stats),
        cmocka_unit_test(test_merge_traces_one_process_per_rank),
        cmocka_unit_test(test_top_table),
        cmocka_unit_test(test_format_ns_and_escapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
