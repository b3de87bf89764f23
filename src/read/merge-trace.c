/*
 * merge-trace.c - per-rank Chrome traces into one.
 *
 * Every event is copied with its process moved to a new pid per (rank,
 * source pid); process names get a "rank R" prefix and flow ids are made
 * unique per rank, so one trace shows every rank as its own processes.
 * Inputs are parsed with yajl's tree; the output is written with our JSON
 * writer (format/jsonw.h) and handed to the file after each rank.
 */
#include "format/jsonw.h"
#include "read/read.h"
#include "kscope.h"

#include <yajl/yajl_tree.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pidmap {
    char key[64]; /* source pid text */
    long long pid;
    int named;
} pidmap;

typedef struct tmerge {
    kscope__jsonw w;
    size_t rank;
    const char *file;
    pidmap *pids;
    size_t npids, cap;
    long long next_pid;
} tmerge;

/* Copy a value as is (nesting is bounded by the caller's check). */
static void gen_value(kscope__jsonw *w, yajl_val v)
{
    if (YAJL_IS_STRING(v)) {
        kscope__jw_str(w, v->u.string);
    } else if (YAJL_IS_NUMBER(v)) {
        kscope__jw_literal(w, v->u.number.r); /* the number's own text */
    } else if (YAJL_IS_OBJECT(v)) {
        kscope__jw_open(w, '{');
        for (size_t i = 0; i < v->u.object.len; i++) {
            kscope__jw_key(w, v->u.object.keys[i]);
            gen_value(w, v->u.object.values[i]);
        }
        kscope__jw_close(w, '}');
    } else if (YAJL_IS_ARRAY(v)) {
        kscope__jw_open(w, '[');
        for (size_t i = 0; i < v->u.array.len; i++)
            gen_value(w, v->u.array.values[i]);
        kscope__jw_close(w, ']');
    } else {
        kscope__jw_literal(w, YAJL_IS_TRUE(v) ? "true" : YAJL_IS_FALSE(v) ? "false" : "null");
    }
}

static pidmap *pid_of(tmerge *tm, yajl_val pid)
{
    char key[64];
    if (!pid)
        key[0] = '\0';
    else if (YAJL_IS_STRING(pid))
        snprintf(key, sizeof key, "s:%.60s", pid->u.string);
    else if (YAJL_IS_NUMBER(pid))
        snprintf(key, sizeof key, "n:%.60s", pid->u.number.r);
    else
        snprintf(key, sizeof key, "?");
    for (size_t i = 0; i < tm->npids; i++)
        if (strcmp(tm->pids[i].key, key) == 0)
            return &tm->pids[i];
    if (tm->npids == tm->cap) {
        size_t cap = tm->cap ? tm->cap * 2 : 8;
        pidmap *p = realloc(tm->pids, cap * sizeof *p);
        if (!p)
            return NULL;
        tm->pids = p;
        tm->cap = cap;
    }
    pidmap *p = &tm->pids[tm->npids++];
    snprintf(p->key, sizeof p->key, "%s", key);
    p->pid = tm->next_pid++;
    p->named = 0;
    return p;
}

/* A metadata event ("ph": "M") of process pid with one argument. */
static void gen_metadata(kscope__jsonw *w, const char *name, long long pid, const char *arg,
                         const char *str, long long num)
{
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "name");
    kscope__jw_str(w, name);
    kscope__jw_key(w, "ph");
    kscope__jw_str(w, "M");
    kscope__jw_key(w, "pid");
    kscope__jw_int(w, pid);
    kscope__jw_key(w, "args");
    kscope__jw_open(w, '{');
    kscope__jw_key(w, arg);
    if (str)
        kscope__jw_str(w, str);
    else
        kscope__jw_int(w, num);
    kscope__jw_close(w, '}');
    kscope__jw_close(w, '}');
}

/* The process's name (prefixed with the rank) and its place: processes
 * sort by their new pid, so ranks stay in order. */
static void gen_process_name(tmerge *tm, long long pid, const char *orig)
{
    char name[512];
    if (orig)
        snprintf(name, sizeof name, "rank %zu: %s", tm->rank, orig);
    else
        snprintf(name, sizeof name, "rank %zu (%s)", tm->rank, tm->file);
    gen_metadata(&tm->w, "process_name", pid, "name", name, 0);
    gen_metadata(&tm->w, "process_sort_index", pid, "sort_index", NULL, pid);
}

/* One event with its pid remapped (and its process name or flow id made
 * rank-specific). */
static int gen_event(tmerge *tm, yajl_val ev)
{
    kscope__jsonw *w = &tm->w;
    const char *pp[] = {"pid", NULL}, *pph[] = {"ph", NULL}, *pn[] = {"name", NULL};
    pidmap *pm = pid_of(tm, yajl_tree_get(ev, pp, yajl_t_any));
    if (!pm)
        return KSCOPE_ENOMEM;
    yajl_val ph = yajl_tree_get(ev, pph, yajl_t_string);
    yajl_val name = yajl_tree_get(ev, pn, yajl_t_string);
    int is_pname =
        ph && strcmp(ph->u.string, "M") == 0 && name && strcmp(name->u.string, "process_name") == 0;
    if (is_pname) {
        const char *pa[] = {"args", "name", NULL};
        yajl_val orig = yajl_tree_get(ev, pa, yajl_t_string);
        gen_process_name(tm, pm->pid, orig ? orig->u.string : NULL);
        pm->named = 1;
        return 0;
    }
    if (ph && strcmp(ph->u.string, "M") == 0 && name &&
        strcmp(name->u.string, "process_sort_index") == 0)
        return 0; /* ours replaces it */
    kscope__jw_open(w, '{');
    int has_pid = 0;
    long long id_num;
    for (size_t i = 0; i < ev->u.object.len; i++) {
        const char *k = ev->u.object.keys[i];
        yajl_val v = ev->u.object.values[i];
        kscope__jw_key(w, k);
        if (strcmp(k, "pid") == 0) {
            kscope__jw_int(w, pm->pid);
            has_pid = 1;
        } else if (strcmp(k, "id") == 0 && YAJL_IS_INTEGER(v) &&
                   !__builtin_add_overflow((long long)tm->rank * 1000000000000LL, v->u.number.i,
                                           &id_num)) {
            kscope__jw_int(w, id_num);
        } else if (strcmp(k, "id") == 0 && YAJL_IS_INTEGER(v)) {
            char id[64]; /* past the integer range: made distinct as text */
            snprintf(id, sizeof id, "r%zu:%lld", tm->rank, v->u.number.i);
            kscope__jw_str(w, id);
        } else if (strcmp(k, "id") == 0 && YAJL_IS_STRING(v)) {
            char id[256];
            snprintf(id, sizeof id, "r%zu:%s", tm->rank, v->u.string);
            kscope__jw_str(w, id);
        } else {
            gen_value(w, v);
        }
    }
    if (!has_pid) {
        kscope__jw_key(w, "pid");
        kscope__jw_int(w, pm->pid);
    }
    kscope__jw_close(w, '}');
    return 0;
}

static size_t nesting(const char *s, size_t len)
{
    size_t depth = 0, max = 0;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > max)
                max = depth;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
    }
    return max;
}

struct kscope__trace_merger {
    tmerge tm;
    FILE *out;
    size_t nranks;
    int failed;
};

/* Hand what the writer holds to the output file. */
static int flush_gen(kscope__trace_merger *m, char *err, size_t errlen)
{
    kscope__jsonw *w = &m->tm.w;
    if (w->failed)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    if (w->len && fwrite(w->buf, 1, w->len, m->out) != w->len)
        return kscope__read_fail(err, errlen, KSCOPE_EIO, "write failed");
    kscope__jw_clear(w);
    return 0;
}

kscope__trace_merger *kscope__trace_merger_new(FILE *out)
{
    kscope__trace_merger *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    kscope__jsonw *w = &m->tm.w;
    kscope__jw_init(w);
    m->tm.next_pid = 1;
    m->out = out;
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "displayTimeUnit");
    kscope__jw_str(w, "us");
    kscope__jw_key(w, "traceEvents");
    kscope__jw_open(w, '[');
    return m;
}

int kscope__trace_merger_add(kscope__trace_merger *m, const char *buf, size_t len, const char *name,
                             char *err, size_t errlen)
{
    if (nesting(buf, len) > 64)
        return kscope__read_fail(err, errlen, KSCOPE_EPARSE,
                                 "%s: JSON nested deeper than 64 levels", KSCOPE__PATH(name));
    char *text = malloc(len + 1);
    if (!text)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    memcpy(text, buf, len);
    text[len] = '\0';
    char yerr[256] = "";
    yajl_val doc = yajl_tree_parse(text, yerr, sizeof yerr);
    free(text);
    if (!doc) {
        yerr[strcspn(yerr, "\r\n")] = '\0'; /* the first line says it */
        return kscope__read_fail(err, errlen, KSCOPE_EPARSE, "%s: not valid JSON: %.200s",
                                 KSCOPE__PATH(name),
                                 strstr(yerr, "premature EOF") ? "truncated" : yerr);
    }
    const char *pe[] = {"traceEvents", NULL};
    yajl_val events = YAJL_IS_ARRAY(doc) ? doc : yajl_tree_get(doc, pe, yajl_t_array);
    int rc = 0;
    tmerge *tm = &m->tm;
    if (!events) {
        rc = kscope__read_fail(err, errlen, KSCOPE_EPARSE,
                               "%s: not a Chrome trace: no \"traceEvents\" array",
                               KSCOPE__PATH(name));
    } else {
        tm->rank = m->nranks;
        tm->file = name;
        tm->npids = 0;
        for (size_t i = 0; i < events->u.array.len && rc == 0; i++) {
            yajl_val ev = events->u.array.values[i];
            if (!YAJL_IS_OBJECT(ev))
                rc = kscope__read_fail(err, errlen, KSCOPE_EPARSE, "%s: event %zu is not an object",
                                       name, i);
            else if ((rc = gen_event(tm, ev)) < 0)
                kscope__read_fail(err, errlen, rc, "out of memory");
        }
        for (size_t p = 0; rc == 0 && p < tm->npids; p++)
            if (!tm->pids[p].named)
                gen_process_name(tm, tm->pids[p].pid, NULL);
        if (rc == 0)
            rc = flush_gen(m, err, errlen);
    }
    yajl_tree_free(doc);
    if (rc == 0)
        m->nranks++;
    else
        m->failed = 1;
    return rc;
}

int kscope__trace_merger_finish(kscope__trace_merger *m, char *err, size_t errlen)
{
    if (m->failed)
        return kscope__read_fail(err, errlen, KSCOPE_ESTATE, "an earlier trace failed");
    kscope__jw_close(&m->tm.w, ']');
    kscope__jw_close(&m->tm.w, '}');
    return flush_gen(m, err, errlen);
}

void kscope__trace_merger_free(kscope__trace_merger *m)
{
    if (!m)
        return;
    kscope__jw_free(&m->tm.w);
    free(m->tm.pids);
    free(m);
}

int kscope__merge_traces(const char *const *bufs, const size_t *lens, const char *const *names,
                         size_t n, char **out, size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    FILE *f = open_memstream(out, outlen);
    kscope__trace_merger *m = f ? kscope__trace_merger_new(f) : NULL;
    int rc = m ? 0 : kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    for (size_t r = 0; r < n && rc == 0; r++)
        rc = kscope__trace_merger_add(m, bufs[r], lens[r], names[r], err, errlen);
    if (rc == 0)
        rc = kscope__trace_merger_finish(m, err, errlen);
    kscope__trace_merger_free(m);
    if (f && fclose(f) != 0 && rc == 0)
        rc = kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    if (rc < 0) {
        free(*out);
        *out = NULL;
        *outlen = 0;
    }
    return rc;
}
