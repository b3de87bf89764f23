/*
 * table.h - the one open-addressed hash table of kscope: slots of a size
 * the caller chooses, found by linear probing from hash & (cap - 1), grown
 * by doubling (every entry rehashed) once a share of the slots is in use.
 * A slot is empty while its mark (a uint32_t, uint64_t or pointer at an
 * offset the caller names) is zero; the key is a number in the slot, or
 * whatever the caller's `same` compares: a pointer, several fields, a
 * string that the slot only refers to. Like util.h it knows
 * no kscope type and includes nothing of src/.
 *
 *     static const kscope__table_kind kind = {
 *         .size = sizeof(entry), .mark = offsetof(entry, key), .mark_size = sizeof(uint32_t),
 *         .key = offsetof(entry, key), .key_size = sizeof(uint32_t), .first = 64,
 *         .hash = entry_hash};
 *     entry *e = kscope__table_find(&tab, &kind, hash_of(key), &key);
 *     if (!e && !(e = kscope__table_add(&tab, &kind, hash_of(key), &(entry){key, value})))
 *         return KSCOPE_ENOMEM;
 */
#ifndef KSCOPE_UTIL_TABLE_H
#define KSCOPE_UTIL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A table; all zero is an empty one with nothing allocated. */
typedef struct kscope__table {
    void *slots; /* cap slots; a slot whose mark is zero is empty */
    size_t cap;  /* a power of two, or 0 before the first add */
    size_t len;  /* slots in use */
} kscope__table;

/* What a table's slots are; one static const per kind of table. */
typedef struct kscope__table_kind {
    size_t size;                        /* bytes a slot */
    size_t mark;                        /* offset of the mark: nonzero in a used slot */
    size_t mark_size;                   /* its width: 4 or 8 (a pointer: sizeof(void *)) */
    size_t first;                       /* slots of the first allocation, a power of two */
    unsigned fill;                      /* percent of the slots in use before it doubles; 0: 50 */
    uint64_t (*hash)(const void *slot); /* a used slot's hash, to rehash it */
    /* Whether a used slot holds key; NULL: the key_size bytes at offset
     * key of the slot are the key's (a number kept in the slot). */
    int (*same)(const void *slot, const void *key);
    size_t key, key_size; /* without same: where the key is in a slot, its bytes */
} kscope__table_kind;

/* Fibonacci hashing of a number: the high half of its product with
 * 2^64 / phi, for keys that are ids, pointers or packed fields. */
static inline uint64_t kscope__number_hash(uint64_t x)
{
    return (x * 0x9e3779b97f4a7c15ull) >> 32;
}

/* kscope__table_reserve's work when the table must double. */
int kscope__table_grow(kscope__table *t, const kscope__table_kind *k);

/* Whether `slot` of a table of kind k is in use (its mark is nonzero). */
static inline int kscope__table_used(const kscope__table_kind *k, const void *slot)
{
    const char *m = (const char *)slot + k->mark;
    if (k->mark_size == 4) {
        uint32_t v;
        memcpy(&v, m, sizeof v);
        return v != 0;
    }
    uint64_t v;
    memcpy(&v, m, sizeof v);
    return v != 0;
}

/* The used slot holding `key`, whose hash is `hash` (the value k->hash
 * gives for its slot), or NULL when there is none. Inline, so that with a
 * kind known where it is called (a static const) the compiler writes the
 * probe loop for that kind, as fast as one written by hand. */
static inline void *kscope__table_find(const kscope__table *t, const kscope__table_kind *k,
                                       uint64_t hash, const void *key)
{
    if (!t->cap)
        return NULL;
    for (size_t j = (size_t)hash & (t->cap - 1);; j = (j + 1) & (t->cap - 1)) {
        char *s = (char *)t->slots + j * k->size;
        if (!kscope__table_used(k, s))
            return NULL;
        if (k->same ? k->same(s, key) : memcmp(s + k->key, key, k->key_size) == 0)
            return s;
    }
}

/* Room for one more entry: the table doubled (from k->first slots) when
 * that entry would fill it past k->fill. 0, or -1 with the table whole
 * (same slots, capacity and entries) when memory runs out. */
static inline int kscope__table_reserve(kscope__table *t, const kscope__table_kind *k)
{
    unsigned fill = k->fill ? k->fill : 50;
    return (t->len + 1) * 100 <= t->cap * fill ? 0 : kscope__table_grow(t, k);
}

/* A copy of `entry` (k->size bytes, its mark nonzero, its key not yet in
 * the table, `hash` its hash) put in the table after
 * kscope__table_reserve: the slot it went to, which a later add may move;
 * NULL with the table whole when memory runs out (never after a
 * successful reserve). */
void *kscope__table_add(kscope__table *t, const kscope__table_kind *k, uint64_t hash,
                        const void *entry);

/* Every slot emptied, the memory kept (for a table rebuilt in place). */
void kscope__table_clear(kscope__table *t, const kscope__table_kind *k);

/* The slots freed; the table is all zero (empty) again. */
void kscope__table_free(kscope__table *t);

/* Tables keyed by a pointer (an interned name, CUPTI's name pointer) that
 * opens the slot: its hash, and the kind's hash and same for such slots
 * (`same` takes the pointer itself as the key). */
uint64_t kscope__ptr_hash(const void *p);
uint64_t kscope__ptr_slot_hash(const void *slot);
int kscope__ptr_slot_same(const void *slot, const void *key);

/* The kind of a table of `type` slots opening with their pointer key,
 * first allocated with `first_cap` slots, doubled at half full:
 *     static const kscope__table_kind names = KSCOPE__PTR_TABLE_KIND(kscope__ptr_pair, 64); */
#define KSCOPE__PTR_TABLE_KIND(type, first_cap)                                                    \
    {                                                                                              \
        .size = sizeof(type), .mark = 0, .mark_size = sizeof(void *), .first = (first_cap),        \
        .hash = kscope__ptr_slot_hash, .same = kscope__ptr_slot_same                               \
    }

/* A slot of a map from one pointer to another. */
typedef struct kscope__ptr_pair {
    const void *key; /* NULL: empty */
    const void *value;
} kscope__ptr_pair;

#endif
