/*
 * hatchet-msgpack.c - write a profile tree as .hatchet_msgpack: the same
 * shape as .hatchet (hatchet-doc.c), encoded with our MessagePack encoder
 * (msgpackw.h): this file is that encoder's side of the document.
 */
#include "format/format.h"
#include "format/hatchet-doc.h"
#include "format/msgpackw.h"
#include "kscope.h"
#include "profile/ptree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void m_map(void *w, uint32_t n)
{
    kscope__mp_map(w, n);
}

static void m_array(void *w, uint32_t n)
{
    kscope__mp_array(w, n);
}

/* Sizes are written up front: nothing to close. */
static void m_end(void *w)
{
    (void)w;
}

static void m_str(void *w, const char *s)
{
    kscope__mp_str(w, s);
}

static void m_int(void *w, int64_t v)
{
    kscope__mp_int(w, v);
}

static void m_double(void *w, double v)
{
    kscope__mp_double(w, v);
}

/* The whole document into w (w->out.failed on a failure). */
static void write_doc(const kscope__ptree *t, kscope__mpw *w)
{
    kscope__hdoc_enc e = {w, m_map, m_end, m_array, m_end, m_str, m_str, m_int, m_double};
    if (kscope__hdoc_write(t, &e) != 0)
        w->out.failed = 1;
}

int kscope__hatchet_write_msgpack(const kscope__ptree *t, char **out, size_t *len)
{
    kscope__mpw w;
    kscope__mp_init(&w);
    write_doc(t, &w);
    return kscope__mp_finish(&w, out, len);
}

int kscope__hatchet_msgpack_to(const kscope__ptree *t, const kscope__sink *out)
{
    kscope__mpw w;
    kscope__mp_init_sink(&w, out);
    write_doc(t, &w);
    return kscope__mp_end(&w);
}
