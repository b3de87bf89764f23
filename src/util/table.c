/*
 * table.c - the open-addressed hash table of table.h: linear probing,
 * doubling with a rehash into a fresh array, so the old one stays whole
 * until the new one is built.
 */
#include "util/table.h"

#include <stdlib.h>
#include <string.h>

static char *slot_at(const kscope__table *t, const kscope__table_kind *k, size_t j)
{
    return (char *)t->slots + j * k->size;
}

/* The first empty slot of hash's probe (the table has one: never full). */
static char *empty_slot(const kscope__table *t, const kscope__table_kind *k, uint64_t hash)
{
    size_t j = (size_t)hash & (t->cap - 1);
    while (kscope__table_used(k, slot_at(t, k, j)))
        j = (j + 1) & (t->cap - 1);
    return slot_at(t, k, j);
}

int kscope__table_grow(kscope__table *t, const kscope__table_kind *k)
{
    kscope__table bigger = {NULL, t->cap ? t->cap * 2 : k->first, t->len};
    if (bigger.cap > SIZE_MAX / k->size || !(bigger.slots = calloc(bigger.cap, k->size)))
        return -1; /* too large for a size_t of bytes, or out of memory */
    for (size_t i = 0; i < t->cap; i++) {
        const char *s = slot_at(t, k, i);
        if (kscope__table_used(k, s))
            memcpy(empty_slot(&bigger, k, k->hash(s)), s, k->size);
    }
    free(t->slots);
    *t = bigger;
    return 0;
}

void *kscope__table_add(kscope__table *t, const kscope__table_kind *k, uint64_t hash,
                        const void *entry)
{
    if (kscope__table_reserve(t, k) != 0)
        return NULL;
    char *s = empty_slot(t, k, hash);
    memcpy(s, entry, k->size);
    t->len++;
    return s;
}

void kscope__table_clear(kscope__table *t, const kscope__table_kind *k)
{
    if (t->slots)
        memset(t->slots, 0, t->cap * k->size);
    t->len = 0;
}

void kscope__table_free(kscope__table *t)
{
    free(t->slots);
    memset(t, 0, sizeof *t);
}

uint64_t kscope__ptr_hash(const void *p)
{
    return kscope__number_hash((uint64_t)(uintptr_t)p);
}

uint64_t kscope__ptr_slot_hash(const void *slot)
{
    const void *key;
    memcpy(&key, slot, sizeof key);
    return kscope__ptr_hash(key);
}

int kscope__ptr_slot_same(const void *slot, const void *key)
{
    const void *held;
    memcpy(&held, slot, sizeof held);
    return held == key;
}
