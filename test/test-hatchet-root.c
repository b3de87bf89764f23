/*
 * test-hatchet-root.c - ROOT of a .hatchet as the writers lay it out
 * (format/hatchet-root.h) and as the readers take it back, in both
 * encodings: ROOT's "metrics" hold numbers only (0.0 placeholders for
 * inclusive scalars, ROOT's own numbers), vectors and strings of ROOT and
 * the list of inclusive metrics go into ROOT's "kscope" member when the 0
 * rule cannot say it, and an empty tree gets placeholders proton-viewer
 * can open. Files without the member (Proton's, kscope's older) read as
 * before.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "profile/ptree.h"
#include "read/read.h"
#include "support/readutil.h"
#include "support/testutil.h"

/* Write t in one encoding, parse the JSON form with yajl (doc, for the
 * shape) and read it back with kscope's reader of that encoding. */
typedef struct written {
    yajl_val doc, root; /* JSON only */
    kscope__ptree *back;
} written;

static written write_json(const kscope__ptree *t)
{
    written w = {0};
    char *buf;
    size_t len;
    assert_int_equal(kscope__hatchet_write_json(t, &buf, &len), 0);
    w.doc = tu_parse(buf);
    assert_non_null(w.doc);
    w.root = w.doc->u.array.values[0];
    char err[KSCOPE__READ_ERRLEN];
    if (kscope__read_hatchet_json(buf, len, &w.back, err, sizeof err) < 0)
        fail_msg("reading back: %s\n%s", err, buf);
    free(buf);
    return w;
}

static kscope__ptree *write_msgpack_back(const kscope__ptree *t)
{
    char *buf, err[KSCOPE__READ_ERRLEN];
    size_t len;
    kscope__ptree *back;
    assert_int_equal(kscope__hatchet_write_msgpack(t, &buf, &len), 0);
    if (kscope__read_hatchet_msgpack(buf, len, &back, err, sizeof err) < 0)
        fail_msg("reading back msgpack: %s", err);
    free(buf);
    return back;
}

static void written_free(written *w)
{
    yajl_tree_free(w->doc);
    kscope__ptree_free(w->back);
}

/* A tree: ROOT -> step (tokens 7, calls 2) -> inner (tokens 3). */
static kscope__ptree *small_tree(void)
{
    kscope__ptree *t = kscope__ptree_new();
    assert_non_null(t);
    kscope__pnode *step = kscope__pnode_child(t, t->root, kscope__ptree_intern_cstr(t, "step"));
    kscope__pnode *inner = kscope__pnode_child(t, step, kscope__ptree_intern_cstr(t, "inner"));
    assert_int_equal(kscope__pnode_set_int(t, step, "tokens", 7), 0);
    assert_int_equal(kscope__pnode_set_int(t, step, "calls", 2), 0);
    assert_int_equal(kscope__pnode_set_int(t, inner, "tokens", 3), 0);
    assert_int_equal(kscope__ptree_add_inclusive(t, "tokens"), 0);
    return t;
}

static const kscope__pmetric *root_metric(const kscope__ptree *t, const char *key)
{
    for (uint32_t i = 0; i < t->root->nmetrics; i++)
        if (strcmp(t->root->metrics[i].key, key) == 0)
            return &t->root->metrics[i];
    return NULL;
}

/* ROOT's placeholder keeps its metric's type, as Proton writes it: 0 for
 * a metric every node holds as an integer, 0.0 where one holds a float. */
static void test_scalar_placeholder_keeps_its_type(void **state)
{
    (void)state;
    kscope__ptree *t = small_tree();
    kscope__pnode *step = t->root->children[0];
    assert_int_equal(kscope__pnode_set_double(t, step, "loss", 0.5), 0);
    assert_int_equal(kscope__pnode_set_int(t, step->children[0], "loss", 1), 0);
    assert_int_equal(kscope__ptree_add_inclusive(t, "loss"), 0);
    written w = write_json(t);
    assert_true(YAJL_IS_INTEGER(tu_metric(w.root, "tokens")));
    assert_string_equal(tu_metric(w.root, "tokens")->u.number.r, "0");
    assert_string_equal(tu_metric(w.root, "loss")->u.number.r, "0.0");
    assert_true(tu_metric_num(w.root, "tokens") == 0.0);
    assert_null(tu_metric(w.root, "calls"));
    assert_null(tu_get(w.root, "kscope")); /* nothing the 0 rule cannot say */
    assert_true(kscope__ptree_is_inclusive(w.back, "tokens"));
    assert_false(kscope__ptree_is_inclusive(w.back, "calls"));
    assert_int_equal(w.back->root->nmetrics, 0);
    written_free(&w);
    kscope__ptree_free(t);
}

static void test_inclusive_vector_is_listed_not_zeroed(void **state)
{
    (void)state;
    kscope__ptree *t = small_tree();
    double v[2] = {1.5, 2.5};
    kscope__pnode *step = t->root->children[0];
    assert_int_equal(kscope__pnode_set_vec(t, step, "samples", KSCOPE__V_DOUBLEVEC, v, 2), 0);
    assert_int_equal(kscope__ptree_add_inclusive(t, "samples"), 0);
    written w = write_json(t);
    assert_null(tu_metric(w.root, "samples")); /* Hatchet would add 0 and a list */
    assert_true(tu_root_lists_inclusive(w.root, "samples"));
    assert_true(tu_root_lists_inclusive(w.root, "tokens"));
    assert_true(kscope__ptree_is_inclusive(w.back, "samples"));
    assert_true(kscope__ptree_is_inclusive(w.back, "tokens"));
    assert_int_equal(w.back->root->nmetrics, 0);
    kscope__ptree *m = write_msgpack_back(t);
    assert_true(kscope__ptree_is_inclusive(m, "samples"));
    assert_true(kscope__ptree_is_inclusive(m, "tokens"));
    assert_int_equal(m->root->nmetrics, 0);
    kscope__ptree_free(m);
    written_free(&w);
    kscope__ptree_free(t);
}

static void check_root_aside(const kscope__ptree *back)
{
    const kscope__pmetric *cmd = root_metric(back, "command");
    assert_non_null(cmd);
    assert_int_equal(cmd->type, KSCOPE__V_STRING);
    assert_string_equal(cmd->v.s, "python train.py");
    const kscope__pmetric *hist = root_metric(back, "hist");
    assert_non_null(hist);
    assert_int_equal(hist->type, KSCOPE__V_INTVEC);
    assert_int_equal(hist->n, 3);
    assert_int_equal(hist->v.iv[2], 9);
    const kscope__pmetric *gpu = root_metric(back, "gpu_util_mean");
    assert_non_null(gpu); /* ROOT's own 0, not a placeholder */
    assert_true(kscope__pmetric_number(gpu) == 0.0);
    assert_false(kscope__ptree_is_inclusive(back, "gpu_util_mean"));
    assert_true(kscope__ptree_is_inclusive(back, "tokens"));
}

static void test_root_strings_vectors_and_zeros(void **state)
{
    (void)state;
    kscope__ptree *t = small_tree();
    int64_t hist[3] = {1, 4, 9};
    assert_int_equal(kscope__pnode_set_string(t, t->root, "command", "python train.py"), 0);
    assert_int_equal(kscope__pnode_set_vec(t, t->root, "hist", KSCOPE__V_INTVEC, hist, 3), 0);
    assert_int_equal(kscope__pnode_set_double(t, t->root, "gpu_util_mean", 0.0), 0);
    written w = write_json(t);
    /* ROOT's "metrics": numbers only, Hatchet sums every one of them */
    yajl_val rm = tu_get(w.root, "metrics");
    for (size_t i = 0; i < rm->u.object.len; i++)
        assert_true(YAJL_IS_NUMBER(rm->u.object.values[i]));
    assert_null(tu_metric(w.root, "command"));
    assert_null(tu_metric(w.root, "hist"));
    yajl_val aside = tu_get(tu_get(w.root, "kscope"), "metrics");
    assert_string_equal(tu_get(aside, "command")->u.string, "python train.py");
    assert_true(YAJL_IS_ARRAY(tu_get(aside, "hist")));
    /* the 0 of an exclusive metric would read as a placeholder: listed */
    assert_true(tu_root_lists_inclusive(w.root, "tokens"));
    assert_false(tu_root_lists_inclusive(w.root, "gpu_util_mean"));
    check_root_aside(w.back);
    kscope__ptree *m = write_msgpack_back(t);
    check_root_aside(m);
    kscope__ptree_free(m);
    written_free(&w);
    kscope__ptree_free(t);
}

static void test_root_own_inclusive_value(void **state)
{
    (void)state;
    kscope__ptree *t = small_tree();
    assert_int_equal(kscope__pnode_set_int(t, t->root, "tokens", 5), 0);
    written w = write_json(t);
    /* an integer of ROOT's own stays an integer (proton-viewer's
     * --print-sorted cannot format an integer column, on Proton's files
     * alike) */
    assert_string_equal(tu_metric(w.root, "tokens")->u.number.r, "5");
    assert_true(tu_root_lists_inclusive(w.root, "tokens"));
    assert_true(kscope__ptree_is_inclusive(w.back, "tokens"));
    assert_non_null(root_metric(w.back, "tokens"));
    assert_true(kscope__pmetric_number(root_metric(w.back, "tokens")) == 5);
    written_free(&w);
    kscope__ptree_free(t);
}

/* A metric one node holds as a string and ROOT as a number: Hatchet would
 * add the two, so ROOT's number goes aside too. */
static void test_number_of_a_string_metric_goes_aside(void **state)
{
    (void)state;
    kscope__ptree *t = small_tree();
    assert_int_equal(kscope__pnode_set_string(t, t->root->children[0], "device_id", "0"), 0);
    assert_int_equal(kscope__pnode_set_int(t, t->root, "device_id", 1), 0);
    written w = write_json(t);
    assert_null(tu_metric(w.root, "device_id"));
    assert_int_equal(
        YAJL_GET_INTEGER(tu_get(tu_get(tu_get(w.root, "kscope"), "metrics"), "device_id")), 1);
    assert_non_null(root_metric(w.back, "device_id"));
    written_free(&w);
    kscope__ptree_free(t);
}

/* A per-node metric that ROOT holds too (a merge's time_imbalance):
 * Hatchet would add ROOT's value to every node's, so it goes aside. A
 * metric only ROOT holds stays in ROOT's metrics. */
static void test_per_node_metric_of_root_goes_aside(void **state)
{
    (void)state;
    kscope__ptree *t = small_tree();
    assert_int_equal(kscope__pnode_set_double(t, t->root, "time_imbalance", 1.5), 0);
    assert_int_equal(kscope__pnode_set_double(t, t->root->children[0], "time_imbalance", 2), 0);
    assert_int_equal(kscope__pnode_set_int(t, t->root, "dropped_records", 3), 0);
    written w = write_json(t);
    assert_null(tu_metric(w.root, "time_imbalance"));
    yajl_val aside = tu_get(tu_get(w.root, "kscope"), "metrics");
    assert_true(YAJL_GET_DOUBLE(tu_get(aside, "time_imbalance")) == 1.5);
    assert_true(tu_metric_num(w.root, "dropped_records") == 3);
    assert_true(kscope__pmetric_number(root_metric(w.back, "time_imbalance")) == 1.5);
    assert_true(kscope__pmetric_number(root_metric(w.back, "dropped_records")) == 3);
    assert_false(kscope__ptree_is_inclusive(w.back, "time_imbalance"));
    written_free(&w);
    kscope__ptree_free(t);
}

static void test_empty_tree_opens_and_reads_empty(void **state)
{
    (void)state;
    kscope__ptree *t = kscope__ptree_new();
    assert_non_null(t);
    written w = write_json(t);
    /* proton-viewer prunes a ROOT with no metric and no child, then fails:
     * Proton's placeholders, as Proton writes them */
    assert_string_equal(tu_metric(w.root, "time (ns)")->u.number.r, "0");
    assert_true(tu_metric_num(w.root, "count") == 0.0);
    assert_int_equal(w.back->ninclusive, 0);
    assert_int_equal(w.back->root->nmetrics, 0);
    assert_int_equal(w.back->root->nchildren, 0);
    kscope__ptree *m = write_msgpack_back(t);
    assert_int_equal(m->ninclusive, 0);
    assert_int_equal(m->root->nmetrics, 0);
    kscope__ptree_free(m);
    written_free(&w);
    kscope__ptree_free(t);
}

/* Proton's files and kscope's older ones: a 0 in ROOT names an inclusive
 * metric; a tree holding no value (ROOT's zeros only) is empty. */
static void test_files_without_the_member(void **state)
{
    (void)state;
    kscope__ptree *t =
        json_ok("[{\"frame\":{\"name\":\"ROOT\",\"type\":\"function\"},\"metrics\":{\"count\":0,"
                "\"time (ns)\":0,\"note\":4},\"children\":[{\"frame\":{\"name\":\"k\",\"type\":"
                "\"function\"},\"metrics\":{\"count\":2,\"time (ns)\":10},\"children\":[]}]},{}]");
    assert_true(kscope__ptree_is_inclusive(t, "count"));
    assert_true(kscope__ptree_is_inclusive(t, "time (ns)"));
    assert_int_equal(t->root->nmetrics, 1); /* "note" is ROOT's own */
    kscope__ptree_free(t);
    t = json_ok("[{\"frame\":{\"name\":\"ROOT\",\"type\":\"function\"},\"metrics\":{\"count\":0,"
                "\"time (ns)\":0},\"children\":[]},{}]");
    assert_int_equal(t->ninclusive, 0);
    kscope__ptree_free(t);
    /* the member on another node than ROOT is not ROOT's: skipped */
    t = json_ok("[{\"frame\":{\"name\":\"ROOT\",\"type\":\"function\"},\"metrics\":{\"c\":0},"
                "\"children\":[{\"frame\":{\"name\":\"k\",\"type\":\"function\"},\"metrics\":"
                "{\"c\":1},\"kscope\":{\"inclusive\":[\"x\"]},\"children\":[]}]},{}]");
    assert_true(kscope__ptree_is_inclusive(t, "c"));
    assert_false(kscope__ptree_is_inclusive(t, "x"));
    kscope__ptree_free(t);
}

static void bad_root(const char *member, const char *want)
{
    char text[512], err[KSCOPE__READ_ERRLEN];
    snprintf(text, sizeof text,
             "[{\"frame\":{\"name\":\"ROOT\",\"type\":\"function\"},\"metrics\":{},%s,"
             "\"children\":[]},{}]",
             member);
    kscope__ptree *t = NULL;
    int rc = kscope__read_hatchet_json(text, strlen(text), &t, err, sizeof err);
    if (rc != KSCOPE_EPARSE || !strstr(err, want))
        fail_msg("%s: rc %d, error '%s', want '%s'", member, rc, err, want);
    assert_null(t);
}

static void test_bad_member_is_refused(void **state)
{
    (void)state;
    bad_root("\"kscope\":5", "\"kscope\" is not an object");
    bad_root("\"kscope\":[1]", "\"kscope\" is an array, not an object");
    bad_root("\"kscope\":{\"inclusive\":\"tokens\"}", "\"inclusive\" in \"kscope\" is not");
    bad_root("\"kscope\":{\"inclusive\":[1]}", "\"inclusive\" in \"kscope\" is not");
    bad_root("\"kscope\":{\"inclusive\":[[\"a\"]]}", "\"inclusive\" in \"kscope\" is not");
    bad_root("\"kscope\":{\"metrics\":[]}", "\"metrics\" in \"kscope\" is not an object");
    bad_root("\"kscope\":{\"metrics\":{\"x\":null}}", "metric 'x' of 'ROOT' is null");
    /* members kscope does not know are skipped */
    kscope__ptree *t =
        json_ok("[{\"frame\":{\"name\":\"ROOT\",\"type\":\"function\"},\"metrics\":{},\"kscope\":"
                "{\"later\":{\"a\":[1]},\"inclusive\":[\"t\"]},\"children\":[{\"frame\":{\"name\":"
                "\"k\",\"type\":\"function\"},\"metrics\":{\"t\":1},\"children\":[]}]},{}]");
    assert_true(kscope__ptree_is_inclusive(t, "t"));
    kscope__ptree_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalar_placeholder_keeps_its_type),
        cmocka_unit_test(test_inclusive_vector_is_listed_not_zeroed),
        cmocka_unit_test(test_root_strings_vectors_and_zeros),
        cmocka_unit_test(test_root_own_inclusive_value),
        cmocka_unit_test(test_number_of_a_string_metric_goes_aside),
        cmocka_unit_test(test_per_node_metric_of_root_goes_aside),
        cmocka_unit_test(test_empty_tree_opens_and_reads_empty),
        cmocka_unit_test(test_files_without_the_member),
        cmocka_unit_test(test_bad_member_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
