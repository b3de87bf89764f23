/*
 * test-trace-events.c - the trace readers' events (format/events.h): what
 * the Chrome trace reader hands over for each kind of event, what it
 * keeps as written when asked, and that the consumers (a trace's tree,
 * the HTML page's timeline) need the events only, not the JSON: events
 * made here by hand make what the same trace read from JSON makes. Also
 * every row of the format table has a reader of its kind, and the trace
 * writer writes the kinds a reader gives back as the reader reads them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "read/read.h"
#include "report/report.h"
#include "support/readutil.h"

/* ------------------------------------------------------------ helpers */

#define MAX_SEEN 64

/* What a consumer saw: each event's kind, name and index. */
typedef struct seen {
    kscope__tev_kind kind[MAX_SEEN];
    char name[MAX_SEEN][32];
    size_t index[MAX_SEEN];
    size_t n, stop_at;
} seen;

static int see(const kscope__tev *e, void *arg)
{
    seen *s = arg;
    assert_non_null(e->read);
    if (s->n == s->stop_at)
        return KSCOPE_ENOMEM;
    assert_true(s->n < MAX_SEEN);
    s->kind[s->n] = e->kind;
    snprintf(s->name[s->n], sizeof s->name[0], "%s", e->name);
    s->index[s->n++] = e->read->index;
    return 0;
}

static const char *see_why(void *arg)
{
    (void)arg;
    return "stopped by the test";
}

static int read_buffer(const char *text, kscope__tev_fn fn, void *arg, unsigned keep, char *err,
                       size_t errlen)
{
    kscope__tev_sink sink = {fn, arg, see_why, keep};
    return kscope__read_events_buffer(&kscope__chrome_trace_reader, text, strlen(text), &sink, err,
                                      errlen);
}

/* ------------------------------------------------------ the kinds read */

static void test_each_kind_of_event(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":["
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":1},"
        "{\"ph\":\"X\",\"name\":\"proton_k\",\"ts\":1,\"dur\":1,\"args\":{\"call_stack\":[]}},"
        "{\"ph\":\"X\",\"cat\":\"scope\",\"name\":\"s\",\"ts\":1,\"dur\":1,"
        "\"args\":{\"call_stack\":[\"ROOT\"]}},"
        "{\"ph\":\"B\",\"name\":\"b\",\"ts\":1},{\"ph\":\"E\",\"ts\":2},"
        "{\"ph\":\"i\",\"name\":\"m\",\"ts\":1},{\"ph\":\"I\",\"name\":\"m2\",\"ts\":1},"
        "{\"ph\":\"C\",\"name\":\"c\",\"ts\":1,\"args\":{\"value\":3}},"
        "{\"ph\":\"s\",\"id\":1,\"ts\":1},{\"ph\":\"f\",\"id\":1,\"ts\":2},"
        "{\"ph\":\"M\",\"name\":\"process_name\",\"args\":{\"name\":\"host\"}},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"args\":{\"name\":\"main\"}},"
        "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":1}},"
        "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":2}},"
        "{\"ph\":\"M\",\"name\":\"process_labels\"},"
        "{\"ph\":\"N\",\"name\":\"obj\",\"ts\":1},{\"ph\":\"XY\",\"name\":\"x\",\"ts\":1,\"dur\":1}"
        "],\"metadata\":{\"host\":\"n1\"}}";
    static const kscope__tev_kind want[] = {
        KSCOPE__TEV_GPU,          KSCOPE__TEV_GPU,         KSCOPE__TEV_SLICE,   KSCOPE__TEV_BEGIN,
        KSCOPE__TEV_END,          KSCOPE__TEV_MARK,        KSCOPE__TEV_MARK,    KSCOPE__TEV_COUNTER,
        KSCOPE__TEV_FLOW_START,   KSCOPE__TEV_FLOW_END,    KSCOPE__TEV_PROCESS, KSCOPE__TEV_THREAD,
        KSCOPE__TEV_PROCESS_SORT, KSCOPE__TEV_THREAD_SORT, KSCOPE__TEV_META,    KSCOPE__TEV_OTHER,
        KSCOPE__TEV_OTHER,        KSCOPE__TEV_RUN,
    };
    seen s = {.stop_at = SIZE_MAX};
    char err[KSCOPE__READ_ERRLEN];
    if (read_buffer(text, see, &s, 0, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_int_equal(s.n, sizeof want / sizeof *want);
    for (size_t i = 0; i < s.n; i++) {
        if (s.kind[i] != want[i])
            fail_msg("event %zu: kind %d, want %d", i, s.kind[i], want[i]);
        if (i + 1 < s.n)
            assert_int_equal(s.index[i], i);
    }
    assert_string_equal(s.name[10], "host"); /* a process's name is its own */
    assert_string_equal(s.name[11], "main");
}

/* A consumer that stops the reading: its code, and its reason. */
static void test_consumer_stops_the_reading(void **state)
{
    (void)state;
    seen s = {.stop_at = 1};
    char err[KSCOPE__READ_ERRLEN];
    const char *text = "[{\"ph\":\"i\",\"ts\":1},{\"ph\":\"i\",\"ts\":2},{\"ph\":\"i\",\"ts\":3}]";
    assert_int_equal(read_buffer(text, see, &s, 0, err, sizeof err), KSCOPE_ENOMEM);
    assert_string_equal(err, "stopped by the test");
    assert_int_equal(s.n, 1);
}

/* -------------------------------------------- what is kept as written */

typedef struct kept {
    char fields[512], args_json[256], numbers[128], args[256];
    int run;
} kept;

static void append(char *buf, size_t size, const char *fmt, const char *a, const char *b)
{
    size_t n = strlen(buf);
    snprintf(buf + n, size - n, fmt, a, b);
}

static int keep_event(const kscope__tev *e, void *arg)
{
    kept *k = arg;
    const kscope__tev_read *r = e->read;
    static const char *const types[] = {"absent", "str", "num", "lit", "obj", "arr"};
    if (e->kind == KSCOPE__TEV_RUN) {
        k->run = (int)r->nfields;
        return 0;
    }
    for (size_t i = 0; i < r->nfields; i++) {
        append(k->fields, sizeof k->fields, "%s=%s:", r->fields[i].key, types[r->fields[i].v.type]);
        append(k->fields, sizeof k->fields, "%s%s;", r->fields[i].v.text, "");
    }
    for (size_t i = 0; i < r->nargs; i++)
        append(k->args, sizeof k->args, "%s=%s;", r->args[i].key, r->args[i].v.text);
    if (r->args_json.text)
        snprintf(k->args_json, sizeof k->args_json, "%s", r->args_json.text);
    for (size_t i = 0; i + 1 < r->nnumbers; i += 2) {
        char num[64];
        snprintf(num, sizeof num, "%.*s", (int)r->numbers[i + 1],
                 r->args_json.text + r->numbers[i]);
        append(k->numbers, sizeof k->numbers, "%s%s|", num, "");
    }
    return 0;
}

static void test_fields_and_args_as_written(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":[{\"name\":\"q\\\"\",\"ts\":1.50,\"dur\":1e5,\"pid\":\"p7\","
        "\"args\":{\"a\":[-0,true,null,{}],\"n\":3,\"s\":\"x\"},\"e\":[]}],"
        "\"metadata\":{\"command\":\"run\",\"n\":1,\"nested\":{\"a\":1}}}";
    char err[KSCOPE__READ_ERRLEN];
    kept all = {0};
    if (read_buffer(text, keep_event, &all, KSCOPE__TREAD_FIELDS | KSCOPE__TREAD_ARGS, err,
                    sizeof err) < 0)
        fail_msg("%s", err);
    assert_string_equal(all.fields, "name=str:q\";ts=num:1.50;dur=num:1e5;pid=str:p7;"
                                    "args=obj:{\"a\":[-0,true,null,{}],\"n\":3,\"s\":\"x\"};"
                                    "e=arr:[];");
    assert_string_equal(all.args_json, "{\"a\":[-0,true,null,{}],\"n\":3,\"s\":\"x\"}");
    assert_string_equal(all.numbers, "-0|3|");
    assert_string_equal(all.args, "n=3;s=x;"); /* the scalars directly in args */
    assert_int_equal(all.run, 3);              /* every member of the metadata */
    kept none = {0};
    if (read_buffer(text, keep_event, &none, 0, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_string_equal(none.fields, "");
    assert_string_equal(none.args_json, "");
    assert_string_equal(none.args, "n=3;s=x;");
    assert_int_equal(none.run, 2); /* its strings and numbers */
}

/* ------------------------------------- consumers need the events only */

/* The events of a small trace made by hand, as a reader of another
 * format would give them. */
static kscope__tev_value str(const char *s)
{
    return (kscope__tev_value){KSCOPE__TEV_STRING, s, strlen(s)};
}

static kscope__tev_value num(const char *s)
{
    return (kscope__tev_value){KSCOPE__TEV_NUMBER, s, strlen(s)};
}

static void give(kscope__tev_fn fn, void *arg, kscope__tev_kind kind, size_t index,
                 const char *name, const char *pid, const char *tid, const char *ts,
                 const char *dur, const kscope__tev_field *args, size_t nargs,
                 const char *const *stack, size_t nstack)
{
    kscope__tev_read r = {.index = index, .name = str(name), .pid = num(pid), .tid = num(tid)};
    if (ts)
        r.ts = num(ts);
    if (dur)
        r.dur = num(dur);
    r.args = args;
    r.nargs = nargs;
    r.has_stack = stack != NULL;
    if (stack) { /* its args as JSON, as a reader keeps them for the page */
        static const char json[] =
            "{\"call_stack\":[\"ROOT\",\"main\",\"step\",\"gemm\"],\"bytes\":1024,\"device_id\":1}";
        static size_t numbers[4];
        numbers[0] = (size_t)(strstr(json, "1024") - json), numbers[1] = 4;
        numbers[2] = sizeof json - 3, numbers[3] = 1;
        r.args_json = (kscope__tev_value){KSCOPE__TEV_OBJECT, json, sizeof json - 1};
        r.numbers = numbers;
        r.nnumbers = 4;
    }
    kscope__tev e = {
        .kind = kind, .name = name, .cat = "", .stack = stack, .nstack = nstack, .read = &r};
    assert_int_equal(fn(&e, arg), 0);
}

static void give_trace(kscope__tev_fn fn, void *arg)
{
    static const char *const stack[] = {"ROOT", "main", "step", "gemm"};
    kscope__tev_field gemm_args[] = {{"bytes", 5, num("1024")}, {"device_id", 9, num("1")}};
    kscope__tev_field pname[] = {{"name", 4, str("host")}};
    give(fn, arg, KSCOPE__TEV_PROCESS, 0, "host", "10", "0", NULL, NULL, pname, 1, NULL, 0);
    give(fn, arg, KSCOPE__TEV_SLICE, 1, "main", "10", "1", "0", "100", NULL, 0, NULL, 0);
    give(fn, arg, KSCOPE__TEV_SLICE, 2, "step", "10", "1", "10", "30", NULL, 0, NULL, 0);
    give(fn, arg, KSCOPE__TEV_GPU, 3, "gemm", "20", "7", "12", "8", gemm_args, 2, stack, 4);
    give(fn, arg, KSCOPE__TEV_MARK, 4, "tick", "10", "1", "15", NULL, NULL, 0, NULL, 0);
}

static const char *same_trace_json =
    "{\"traceEvents\":[{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":10,\"tid\":0,"
    "\"args\":{\"name\":\"host\"}},"
    "{\"name\":\"main\",\"ph\":\"X\",\"pid\":10,\"tid\":1,\"ts\":0,\"dur\":100},"
    "{\"name\":\"step\",\"ph\":\"X\",\"pid\":10,\"tid\":1,\"ts\":10,\"dur\":30},"
    "{\"name\":\"gemm\",\"ph\":\"X\",\"cat\":\"kernel\",\"pid\":20,\"tid\":7,\"ts\":12,"
    "\"dur\":8,\"args\":{\"call_stack\":[\"ROOT\",\"main\",\"step\",\"gemm\"],\"bytes\":1024,"
    "\"device_id\":1}},"
    "{\"name\":\"tick\",\"ph\":\"i\",\"pid\":10,\"tid\":1,\"ts\":15}]}";

static void test_tree_from_events_made_by_hand(void **state)
{
    (void)state;
    char err[KSCOPE__READ_ERRLEN];
    kscope__trace_tree *tt = kscope__trace_tree_new();
    assert_non_null(tt);
    give_trace(kscope__trace_tree_event, tt);
    kscope__ptree *t;
    if (kscope__trace_tree_finish(tt, &t, err, sizeof err) < 0)
        fail_msg("%s", err);
    kscope__trace_tree_free(tt);
    assert_close(metric(PATH(t, "main", "step"), "wall_time (ns)"), 30000);
    kscope__pnode *g = PATH(t, "main", "step", "gemm");
    assert_close(metric(g, "time (ns)"), 8000);
    assert_close(metric(g, "bytes"), 1024);
    assert_string_equal(metric_str(g, "device_id"), "1");
    /* the same trace as JSON: the same tree */
    kscope__ptree *j;
    if (kscope__read_chrome_trace(same_trace_json, strlen(same_trace_json), &j, err, sizeof err) <
        0)
        fail_msg("%s", err);
    char *a, *b;
    size_t la, lb;
    assert_int_equal(kscope__hatchet_write_json(t, &a, &la), 0);
    assert_int_equal(kscope__hatchet_write_json(j, &b, &lb), 0);
    assert_string_equal(a, b);
    free(a), free(b);
    kscope__ptree_free(t);
    kscope__ptree_free(j);
}

/* The page's timeline data of tl (or of the JSON text), as one string. */
static char *page_data(kscope__timeline *tl, const char *json)
{
    char *buf = NULL, *args = NULL, err[KSCOPE__READ_ERRLEN];
    size_t len = 0, alen = 0;
    kscope__report_out o = {.f = open_memstream(&buf, &len)};
    kscope__report_out a = {.f = open_memstream(&args, &alen)};
    kscope__report_limits lim = kscope__report_default_limits();
    kscope__jw_init(&o.w);
    kscope__jw_init(&a.w);
    int rc = tl ? kscope__report_timeline(&o, &a, tl, &lim, err, sizeof err)
                : kscope__report_trace(&o, &a, json, strlen(json), &lim, err, sizeof err);
    if (rc < 0)
        fail_msg("%s", err);
    kscope__jw_free(&o.w);
    kscope__jw_free(&a.w);
    fclose(o.f);
    fclose(a.f);
    free(args);
    return buf;
}

static void test_timeline_from_events_made_by_hand(void **state)
{
    (void)state;
    kscope__timeline *tl = kscope__timeline_new();
    assert_non_null(tl);
    kscope__tev_sink sink = kscope__timeline_sink(tl);
    give_trace(sink.fn, sink.arg);
    char *by_hand = page_data(tl, NULL), *from_json = page_data(NULL, same_trace_json);
    kscope__timeline_free(tl);
    assert_non_null(strstr(by_hand, "\"tick\""));
    assert_string_equal(by_hand, from_json);
    free(by_hand), free(from_json);
}

/* ------------------------------------------------- the table's readers */

static void test_every_format_has_a_reader_of_its_kind(void **state)
{
    (void)state;
    const kscope__format *f;
    for (int id = 1; (f = kscope__format_get((kscope__format_id)id)); id++) {
        const kscope__reader *r = kscope__reader_of((kscope__format_id)id);
        assert_non_null(r);
        assert_non_null(r->sniff);
        assert_non_null(r->looks);
        assert_non_null(r->feed);
        assert_non_null(r->free);
        int tree = f->kind == KSCOPE__KIND_TREE;
        assert_true(tree ? r->tree_new && r->tree_finish && f->write_tree
                         : r->trace_new && r->trace_finish && f->write_trace);
    }
    assert_null(kscope__reader_of(KSCOPE__FORMAT_UNKNOWN));
}

static void test_sniff_by_the_surest_reader(void **state)
{
    (void)state;
    assert_int_equal(kscope__format_sniff("{\"a\":1}", 7), KSCOPE__FORMAT_CHROME_TRACE);
    assert_int_equal(kscope__format_sniff(" [{\"ph\":\"X\"}]", 13), KSCOPE__FORMAT_CHROME_TRACE);
    assert_int_equal(kscope__format_sniff("[{\"frame\":{}}]", 14), KSCOPE__FORMAT_HATCHET);
    assert_int_equal(kscope__format_sniff("\n\x92\x80", 3), KSCOPE__FORMAT_HATCHET_MSGPACK);
    assert_int_equal(kscope__format_sniff("   ", 3), KSCOPE__FORMAT_HATCHET);
    assert_int_equal(kscope__format_sniff("hello", 5), KSCOPE__FORMAT_UNKNOWN);
}

/* ------------------------------------- the writer's kinds, read back */

static int typed_source(void *arg, kscope__tev_fn fn, void *fn_arg)
{
    (void)arg;
    kscope__tev e[] = {
        {.kind = KSCOPE__TEV_PROCESS, .name = "host", .pid = 3},
        {.kind = KSCOPE__TEV_THREAD_SORT, .name = "", .pid = 3, .tid = 4, .value = 2},
        {.kind = KSCOPE__TEV_BEGIN, .name = "b", .cat = "x", .pid = 3, .tid = 4, .ts_ns = 1000},
        {.kind = KSCOPE__TEV_END, .name = "b", .cat = "x", .pid = 3, .tid = 4, .ts_ns = 2000},
        {.kind = KSCOPE__TEV_FLOW_START,
         .name = "l",
         .cat = "x",
         .pid = 3,
         .tid = 4,
         .ts_ns = 1000,
         .gpu.correlation = 9},
        {.kind = KSCOPE__TEV_FLOW_END,
         .name = "l",
         .cat = "x",
         .pid = 5,
         .tid = 6,
         .ts_ns = 1500,
         .gpu.correlation = 9},
        {.kind = KSCOPE__TEV_OTHER, .name = "nothing to say", .cat = "x"},
    };
    for (size_t i = 0; i < sizeof e / sizeof *e; i++) {
        int rc = fn(&e[i], fn_arg);
        if (rc)
            return rc;
    }
    return 0;
}

static void test_writer_kinds_read_back(void **state)
{
    (void)state;
    char *out, err[KSCOPE__READ_ERRLEN];
    size_t len;
    assert_int_equal(kscope__chrome_trace_write(typed_source, NULL, &out, &len), 0);
    seen s = {.stop_at = SIZE_MAX};
    if (read_buffer(out, see, &s, 0, err, sizeof err) < 0)
        fail_msg("%s: %s", err, out);
    static const kscope__tev_kind want[] = {
        KSCOPE__TEV_PROCESS, KSCOPE__TEV_THREAD_SORT, KSCOPE__TEV_BEGIN,
        KSCOPE__TEV_END,     KSCOPE__TEV_FLOW_START,  KSCOPE__TEV_FLOW_END,
    };
    assert_int_equal(s.n, sizeof want / sizeof *want); /* OTHER: nothing written */
    for (size_t i = 0; i < s.n; i++)
        assert_int_equal(s.kind[i], want[i]);
    assert_string_equal(s.name[0], "host");
    assert_non_null(strstr(out, "\"ph\":\"s\",\"pid\":3,\"tid\":4,\"ts\":1,\"id\":9"));
    assert_non_null(strstr(out, "\"sort_index\":2"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_kind_of_event),
        cmocka_unit_test(test_consumer_stops_the_reading),
        cmocka_unit_test(test_fields_and_args_as_written),
        cmocka_unit_test(test_tree_from_events_made_by_hand),
        cmocka_unit_test(test_timeline_from_events_made_by_hand),
        cmocka_unit_test(test_every_format_has_a_reader_of_its_kind),
        cmocka_unit_test(test_sniff_by_the_surest_reader),
        cmocka_unit_test(test_writer_kinds_read_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
