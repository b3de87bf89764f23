/*
 * merge-trace.c - per-rank traces into one Chrome trace.
 *
 * Every event is copied as its file wrote it, with its process moved to a
 * new pid per (rank, source pid); process names get a "rank R" prefix and
 * flow ids are made unique per rank, so one trace shows every rank as its
 * own processes. The inputs are read by their format's reader, an event
 * at a time (read/read.h: the events keep their fields as written); the
 * output is written with our JSON writer (format/jsonw.h) and handed to
 * the file as it grows, so neither an input nor the output is held whole.
 */
#include "format/chrome-trace.h"
#include "util/util.h"
#include "read/read.h"
#include "kscope.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_AT (1 << 20) /* bytes of output held before they go to the file */

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

static pidmap *pid_of(tmerge *tm, kscope__tev_value pid)
{
    char key[64];
    if (pid.type == KSCOPE__TEV_ABSENT)
        key[0] = '\0';
    else if (pid.type == KSCOPE__TEV_STRING)
        snprintf(key, sizeof key, "s:%.60s", pid.text);
    else if (pid.type == KSCOPE__TEV_NUMBER)
        snprintf(key, sizeof key, "n:%.60s", pid.text);
    else
        snprintf(key, sizeof key, "?");
    for (size_t i = 0; i < tm->npids; i++)
        if (strcmp(tm->pids[i].key, key) == 0)
            return &tm->pids[i];
    if (tm->npids == tm->cap && KSCOPE__ROOM(tm->pids, tm->cap, tm->npids + 1, 8) != 0)
        return NULL;
    pidmap *p = &tm->pids[tm->npids++];
    snprintf(p->key, sizeof p->key, "%s", key);
    p->pid = tm->next_pid++;
    p->named = 0;
    return p;
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
    kscope__chrome_meta_str(&tm->w, "process_name", pid, NULL, "name", name);
    kscope__chrome_meta_int(&tm->w, "process_sort_index", pid, NULL, "sort_index", pid);
}

/* Whether a number's text is an integer yajl reads as one (no fraction,
 * no exponent, within long long): its value in *out. */
static int integer(const kscope__tev_value *v, long long *out)
{
    if (v->type != KSCOPE__TEV_NUMBER || strpbrk(v->text, ".eE"))
        return 0;
    errno = 0;
    *out = strtoll(v->text, NULL, 10);
    return errno != ERANGE;
}

/* A flow id (an integer or a string) made unique to the rank; 0 when v is
 * no such id. */
static int gen_id(tmerge *tm, const kscope__tev_value *v)
{
    kscope__jsonw *w = &tm->w;
    long long id, id_num;
    char text[256];
    if (integer(v, &id) &&
        !__builtin_add_overflow((long long)tm->rank * 1000000000000LL, id, &id_num))
        kscope__jw_int(w, id_num);
    else if (integer(v, &id)) { /* past the integer range: made distinct as text */
        snprintf(text, sizeof text, "r%zu:%lld", tm->rank, id);
        kscope__jw_str(w, text);
    } else if (v->type == KSCOPE__TEV_STRING) {
        snprintf(text, sizeof text, "r%zu:%s", tm->rank, v->text);
        kscope__jw_str(w, text);
    } else {
        return 0;
    }
    return 1;
}

/* One event with its pid remapped (and its process name or flow id made
 * rank-specific). */
static int gen_event(tmerge *tm, const kscope__tev *e)
{
    const kscope__tev_read *r = e->read;
    kscope__jsonw *w = &tm->w;
    pidmap *pm = pid_of(tm, r->pid);
    if (!pm)
        return KSCOPE_ENOMEM;
    if (e->kind == KSCOPE__TEV_PROCESS) {
        gen_process_name(tm, pm->pid, e->name[0] ? e->name : NULL);
        pm->named = 1;
        return 0;
    }
    if (e->kind == KSCOPE__TEV_PROCESS_SORT)
        return 0; /* ours replaces it */
    kscope__jw_open(w, '{');
    int has_pid = 0;
    for (size_t i = 0; i < r->nfields; i++) {
        const kscope__tev_field *f = &r->fields[i];
        kscope__jw_key(w, f->key);
        if (strcmp(f->key, "pid") == 0) {
            kscope__jw_int(w, pm->pid);
            has_pid = 1;
        } else if (strcmp(f->key, "id") == 0 && gen_id(tm, &f->v)) {
            continue;
        } else if (f->v.type == KSCOPE__TEV_STRING) {
            kscope__jw_str(w, f->v.text);
        } else {
            kscope__jw_literal(w, f->v.text ? f->v.text : "null");
        }
    }
    if (!has_pid) {
        kscope__jw_member_int(w, "pid", pm->pid);
    }
    kscope__jw_close(w, '}');
    return 0;
}

struct kscope__trace_merger {
    tmerge tm;
    FILE *out;
    size_t nranks;
    int failed;
    const char *why; /* what stopped a rank's reading */
};

/* Hand what the writer holds to the output file. */
static int flush_gen(kscope__trace_merger *m)
{
    kscope__jsonw *w = &m->tm.w;
    if (w->out.failed) {
        m->why = "out of memory";
        return KSCOPE_ENOMEM;
    }
    if (w->out.len && fwrite(w->out.buf, 1, w->out.len, m->out) != w->out.len) {
        m->why = "write failed";
        return KSCOPE_EIO;
    }
    kscope__jw_clear(w);
    return 0;
}

static int merge_event(const kscope__tev *e, void *arg)
{
    kscope__trace_merger *m = arg;
    if (!e->read || e->kind == KSCOPE__TEV_RUN)
        return 0; /* each rank's facts stay with its own file */
    int rc = gen_event(&m->tm, e);
    if (rc < 0) {
        m->why = "out of memory";
        return rc;
    }
    return m->tm.w.out.len > FLUSH_AT ? flush_gen(m) : 0;
}

static const char *merge_why(void *arg)
{
    return ((kscope__trace_merger *)arg)->why;
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
    kscope__chrome_trace_head(w);
    return m;
}

/* One rank, from the trace at path or a Chrome trace in buf, into the
 * output. */
static int add_rank(kscope__trace_merger *m, const char *path, const char *buf, size_t len,
                    const char *name, char *err, size_t errlen)
{
    tmerge *tm = &m->tm;
    kscope__tev_sink sink = {merge_event, m, merge_why, KSCOPE__TREAD_FIELDS};
    tm->rank = m->nranks;
    tm->file = name;
    tm->npids = 0;
    int rc = path ? kscope__read_events(path, &sink, err, errlen)
                  : kscope__read_events_buffer(&kscope__chrome_trace_reader, buf, len, &sink, err,
                                               errlen);
    if (rc != 0 && !path) { /* named as a file's errors are */
        char what[KSCOPE__READ_ERRLEN];
        snprintf(what, sizeof what, "%s", err);
        snprintf(err, errlen, "%s: %s", KSCOPE__PATH(name), what);
    }
    for (size_t p = 0; rc == 0 && p < tm->npids; p++)
        if (!tm->pids[p].named)
            gen_process_name(tm, tm->pids[p].pid, NULL);
    if (rc == 0 && (rc = flush_gen(m)) < 0)
        kscope__read_fail(err, errlen, rc, "%s", m->why);
    if (rc == 0)
        m->nranks++;
    else
        m->failed = 1;
    return rc;
}

int kscope__trace_merger_add(kscope__trace_merger *m, const char *buf, size_t len, const char *name,
                             char *err, size_t errlen)
{
    return add_rank(m, NULL, buf, len, name, err, errlen);
}

int kscope__trace_merger_add_file(kscope__trace_merger *m, const char *path, char *err,
                                  size_t errlen)
{
    return add_rank(m, path, NULL, 0, path, err, errlen);
}

int kscope__trace_merger_finish(kscope__trace_merger *m, char *err, size_t errlen)
{
    if (m->failed)
        return kscope__read_fail(err, errlen, KSCOPE_ESTATE, "an earlier trace failed");
    kscope__jw_close(&m->tm.w, ']');
    kscope__jw_close(&m->tm.w, '}');
    int rc = flush_gen(m);
    return rc < 0 ? kscope__read_fail(err, errlen, rc, "%s", m->why) : 0;
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
