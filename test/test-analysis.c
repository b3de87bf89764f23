/*
 * test-analysis.c - the analysis built on the profile readers: derived
 * metrics against hand-computed values (util on arch 90 with the Proton
 * fixture's device info), tree matching, merging and the top-kernels
 * table, also on a profile larger than their first allocations.
 */
#include "kscope.h"
#include "read/read.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "support/readutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

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

/* Event fields are copied as written: numbers keep their own text, any
 * nesting, literals, escapes; flow ids become unique per rank. */
static void test_merge_traces_copy_values_as_written(void **state)
{
    (void)state;
    const char *in = "{\"traceEvents\": [{\"name\": \"q\\\"\\\\\\n\", \"ph\": \"X\", "
                     "\"ts\": 1.50, \"dur\": 1e5, \"pid\": 7, \"args\": {\"a\": [-0, true, "
                     "false, null, {}], \"b\": []}}, {\"ph\": \"s\", \"id\": 42, \"ts\": 0}, "
                     "{\"ph\": \"f\", \"id\": \"x\", \"ts\": 1}]}";
    const char *bufs[] = {in, in}, *names[] = {"a.json", "b.json"};
    size_t lens[] = {strlen(in), strlen(in)};
    char *out, err[KSCOPE__READ_ERRLEN];
    size_t len;
    assert_int_equal(kscope__merge_traces(bufs, lens, names, 2, &out, &len, err, sizeof err), 0);
    assert_int_equal(strlen(out), len);
    assert_non_null(strstr(out, "{\"name\":\"q\\\"\\\\\\n\",\"ph\":\"X\",\"ts\":1.50,"
                                "\"dur\":1e5,\"pid\":1,\"args\":{\"a\":[-0,true,false,null,{}],"
                                "\"b\":[]}}"));
    assert_non_null(strstr(out, "\"id\":42,"));
    assert_non_null(strstr(out, "\"id\":1000000000042,"));
    assert_non_null(strstr(out, "\"id\":\"r1:x\""));
    const char *head = "{\"displayTimeUnit\":\"us\",\"traceEvents\":[{";
    assert_int_equal(strncmp(out, head, strlen(head)), 0);
    assert_string_equal(out + len - 3, "}]}");
    free(out);
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

/* A profile larger than the toolkit's first allocations: 2500 steps under
 * ROOT, each with one of 100 kernels whose names Proton would keep mangled
 * ("_Z5k0042v"). Kernel k runs (k + 1) us per launch, 25 launches. */
static char *big_profile_json(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "[{\"frame\": {\"name\": \"ROOT\", \"type\": \"function\"}, \"metrics\": "
               "{\"time (ns)\": 0, \"count\": 0}, \"children\": [");
    for (int s = 0; s < 2500; s++) {
        int k = s % 100;
        fprintf(f,
                "%s{\"frame\": {\"name\": \"step_%d\", \"type\": \"function\"}, \"metrics\": {}, "
                "\"children\": [{\"frame\": {\"name\": \"_Z5k%04dv\", \"type\": \"function\"}, "
                "\"metrics\": {\"time (ns)\": %d, \"count\": 1, \"device_id\": \"0\", "
                "\"device_type\": \"CUDA\"}, \"children\": []}]}",
                s ? ", " : "", s, k, (k + 1) * 1000);
    }
    fprintf(f, "]}, {}]");
    fclose(f);
    return text;
}

static void test_big_profile(void **state)
{
    (void)state;
    char *json = big_profile_json();
    kscope__ptree *t = json_ok(json);
    free(json);
    assert_int_equal(t->root->nchildren, 2500);
    const char *k99 = kscope__demangle_available() ? "k0099()" : "_Z5k0099v";
    assert_string_equal(PATH(t, "step_2499")->children[0]->name, k99);

    kscope__pflat f;
    assert_int_equal(kscope__pflat_build(t, &f), 0);
    assert_int_equal(f.n, 5001);
    assert_string_equal(f.node[5000]->name, k99); /* preorder: the last step's kernel last */
    assert_int_equal(f.parent[5000], 4999);
    assert_int_equal(f.depth[5000], 2);
    kscope__column c;
    double *ms = column(t, &f, "time/ms", &c);
    assert_close(ms[0], 25 * 5050 * 1e-3); /* sum over k of 25 (k + 1) us */
    kscope__column_free(&c);
    kscope__pflat_free(&f);

    /* every kernel one row, the heaviest first */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_int_equal(kscope__top_print(out, t, 0, 0), 100);
    fclose(out);
    char want[128];
    snprintf(want, sizeof want,
             "     2.500 ms         25   100.000 us   100.000 us   100.000 us  %s\n", k99);
    const char *first = strstr(text, want);
    assert_non_null(first);
    assert_null(strstr(text, "more; -n 0 shows all"));
    for (int k = 0; k < 99; k++) { /* each lighter kernel below it */
        char name[32];
        snprintf(name, sizeof name, kscope__demangle_available() ? "k%04d()\n" : "_Z5k%04dv\n", k);
        const char *row = strstr(text, name);
        assert_non_null(row);
        assert_true(row > first);
    }
    free(text);

    /* merged with itself: every node's time doubles, nothing is added */
    kscope__ptree *two[2] = {t, t}, *m = NULL;
    char err[KSCOPE__READ_ERRLEN];
    assert_int_equal(kscope__merge_trees(two, 2, &m, err, sizeof err), 0);
    assert_int_equal(m->root->nchildren, 2500);
    kscope__pnode *k = PATH(m, "step_2499", k99);
    assert_close(metric(k, "time (ns)"), 200000);
    assert_close(metric(k, "count"), 2);
    assert_close(metric(k, "time_rank_max (ns)"), 100000);
    kscope__ptree_free(m);
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
    kscope__print_escaped(f, "a\033[31mb\n\t\r\x7f");
    fclose(f);
    assert_string_equal(text, "a\\x1b[31mb\\n\\t\\r\\x7f");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_util_arch90_hand_computed),
        cmocka_unit_test(test_peak_flops_per_arch),
        cmocka_unit_test(test_time_count_rate_and_percent),
        cmocka_unit_test(test_kscope_host_metrics),
        cmocka_unit_test(test_metric_list),
        cmocka_unit_test(test_union_marks_one_sided_nodes),
        cmocka_unit_test(test_merge_trees_stats),
        cmocka_unit_test(test_merge_traces_one_process_per_rank),
        cmocka_unit_test(test_merge_traces_copy_values_as_written),
        cmocka_unit_test(test_top_table),
        cmocka_unit_test(test_format_ns_and_escapes),
        cmocka_unit_test(test_big_profile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
