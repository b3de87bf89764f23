/*
 * test-hardening.c - the recorder under hostile conditions: a disk that
 * fills while a profile is written, many distinct children under one
 * scope, threads racing finalize.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "support/readutil.h"
#include "support/testutil.h"
#include "support/session-util.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files in the working directory whose names start with prefix. */
static int count_files(const char *prefix)
{
    DIR *d = opendir(".");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* Remove files in the working directory whose names start with prefix
 * (what an interrupted earlier run left). */
static void remove_files(const char *prefix)
{
    DIR *d = opendir(".");
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            unlink(e->d_name);
    closedir(d);
}

/* A write that fails half way (here: the file size limit, as a full disk
 * would) leaves the previous profile whole and no temporary file behind. */
static void test_failed_write_keeps_the_previous_profile(void **state)
{
    (void)state;
    remove_files("t_atomic.hatchet");
    int s = tu_start("t_atomic", "tree");
    kscope_enter("first");
    kscope_exit("first");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    size_t before_len;
    char *before = tu_read_file("t_atomic.hatchet", &before_len);
    assert_non_null(before);

    s = tu_start("t_atomic", "tree");
    char name[32];
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof name, "second_%d", i);
        kscope_enter(name);
        kscope_exit(name);
    }
    struct rlimit old, small = {64, 64};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = kscope_finalize(s, NULL);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_true(rc < 0);
    assert_non_null(strstr(kscope_last_error(), "t_atomic.hatchet"));

    size_t after_len;
    char *after = tu_read_file("t_atomic.hatchet", &after_len);
    assert_non_null(after);
    assert_int_equal(after_len, before_len);
    assert_memory_equal(after, before, before_len);
    assert_int_equal(count_files("t_atomic.hatchet"), 1);
    free(before);
    free(after);
    /* The session is still there and is written once the disk has room. */
    assert_int_equal(kscope_finalize(s, NULL), 0);
    yajl_val doc = tu_parse_file("t_atomic.hatchet");
    assert_non_null(TU_PATH(doc->u.array.values[0], "second_199"));
    yajl_tree_free(doc);
}

/* A profile written through a symbolic link replaces the file it names. */
static void test_write_through_a_link_keeps_the_link(void **state)
{
    (void)state;
    unlink("t_link_target.hatchet");
    unlink("t_link.hatchet");
    assert_int_equal(symlink("t_link_target.hatchet", "t_link.hatchet"), 0);
    int s = tu_start("t_link", "tree");
    kscope_enter("x");
    kscope_exit("x");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    struct stat st;
    assert_int_equal(lstat("t_link.hatchet", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    yajl_val doc = tu_parse_file("t_link_target.hatchet");
    assert_non_null(TU_PATH(doc->u.array.values[0], "x"));
    yajl_tree_free(doc);
}

/* Many distinct children under one scope (the child index): each is found
 * again on re-entry rather than added twice. */
static void test_many_distinct_children_merge_on_reentry(void **state)
{
    (void)state;
    int s = tu_start("t_many", "tree");
    char name[32];
    kscope_enter("parent");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 2000; i++) {
            snprintf(name, sizeof name, "child_%d", i);
            kscope_enter(name);
            kscope_exit(name);
        }
    kscope_exit("parent");
    yajl_val doc;
    char *buf;
    size_t len;
    assert_int_equal(kscope_data(s, "hatchet", &buf, &len), 0);
    doc = tu_parse(buf);
    kscope_free(buf);
    yajl_val parent = TU_PATH(doc->u.array.values[0], "parent");
    assert_int_equal(tu_nchildren(parent), 2000);
    assert_int_equal(tu_metric_int(TU_PATH(parent, "child_0"), "calls"), 2);
    assert_int_equal(tu_metric_int(TU_PATH(parent, "child_1999"), "calls"), 2);
    yajl_tree_free(doc);
}

/* The reading side's index: children and metrics are found among many, the
 * first of two same-named children wins, a dropped last child is not
 * found, and a node whose metrics were compacted (ROOT of a .hatchet) finds
 * the ones kept. */
static void test_profile_tree_index(void **state)
{
    (void)state;
    kscope__ptree *t = kscope__ptree_new();
    kscope__pnode *r = t->root;
    char name[32];
    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof name, "n%d", i);
        const char *k = kscope__ptree_intern_cstr(t, name);
        kscope__pnode *c = kscope__pnode_child(t, r, k);
        assert_ptr_equal(c, r->children[i]);
        assert_int_equal(kscope__pnode_set_int(t, r, name, i), 0);
    }
    const char *k5 = kscope__ptree_intern_cstr(t, "n5");
    kscope__pnode *dup = kscope__pnode_add(t, r, k5);
    assert_ptr_equal(kscope__pnode_child(t, r, k5), r->children[5]);
    assert_ptr_not_equal(dup, r->children[5]);
    const char *gone = kscope__ptree_intern_cstr(t, "gone");
    kscope__pnode_child(t, r, gone);
    r->nchildren--;
    assert_int_equal(r->nchildren, 3001);
    kscope__pnode *again = kscope__pnode_child(t, r, gone);
    assert_int_equal(r->nchildren, 3002);
    assert_ptr_equal(again, r->children[3001]);
    for (int i = 0; i < 3000; i += 7) {
        snprintf(name, sizeof name, "n%d", i);
        const kscope__pmetric *m = kscope__pnode_metric(r, kscope__ptree_intern_cstr(t, name));
        assert_non_null(m);
        assert_int_equal(m->v.i, i);
    }
    kscope__ptree_free(t);

    /* zero ROOT metrics name inclusive ones and leave ROOT's list */
    char text[8192], *p = text;
    p += sprintf(p, "[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {");
    for (int i = 0; i < 40; i++)
        p += sprintf(p, "%s\"m%d\": %d", i ? ", " : "", i, i % 2);
    sprintf(p, "}}, {}]");
    t = json_ok(text);
    assert_int_equal(t->root->nmetrics, 20);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "m%d", i);
        const char *k = kscope__ptree_intern_cstr(t, name);
        assert_int_equal(kscope__pnode_metric(t->root, k) != NULL, i % 2);
    }
    kscope__ptree_free(t);
}

static double number_of(const kscope__pnode *n, const kscope__ptree *t, const char *key)
{
    const char *k = kscope__ptree_intern_cstr((kscope__ptree *)t, key);
    const kscope__pmetric *m = kscope__pnode_metric(n, k);
    assert_non_null(m);
    return kscope__pmetric_number(m);
}

/* Integer sums past int64 go on in floating point instead of wrapping to a
 * negative number: merged ranks, added metrics, huge trace durations and
 * huge integers in vectors. */
static void test_integer_overflow_never_wraps(void **state)
{
    (void)state;
    const char *rank =
        "[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {\"flops\": 0}, \"children\": "
        "[{\"frame\": {\"name\": \"k\"}, \"metrics\": {\"flops\": 5000000000000000000}}]}, {}]";
    kscope__ptree *ranks[2] = {json_ok(rank), json_ok(rank)};
    kscope__ptree *merged = NULL;
    char err[KSCOPE__READ_ERRLEN];
    assert_int_equal(kscope__merge_trees(ranks, 2, &merged, err, sizeof err), 0);
    kscope__pnode *k = child(merged->root, "k");
    assert_true(number_of(k, merged, "flops") > 9.9e18);
    assert_int_equal(kscope__pnode_add_int(merged, k, "flops", INT64_MAX), 0);
    assert_true(number_of(k, merged, "flops") > 1.8e19);
    kscope__pnode_set_int(merged, k, "n", INT64_MAX);
    assert_int_equal(kscope__pnode_add_int(merged, k, "n", 1), 0);
    assert_true(number_of(k, merged, "n") > 9.2e18);
    kscope__ptree_free(merged);
    kscope__ptree_free(ranks[0]);
    kscope__ptree_free(ranks[1]);

    const char *trace = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"long\", \"pid\": 1, "
                        "\"tid\": 1, \"ts\": 0, \"dur\": 1e17}]}";
    kscope__ptree *t = NULL;
    assert_int_equal(kscope__read_chrome_trace(trace, strlen(trace), &t, err, sizeof err), 0);
    kscope__pnode *n = t->root;
    while (n->nchildren)
        n = n->children[0];
    assert_true(number_of(n, t, "wall_time (ns)") > 9.9e19);
    kscope__ptree_free(t);

    t = json_ok("[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": "
                "{\"v\": [1, 123456789012345678901234]}}, {}]");
    assert_true(number_of(t->root, t, "v") > 1.2e23);
    kscope__ptree_free(t);
}

/* kscope reads back what it writes: names with a tab, a newline or an ESC. */
static void test_control_characters_in_names_round_trip(void **state)
{
    (void)state;
    int s = tu_start("t_control", "tree");
    kscope_enter("a\tb\nc\033[31md");
    kscope_metric_int("m\033e", 3);
    kscope_exit(NULL);
    for (int f = 0; f < 2; f++) {
        char *buf;
        size_t len;
        assert_int_equal(kscope_data(s, f ? "hatchet_msgpack" : "hatchet", &buf, &len), 0);
        kscope__ptree *t = NULL;
        char err[KSCOPE__READ_ERRLEN];
        int rc = f ? kscope__read_hatchet_msgpack(buf, len, &t, err, sizeof err)
                   : kscope__read_hatchet_json(buf, len, &t, err, sizeof err);
        kscope_free(buf);
        if (rc != 0)
            fail_msg("%s", err);
        kscope__pnode *n = child(t->root, "a\tb\nc\033[31md");
        assert_int_equal(number_of(n, t, "m\033e"), 3);
        kscope__ptree_free(t);
    }
}

/* Parse text through the streaming .hatchet reader, `chunk` bytes a feed. */
static kscope__ptree *stream_read(const char *text, size_t chunk)
{
    kscope__hjson *p = kscope__hjson_new();
    char err[KSCOPE__READ_ERRLEN];
    size_t len = strlen(text);
    for (size_t off = 0; off < len; off += chunk) {
        /* a fresh copy per feed: the reader may keep nothing of it */
        size_t n = len - off < chunk ? len - off : chunk;
        char *piece = malloc(n);
        memcpy(piece, text + off, n);
        int rc = kscope__hjson_feed(p, piece, n, err, sizeof err);
        memset(piece, 'x', n);
        free(piece);
        if (rc != 0)
            fail_msg("feed: %s", err);
    }
    kscope__ptree *t = NULL;
    if (kscope__hjson_finish(p, &t, err, sizeof err) != 0)
        fail_msg("finish: %s", err);
    kscope__hjson_free(p);
    return t;
}

/* Device info reads the same whatever the chunk boundaries. */
static void test_device_info_same_in_any_chunks(void **state)
{
    (void)state;
    const char *text = "[{\"frame\": {\"name\": \"ROOT\"}, \"metrics\": {}}, {\"CUDA\": "
                       "{\"0\": {\"arch\": \"90\", \"num_sms\": 132, \"clock_rate\": 1980000, "
                       "\"memory_clock_rate\": 2619000, \"bus_width\": 5120}, \"1\": "
                       "{\"bus_width\": 4096, \"num_sms\": 108, \"arch\": \"80\"}}}]";
    kscope__ptree *whole = stream_read(text, strlen(text));
    assert_int_equal(whole->ndevices, 2);
    assert_int_equal(whole->devices[0].num_sms, 132);
    assert_int_equal(whole->devices[0].bus_width, 5120);
    assert_int_equal(whole->devices[1].num_sms, 108);
    for (size_t chunk = 1; chunk < 8; chunk++) {
        kscope__ptree *t = stream_read(text, chunk);
        assert_int_equal(t->ndevices, whole->ndevices);
        for (uint32_t i = 0; i < t->ndevices; i++) {
            const kscope__pdevice *a = &t->devices[i], *b = &whole->devices[i];
            assert_string_equal(a->type, b->type);
            assert_int_equal(a->id, b->id);
            assert_string_equal(a->arch, b->arch);
            assert_int_equal(a->num_sms, b->num_sms);
            assert_int_equal(a->clock_rate, b->clock_rate);
            assert_int_equal(a->memory_clock_rate, b->memory_clock_rate);
            assert_int_equal(a->bus_width, b->bus_width);
        }
        kscope__ptree_free(t);
    }
    kscope__ptree_free(whole);
}

/* Many metrics that roll up: each is listed once, and found inclusive by
 * a name that is not the tree's interned copy. */
static void test_many_inclusive_metrics(void **state)
{
    (void)state;
    kscope__ptree *t = kscope__ptree_new();
    char name[32];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 3000; i++) {
            snprintf(name, sizeof name, "m%d", i);
            assert_int_equal(kscope__ptree_add_inclusive(t, name), 0);
            assert_int_equal(kscope__pnode_set_int(t, t->root, name, i), 0);
        }
    assert_int_equal(t->ninclusive, 3000);
    snprintf(name, sizeof name, "m%d", 2999);
    assert_true(kscope__ptree_is_inclusive(t, name));
    assert_false(kscope__ptree_is_inclusive(t, "m3000"));
    kscope__metric_info *list;
    assert_int_equal(kscope__metric_list(t, &list), 3000);
    assert_string_equal(list[2999].name, "m2999");
    assert_true(list[2999].inclusive);
    free(list);
    kscope__ptree_free(t);
}

static _Atomic int racing_stop;

/* Annotate until told to stop: scopes, nested, and a metric; after the
 * first 20000 rounds only now and then, so that a reader of every event so
 * far (kscope_data of a trace) is not outrun for ever. */
static void *annotate_until_stopped(void *arg)
{
    (void)arg;
    for (int i = 0; !atomic_load(&racing_stop); i++) {
        kscope_enter("outer");
        kscope_enter("inner");
        kscope_metric_int("n", 1);
        kscope_exit("inner");
        kscope_exit("outer");
        if (i >= 20000)
            usleep(1000);
    }
    return NULL;
}

/* Finalize and kscope_data read other threads' stacks and event buffers
 * while those threads run, and the trace's writer thread spills them:
 * under ThreadSanitizer (tools/tsan.sh) this test reports no race; in any
 * build it must not crash or lose the tree. The trace's buffer is small,
 * so events are spilled and dropped while the threads run, too. */
static void test_finalize_races_annotating_threads(void **state)
{
    (void)state;
    for (int round = 0; round < 2; round++) {
        kscope_session_opts o = {.name = "t_race",
                                 .data = round ? "trace" : "tree",
                                 .backend = "none",
                                 .trace_buffer = "1M"};
        int s = kscope_start(&o);
        assert_true(s >= 0);
        atomic_store(&racing_stop, 0);
        pthread_t th[3];
        for (int i = 0; i < 3; i++)
            pthread_create(&th[i], NULL, annotate_until_stopped, NULL);
        for (int i = 0; i < 20; i++) {
            char *buf;
            size_t len;
            assert_int_equal(kscope_data(s, round ? "chrome_trace" : "hatchet", &buf, &len), 0);
            kscope_free(buf);
            usleep(1000);
        }
        assert_int_equal(kscope_finalize(s, NULL), 0);
        atomic_store(&racing_stop, 1);
        for (int i = 0; i < 3; i++)
            pthread_join(th[i], NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_failed_write_keeps_the_previous_profile, tu_teardown),
        cmocka_unit_test_teardown(test_write_through_a_link_keeps_the_link, tu_teardown),
        cmocka_unit_test_teardown(test_many_distinct_children_merge_on_reentry, tu_teardown),
        cmocka_unit_test_teardown(test_profile_tree_index, tu_teardown),
        cmocka_unit_test_teardown(test_integer_overflow_never_wraps, tu_teardown),
        cmocka_unit_test_teardown(test_control_characters_in_names_round_trip, tu_teardown),
        cmocka_unit_test_teardown(test_device_info_same_in_any_chunks, tu_teardown),
        cmocka_unit_test_teardown(test_finalize_races_annotating_threads, tu_teardown),
        cmocka_unit_test_teardown(test_many_inclusive_metrics, tu_teardown),
    };
    return cmocka_run_group_tests_name("hardening", tests, NULL, NULL);
}
