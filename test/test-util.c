/*
 * test-util.c - src/util/: the growable array (doubling from its first
 * size, the size checked for overflow, the array left whole when it cannot
 * grow) and the string hash (FNV-1a's published values).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static void test_room_doubles_from_first(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    assert_int_equal(KSCOPE__ROOM(v, cap, 1, 4), 0);
    assert_non_null(v);
    assert_int_equal(cap, 4);
    for (int i = 0; i < 4; i++)
        v[i] = i;
    assert_int_equal(KSCOPE__ROOM(v, cap, 5, 4), 0);
    assert_int_equal(cap, 8);
    assert_int_equal(KSCOPE__ROOM(v, cap, 33, 4), 0); /* doubles until it fits */
    assert_int_equal(cap, 64);
    for (int i = 0; i < 4; i++) /* what it held is kept */
        assert_int_equal(v[i], i);
    int *same = v;
    assert_int_equal(KSCOPE__ROOM(v, cap, 10, 4), 0); /* large enough: untouched */
    assert_ptr_equal(v, same);
    assert_int_equal(cap, 64);
    free(v);
}

static void test_room_refuses_overflow(void **state)
{
    (void)state;
    double *v = malloc(4 * sizeof *v);
    assert_non_null(v);
    v[3] = 2.5;
    size_t cap = 4;
    double *before = v;
    /* more items than a size_t of bytes holds: refused, array untouched */
    assert_int_equal(KSCOPE__ROOM(v, cap, SIZE_MAX / 4, 4), -1);
    assert_ptr_equal(v, before);
    assert_int_equal(cap, 4);
    assert_int_equal(KSCOPE__ROOM(v, cap, SIZE_MAX, 4), -1);
    assert_int_equal(cap, 4);
    assert_true(v[3] == 2.5);
    free(v);
}

/* FNV-1a 64 of "", "a" and "foobar": the published test vectors. */
static void test_fnv1a(void **state)
{
    (void)state;
    assert_true(kscope__fnv1a("", 0) == 0xcbf29ce484222325ull);
    assert_true(kscope__fnv1a("a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(kscope__fnv1a("foobar", 6) == 0x85944171f73967e8ull);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_room_doubles_from_first),
        cmocka_unit_test(test_room_refuses_overflow),
        cmocka_unit_test(test_fnv1a),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
