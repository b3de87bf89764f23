/*
 * test-util.c - src/util/: the growable array (doubling from its first
 * size, the size checked for overflow, the array left whole when it cannot
 * grow), the string hash (FNV-1a's published values) and the hash table
 * (table.h: probing past collisions, doubling at its fill, left whole
 * when it cannot grow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/table.h"
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

/* ------------------------------------------------------------ the table */

/* Keyed by the number in the slot (no `same`). */
typedef struct pair {
    uint32_t key; /* 0: empty */
    uint32_t value;
} pair;

/* A poor hash on purpose: keys collide in fours, so probes run long. */
static uint64_t pair_hash_of(uint32_t key)
{
    return key / 4;
}

static uint64_t pair_hash(const void *slot)
{
    return pair_hash_of(((const pair *)slot)->key);
}

static const kscope__table_kind pairs = {.size = sizeof(pair),
                                         .mark = offsetof(pair, key),
                                         .mark_size = sizeof(uint32_t),
                                         .key = offsetof(pair, key),
                                         .key_size = sizeof(uint32_t),
                                         .first = 16,
                                         .hash = pair_hash};

static const pair *pair_find(const kscope__table *t, const kscope__table_kind *k, uint32_t key)
{
    return kscope__table_find(t, k, pair_hash_of(key), &key);
}

static void test_table_finds_what_it_holds(void **state)
{
    (void)state;
    kscope__table t = {0};
    assert_null(pair_find(&t, &pairs, 7)); /* nothing allocated yet */
    for (uint32_t key = 1; key <= 1000; key++) {
        pair p = {key, key * 3};
        const pair *in = kscope__table_add(&t, &pairs, pair_hash_of(key), &p);
        assert_non_null(in);
        assert_int_equal(in->value, key * 3);
    }
    assert_int_equal(t.len, 1000);
    assert_int_equal(t.cap, 2048); /* doubled from 16 while over half full */
    for (uint32_t key = 1; key <= 1000; key++) {
        const pair *p = pair_find(&t, &pairs, key);
        assert_non_null(p);
        assert_int_equal(p->key, key);
        assert_int_equal(p->value, key * 3);
    }
    assert_null(pair_find(&t, &pairs, 1001));
    assert_null(pair_find(&t, &pairs, 5000));
    size_t used = 0;
    for (size_t i = 0; i < t.cap; i++)
        used += (size_t)kscope__table_used(&pairs, (const pair *)t.slots + i);
    assert_int_equal(used, 1000);
    kscope__table_clear(&t, &pairs); /* emptied, its memory kept */
    assert_int_equal(t.len, 0);
    assert_int_equal(t.cap, 2048);
    assert_null(pair_find(&t, &pairs, 1));
    kscope__table_free(&t);
    assert_null(t.slots);
    assert_int_equal(t.cap, 0);
}

/* The fill a kind names: 16 slots hold 12 entries at 80%, the 13th doubles. */
static void test_table_doubles_at_its_fill(void **state)
{
    (void)state;
    kscope__table_kind dense = pairs;
    dense.fill = 80;
    kscope__table t = {0};
    for (uint32_t key = 1; key <= 12; key++) {
        assert_int_equal(kscope__table_reserve(&t, &dense), 0);
        assert_non_null(kscope__table_add(&t, &dense, pair_hash_of(key), &(pair){key, 0}));
    }
    assert_int_equal(t.cap, 16);
    assert_int_equal(kscope__table_reserve(&t, &dense), 0);
    assert_int_equal(t.cap, 32);
    for (uint32_t key = 1; key <= 12; key++) /* rehashed into the new slots */
        assert_non_null(pair_find(&t, &dense, key));
    kscope__table_free(&t);
}

/* A table that cannot double is left as it was: slots, size, entries. */
static void test_table_left_whole_when_it_cannot_grow(void **state)
{
    (void)state;
    typedef struct big {
        uint32_t key;
        char pad[124];
    } big;
    kscope__table_kind k = pairs;
    k.size = sizeof(big);
    big held[4] = {{1, "one"}};
    /* half of 2^57 slots in use: doubling needs 2^65 bytes */
    kscope__table t = {held, (size_t)1 << 57, (size_t)1 << 56};
    assert_int_equal(kscope__table_reserve(&t, &k), -1);
    assert_null(kscope__table_add(&t, &k, 0, &(big){2, "two"}));
    assert_ptr_equal(t.slots, held);
    assert_true(t.cap == (size_t)1 << 57 && t.len == (size_t)1 << 56);
    assert_int_equal(held[0].key, 1);
    assert_string_equal(held[0].pad, "one");
    assert_int_equal(held[1].key, 0);
}

/* A map keyed by pointers: the same text at another address is another key. */
static void test_table_keyed_by_pointer(void **state)
{
    (void)state;
    static const kscope__table_kind map = KSCOPE__PTR_TABLE_KIND(kscope__ptr_pair, 4);
    static char names[100][8];
    kscope__table t = {0};
    for (int i = 0; i < 100; i++) {
        strcpy(names[i], "name");
        kscope__ptr_pair p = {names[i], &names[99 - i]};
        assert_non_null(kscope__table_add(&t, &map, kscope__ptr_hash(names[i]), &p));
    }
    for (int i = 0; i < 100; i++) {
        const kscope__ptr_pair *p =
            kscope__table_find(&t, &map, kscope__ptr_hash(names[i]), names[i]);
        assert_non_null(p);
        assert_ptr_equal(p->value, &names[99 - i]);
    }
    char other[8] = "name";
    assert_null(kscope__table_find(&t, &map, kscope__ptr_hash(other), other));
    kscope__table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_room_doubles_from_first),
        cmocka_unit_test(test_room_refuses_overflow),
        cmocka_unit_test(test_fnv1a),
        cmocka_unit_test(test_table_finds_what_it_holds),
        cmocka_unit_test(test_table_doubles_at_its_fill),
        cmocka_unit_test(test_table_left_whole_when_it_cannot_grow),
        cmocka_unit_test(test_table_keyed_by_pointer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
