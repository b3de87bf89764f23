/*
 * demangle.c - readable frame names for the readers. A name a C++ compiler
 * mangled (`_Z...`, as Proton leaves kernel names) is read as its
 * demangled text, the way kscope's recorder names the kernels it sees, and
 * so is the function in a PC-sampling frame ("file:line@_Z...",
 * "_Z...+0x1a0"), so
 * `diff` and `merge` pair the nodes of Proton's profiles with kscope's and
 * every printer shows the readable name.
 *
 * Demangling is the C++ runtime's __cxa_demangle (util/cxx.c), looked up at run time as
 * the recorder does for kernel names: the toolkit links no C++
 * runtime, and without one names stay as written. A reader keeps a small
 * map from each mangled name it met (interned in its tree) to the readable
 * one, so a trace naming one kernel a million times demangles it once.
 */
#include "read/read.h"
#include "util/util.h"
#include "kscope.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int kscope__demangle_available(void)
{
    return kscope__cxx_demangler();
}

/* The map's slots: a kscope__ptr_pair keyed by the mangled name's pointer. */
static const kscope__table_kind names_kind = KSCOPE__PTR_TABLE_KIND(kscope__ptr_pair, 64);

/* Where the C++ name in a frame name starts, or NULL for none: the whole
 * name, or the function of a PC-sampling frame ("file:line@_Z...", and
 * "_Z...+0xOFFSET" for code without line information). */
static const char *mangled_part(const char *name)
{
    if (name[0] == '_' && name[1] == 'Z')
        return name;
    const char *at = strstr(name, "@_Z");
    return at ? at + 1 : NULL;
}

/* The demangled text of name, whose C++ part starts at fn and ends at a
 * "+0x" offset or the name's end (prefix and offset kept), interned in t;
 * name itself when it does not demangle; NULL when out of memory. */
static const char *demangle_frame(kscope__ptree *t, const char *name, const char *fn)
{
    const char *off = strstr(fn, "+0x");
    size_t fnlen = off ? (size_t)(off - fn) : strlen(fn);
    char *part = malloc(fnlen + 1);
    if (!part)
        return NULL;
    memcpy(part, fn, fnlen);
    part[fnlen] = '\0';
    char *text = kscope__cxx_demangle(part);
    free(part);
    const char *readable = name; /* not a C++ name after all: as written */
    if (text) {
        size_t pre = (size_t)(fn - name), len = strlen(text), post = strlen(fn + fnlen);
        char *whole = malloc(pre + len + post + 1);
        if (whole) {
            memcpy(whole, name, pre);
            memcpy(whole + pre, text, len);
            memcpy(whole + pre + len, fn + fnlen, post + 1);
        }
        readable = whole ? kscope__ptree_intern_cstr(t, whole) : NULL;
        free(whole);
    }
    free(text);
    return readable;
}

const char *kscope__demangled(kscope__demangler *d, kscope__ptree *t, const char *name)
{
    const char *fn = mangled_part(name);
    if (!fn || !kscope__demangle_available())
        return name;
    const kscope__ptr_pair *met =
        kscope__table_find(&d->names, &names_kind, kscope__ptr_hash(name), name);
    if (met)
        return met->value;
    const char *readable = demangle_frame(t, name, fn);
    kscope__ptr_pair pair = {name, readable};
    if (!readable || !kscope__table_add(&d->names, &names_kind, kscope__ptr_hash(name), &pair))
        return NULL;
    return readable;
}

void kscope__demangler_free(kscope__demangler *d)
{
    kscope__table_free(&d->names);
}
