/*
 * hatchet-doc.h - the .hatchet document, once for every encoding: a
 * profile tree walked into an encoder's calls (maps and arrays with their
 * sizes, keys, strings, numbers). hatchet-json.c and hatchet-msgpack.c
 * are the two encoders; the document's shape, ROOT's layout included
 * (hatchet-root.c), is decided here alone.
 */
#ifndef KSCOPE_HATCHET_DOC_H
#define KSCOPE_HATCHET_DOC_H

#include "profile/ptree.h"

#include <stdint.h>

/* An encoder. A map or array is opened with its size (JSON ignores it)
 * and closed (MessagePack ignores that); a map's keys go through key(). */
typedef struct kscope__hdoc_enc {
    void *w;
    void (*map)(void *w, uint32_t n);
    void (*end_map)(void *w);
    void (*array)(void *w, uint32_t n);
    void (*end_array)(void *w);
    void (*key)(void *w, const char *key);
    void (*str)(void *w, const char *s);
    void (*i64)(void *w, int64_t v);
    void (*f64)(void *w, double v);
} kscope__hdoc_enc;

/* The whole document, [ROOT, devices], through e. 0 or KSCOPE_ENOMEM. */
int kscope__hdoc_write(const kscope__ptree *t, const kscope__hdoc_enc *e);

#endif
