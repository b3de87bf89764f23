/*
 * hatchet-json.c - write a profile tree as .hatchet: a JSON array of the
 * ROOT node and the device-info object, the shape proton-viewer and LLNL
 * Hatchet's literal reader load.
 *
 * The document's shape is hatchet-doc.c's (shared with .hatchet_msgpack);
 * this file is its JSON encoder.
 */
#include "format/format.h"
#include "format/hatchet-doc.h"
#include "format/jsonw.h"
#include "kscope.h"
#include "profile/ptree.h"

#include <stdio.h>
#include <stdlib.h>

static void j_map(void *w, uint32_t n)
{
    (void)n;
    kscope__jw_open(w, '{');
}

static void j_end_map(void *w)
{
    kscope__jw_close(w, '}');
}

static void j_array(void *w, uint32_t n)
{
    (void)n;
    kscope__jw_open(w, '[');
}

static void j_end_array(void *w)
{
    kscope__jw_close(w, ']');
}

static void j_key(void *w, const char *key)
{
    kscope__jw_key(w, key);
}

static void j_str(void *w, const char *s)
{
    kscope__jw_str(w, s);
}

static void j_int(void *w, int64_t v)
{
    kscope__jw_int(w, v);
}

static void j_double(void *w, double v)
{
    kscope__jw_double(w, v);
}

/* The whole document into w, and a newline; 0 or KSCOPE_ENOMEM. */
static int write_doc(const kscope__ptree *t, kscope__jsonw *w)
{
    kscope__hdoc_enc e = {w, j_map, j_end_map, j_array, j_end_array, j_key, j_str, j_int, j_double};
    int rc = kscope__hdoc_write(t, &e);
    if (rc == 0)
        kscope__jw_raw(w, "\n", 1);
    return rc;
}

int kscope__hatchet_write_json(const kscope__ptree *t, char **out, size_t *len)
{
    kscope__jsonw w;
    kscope__jw_init(&w);
    if (write_doc(t, &w) != 0) {
        kscope__jw_free(&w);
        return KSCOPE_ENOMEM;
    }
    return kscope__jw_finish(&w, out, len);
}

int kscope__hatchet_json_to(const kscope__ptree *t, const kscope__sink *out)
{
    kscope__jsonw w;
    kscope__jw_init_sink(&w, out);
    int rc = write_doc(t, &w);
    int end = kscope__jw_end(&w);
    return rc ? rc : end;
}
