/*
 * readutil.h - helpers shared by the tests of the reading toolkit
 * (test-read.c, test-analysis.c): read a fixture or a JSON text into a
 * tree (or a live session's data), find a node by its path, read a metric,
 * compare doubles. Include after cmocka.h (failures go through fail_msg).
 */
#ifndef KSCOPE_READUTIL_H
#define KSCOPE_READUTIL_H

#include "kscope.h"
#include "read/read.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline char *data_path(const char *rel)
{
    const char *src = getenv("KSCOPE_SOURCE_DIR");
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/test/data/%s", src ? src : "..", rel);
    return buf;
}

/* The profile at path, read; the reader's error ("PATH: what is wrong")
 * fails the test. */
static inline kscope__ptree *read_path_ok(const char *path)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    if (kscope__read_profile(path, &t, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_non_null(t);
    return t;
}

/* The fixture test/data/<rel>, read. */
static inline kscope__ptree *read_ok(const char *rel)
{
    return read_path_ok(data_path(rel));
}

static inline kscope__ptree *json_ok(const char *text)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    int rc = kscope__read_hatchet_json(text, strlen(text), &t, err, sizeof err);
    if (rc < 0)
        fail_msg("unexpected error: %s", err);
    return t;
}

/* Session s's tree as its .hatchet text reads back (the caller frees it). */
static inline kscope__ptree *session_read_ok(int s)
{
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(kscope_data(s, "hatchet", &buf, &len), 0);
    kscope__ptree *t = json_ok(buf);
    kscope_free(buf);
    assert_non_null(t);
    return t;
}

static inline kscope__pnode *child(kscope__pnode *n, const char *name)
{
    for (uint32_t i = 0; i < n->nchildren; i++)
        if (strcmp(n->children[i]->name, name) == 0)
            return n->children[i];
    fail_msg("no child '%s' under '%s'", name, n->name);
    return NULL;
}

#define PATH(t, ...) path_of((t), (const char *const[]){__VA_ARGS__, NULL})
static inline kscope__pnode *path_of(kscope__ptree *t, const char *const *names)
{
    kscope__pnode *n = t->root;
    for (; *names; names++)
        n = child(n, *names);
    return n;
}

static inline double metric(const kscope__pnode *n, const char *key)
{
    for (uint32_t i = 0; i < n->nmetrics; i++)
        if (strcmp(n->metrics[i].key, key) == 0)
            return kscope__pmetric_number(&n->metrics[i]);
    return NAN;
}

static inline const char *metric_str(const kscope__pnode *n, const char *key)
{
    for (uint32_t i = 0; i < n->nmetrics; i++)
        if (strcmp(n->metrics[i].key, key) == 0 && n->metrics[i].type == KSCOPE__V_STRING)
            return n->metrics[i].v.s;
    return NULL;
}

static inline void assert_close(double got, double want)
{
    double tol = fabs(want) * 1e-9 + 1e-12;
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.12g, want %.12g", got, want);
}

#endif
