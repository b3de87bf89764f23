/*
 * cmd-view.c - `kscope view`: print a profile's calling-context tree with
 * metrics, as proton-viewer does (derived metrics, depth, threshold,
 * include/exclude regular expressions, frame formats, a sorted flat list,
 * the difference to another profile), readable on a terminal.
 */
#include "cli/cmd.h"
#include "cli/view-print.h"
#include "kscope.h"
#include "read/read.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_view_summary[] = "print a profile's calling-context tree with metrics";
const char cmd_view_help[] =
    "usage: kscope view [options] FILE\n"
    "\n"
    "Print the calling-context tree of FILE with one column per metric. FILE\n"
    "is {formats} (told from its content). Stored\n"
    "values are exclusive per node; metrics listed with 0 in ROOT (time,\n"
    "count, flops, bytes, ...) or in its \"kscope\" member are summed into\n"
    "their parents, the others (cpu_time, calls, wall_time, ...) stay on\n"
    "their node. C++ names (_Z...) show demangled.\n"
    "As proton-viewer does, frames with neither metrics nor children, and\n"
    "Triton's __proton_launch_metadata scopes, are left out.\n"
    "\n"
    "options:\n"
    "  -m, --metrics LIST   comma-separated metrics, one column each (default:\n"
    "                       time/ms; wall_time/ms for a run without GPU work;\n"
    "                       else the file's first metric; and device_avg_time\n"
    "                       or _cycles with device-side scopes). Names ignore\n"
    "                       case and units, and may end with their kind as\n"
    "                       written in code: NAME (inc), NAME (exc), NAME (pty).\n"
    "                       A name the file lacks gets the nearest it has.\n"
    "                       Besides any raw metric (count, calls, bytes, ...):\n"
    "                         time/s|ms|us|ns          GPU time\n"
    "                         avg_time/s|ms|us|ns      time / count\n"
    "                         cpu_time/s|ms|us|ns      host CPU time\n"
    "                         avg_cpu_time/s|ms|us|ns  cpu_time / count (or calls)\n"
    "                         wall_time/s|ms|us|ns     host wall time of a scope\n"
    "                         avg_wall_time/s|ms|us|ns wall_time / calls\n"
    "                         est_time/s|ms|us|ns      GPU time estimated for the\n"
    "                                                  whole run (sampled runs)\n"
    "                         flop/s, gflop/s, tflop/s flops / time (all widths\n"
    "                                                  when there is no 'flops')\n"
    "                         flop8|16|32|64/s (g, t)  flops<width> / time\n"
    "                         byte/s, gbyte/s, tbyte/s bytes / time\n"
    "                         util                     max(sum flops<w>/peak<w>,\n"
    "                                                  bytes/peak bandwidth) / time,\n"
    "                                                  on kernels, from the device\n"
    "                                                  info of known GPU architectures\n"
    "                         NAME/%                   share of the metric's total:\n"
    "                                                  ROOT's (metrics that roll\n"
    "                                                  up), else the sum over the\n"
    "                                                  outermost nodes holding it\n"
    "  -d, --depth N        show N levels of the tree, ROOT the first, as\n"
    "                       proton-viewer does (default 100)\n"
    "  -t, --threshold X    hide nodes whose first metric is below X (their\n"
    "                       ancestors stay)\n"
    "  -i, --include REGEX  keep only paths through a frame whose whole name\n"
    "                       matches REGEX (POSIX extended); inclusive values\n"
    "                       count only what is kept\n"
    "  -e, --exclude REGEX  drop frames whose whole name matches REGEX, with\n"
    "                       everything below them\n"
    "  -f, --format FMT     frame names: full (default), file_function_line,\n"
    "                       function_line, file_function\n"
    "      --sort           print a flat list sorted by the first metric\n"
    "                       (largest first) instead of the tree\n"
    "      --print-sorted   as proton-viewer: the tree, then every frame\n"
    "                       but ROOT sorted by the first metric, at any depth\n"
    "                       (-t, -i, -e apply); frames without a value last\n"
    "      --diff-profile OTHER\n"
    "                       show FILE minus OTHER for every metric, nodes\n"
    "                       matched by calling-context path\n"
    "      --full-names     show names whole (longer than 100 characters, they\n"
    "                       are folded: foo<...>(...))\n"
    "  -l, --list           list the metrics FILE holds and exit\n"
    "      --lines          for a profile recorded with PC sampling: each\n"
    "                       kernel's samples and main stall reasons, then its\n"
    "                       10 hottest source lines with theirs, instead of\n"
    "                       the tree (-m, -d, -t, -i, -e, -f do not apply)\n"
    "      --color WHEN     auto (default: colour on a terminal unless NO_COLOR\n"
    "                       is set), always, never\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 on success, 2 on bad options or an unreadable FILE.\n";

/* Split "a,b" into o->metrics (pointers into the argument). */
static int add_metrics(view_opts *o, char *list)
{
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (o->nmetrics == 16)
            return -1;
        o->metrics[o->nmetrics++] = tok;
    }
    return 0;
}

static int parse_opts(int argc, char **argv, view_opts *o)
{
    enum { OPT_DIFF = 256, OPT_COLOR };
    /* The switches without a value set their field through getopt_long. */
    const struct option longs[] = {
        {"metrics", required_argument, NULL, 'm'},
        {"depth", required_argument, NULL, 'd'},
        {"threshold", required_argument, NULL, 't'},
        {"include", required_argument, NULL, 'i'},
        {"exclude", required_argument, NULL, 'e'},
        {"format", required_argument, NULL, 'f'},
        {"list", no_argument, NULL, 'l'},
        {"sort", no_argument, &o->sort, 1},
        {"print-sorted", no_argument, &o->print_sorted, 1},
        {"print_sorted", no_argument, &o->print_sorted, 1},
        {"diff-profile", required_argument, NULL, OPT_DIFF},
        {"color", required_argument, NULL, OPT_COLOR},
        {"colour", required_argument, NULL, OPT_COLOR},
        {"full-names", no_argument, &o->full_names, 1},
        {"lines", no_argument, &o->lines, 1},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->depth = 100;
    o->color = kscope__color_auto();
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":m:d:t:i:e:f:l", longs, NULL)) != -1) {
        switch (c) {
        case 'm':
            if (add_metrics(o, optarg) < 0)
                return kscope_cli_usage("view", "-m: at most 16 metrics");
            break;
        case 'd':
            if (kscope_cli_whole(optarg, 0, LONG_MAX, &o->depth) < 0)
                return kscope_cli_usage("view", "-d: '%s' is not a depth (a whole number >= 0)",
                                        optarg);
            break;
        case 't':
            if (kscope_cli_number(optarg, &o->threshold) < 0 || !isfinite(o->threshold))
                return kscope_cli_usage("view", "-t: '%s' is not a number", optarg);
            o->has_threshold = 1;
            break;
        case 'i':
            o->include = optarg;
            break;
        case 'e':
            o->exclude = optarg;
            break;
        case 'f':
            if (strcmp(optarg, "full") == 0)
                o->format = FMT_FULL;
            else if (strcmp(optarg, "file_function_line") == 0)
                o->format = FMT_FILE_FUNCTION_LINE;
            else if (strcmp(optarg, "function_line") == 0)
                o->format = FMT_FUNCTION_LINE;
            else if (strcmp(optarg, "file_function") == 0)
                o->format = FMT_FILE_FUNCTION;
            else
                return kscope_cli_usage("view",
                                        "-f: '%s' is not one of full, file_function_line, "
                                        "function_line, file_function",
                                        optarg);
            break;
        case 'l':
            o->list = 1;
            break;
        case 0: /* a switch: getopt_long set its field */
            break;
        case OPT_DIFF:
            o->diff = optarg;
            break;
        case OPT_COLOR:
            if (kscope_cli_color(optarg, &o->color) < 0)
                return kscope_cli_usage("view", "--color: '%s' is not auto, always or never",
                                        optarg);
            break;
        case ':':
            return kscope_cli_usage("view", "%s needs a value", argv[optind - 1]);
        default:
            return kscope_cli_usage("view", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return kscope_cli_usage("view", "%s",
                                optind >= argc ? "no FILE given" : "more than one FILE given");
    o->file = argv[optind];
    return 0;
}

/* ------------------------------------------------------- filtering */

static int compile_full(regex_t *re, const char *pat, const char *opt)
{
    size_t l = strlen(pat) + 8;
    char *full = malloc(l);
    if (!full)
        return -1;
    snprintf(full, l, "^(%s)$", pat);
    int rc = regcomp(re, full, REG_EXTENDED | REG_NOSUB);
    free(full);
    if (rc != 0) {
        char msg[128];
        regerror(rc, re, msg, sizeof msg);
        fprintf(stderr, "kscope view: %s: bad regular expression '%s': %s\n", opt, pat, msg);
        return -1;
    }
    return 0;
}

/* keep[i] for -i/-e; the kept set always contains every kept node's parent. */
static int filter_nodes(const kscope__pflat *f, const view_opts *o, unsigned char *keep)
{
    regex_t inc, exc;
    if (o->include && compile_full(&inc, o->include, "-i") < 0)
        return -1;
    if (o->exclude && compile_full(&exc, o->exclude, "-e") < 0) {
        if (o->include)
            regfree(&inc);
        return -1;
    }
    int rc = -1;
    unsigned char *anc = calloc(f->n, 1), *desc = calloc(f->n, 1);
    if (!anc || !desc) {
        fprintf(stderr, "kscope view: out of memory\n");
        goto out;
    }
    for (size_t i = 0; i < f->n; i++) {
        int32_t p = f->parent[i];
        keep[i] = 1;
        if (o->include) {
            int m = regexec(&inc, f->node[i]->name, 0, NULL, 0) == 0;
            anc[i] = m || (p >= 0 && anc[p]);
            desc[i] = m;
        }
        if (o->exclude && i > 0)
            keep[i] = keep[p] && regexec(&exc, f->node[i]->name, 0, NULL, 0) != 0;
    }
    if (o->include) {
        for (size_t i = f->n; i-- > 1;)
            if (desc[i])
                desc[f->parent[i]] = 1;
        for (size_t i = 1; i < f->n; i++)
            keep[i] = keep[i] && (anc[i] || desc[i]);
    }
    rc = 0;
out:
    free(anc);
    free(desc);
    if (o->include)
        regfree(&inc);
    if (o->exclude)
        regfree(&exc);
    return rc;
}

/* Read, flatten and filter one profile. */
static int load(const char *path, const view_opts *o, kscope__ptree **t, kscope__pflat *f)
{
    char err[KSCOPE__READ_ERRLEN];
    if (kscope__read_profile(path, t, err, sizeof err) < 0) {
        fprintf(stderr, "kscope view: %s\n", err);
        return -1;
    }
    if (kscope__pflat_build(*t, f) < 0) {
        fprintf(stderr, "kscope view: %s: out of memory\n", KSCOPE__PATH(path));
        return -1;
    }
    unsigned char *keep = malloc(f->n), *pruned = malloc(f->n);
    if (!keep || !pruned) {
        free(keep);
        free(pruned);
        fprintf(stderr, "kscope view: %s: out of memory\n", KSCOPE__PATH(path));
        return -1;
    }
    /* pruned on the file's own tree, as proton-viewer does before filters */
    memset(pruned, 1, f->n);
    kscope__prune_frames(f, pruned);
    int rc = filter_nodes(f, o, keep); /* reports its own errors */
    if (rc == 0) {
        for (size_t i = 0; i < f->n; i++)
            keep[i] &= pruned[i];
        rc = kscope__pflat_keep(f, keep);
        if (rc < 0)
            fprintf(stderr, "kscope view: %s: out of memory\n", KSCOPE__PATH(path));
    }
    free(keep);
    free(pruned);
    return rc;
}

/* ---------------------------------------------------------- columns */

static int compute_columns(const kscope__ptree *t, const kscope__pflat *f, const view_opts *o,
                           kscope__column *cols, const char *path)
{
    const char *specs[16];
    int n = o->nmetrics;
    memcpy(specs, o->metrics, sizeof specs);
    static char first[96];
    if (n == 0) {
        /* A profile with no metrics (nothing recorded) shows as its bare
         * tree: empty is a valid result, not a bad file. */
        int rc = kscope__default_metric(t, first, sizeof first);
        if (rc < 0)
            return -1;
        if (rc > 0)
            specs[n++] = first;
        /* device-side scopes have no host or GPU time of their own: their
         * column comes along, so the default view never shows them as 0 */
        static char device[32];
        rc = kscope__device_scope_metric(t, device, sizeof device);
        if (rc < 0)
            return -1;
        if (rc > 0 && (n == 0 || strcmp(first, device) != 0))
            specs[n++] = device;
    }
    for (int i = 0; i < n; i++) {
        char err[KSCOPE__READ_ERRLEN];
        if (kscope__column_compute(t, f, specs[i], &cols[i], err, sizeof err) < 0) {
            char hint[112], esc[240];
            if (cols[i].missing && kscope__metric_hint(t, f, specs[i], hint, sizeof hint))
                fprintf(stderr, "kscope view: %s: %s. Did you mean '%s'?\n", KSCOPE__PATH(path),
                        err, kscope__escape(hint, esc, sizeof esc));
            else
                fprintf(stderr, "kscope view: %s: %s\n", KSCOPE__PATH(path), err);
            for (int j = 0; j < i; j++)
                kscope__column_free(&cols[j]);
            return -1;
        }
    }
    return n;
}

/* ---------------------------------------------------------- listing */

static int list_metrics(const kscope__ptree *t)
{
    kscope__metric_info *list;
    int n = kscope__metric_list(t, &list);
    if (n < 0)
        return KSCOPE_EXIT_FAIL;
    char a[256], b[256];
    printf("Inclusive metrics (summed into parents):\n");
    for (int i = 0; i < n; i++)
        if (list[i].inclusive)
            printf("- %s\n", kscope__escape(list[i].name, a, sizeof a));
    printf("Exclusive metrics (on their node only):\n");
    for (int i = 0; i < n; i++)
        if (!list[i].inclusive)
            printf("- %s\n", kscope__escape(list[i].name, a, sizeof a));
    printf("Device info:\n");
    for (uint32_t i = 0; i < t->ndevices; i++) {
        const kscope__pdevice *d = &t->devices[i];
        printf("- %s %u: arch %s, %lld SMs, clock %lld kHz, memory clock %lld kHz, bus %lld "
               "bits\n",
               kscope__escape(d->type, a, sizeof a), d->id,
               d->arch && d->arch[0] ? kscope__escape(d->arch, b, sizeof b) : "?",
               (long long)d->num_sms, (long long)d->clock_rate, (long long)d->memory_clock_rate,
               (long long)d->bus_width);
    }
    if (t->ndevices == 0)
        printf("- none\n");
    free(list);
    return KSCOPE_EXIT_OK;
}

/* --lines: the hottest source lines per kernel. */
static int print_lines(const kscope__ptree *t, const view_opts *o)
{
    int flags = KSCOPE__LINES_BY_KERNEL | (o->color ? KSCOPE__TOP_COLOR : 0) |
                (o->full_names ? KSCOPE__TOP_FULL_NAMES : 0);
    int n = kscope__lines_print(stdout, t, 10, flags);
    if (n < 0) {
        fprintf(stderr, "kscope view: %s\n", kscope_strerror(n));
        return KSCOPE_EXIT_FAIL;
    }
    if (n == 0) {
        char name[512];
        fprintf(stderr,
                "kscope view: %s has no PC samples (record with `kscope run --pc-sampling`)\n",
                kscope__escape(o->file, name, sizeof name));
        return KSCOPE_EXIT_USAGE;
    }
    return KSCOPE_EXIT_OK;
}

/* ------------------------------------------------------------- main */

static int fill_single(view_display *d, const kscope__pflat *f)
{
    d->n = f->n;
    d->parent = malloc(f->n * sizeof *d->parent);
    d->depth = malloc(f->n * sizeof *d->depth);
    d->name = malloc(f->n * sizeof *d->name);
    d->device = malloc(f->n);
    if (!d->parent || !d->depth || !d->name || !d->device)
        return -1;
    for (size_t i = 0; i < f->n; i++) {
        d->parent[i] = f->parent[i];
        d->depth[i] = f->depth[i];
        d->name[i] = f->node[i]->name;
        d->device[i] = (unsigned char)kscope__pnode_is_device(f->node[i]);
    }
    return 0;
}

/* Values of FILE minus OTHER over the union of both trees. */
static int fill_diff(view_display *d, const kscope__pflat *fa, const kscope__column *ca,
                     const kscope__pflat *fb, const kscope__column *cb, int ncols)
{
    kscope__punion u;
    if (kscope__punion_build(fa, fb, &u) < 0)
        return -1;
    d->n = u.n;
    d->parent = u.parent;
    d->depth = u.depth;
    d->name = u.name;
    u.parent = NULL;
    u.depth = NULL;
    u.name = NULL;
    d->device = malloc(u.n);
    int rc = d->device ? 0 : -1;
    for (int c = 0; c < ncols && rc == 0; c++) {
        d->cols[c] = ca[c];
        d->cols[c].vals = malloc(u.n * sizeof(double));
        if (!d->cols[c].vals)
            rc = -1;
        for (size_t i = 0; rc == 0 && i < u.n; i++) {
            double a = u.a[i] >= 0 ? ca[c].vals[u.a[i]] : NAN;
            double b = u.b[i] >= 0 ? cb[c].vals[u.b[i]] : NAN;
            d->cols[c].vals[i] =
                isnan(a) && isnan(b) ? NAN : (isnan(a) ? 0 : a) - (isnan(b) ? 0 : b);
        }
    }
    d->ncols = ncols;
    for (size_t i = 0; rc == 0 && i < u.n; i++)
        d->device[i] = (unsigned char)(u.a[i] >= 0 ? kscope__pnode_is_device(fa->node[u.a[i]])
                                                   : kscope__pnode_is_device(fb->node[u.b[i]]));
    kscope__punion_free(&u);
    return rc;
}

int cmd_view(int argc, char **argv)
{
    view_opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc)
        return rc;
    kscope__ptree *t = NULL, *other = NULL;
    kscope__pflat f = {0}, fo = {0};
    kscope__column cols[16], ocols[16];
    int ncols = 0, nocols = 0;
    view_display d = {0};
    rc = KSCOPE_EXIT_USAGE;
    if (load(o.file, &o, &t, &f) < 0)
        goto out;
    if (o.list) {
        rc = list_metrics(t);
        goto out;
    }
    if (o.lines) {
        rc = print_lines(t, &o);
        goto out;
    }
    ncols = compute_columns(t, &f, &o, cols, o.file);
    if (ncols < 0)
        goto out;
    if (o.diff) {
        if (load(o.diff, &o, &other, &fo) < 0)
            goto out;
        view_opts same = o;
        same.nmetrics = ncols;
        for (int c = 0; c < ncols; c++)
            same.metrics[c] = cols[c].title;
        nocols = compute_columns(other, &fo, &same, ocols, o.diff);
        if (nocols < 0)
            goto out;
        if (fill_diff(&d, &f, cols, &fo, ocols, ncols) < 0) {
            fprintf(stderr, "kscope view: out of memory\n");
            rc = KSCOPE_EXIT_FAIL;
            goto out;
        }
    } else {
        if (fill_single(&d, &f) < 0) {
            fprintf(stderr, "kscope view: out of memory\n");
            rc = KSCOPE_EXIT_FAIL;
            goto out;
        }
        d.ncols = ncols;
        memcpy(d.cols, cols, sizeof(kscope__column) * (size_t)ncols);
    }
    rc = kscope__view_print(&d, &o) == 0 ? KSCOPE_EXIT_OK : KSCOPE_EXIT_FAIL;
    char note[256];
    if (rc == KSCOPE_EXIT_OK && kscope__sampled_note(t, note, sizeof note))
        printf("\n%s\n", note);
out:
    if (o.diff)
        for (int c = 0; c < d.ncols; c++)
            kscope__column_free(&d.cols[c]);
    for (int c = 0; c < ncols; c++)
        kscope__column_free(&cols[c]);
    for (int c = 0; c < nocols; c++)
        kscope__column_free(&ocols[c]);
    free(d.parent);
    free(d.depth);
    free(d.name);
    free(d.device);
    kscope__pflat_free(&f);
    kscope__pflat_free(&fo);
    kscope__ptree_free(t);
    kscope__ptree_free(other);
    return rc;
}
