/*
 * test-msgpackw.c - our MessagePack encoder (src/format/msgpackw.c) against
 * msgpack-c: every encoding boundary of ints, strings, maps and arrays, and
 * doubles, must decode with msgpack-c's unpacker to what was written and be
 * byte for byte what msgpack-c's packer writes for the same calls (the
 * recorder carries its own encoder; msgpack-c is the reference).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "format/jsonw.h"
#include "format/msgpackw.h"
#include <float.h>

#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Both encoders side by side: every call goes to each. */
typedef struct pair {
    kscope__mpw ours;
    msgpack_sbuffer ref_buf;
    msgpack_packer ref;
    char *bytes; /* ours, finished: decoded strings point into it */
} pair;

static void pair_init(pair *p)
{
    kscope__mp_init(&p->ours);
    msgpack_sbuffer_init(&p->ref_buf);
    msgpack_packer_init(&p->ref, &p->ref_buf, msgpack_sbuffer_write);
}

static void put_int(pair *p, int64_t v)
{
    kscope__mp_int(&p->ours, v);
    msgpack_pack_int64(&p->ref, v);
}

static void put_str(pair *p, const char *s)
{
    size_t n = strlen(s);
    kscope__mp_str(&p->ours, s);
    msgpack_pack_str(&p->ref, n);
    msgpack_pack_str_body(&p->ref, s, n);
}

static void put_double(pair *p, double v)
{
    kscope__mp_double(&p->ours, v);
    msgpack_pack_double(&p->ref, v);
}

static void put_map(pair *p, uint32_t n)
{
    kscope__mp_map(&p->ours, n);
    msgpack_pack_map(&p->ref, n);
}

static void put_array(pair *p, uint32_t n)
{
    kscope__mp_array(&p->ours, n);
    msgpack_pack_array(&p->ref, n);
}

/* Finish both, check the bytes are the same, and decode ours (which must
 * be exactly one object) into *u; returns our encoded length. */
static size_t pair_finish(pair *p, msgpack_unpacked *u)
{
    size_t len, off = 0;
    assert_int_equal(kscope__mp_finish(&p->ours, &p->bytes, &len), 0);
    assert_int_equal(len, p->ref_buf.size);
    assert_memory_equal(p->bytes, p->ref_buf.data, len);
    msgpack_sbuffer_destroy(&p->ref_buf);
    msgpack_unpacked_init(u);
    assert_int_equal(msgpack_unpack_next(u, p->bytes, len, &off), MSGPACK_UNPACK_SUCCESS);
    assert_int_equal(off, len);
    return len;
}

/* After the decoded object has been checked. */
static void pair_done(pair *p, msgpack_unpacked *u)
{
    msgpack_unpacked_destroy(u);
    free(p->bytes);
}

static void assert_int_object(const msgpack_object *o, int64_t v)
{
    if (v >= 0) {
        assert_int_equal(o->type, MSGPACK_OBJECT_POSITIVE_INTEGER);
        assert_true(o->via.u64 == (uint64_t)v);
    } else {
        assert_int_equal(o->type, MSGPACK_OBJECT_NEGATIVE_INTEGER);
        assert_true(o->via.i64 == v);
    }
}

/* ---------------------------------------------------------------- ints */

static void test_ints_at_every_boundary(void **state)
{
    (void)state;
    /* each value and the size of its smallest encoding */
    static const struct {
        int64_t v;
        size_t bytes;
    } cases[] = {
        {0, 1},
        {127, 1},
        {128, 2},
        {255, 2},
        {256, 3},
        {65535, 3},
        {65536, 5},
        {4294967295LL, 5},
        {4294967296LL, 9},
        {INT64_MAX, 9},
        {-1, 1},
        {-32, 1},
        {-33, 2},
        {-128, 2},
        {-129, 3},
        {-32768, 3},
        {-32769, 5},
        {INT32_MIN, 5},
        {(int64_t)INT32_MIN - 1, 9},
        {INT64_MIN, 9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pair p;
        msgpack_unpacked u;
        pair_init(&p);
        put_int(&p, cases[i].v);
        assert_int_equal(pair_finish(&p, &u), cases[i].bytes);
        assert_int_object(&u.data, cases[i].v);
        pair_done(&p, &u);
    }
}

/* ------------------------------------------------------------- strings */

static void test_strings_at_every_boundary(void **state)
{
    (void)state;
    /* each length and the size of its header (fixstr, str8, str16, str32) */
    static const struct {
        size_t len, header;
    } cases[] = {{0, 1}, {31, 1}, {32, 2}, {255, 2}, {256, 3}, {65535, 3}, {65536, 5}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].len;
        char *s = malloc(n + 1);
        assert_non_null(s);
        for (size_t k = 0; k < n; k++)
            s[k] = (char)('a' + k % 26);
        s[n] = '\0';
        pair p;
        msgpack_unpacked u;
        pair_init(&p);
        put_str(&p, s);
        assert_int_equal(pair_finish(&p, &u), cases[i].header + n);
        assert_int_equal(u.data.type, MSGPACK_OBJECT_STR);
        assert_int_equal(u.data.via.str.size, n);
        if (n)
            assert_memory_equal(u.data.via.str.ptr, s, n);
        pair_done(&p, &u);
        free(s);
    }
}

/* ------------------------------------------------------ maps and arrays */

/* Container sizes and the size of their headers (fix, 16 bit, 32 bit). */
static const struct {
    uint32_t n;
    size_t header;
} container_cases[] = {{0, 1}, {15, 1}, {16, 3}, {65535, 3}, {65536, 5}};

static void test_arrays_at_every_boundary(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof container_cases / sizeof container_cases[0]; i++) {
        uint32_t n = container_cases[i].n;
        pair p;
        msgpack_unpacked u;
        pair_init(&p);
        put_array(&p, n);
        for (uint32_t k = 0; k < n; k++)
            put_int(&p, (int64_t)k - 40); /* negative and positive fixints, int8 */
        pair_finish(&p, &u);
        assert_int_equal(u.data.type, MSGPACK_OBJECT_ARRAY);
        assert_int_equal(u.data.via.array.size, n);
        for (uint32_t k = 0; k < n; k++)
            assert_int_object(&u.data.via.array.ptr[k], (int64_t)k - 40);
        pair_done(&p, &u);
    }
}

/* Array and map headers alone: each the smallest form for its size. */
static void test_headers_alone_are_smallest(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof container_cases / sizeof container_cases[0]; i++) {
        kscope__mpw w;
        char *buf;
        size_t len;
        kscope__mp_init(&w);
        kscope__mp_array(&w, container_cases[i].n);
        kscope__mp_map(&w, container_cases[i].n);
        assert_int_equal(kscope__mp_finish(&w, &buf, &len), 0);
        assert_int_equal(len, 2 * container_cases[i].header);
        free(buf);
    }
}

static void test_maps_at_every_boundary(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof container_cases / sizeof container_cases[0]; i++) {
        uint32_t n = container_cases[i].n;
        pair p;
        msgpack_unpacked u;
        pair_init(&p);
        put_map(&p, n);
        for (uint32_t k = 0; k < n; k++) {
            char key[16];
            snprintf(key, sizeof key, "k%u", k);
            put_str(&p, key);
            put_int(&p, (int64_t)k * 1000);
        }
        pair_finish(&p, &u);
        assert_int_equal(u.data.type, MSGPACK_OBJECT_MAP);
        assert_int_equal(u.data.via.map.size, n);
        for (uint32_t k = 0; k < n; k++) {
            const msgpack_object_kv *kv = &u.data.via.map.ptr[k];
            char key[16];
            int kl = snprintf(key, sizeof key, "k%u", k);
            assert_int_equal(kv->key.type, MSGPACK_OBJECT_STR);
            assert_int_equal(kv->key.via.str.size, kl);
            assert_memory_equal(kv->key.via.str.ptr, key, (size_t)kl);
            assert_int_object(&kv->val, (int64_t)k * 1000);
        }
        pair_done(&p, &u);
    }
}

/* ------------------------------------------------------------- doubles */

static void test_doubles_keep_their_bits(void **state)
{
    (void)state;
    const double cases[] = {0.0, -0.0, 1.5, -2.25, 1e300, 5e-324, DBL_MAX, -DBL_MAX};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pair p;
        msgpack_unpacked u;
        pair_init(&p);
        put_double(&p, cases[i]);
        assert_int_equal(pair_finish(&p, &u), 9);
        assert_int_equal(u.data.type, MSGPACK_OBJECT_FLOAT64);
        /* bits, not ==: -0.0 must stay negative and NaN must stay NaN */
        uint64_t want, got;
        memcpy(&want, &cases[i], sizeof want);
        memcpy(&got, &u.data.via.f64, sizeof got);
        assert_true(want == got);
        pair_done(&p, &u);
    }
    assert_true(signbit(-0.0));
}

/* No reader takes infinity or NaN back: a sum past the largest double is
 * written as the largest double, NaN as 0.0 (as the JSON writer does). */
static void test_doubles_not_finite(void **state)
{
    (void)state;
    const double in[] = {INFINITY, -INFINITY, NAN}, out[] = {DBL_MAX, -DBL_MAX, 0.0};
    for (size_t i = 0; i < 3; i++) {
        kscope__mpw w;
        kscope__mp_init(&w);
        kscope__mp_double(&w, in[i]);
        char *bytes;
        size_t len, off = 0;
        assert_int_equal(kscope__mp_finish(&w, &bytes, &len), 0);
        msgpack_unpacked u;
        msgpack_unpacked_init(&u);
        assert_int_equal(msgpack_unpack_next(&u, bytes, len, &off), MSGPACK_UNPACK_SUCCESS);
        assert_int_equal(u.data.type, MSGPACK_OBJECT_FLOAT64);
        assert_true(u.data.via.f64 == out[i]);
        msgpack_unpacked_destroy(&u);
        free(bytes);
    }
    kscope__jsonw j;
    kscope__jw_init(&j);
    kscope__jw_open(&j, '[');
    kscope__jw_double(&j, INFINITY);
    kscope__jw_double(&j, -INFINITY);
    kscope__jw_double(&j, NAN);
    kscope__jw_js_number(&j, INFINITY);
    kscope__jw_js_number(&j, NAN);
    kscope__jw_close(&j, ']');
    char *text;
    size_t len;
    assert_int_equal(kscope__jw_finish(&j, &text, &len), 0);
    assert_string_equal(text, "[1.7976931348623157e+308,-1.7976931348623157e+308,0.0,1e999,null]");
    free(text);
}

/* The JSON writer's member writers: each a key and its value, as the key
 * and value writers write them, separated by commas. */
static void test_json_members(void **state)
{
    (void)state;
    kscope__jsonw j;
    kscope__jw_init(&j);
    kscope__jw_open(&j, '{');
    kscope__jw_member_str(&j, "s", "a\"b");
    kscope__jw_member_int(&j, "i", -3);
    kscope__jw_member_uint(&j, "u", UINT64_MAX);
    kscope__jw_member_double(&j, "d", 2);
    kscope__jw_member_us(&j, "ts", 1500);
    kscope__jw_close(&j, '}');
    char *text;
    size_t len;
    assert_int_equal(kscope__jw_finish(&j, &text, &len), 0);
    assert_string_equal(
        text, "{\"s\":\"a\\\"b\",\"i\":-3,\"u\":18446744073709551615,\"d\":2.0,\"ts\":1.5}");
    assert_int_equal(len, strlen(text));
    free(text);
}

/* Counts what a sink is handed and keeps it (the encoders' shared buffer
 * passes it on a chunk at a time). */
typedef struct counted {
    kscope__membuf m;
    size_t writes;
} counted;

static int counted_write(void *arg, const void *buf, size_t len)
{
    counted *c = arg;
    c->writes++;
    return kscope__membuf_write(&c->m, buf, len);
}

/* With a sink, a long encoding goes out in chunks of about
 * KSCOPE__SINK_CHUNK, byte for byte what the buffer alone would hold. */
static void test_sink_gets_chunks(void **state)
{
    (void)state;
    counted c = {{0}, 0};
    kscope__sink sink = {counted_write, &c};
    kscope__mpw w, whole;
    kscope__mp_init_sink(&w, &sink);
    kscope__mp_init(&whole);
    uint32_t n = 3 * KSCOPE__SINK_CHUNK / 9;
    kscope__mp_array(&w, n);
    kscope__mp_array(&whole, n);
    for (uint32_t i = 0; i < n; i++) {
        kscope__mp_double(&w, i);
        kscope__mp_double(&whole, i);
    }
    assert_int_equal(kscope__mp_end(&w), 0);
    char *bytes;
    size_t len;
    assert_int_equal(kscope__mp_finish(&whole, &bytes, &len), 0);
    assert_true(c.writes >= 3);
    assert_int_equal(c.m.len, len);
    assert_memory_equal(c.m.buf, bytes, len);
    free(bytes);
    free(c.m.buf);
}

/* ------------------------------------------------------------ together */

/* The shapes .hatchet_msgpack uses, nested: a node with metrics and
 * children, as one document. */
static void test_nested_document(void **state)
{
    (void)state;
    pair p;
    msgpack_unpacked u;
    pair_init(&p);
    put_array(&p, 1);
    put_map(&p, 3);
    put_str(&p, "frame");
    put_map(&p, 2);
    put_str(&p, "name");
    put_str(&p, "ROOT");
    put_str(&p, "type");
    put_str(&p, "function");
    put_str(&p, "metrics");
    put_map(&p, 2);
    put_str(&p, "time (ns)");
    put_int(&p, 1234567890123LL);
    put_str(&p, "util");
    put_double(&p, 0.25);
    put_str(&p, "children");
    put_array(&p, 0);
    pair_finish(&p, &u);
    assert_int_equal(u.data.type, MSGPACK_OBJECT_ARRAY);
    const msgpack_object *node = &u.data.via.array.ptr[0];
    assert_int_equal(node->type, MSGPACK_OBJECT_MAP);
    assert_int_equal(node->via.map.size, 3);
    const msgpack_object *metrics = &node->via.map.ptr[1].val;
    assert_int_object(&metrics->via.map.ptr[0].val, 1234567890123LL);
    assert_true(metrics->via.map.ptr[1].val.via.f64 == 0.25);
    pair_done(&p, &u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ints_at_every_boundary),
        cmocka_unit_test(test_strings_at_every_boundary),
        cmocka_unit_test(test_arrays_at_every_boundary),
        cmocka_unit_test(test_headers_alone_are_smallest),
        cmocka_unit_test(test_maps_at_every_boundary),
        cmocka_unit_test(test_doubles_keep_their_bits),
        cmocka_unit_test(test_doubles_not_finite),
        cmocka_unit_test(test_json_members),
        cmocka_unit_test(test_sink_gets_chunks),
        cmocka_unit_test(test_nested_document),
    };
    return cmocka_run_group_tests_name("msgpackw", tests, NULL, NULL);
}
