/*
 * cmd-merge.c - `kscope merge FILES... -o OUT`: per-rank profiles into one
 * tree (sums, plus min/max/mean across ranks and the imbalance per node),
 * or per-rank Chrome traces into one trace with a process per rank. Files
 * are parsed on worker threads while the main thread merges them in rank
 * order, so parsing and merging overlap.
 */
#include "cli/cmd.h"
#include "format/file-out.h"
#include "kscope.h"
#include "read/read.h"

#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_merge_summary[] = "merge per-rank profiles or traces into one";
const char cmd_merge_help[] =
    "usage: kscope merge [options] -o OUT FILE...\n"
    "\n"
    "Merge the profiles of several ranks (or runs). OUT's name picks the\n"
    "result:\n"
    "  {tree_exts}: one calling-context tree:\n"
    "      calling contexts matched by path, every metric summed (min_*/max_*\n"
    "      metrics keep the extremes), and for time, wall_time and cpu_time\n"
    "      per node:\n"
    "        <metric>_rank_min, _rank_max, _rank_mean  across ranks (a rank\n"
    "                      without the node counts 0; inclusive values where\n"
    "                      the metric rolls up)\n"
    "        <metric>_imbalance   rank max / rank mean\n"
    "      Inputs may be any profile format (traces become trees first).\n"
    "  {trace_exts}: one trace with every rank's\n"
    "      processes, renamed \"rank R: ...\" (R is the position of the file on\n"
    "      the command line, from 0); inputs must be traces ({trace_formats}).\n"
    "      Each rank keeps its own time origin.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT  the merged file (required)\n"
    "  -j, --jobs N      files parsed at once (default: CPUs, at most 8)\n"
    "  -h, --help        show this help\n"
    "\n"
    "OUT is written whole: until the merged file is complete the old OUT stays\n"
    "as it was (a symbolic link is written through, a device or FIFO in place).\n"
    "On success `kscope merge: wrote OUT (SIZE)` goes to stderr.\n"
    "\n"
    "Exit status: 0 on success, 2 on bad options or an unreadable FILE,\n"
    "1 when OUT cannot be written (one line naming it and why) or a sum passes the\n"
    "largest number.\n";

typedef struct job {
    const char *path;
    kscope__ptree *tree;
    kscope__merge_prep *prep; /* the rank-local half of merging it */
    int rc;
    char err[KSCOPE__READ_ERRLEN];
} job;

static void *parse_job(void *arg)
{
    job *j = arg;
    j->rc = kscope__read_profile(j->path, &j->tree, j->err, sizeof j->err);
    if (j->rc == 0 && !(j->prep = kscope__merge_prepare(j->tree))) {
        snprintf(j->err, sizeof j->err, "%s: out of memory", j->path);
        j->rc = KSCOPE_ENOMEM;
    }
    return NULL;
}

/* Worker threads parse files in order, at most `window` ahead of the
 * merge; the main thread merges each tree in rank order and frees it. */
typedef struct pipeline {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *slots;
    unsigned char *done;
    char **files;
    int n, next, merged, window, stop;
} pipeline;

static void *worker(void *arg)
{
    pipeline *pl = arg;
    pthread_mutex_lock(&pl->mu);
    for (;;) {
        while (!pl->stop && pl->next < pl->n && pl->next >= pl->merged + pl->window)
            pthread_cond_wait(&pl->cv, &pl->mu);
        if (pl->stop || pl->next >= pl->n)
            break;
        int i = pl->next++;
        pthread_mutex_unlock(&pl->mu);
        parse_job(&pl->slots[i]);
        pthread_mutex_lock(&pl->mu);
        pl->done[i] = 1;
        pthread_cond_broadcast(&pl->cv);
    }
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

static int merge_tree_files(char **files, int n, long jobs, const char *out,
                            const kscope__format *fmt)
{
    char err[KSCOPE__READ_ERRLEN];
    pipeline pl = {.files = files, .n = n, .window = (int)jobs + 2};
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.cv, NULL);
    kscope__merger *mg = kscope__merger_new();
    pl.slots = calloc((size_t)n, sizeof *pl.slots);
    pl.done = calloc((size_t)n, 1);
    pthread_t *th = calloc((size_t)jobs, sizeof *th);
    int nth = 0, rc = KSCOPE_EXIT_OK;
    if (!mg || !pl.slots || !pl.done || !th) {
        fprintf(stderr, "kscope merge: out of memory\n");
        rc = KSCOPE_EXIT_FAIL;
        goto out;
    }
    for (int i = 0; i < n; i++)
        pl.slots[i].path = files[i];
    for (long k = 0; k < jobs && k < n; k++)
        if (pthread_create(&th[nth], NULL, worker, &pl) == 0)
            nth++;
    if (nth == 0) {
        fprintf(stderr, "kscope merge: cannot start a thread\n");
        rc = KSCOPE_EXIT_FAIL;
        goto out;
    }
    for (int i = 0; i < n && rc == KSCOPE_EXIT_OK; i++) {
        pthread_mutex_lock(&pl.mu);
        while (!pl.done[i])
            pthread_cond_wait(&pl.cv, &pl.mu);
        pthread_mutex_unlock(&pl.mu);
        job *jb = &pl.slots[i];
        if (jb->rc < 0) {
            fprintf(stderr, "kscope merge: %s\n", jb->err);
            rc = KSCOPE_EXIT_USAGE;
        } else if (kscope__merger_add_prepared(mg, jb->prep, err, sizeof err) < 0) {
            fprintf(stderr, "kscope merge: %s: %s\n", KSCOPE__PATH(jb->path), err);
            rc = KSCOPE_EXIT_FAIL;
        }
        kscope__merge_prep_free(jb->prep);
        kscope__ptree_free(jb->tree);
        jb->prep = NULL;
        jb->tree = NULL;
        pthread_mutex_lock(&pl.mu);
        pl.merged++;
        pthread_cond_broadcast(&pl.cv);
        pthread_mutex_unlock(&pl.mu);
    }
    pthread_mutex_lock(&pl.mu);
    pl.stop = 1;
    pthread_cond_broadcast(&pl.cv);
    pthread_mutex_unlock(&pl.mu);
    for (int k = 0; k < nth; k++)
        pthread_join(th[k], NULL);
    kscope__ptree *t = NULL;
    if (rc == KSCOPE_EXIT_OK && kscope__merger_finish(mg, &t, err, sizeof err) < 0) {
        fprintf(stderr, "kscope merge: %s\n", err);
        rc = KSCOPE_EXIT_FAIL;
    }
    if (rc == KSCOPE_EXIT_OK && kscope__write_profile(out, t, fmt, err, sizeof err) < 0) {
        fprintf(stderr, "kscope merge: %s\n", err);
        rc = KSCOPE_EXIT_FAIL;
    } else if (rc == KSCOPE_EXIT_OK) {
        kscope_cli_wrote("merge", out);
    }
    kscope__ptree_free(t);
out:
    for (int i = 0; pl.slots && i < n; i++) {
        kscope__merge_prep_free(pl.slots[i].prep);
        kscope__ptree_free(pl.slots[i].tree);
    }
    kscope__merger_free(mg);
    free(pl.slots);
    free(pl.done);
    free(th);
    pthread_mutex_destroy(&pl.mu);
    pthread_cond_destroy(&pl.cv);
    return rc;
}

/* Put the merged trace in place (format/file-out.h: an old OUT stays
 * whole until the new one is complete; no temporary file is left), or
 * drop it after a failure. */
static int trace_commit(kscope__out *o, const char *out, int rc)
{
    char err[KSCOPE__READ_ERRLEN];
    if (rc != KSCOPE_EXIT_OK) {
        kscope__out_abort(o);
        return rc;
    }
    if (kscope__out_commit(o, err, sizeof err) < 0)
        return kscope_cli_write_failed("merge", err, sizeof err);
    kscope_cli_wrote("merge", out);
    return KSCOPE_EXIT_OK;
}

/* An error line cut to its buffer (vsnprintf: a cut is expected here, not
 * a mistake for the compiler to warn of). */
__attribute__((format(printf, 3, 4))) static void cut_line(char *err, size_t errlen,
                                                           const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* A trace output merges traces only: a tree among the inputs has no events
 * to place on a timeline, so it is refused by name (KSCOPE_EINVAL). */
static int refuse_tree(const char *path, const char *out, char *err, size_t errlen)
{
    kscope__format_id id;
    int rc = kscope__sniff_file(path, &id, err, errlen); /* its first bytes only */
    const kscope__format *f = rc == 0 ? kscope__format_get(id) : NULL;
    if (rc != 0 || !f || f->kind != KSCOPE__KIND_TREE)
        return rc;
    char exts[128];
    /* Two escaped paths may not fit: the line is cut, never overrun. */
    cut_line(err, errlen,
             "%s is a calling-context tree (%s), and %s is a trace: merge trees into a %s OUT",
             KSCOPE__PATH(path), f->name, KSCOPE__PATH(out),
             kscope__format_list(KSCOPE__KIND_TREE, KSCOPE__ITEM_EXT, exts, sizeof exts));
    return KSCOPE_EINVAL;
}

/* A write to OUT failed (a full disk): one line naming OUT and why. */
static int write_failed(const kscope__out *o, const char *out)
{
    char name[KSCOPE__READ_ERRLEN];
    fprintf(stderr, "kscope merge: %s: cannot write: %s\n", kscope__escape(out, name, sizeof name),
            strerror(o->err));
    return KSCOPE_EXIT_FAIL;
}

static int merge_trace_files(char **files, int n, const char *out)
{
    char err[KSCOPE__READ_ERRLEN];
    kscope__out o;
    if (kscope__out_open(&o, out, err, sizeof err) < 0)
        return kscope_cli_write_failed("merge", err, sizeof err);
    FILE *f = kscope__out_stream(&o);
    kscope__trace_merger *m = f ? kscope__trace_merger_new(f) : NULL;
    int rc = m ? KSCOPE_EXIT_OK : KSCOPE_EXIT_FAIL;
    if (!m)
        fprintf(stderr, "kscope merge: out of memory\n");
    for (int i = 0; rc == KSCOPE_EXIT_OK && i < n; i++) {
        int r = refuse_tree(files[i], out, err, sizeof err);
        if (r == 0)
            r = kscope__trace_merger_add_file(m, files[i], err, sizeof err);
        if (r < 0 && o.err) /* OUT failed, not the input */
            rc = write_failed(&o, out);
        else if (r < 0) {
            fprintf(stderr, "kscope merge: %s\n", err);
            rc = r == KSCOPE_ENOMEM || r == KSCOPE_EIO ? KSCOPE_EXIT_FAIL : KSCOPE_EXIT_USAGE;
        }
    }
    if (rc == KSCOPE_EXIT_OK && kscope__trace_merger_finish(m, err, sizeof err) < 0) {
        if (o.err)
            rc = write_failed(&o, out);
        else {
            fprintf(stderr, "kscope merge: %s: %s\n", out, err);
            rc = KSCOPE_EXIT_FAIL;
        }
    }
    kscope__trace_merger_free(m);
    return trace_commit(&o, out, rc);
}

int cmd_merge(int argc, char **argv)
{
    static const struct option longs[] = {
        {"output", required_argument, NULL, 'o'},
        {"jobs", required_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long jobs = cpus < 1 ? 1 : cpus > 8 ? 8 : cpus;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:j:", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'j':
            if (kscope_cli_whole(optarg, 1, 8, &jobs) < 0)
                return kscope_cli_error("merge", KSCOPE_EXIT_USAGE,
                                        "-j: '%s' is not a number from 1 to 8", optarg);
            break;
        default:
            return kscope_cli_bad_option("merge", c, argv);
        }
    }
    if (!out)
        return kscope_cli_error("merge", KSCOPE_EXIT_USAGE, "no output given: -o OUT is required");
    if (optind >= argc)
        return kscope_cli_usage("merge", "no input files");
    const kscope__format *fmt = kscope__format_by_path(out);
    if (!fmt) {
        char exts[256];
        fprintf(stderr, "kscope merge: %s: cannot tell the output format from the name; use %s\n",
                KSCOPE__PATH(out), kscope__format_list(0, KSCOPE__ITEM_EXTS, exts, sizeof exts));
        return KSCOPE_EXIT_USAGE;
    }
    if (fmt->kind == KSCOPE__KIND_TRACE)
        return merge_trace_files(argv + optind, argc - optind, out);
    return merge_tree_files(argv + optind, argc - optind, jobs, out, fmt);
}
