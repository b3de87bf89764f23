/*
 * testutil.h - helpers shared by the C tests: read a file, parse JSON with
 * yajl's tree API, find nodes of a .hatchet tree by path.
 */
#ifndef KSCOPE_TESTUTIL_H
#define KSCOPE_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

/* Whole file as a NUL-terminated buffer (caller frees); NULL if unreadable. */
static inline char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        if (len)
            *len = (size_t)n;
    }
    return buf;
}

static inline yajl_val tu_parse(const char *text)
{
    char err[256];
    yajl_val v = yajl_tree_parse(text, err, sizeof err);
    if (!v)
        fprintf(stderr, "JSON parse error: %s\n", err);
    return v;
}

static inline yajl_val tu_parse_file(const char *path)
{
    char *text = tu_read_file(path, NULL);
    if (!text)
        return NULL;
    yajl_val v = tu_parse(text);
    free(text);
    return v;
}

/* Member `key` of an object, or NULL. */
static inline yajl_val tu_get(yajl_val obj, const char *key)
{
    if (!YAJL_IS_OBJECT(obj))
        return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0)
            return obj->u.object.values[i];
    return NULL;
}

static inline const char *tu_frame_name(yajl_val node)
{
    yajl_val name = tu_get(tu_get(node, "frame"), "name");
    return YAJL_IS_STRING(name) ? name->u.string : NULL;
}

/* Child of a hatchet node by frame name. */
static inline yajl_val tu_child(yajl_val node, const char *name)
{
    yajl_val kids = tu_get(node, "children");
    if (!YAJL_IS_ARRAY(kids))
        return NULL;
    for (size_t i = 0; i < kids->u.array.len; i++) {
        const char *n = tu_frame_name(kids->u.array.values[i]);
        if (n && strcmp(n, name) == 0)
            return kids->u.array.values[i];
    }
    return NULL;
}

/* Follow a NULL-terminated path of names from a node. */
static inline yajl_val tu_path(yajl_val node, const char *const *names)
{
    for (; node && *names; names++)
        node = tu_child(node, *names);
    return node;
}

#define TU_PATH(node, ...) tu_path((node), (const char *const[]){__VA_ARGS__, NULL})

static inline yajl_val tu_metric(yajl_val node, const char *key)
{
    return tu_get(tu_get(node, "metrics"), key);
}

static inline long long tu_metric_int(yajl_val node, const char *key)
{
    yajl_val v = tu_metric(node, key);
    return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
}

/* A number metric as a double (-1 when absent or not a number). */
static inline double tu_metric_num(yajl_val node, const char *key)
{
    yajl_val v = tu_metric(node, key);
    return YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : -1.0;
}

/* Whether a number was written with a fraction or exponent ("0.0"): yajl
 * marks every number double-valid, so its raw text tells. */
static inline int tu_written_as_double(yajl_val v)
{
    return YAJL_IS_NUMBER(v) && strpbrk(v->u.number.r, ".eE") != NULL;
}

/* Whether ROOT lists `key` in its "kscope" member's inclusive names. */
static inline int tu_root_lists_inclusive(yajl_val root, const char *key)
{
    yajl_val list = tu_get(tu_get(root, "kscope"), "inclusive");
    for (size_t i = 0; list && YAJL_IS_ARRAY(list) && i < list->u.array.len; i++)
        if (YAJL_IS_STRING(list->u.array.values[i]) &&
            strcmp(list->u.array.values[i]->u.string, key) == 0)
            return 1;
    return 0;
}

static inline size_t tu_nchildren(yajl_val node)
{
    yajl_val kids = tu_get(node, "children");
    return YAJL_IS_ARRAY(kids) ? kids->u.array.len : 0;
}

#endif
