/*
 * util.h - the small pieces every part of kscope needs and none owns: a
 * growable array, a string hash, the C++ runtime's demangler. No kscope type, no other src/ header:
 * every folder may include it (test/cli-layout.sh checks that it includes
 * nothing of theirs).
 */
#ifndef KSCOPE_UTIL_H
#define KSCOPE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Room for at least `need` items in the array `arr` (a pointer lvalue)
 * whose capacity is `cap` (a size_t lvalue): grown by doubling from
 * `first` items when it is smaller. 0, or -1 with the array and its
 * capacity untouched when memory runs out or the size would overflow.
 *     if (l->n == l->cap && KSCOPE__ROOM(l->v, l->cap, l->n + 1, 64) != 0)
 *         return -1; */
#define KSCOPE__ROOM(arr, cap, need, first)                                                        \
    kscope__room((void *)&(arr), &(cap), (need), sizeof *(arr), (first))

/* KSCOPE__ROOM's work: `slot` is the address of the array's pointer. */
int kscope__room(void *slot, size_t *cap, size_t need, size_t size, size_t first);

/* FNV-1a over n bytes, 64 bits: names and keys of the hash tables. */
static inline uint64_t kscope__fnv1a(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Whether the C++ runtime's demangler was found (cxx.c: looked up once,
 * already in the process or the system's libstdc++). */
int kscope__cxx_demangler(void);

/* `mangled` demangled by the C++ runtime, a malloc'd string the caller
 * frees; NULL when it is not a name the runtime demangles, when there is
 * no runtime, or out of memory. */
char *kscope__cxx_demangle(const char *mangled);

#endif
