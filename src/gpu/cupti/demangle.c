/*
 * demangle.c - readable kernel names, computed once per distinct kernel.
 *
 * CUPTI hands every record of one kernel the same name pointer, so the
 * cache is keyed by that pointer (checked against a copy of the text, in
 * case a module was unloaded and the address reused). Demangling itself is
 * the C++ runtime's __cxa_demangle, looked up at run time: the recorder
 * links no C++ runtime, and the CUPTI library (itself C++) has loaded one
 * by the time a kernel name reaches us. Without it, names stay mangled.
 */
#include "gpu/cupti/cupti-internal.h"
#include "util/util.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct name_entry {
    const char *key;       /* CUPTI's pointer */
    char *mangled;         /* copy of the text at that pointer */
    const char *demangled; /* points into mangled when unchanged */
} name_entry;

/* Entries replaced after an address was reused; kept, since records still
 * waiting for their launch may point at their text. */
typedef struct retired_entry {
    struct retired_entry *next;
    name_entry old;
} retired_entry;

static name_entry *table;
static retired_entry *retired;
static size_t table_cap, table_len;
static const char *fallback_name = "";

static size_t slot_of(const char *key, size_t cap)
{
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (cap - 1);
}

static int grow(void)
{
    size_t cap = table_cap ? table_cap * 2 : 1024;
    name_entry *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < table_cap; i++) {
        if (!table[i].key)
            continue;
        size_t s = slot_of(table[i].key, cap);
        while (t[s].key)
            s = (s + 1) & (cap - 1);
        t[s] = table[i];
    }
    free(table);
    table = t;
    table_cap = cap;
    return 0;
}

/* A fresh readable copy of `mangled` (NULL out of memory). */
static char *demangle_text(const char *mangled)
{
    char *out = mangled[0] == '_' && mangled[1] == 'Z' ? kscope__cxx_demangle(mangled) : NULL;
    return out ? out : strdup(mangled);
}

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *demangle_locked(const char *mangled);

/* The buffer thread and PC sampling's thread both name functions. */
const char *kscope__demangle(const char *mangled)
{
    if (!mangled)
        return fallback_name;
    pthread_mutex_lock(&table_lock);
    const char *out = demangle_locked(mangled);
    pthread_mutex_unlock(&table_lock);
    return out;
}

static const char *demangle_locked(const char *mangled)
{
    if (table_len * 2 >= table_cap && grow() < 0)
        return mangled; /* out of memory: the raw name still names it */
    size_t s = slot_of(mangled, table_cap);
    while (table[s].key) {
        if (table[s].key == mangled && strcmp(table[s].mangled, mangled) == 0)
            return table[s].demangled;
        if (table[s].key == mangled) /* address reused for another name */
            break;
        s = (s + 1) & (table_cap - 1);
    }
    char *copy = strdup(mangled);
    char *readable = demangle_text(mangled);
    if (!copy || !readable) {
        free(copy);
        free(readable);
        return mangled;
    }
    if (table[s].key) { /* reused address: replace; the old text stays valid */
        retired_entry *r = malloc(sizeof *r);
        if (!r) {
            free(copy);
            free(readable);
            return mangled;
        }
        r->old = table[s];
        r->next = retired;
        retired = r;
        table[s].mangled = copy;
        table[s].demangled = readable;
        return readable;
    }
    table[s].key = mangled;
    table[s].mangled = copy;
    table[s].demangled = readable;
    table_len++;
    return readable;
}
