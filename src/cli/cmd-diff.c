/*
 * cmd-diff.c - `kscope diff A B`: compare two profiles node by node
 * (matched by calling-context path): each node's value in A and B, the
 * change B - A and the ratio B / A, largest changes first, with nodes
 * present on one side only marked.
 */
#include "cli/cmd.h"
#include "cli/view-print.h"
#include "kscope.h"
#include "read/read.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_diff_summary[] = "compare two profiles node by node, largest changes first";
const char cmd_diff_help[] =
    "usage: kscope diff [options] A B\n"
    "\n"
    "Match the calling contexts of profiles A and B by path (names from ROOT\n"
    "down) and print, per node: the metric in A and in B, the change B - A,\n"
    "the ratio B / A and the path, largest absolute changes first. A node\n"
    "found in one profile only is marked \"only in A\" or \"only in B\".\n"
    "Nodes and values are those `kscope view` shows: inclusive for metrics\n"
    "that roll up (time, count, ...), the node's own for the others; Triton's\n"
    "launch-metadata scopes are left out.\n"
    "\n"
    "options:\n"
    "  -m, --metric SPEC  what to compare: any metric `kscope view -m` takes\n"
    "                     (default: as kscope view: time/ms; wall_time/ms for a\n"
    "                     run without GPU work)\n"
    "  -n, --limit N      print the N largest changes (default 30; 0: all)\n"
    "      --all          also print nodes whose value did not change\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 on success, 2 on bad options or an unreadable profile.\n";

typedef struct drow {
    int32_t u;
    double a, b, change;
} drow;

static int by_change(const void *x, const void *y)
{
    const drow *p = x, *q = y;
    double a = fabs(p->change), b = fabs(q->change);
    if (a != b)
        return a < b ? 1 : -1;
    return p->u - q->u;
}

static int load(const char *path, kscope__ptree **t, kscope__pflat *f)
{
    char err[KSCOPE__READ_ERRLEN];
    if (kscope__read_profile(path, t, err, sizeof err) < 0) {
        fprintf(stderr, "kscope diff: %s\n", err);
        return -1;
    }
    if (kscope__pflat_build_shown(*t, f) < 0) { /* the frames `kscope view` shows */
        fprintf(stderr, "kscope diff: %s: out of memory\n", KSCOPE__PATH(path));
        return -1;
    }
    return 0;
}

/* "a > b > c" for union node u (ROOT alone is "ROOT"). */
static void print_path(const kscope__punion *u, int32_t i)
{
    int32_t chain[KSCOPE__READ_MAX_DEPTH + 1];
    size_t n = 0;
    for (int32_t k = i; k > 0 && n <= KSCOPE__READ_MAX_DEPTH; k = u->parent[k])
        chain[n++] = k;
    if (n == 0) {
        kscope__print_escaped(stdout, u->name[0]);
        return;
    }
    while (n--) {
        kscope__print_escaped(stdout, u->name[chain[n]]);
        if (n)
            fputs(" > ", stdout);
    }
}

static void fmt(double v, int integral, char *buf, size_t size)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (integral)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.3f", v);
}

/* The one line for a -m spec a profile cannot give, with a spelling it
 * can when the spec names a metric it lacks. */
static void column_error(const char *path, const kscope__ptree *t, const kscope__pflat *f,
                         const char *spec, const kscope__column *col, const char *err)
{
    char hint[112], esc[240];
    if (col->missing && kscope__metric_hint(t, f, spec, hint, sizeof hint))
        fprintf(stderr, "kscope diff: %s: %s. Did you mean '%s'?\n", KSCOPE__PATH(path), err,
                kscope__escape(hint, esc, sizeof esc));
    else
        fprintf(stderr, "kscope diff: %s: %s\n", KSCOPE__PATH(path), err);
}

int cmd_diff(int argc, char **argv)
{
    static const struct option longs[] = {
        {"metric", required_argument, NULL, 'm'},
        {"limit", required_argument, NULL, 'n'},
        {"all", no_argument, NULL, 'a'},
        {NULL, 0, NULL, 0},
    };
    const char *spec = NULL;
    char dflt[96] = "time/ms";
    long limit = 30;
    int all = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":m:n:", longs, NULL)) != -1) {
        switch (c) {
        case 'm':
            spec = optarg;
            break;
        case 'n':
            if (kscope_cli_whole(optarg, 0, LONG_MAX, &limit) < 0)
                return kscope_cli_error("diff", KSCOPE_EXIT_USAGE,
                                        "-n: '%s' is not a count (a whole number >= 0)", optarg);
            break;
        case 'a':
            all = 1;
            break;
        default:
            return kscope_cli_bad_option("diff", c, argv);
        }
    }
    if (argc - optind != 2)
        return kscope_cli_usage("diff", "expected two profiles A and B");
    const char *pa = argv[optind], *pb = argv[optind + 1];
    kscope__ptree *ta = NULL, *tb = NULL;
    kscope__pflat fa = {0}, fb = {0};
    kscope__column ca = {0}, cb = {0};
    kscope__punion u = {0};
    drow *rows = NULL;
    int rc = KSCOPE_EXIT_USAGE;
    if (load(pa, &ta, &fa) < 0 || load(pb, &tb, &fb) < 0)
        goto out;
    /* No -m: the metric view would show for A (else B). */
    if (!spec && kscope__default_metric(ta, dflt, sizeof dflt) == 0)
        kscope__default_metric(tb, dflt, sizeof dflt);
    if (!spec)
        spec = dflt;
    char err[KSCOPE__READ_ERRLEN];
    if (kscope__column_compute(ta, &fa, spec, &ca, err, sizeof err) < 0) {
        column_error(pa, ta, &fa, spec, &ca, err);
        goto out;
    }
    if (kscope__column_compute(tb, &fb, spec, &cb, err, sizeof err) < 0) {
        column_error(pb, tb, &fb, spec, &cb, err);
        goto out;
    }
    rc = KSCOPE_EXIT_FAIL;
    if (kscope__punion_build(&fa, &fb, &u) < 0 || !(rows = malloc(u.n * sizeof *rows))) {
        fprintf(stderr, "kscope diff: out of memory\n");
        goto out;
    }
    size_t nr = 0;
    for (size_t i = 0; i < u.n; i++) {
        double a = u.a[i] >= 0 ? ca.vals[u.a[i]] : NAN;
        double b = u.b[i] >= 0 ? cb.vals[u.b[i]] : NAN;
        double change = (isnan(b) ? 0 : b) - (isnan(a) ? 0 : a);
        if (!all && change == 0 && u.a[i] >= 0 && u.b[i] >= 0)
            continue;
        rows[nr++] = (drow){(int32_t)i, a, b, change};
    }
    qsort(rows, nr, sizeof *rows, by_change);
    size_t shown = limit > 0 && (size_t)limit < nr ? (size_t)limit : nr;
    printf("metric: %s   A: %s   B: %s\n", ca.title, KSCOPE__PATH(pa), KSCOPE__PATH(pb));
    printf("%14s %14s %14s %9s  %s\n", "A", "B", "change", "ratio", "path");
    for (size_t r = 0; r < shown; r++) {
        const drow *d = &rows[r];
        char a[40], b[40], ch[40], ratio[40];
        fmt(d->a, ca.integral, a, sizeof a);
        fmt(d->b, ca.integral, b, sizeof b);
        fmt(d->change, ca.integral, ch, sizeof ch);
        if (u.a[d->u] < 0)
            snprintf(ratio, sizeof ratio, "only in B");
        else if (u.b[d->u] < 0)
            snprintf(ratio, sizeof ratio, "only in A");
        else if (!isnan(d->a) && !isnan(d->b) && d->a != 0)
            snprintf(ratio, sizeof ratio, "%.3fx", d->b / d->a);
        else
            snprintf(ratio, sizeof ratio, "-");
        if (ch[0] != '-' && d->change > 0)
            memmove(ch + 1, ch, strlen(ch) + 1), ch[0] = '+';
        printf("%14s %14s %14s %9s  ", a, b, ch, ratio);
        print_path(&u, d->u);
        fputc('\n', stdout);
    }
    if (shown < nr)
        printf("(%zu more; -n 0 shows all)\n", nr - shown);
    if (nr == 0)
        printf("(no differences)\n");
    rc = KSCOPE_EXIT_OK;
out:
    free(rows);
    kscope__punion_free(&u);
    kscope__column_free(&ca);
    kscope__column_free(&cb);
    kscope__pflat_free(&fa);
    kscope__pflat_free(&fb);
    kscope__ptree_free(ta);
    kscope__ptree_free(tb);
    return rc;
}
