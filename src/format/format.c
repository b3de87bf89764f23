/*
 * format.c - the format table of format.h, and its look-ups by id, name
 * and file name.
 */
#include "format/format.h"
#include "profile/ptree.h"
#include "util/util.h"

#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kscope__format formats[KSCOPE__FORMAT_COUNT] = {
#define KSCOPE__FORMAT_ROW(id, name, kind, exts, tree_w, trace_w, reader)                          \
    [KSCOPE__FORMAT_##id] = {KSCOPE__FORMAT_##id, name, kind, exts, tree_w, trace_w},
    KSCOPE__FORMATS(KSCOPE__FORMAT_ROW)
#undef KSCOPE__FORMAT_ROW
};

const kscope__format *kscope__format_get(kscope__format_id id)
{
    if (id <= KSCOPE__FORMAT_UNKNOWN || id >= KSCOPE__FORMAT_COUNT)
        return NULL;
    return &formats[id];
}

const kscope__format *kscope__format_by_name(const char *name)
{
    for (int i = 1; name && i < KSCOPE__FORMAT_COUNT; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

/* Whether `path` ends with the extension exts[0..n). */
static int ends_with(const char *path, size_t plen, const char *ext, size_t n)
{
    return plen > n && memcmp(path + plen - n, ext, n) == 0;
}

const kscope__format *kscope__format_by_path(const char *path)
{
    size_t plen = path ? strlen(path) : 0;
    for (int i = 1; i < KSCOPE__FORMAT_COUNT; i++) {
        const char *e = formats[i].exts;
        while (*e) {
            size_t n = strcspn(e, " ");
            if (ends_with(path, plen, e, n))
                return &formats[i];
            e += n;
            e += *e == ' ';
        }
    }
    return NULL;
}

const kscope__format *kscope__format_default(kscope__format_kind kind)
{
    for (int i = 1; i < KSCOPE__FORMAT_COUNT; i++)
        if (formats[i].kind == kind)
            return &formats[i];
    return NULL;
}

const char *kscope__format_ext(const kscope__format *f, char *buf, size_t size)
{
    snprintf(buf, size, "%.*s", (int)strcspn(f->exts, " "), f->exts);
    return buf;
}

const char *kscope__format_names(kscope__format_kind kind, const char *sep, char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = 0;
    for (int i = 1; i < KSCOPE__FORMAT_COUNT; i++) {
        if (kind && formats[i].kind != kind)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? sep : "", formats[i].name);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
    return buf;
}

int kscope__membuf_write(void *arg, const void *buf, size_t len)
{
    kscope__membuf *m = arg;
    if (m->len + len + 1 > m->cap && KSCOPE__ROOM(m->buf, m->cap, m->len + len + 1, 4096) != 0)
        return KSCOPE_ENOMEM;
    memcpy(m->buf + m->len, buf, len);
    m->len += len;
    m->buf[m->len] = '\0';
    return 0;
}

/* Hand a filled buffer over, or free it on a failure. */
static int membuf_take(kscope__membuf *m, int rc, char **out, size_t *len)
{
    if (rc == 0 && !m->buf)
        rc = kscope__membuf_write(m, "", 0);
    if (rc != 0) {
        free(m->buf);
        return rc;
    }
    *out = m->buf;
    *len = m->len;
    return 0;
}

int kscope__format_write_tree(const kscope__format *f, const struct kscope__ptree *t, char **out,
                              size_t *len)
{
    kscope__membuf m = {0};
    kscope__sink sink = {kscope__membuf_write, &m};
    int rc = f && f->write_tree ? f->write_tree(t, &sink) : KSCOPE_EFORMAT;
    return membuf_take(&m, rc, out, len);
}

int kscope__format_write_trace(const kscope__format *f, kscope__tev_source source, void *source_arg,
                               char **out, size_t *len)
{
    kscope__membuf m = {0};
    kscope__sink sink = {kscope__membuf_write, &m};
    int rc = f && f->write_trace ? f->write_trace(source, source_arg, &sink) : KSCOPE_EFORMAT;
    return membuf_take(&m, rc, out, len);
}

/* Append one item to a list for people in buf ("a", "a, b"): the last
 * comma becomes " or " once the list is whole (or_list). */
static void list_add(char *buf, size_t size, const char *item, size_t n)
{
    size_t used = strlen(buf);
    if (used + 1 < size)
        snprintf(buf + used, size - used, "%s%.*s", used ? ", " : "", (int)n, item);
}

static void or_list(char *buf, size_t size)
{
    char *last = strrchr(buf, ',');
    if (!last || strlen(buf) + 3 >= size)
        return;
    memmove(last + 3, last + 1, strlen(last + 1) + 1); /* ", x" -> " or x" */
    memcpy(last, " or", 3);
}

const char *kscope__format_list(kscope__format_kind kind, kscope__format_item item, char *buf,
                                size_t size)
{
    if (size)
        buf[0] = 0;
    for (int i = 1; size && i < KSCOPE__FORMAT_COUNT; i++) {
        const kscope__format *f = &formats[i];
        if (kind && f->kind != kind)
            continue;
        if (item == KSCOPE__ITEM_NAME) {
            list_add(buf, size, f->name, strlen(f->name));
            continue;
        }
        for (const char *e = f->exts; *e; e += *e == ' ') {
            size_t n = strcspn(e, " ");
            list_add(buf, size, e, n);
            e += n;
            if (item == KSCOPE__ITEM_EXT)
                break;
        }
    }
    or_list(buf, size);
    return buf;
}

/* The help texts' words ({formats}, {tree_exts}, ...): what, of which kind. */
static const struct {
    const char *key;
    kscope__format_kind kind;
    kscope__format_item item;
} words[] = {
    {"formats", 0, KSCOPE__ITEM_NAME},
    {"tree_formats", KSCOPE__KIND_TREE, KSCOPE__ITEM_NAME},
    {"trace_formats", KSCOPE__KIND_TRACE, KSCOPE__ITEM_NAME},
    {"exts", 0, KSCOPE__ITEM_EXT},
    {"tree_exts", KSCOPE__KIND_TREE, KSCOPE__ITEM_EXTS},
    {"trace_exts", KSCOPE__KIND_TRACE, KSCOPE__ITEM_EXTS},
};

const char *kscope__format_word(const char *key, size_t len, char *buf, size_t size)
{
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strlen(words[i].key) == len && strncmp(words[i].key, key, len) == 0)
            return kscope__format_list(words[i].kind, words[i].item, buf, size);
    int tree = len == 8 && strncmp(key, "tree_ext", len) == 0;
    if (tree || (len == 9 && strncmp(key, "trace_ext", len) == 0))
        return kscope__format_ext(
            kscope__format_default(tree ? KSCOPE__KIND_TREE : KSCOPE__KIND_TRACE), buf, size);
    return NULL;
}
