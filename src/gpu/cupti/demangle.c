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
#include "util/table.h"
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

static const kscope__table_kind names_kind = KSCOPE__PTR_TABLE_KIND(name_entry, 1024);
static kscope__table table; /* name_entry, keyed by CUPTI's pointer */
static retired_entry *retired;
static const char *fallback_name = "";

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

/* Keep e's entry aside (its text stays valid) before e is replaced; 0, or
 * -1 out of memory. */
static int retire(const name_entry *e)
{
    retired_entry *r = malloc(sizeof *r);
    if (!r)
        return -1;
    r->old = *e;
    r->next = retired;
    retired = r;
    return 0;
}

static const char *demangle_locked(const char *mangled)
{
    uint64_t hash = kscope__ptr_hash(mangled);
    name_entry *e = kscope__table_find(&table, &names_kind, hash, mangled);
    if (e && strcmp(e->mangled, mangled) == 0)
        return e->demangled;
    /* new, or its address reused for another name (then replaced) */
    char *copy = strdup(mangled), *readable = demangle_text(mangled);
    name_entry fresh = {mangled, copy, readable};
    if (copy && readable) {
        if (e && retire(e) == 0) {
            *e = fresh;
            return readable;
        }
        if (!e && kscope__table_add(&table, &names_kind, hash, &fresh))
            return readable;
    }
    free(copy);
    free(readable);
    return mangled; /* out of memory: the raw name still names it */
}
