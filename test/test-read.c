/*
 * test-read.c - the profile readers (.hatchet JSON, .hatchet_msgpack,
 * Chrome traces) and every bad-input case they must refuse. The analysis
 * built on them is tested in test-analysis.c.
 */
#include "kscope.h"
#include "read/read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "support/readutil.h"

#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

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

/* ------------------------------------------------------- JSON reader */

static void test_proton_run_fixture(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/proton_run.hatchet");
    assert_string_equal(t->root->name, "ROOT");
    assert_int_equal(t->root->nchildren, 1);
    kscope__pnode *k = t->root->children[0];
    /* Proton keeps kernel names mangled; the reader demangles them (test-demangle.c) */
    assert_true(strncmp(k->name, "void at::native::vectorized_elementwise_kernel<4", 48) == 0 ||
                !kscope__demangle_available());
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
        "[{\"frame\":{\"name\":\"ROOT\"},\"children\":[{\"frame\":{\"name\":\"a\\u0000b\"}}]},{}]",
        strlen("[{\"frame\":{\"name\":\"ROOT\"},\"children\":[{\"frame\":{\"name\":\"a\\u0000b\"}}]"
               "},{}]"),
        "NUL character");
    JBAD("[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"time (ns)\":-5}},{}]",
         "negative value -5 for metric 'time (ns)'");
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
        kscope__ptree *t = read_path_ok(path);
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

/* The streaming MessagePack reader fed one byte at a time (every value cut
 * everywhere, resumed where it stopped) reads what a whole read does,
 * empty strings among them; 4 GB claimed by a string's header is refused
 * from the header. */
static void test_msgpack_chunked_feed(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/rich_tree.hatchet");
    assert_int_equal(kscope__pnode_set_string(t, t->root->children[0], "", ""), 0);
    char *buf, err[KSCOPE__READ_ERRLEN];
    size_t len;
    assert_int_equal(kscope__hatchet_write_msgpack(t, &buf, &len), 0);
    kscope__hmp *p = kscope__hmp_new();
    for (size_t i = 0; i < len; i++)
        if (kscope__hmp_feed(p, buf + i, 1, err, sizeof err) != 0)
            fail_msg("byte %zu: %s", i, err);
    kscope__ptree *u = NULL;
    if (kscope__hmp_finish(p, &u, err, sizeof err) != 0)
        fail_msg("%s", err);
    kscope__hmp_free(p);
    kscope__pflat fa, fb;
    assert_int_equal(kscope__pflat_build(t, &fa), 0);
    assert_int_equal(kscope__pflat_build(u, &fb), 0);
    assert_int_equal(fa.n, fb.n);
    assert_string_equal(metric_str(fb.node[1], ""), "");
    kscope__pflat_free(&fa);
    kscope__pflat_free(&fb);
    kscope__ptree_free(u);
    free(buf);
    kscope__ptree_free(t);
    const char huge[] = "\x92\xdb\xff\xff\xff\xf0";
    p = kscope__hmp_new();
    assert_int_equal(kscope__hmp_feed(p, huge, sizeof huge - 1, err, sizeof err), KSCOPE_EPARSE);
    assert_non_null(strstr(err, "more than 16 MiB in one string"));
    kscope__hmp_free(p);
}

static void pack_str(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str(pk, strlen(s));
    msgpack_pack_str_body(pk, s, strlen(s));
}

/* "frame": {"name": ...: a node's frame up to its name's value (the
 * caller packs it). */
static void pack_frame_name_key(msgpack_packer *pk)
{
    pack_str(pk, "frame");
    msgpack_pack_map(pk, 1);
    pack_str(pk, "name");
}

/* [{"frame": {"name": "ROOT"}, "metrics": {...: a two-element document
 * up to ROOT's nmetrics metrics (the caller packs them, then the device
 * info). */
static void pack_root_with_metrics(msgpack_packer *pk, uint32_t nmetrics)
{
    msgpack_pack_array(pk, 2);
    msgpack_pack_map(pk, 2);
    pack_frame_name_key(pk);
    pack_str(pk, "ROOT");
    pack_str(pk, "metrics");
    msgpack_pack_map(pk, nmetrics);
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
        pack_frame_name_key(&pk);
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
    pack_frame_name_key(&pk);
    pack_str(&pk, "ROOT");
    msgpack_bad(&sb, "missing device-info");
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_int(&pk, 3);
    msgpack_pack_map(&pk, 0);
    msgpack_bad(&sb, "element 0 of the top-level array is not an object");
    msgpack_sbuffer_clear(&sb);
    pack_root_with_metrics(&pk, 1);
    pack_str(&pk, "time (ns)");
    msgpack_pack_int(&pk, -7);
    msgpack_pack_map(&pk, 0);
    msgpack_bad(&sb, "negative value -7");
    msgpack_pack_int(&pk, 1);
    msgpack_bad(&sb, "negative value"); /* the first problem met is told */
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_map(&pk, 1);
    pack_frame_name_key(&pk);
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

/* Every MessagePack scalar kind a writer may choose for a number (ints of
 * each width and sign, float32, float64) reads as the same value the JSON
 * reader gives for the same document; nil, booleans and numbers past int64
 * are refused as the JSON reader refuses them; bin and ext values are
 * refused by name. */
static void test_msgpack_value_kinds(void **state)
{
    (void)state;
    static const char json[] =
        "[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {\"i8\": -5, \"i16\": -300, "
        "\"i32\": -70000, \"i64\": -5000000000, \"u64\": 3000000000, "
        "\"f32\": 1.5, \"f64\": 0.25}}, {}]";
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *a = NULL, *b = NULL;
    if (kscope__read_hatchet_json(json, sizeof json - 1, &a, err, sizeof err) < 0)
        fail_msg("%s", err);
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    pack_root_with_metrics(&pk, 7);
    pack_str(&pk, "i8");
    msgpack_pack_int8(&pk, -5);
    pack_str(&pk, "i16");
    msgpack_pack_int16(&pk, -300);
    pack_str(&pk, "i32");
    msgpack_pack_int32(&pk, -70000);
    pack_str(&pk, "i64");
    msgpack_pack_int64(&pk, -5000000000LL);
    pack_str(&pk, "u64");
    msgpack_pack_uint64(&pk, 3000000000ULL);
    pack_str(&pk, "f32");
    msgpack_pack_float(&pk, 1.5f);
    pack_str(&pk, "f64");
    msgpack_pack_double(&pk, 0.25);
    msgpack_pack_map(&pk, 0);
    if (kscope__read_hatchet_msgpack(sb.data, sb.size, &b, err, sizeof err) < 0)
        fail_msg("%s", err);
    const kscope__pnode *ra = a->root, *rb = b->root;
    assert_int_equal(ra->nmetrics, rb->nmetrics);
    for (uint32_t k = 0; k < ra->nmetrics; k++) {
        const kscope__pmetric *m = &ra->metrics[k];
        const kscope__pmetric *n = NULL;
        for (uint32_t j = 0; j < rb->nmetrics; j++)
            if (strcmp(rb->metrics[j].key, m->key) == 0)
                n = &rb->metrics[j];
        if (!n)
            fail_msg("metric '%s' lost by the MessagePack reader", m->key);
        assert_int_equal(n->type, m->type);
        assert_true(kscope__pmetric_number(n) == kscope__pmetric_number(m));
    }
    assert_close(metric(rb, "i64"), -5e9);
    assert_close(metric(rb, "f32"), 1.5);
    kscope__ptree_free(a);
    kscope__ptree_free(b);
    /* bin and ext where a value belongs */
    for (int kind = 0; kind < 2; kind++) {
        msgpack_sbuffer_clear(&sb);
        msgpack_pack_array(&pk, 2);
        msgpack_pack_map(&pk, 2);
        pack_frame_name_key(&pk);
        if (kind == 0) {
            msgpack_pack_bin(&pk, 3);
            msgpack_pack_bin_body(&pk, "abc", 3);
        } else {
            msgpack_pack_ext(&pk, 3, 7);
            msgpack_pack_ext_body(&pk, "abc", 3);
        }
        msgpack_bad(&sb, kind == 0 ? "binary data where a string or number belongs"
                                   : "a MessagePack extension value where a string");
    }
    /* nil and booleans where a number belongs: refused as by the JSON reader */
    static const char *const jvalues[] = {"null", "true", "false"};
    for (int kind = 0; kind < 3; kind++) {
        msgpack_sbuffer_clear(&sb);
        pack_root_with_metrics(&pk, 1);
        pack_str(&pk, "v");
        if (kind == 0)
            msgpack_pack_nil(&pk);
        else if (kind == 1)
            msgpack_pack_true(&pk);
        else
            msgpack_pack_false(&pk);
        msgpack_pack_map(&pk, 0);
        msgpack_bad(&sb, "metric 'v' of 'ROOT' is null or boolean, not a number");
        char text[128];
        snprintf(text, sizeof text,
                 "[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {\"v\": %s}}, {}]",
                 jvalues[kind]);
        JBAD(text, "metric 'v' of 'ROOT' is null or boolean, not a number");
    }
    /* an unsigned number past int64 is read as floating point, as by the
     * JSON reader */
    msgpack_sbuffer_clear(&sb);
    pack_root_with_metrics(&pk, 1);
    pack_str(&pk, "u64");
    msgpack_pack_uint64(&pk, 18000000000000000000ULL);
    msgpack_pack_map(&pk, 0);
    const char *u64_json =
        "[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {\"u64\": 18000000000000000000, "
        "\"i65\": -99999999999999999999999}}, {}]";
    for (int enc = 0; enc < 2; enc++) {
        char err[KSCOPE__READ_ERRLEN];
        kscope__ptree *t = NULL;
        int rc = enc ? kscope__read_hatchet_msgpack(sb.data, sb.size, &t, err, sizeof err)
                     : kscope__read_hatchet_json(u64_json, strlen(u64_json), &t, err, sizeof err);
        assert_int_equal(rc, 0);
        const kscope__pmetric *m =
            kscope__pnode_metric(t->root, kscope__ptree_intern_cstr(t, "u64"));
        assert_non_null(m);
        assert_int_equal(m->type, KSCOPE__V_DOUBLE);
        assert_true(m->v.d == 18000000000000000000.0);
        if (!enc) /* below int64 too */
            assert_true(kscope__pmetric_number(kscope__pnode_metric(
                            t->root, kscope__ptree_intern_cstr(t, "i65"))) == -1e23);
        kscope__ptree_free(t);
    }
    /* a map key that is not a string */
    msgpack_sbuffer_clear(&sb);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_map(&pk, 1);
    msgpack_pack_array(&pk, 0);
    msgpack_bad(&sb, "a map key is not a string");
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
    kscope__ptree *t = read_path_ok(path);
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
        cmocka_unit_test(test_msgpack_chunked_feed),
        cmocka_unit_test(test_msgpack_bad_inputs),
        cmocka_unit_test(test_msgpack_value_kinds),
        cmocka_unit_test(test_trace_to_tree_proton),
        cmocka_unit_test(test_trace_host_nesting),
        cmocka_unit_test(test_trace_bad_inputs),
        cmocka_unit_test(test_trace_bare_array_file),
        cmocka_unit_test(test_trace_chunked_feed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
