/*
 * view-print.c - `kscope view`'s printer: the rows chosen by depth and
 * threshold, one column per metric sized to its widest value, and the
 * calling-context tree drawn with branches (or the --sort flat list), in
 * colour on request; and the hint for a mistyped metric.
 */
#include "cli/view-print.h"
#include "cli/cmd.h"
#include "kscope.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------ names */

/* The frame name as -f asks, into buf (grown as needed). */
static const char *format_name(const char *name, frame_fmt fmt, char **buf, size_t *cap)
{
    if (fmt == FMT_FULL)
        return name;
    const char *slash = strrchr(name, '/');
    const char *file = slash ? slash + 1 : name;
    if (fmt == FMT_FILE_FUNCTION_LINE)
        return file;
    if (fmt == FMT_FUNCTION_LINE) {
        const char *colon = strrchr(name, ':');
        return colon ? colon + 1 : name;
    }
    /* file_function: "<file without :line>@<function without :line>"; a
     * name that is not "file:line@function" (a kernel, ROOT) stays whole */
    if (!strchr(name, '@'))
        return name;
    size_t need = strlen(name) * 2 + 2;
    if (need > *cap) {
        char *b = realloc(*buf, need);
        if (!b)
            return name;
        *buf = b;
        *cap = need;
    }
    const char *fend = strchr(file, ':');
    size_t fl = fend ? (size_t)(fend - file) : strlen(file);
    const char *at = strrchr(name, '@');
    const char *fn = at ? at + 1 : name;
    const char *fnend = strchr(fn, ':');
    size_t fnl = fnend ? (size_t)(fnend - fn) : strlen(fn);
    snprintf(*buf, *cap, "%.*s@%.*s", (int)fl, file, (int)fnl, fn);
    return *buf;
}

/* ---------------------------------------------------------- printing */

/* v with three decimals, like "%.3f" but without printf's cost (this runs
 * for every cell of large trees); falls back to printf for huge values. */
static void fixed3(double v, char *buf, size_t size)
{
    if (!(fabs(v) < 9e12)) {
        snprintf(buf, size, "%.3f", v);
        return;
    }
    long long m = llround(fabs(v) * 1000.0);
    char tmp[32];
    int n = 0;
    for (int d = 0; d < 3; d++, m /= 10)
        tmp[n++] = (char)('0' + m % 10);
    tmp[n++] = '.';
    do {
        tmp[n++] = (char)('0' + m % 10);
        m /= 10;
    } while (m);
    int neg = v < 0 && n > 0 && strspn(tmp, "0.") != (size_t)n;
    size_t k = 0;
    if (neg && k + 1 < size)
        buf[k++] = '-';
    while (n > 0 && k + 1 < size)
        buf[k++] = tmp[--n];
    buf[k] = '\0';
}

static void format_value(const kscope__column *c, double v, char *buf, size_t size)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (isinf(v))
        snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else if (c->integral && fabs(v) < 9e15)
        snprintf(buf, size, "%lld", (long long)llround(v));
    else if (fabs(v) >= 1e15) /* no column of 300 digits */
        snprintf(buf, size, "%.3e", v);
    else
        fixed3(v, buf, size);
}

/* Which rows are shown: depth, threshold (ancestors of shown rows stay).
 * -d N shows N levels, ROOT the first, as proton-viewer (Hatchet) does;
 * depth < 0: every level. */
static void choose_rows(const view_display *d, const view_opts *o, long depth, unsigned char *show)
{
    for (size_t i = 0; i < d->n; i++)
        show[i] = depth < 0 || d->depth[i] < (uint32_t)depth;
    if (!o->has_threshold || d->ncols == 0)
        return;
    const double *v = d->cols[0].vals;
    unsigned char *pass = calloc(d->n, 1);
    if (!pass)
        return;
    for (size_t i = d->n; i-- > 0;) {
        if (!isnan(v[i]) && v[i] >= o->threshold)
            pass[i] = 1;
        if (pass[i] && i > 0)
            pass[d->parent[i]] = 1;
    }
    for (size_t i = 1; i < d->n; i++)
        show[i] = show[i] && pass[i];
    free(pass);
}

static void print_header(const view_display *d, const int *width, int color)
{
    if (color)
        fputs("\033[1m", stdout);
    for (int c = 0; c < d->ncols; c++)
        printf("%*s  ", width[c], d->cols[c].title);
    fputs("name", stdout);
    if (color)
        fputs("\033[0m", stdout);
    fputc('\n', stdout);
}

static void print_values(const view_display *d, size_t i, const int *width, const double *maxv,
                         int color)
{
    char buf[64];
    for (int c = 0; c < d->ncols; c++) {
        double v = d->cols[c].vals[i];
        format_value(&d->cols[c], v, buf, sizeof buf);
        const char *hot = "";
        if (color && c == 0 && !isnan(v) && maxv[0] > 0)
            hot = v >= 0.5 * maxv[0] ? "\033[31m" : v >= 0.1 * maxv[0] ? "\033[33m" : "";
        printf("%s%*s%s  ", hot, width[c], buf, *hot ? "\033[0m" : "");
    }
}

static void print_name(const view_display *d, size_t i, frame_fmt fmt, int color, int full,
                       char **nb, size_t *nbcap)
{
    const char *name = format_name(d->name[i], fmt, nb, nbcap);
    int dev = color && d->device[i];
    if (dev)
        fputs("\033[36m", stdout);
    /* only kernel and copy names are folded: host frames keep their paths */
    kscope__print_name(stdout, name, full || !d->device[i]);
    if (dev)
        fputs("\033[0m", stdout);
    fputc('\n', stdout);
}

/* qsort has no context argument: the column the flat list sorts by */
static const double *sort_vals;

static int cmp_rows(const void *a, const void *b)
{
    double x = sort_vals[*(const int32_t *)a], y = sort_vals[*(const int32_t *)b];
    if (isnan(x) != isnan(y))
        return isnan(x) ? 1 : -1;
    if (x != y && !isnan(x))
        return x < y ? 1 : -1;
    return *(const int32_t *)a - *(const int32_t *)b;
}

/* Column widths and each column's largest value (ROOT aside) over the
 * rows shown. */
static void measure_columns(const view_display *d, const unsigned char *show, int *width,
                            double *maxv)
{
    char buf[64];
    for (int c = 0; c < d->ncols; c++) {
        width[c] = (int)strlen(d->cols[c].title);
        for (size_t i = 0; i < d->n; i++) {
            if (!show[i])
                continue;
            double v = d->cols[c].vals[i];
            format_value(&d->cols[c], v, buf, sizeof buf);
            if ((int)strlen(buf) > width[c])
                width[c] = (int)strlen(buf);
            if (i > 0 && !isnan(v) && v > maxv[c])
                maxv[c] = v;
        }
    }
}

/* --sort: the rows shown but ROOT, largest first metric first. */
static int print_sorted(const view_display *d, const view_opts *o, const unsigned char *show,
                        const int *width, const double *maxv, char **nb, size_t *nbcap)
{
    int32_t *rows = malloc(d->n * sizeof *rows);
    if (!rows)
        return -1;
    size_t nr = 0;
    for (size_t i = 1; i < d->n; i++)
        if (show[i])
            rows[nr++] = (int32_t)i;
    sort_vals = d->ncols ? d->cols[0].vals : NULL;
    if (sort_vals)
        qsort(rows, nr, sizeof *rows, cmp_rows);
    for (size_t r = 0; r < nr; r++) {
        print_values(d, (size_t)rows[r], width, maxv, o->color);
        print_name(d, (size_t)rows[r], o->format, o->color, o->full_names, nb, nbcap);
    }
    free(rows);
    return 0;
}

/* The tree, with branches drawn from each row's ancestors. */
static int print_tree(const view_display *d, const view_opts *o, const unsigned char *show,
                      const int *width, const double *maxv, char **nb, size_t *nbcap)
{
    unsigned char *last = calloc(d->n, 1), *seen = calloc(d->n, 1);
    size_t maxdepth = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->depth[i] > maxdepth)
            maxdepth = d->depth[i];
    char *prefix = malloc(maxdepth * 8 + 8);
    if (!last || !seen || !prefix) {
        free(last), free(seen), free(prefix);
        return -1;
    }
    /* last[i]: no later shown sibling (the first shown child met backwards) */
    for (size_t i = d->n; i-- > 1;) {
        if (show[i] && !seen[d->parent[i]]) {
            last[i] = 1;
            seen[d->parent[i]] = 1;
        }
    }
    for (size_t i = 0; i < d->n; i++) {
        if (!show[i])
            continue;
        print_values(d, i, width, maxv, o->color);
        /* branches: built from the node up, written from ROOT down */
        size_t pos = d->depth[i] * 8;
        prefix[pos] = '\0';
        if (d->depth[i] > 0) {
            const char *branch =
                last[i] ? "\xe2\x94\x94\xe2\x94\x80 " : "\xe2\x94\x9c\xe2\x94\x80 ";
            pos -= strlen(branch);
            memcpy(prefix + pos, branch, strlen(branch));
            for (int32_t a = d->parent[i]; a > 0; a = d->parent[a]) {
                const char *bar = last[a] ? "   " : "\xe2\x94\x82  ";
                pos -= strlen(bar);
                memcpy(prefix + pos, bar, strlen(bar));
            }
        }
        fputs(prefix + pos, stdout);
        print_name(d, i, o->format, o->color, o->full_names, nb, nbcap);
    }
    free(last);
    free(seen);
    free(prefix);
    return 0;
}

/* --print-sorted, as proton-viewer: the tree (-d applies), then every
 * frame but ROOT at any depth, sorted by the first metric, in columns as
 * wide as both need. */
static int print_tree_and_sorted(const view_display *d, const view_opts *o, unsigned char *show,
                                 int *width, double *maxv, char **nb, size_t *nbcap)
{
    choose_rows(d, o, -1, show); /* the list's rows hold the tree's */
    measure_columns(d, show, width, maxv);
    choose_rows(d, o, o->depth, show);
    print_header(d, width, o->color);
    if (print_tree(d, o, show, width, maxv, nb, nbcap) < 0)
        return -1;
    choose_rows(d, o, -1, show);
    printf("\nSorted by %s, largest first:\n", d->ncols ? d->cols[0].title : "tree order");
    print_header(d, width, o->color);
    return print_sorted(d, o, show, width, maxv, nb, nbcap);
}

int kscope__view_print(const view_display *d, const view_opts *o)
{
    unsigned char *show = malloc(d->n);
    int *width = calloc((size_t)d->ncols + 1, sizeof *width);
    double *maxv = calloc((size_t)d->ncols + 1, sizeof *maxv);
    char *nb = NULL;
    size_t nbcap = 0;
    int rc = -1;
    if (show && width && maxv && o->print_sorted) {
        rc = print_tree_and_sorted(d, o, show, width, maxv, &nb, &nbcap);
    } else if (show && width && maxv) {
        choose_rows(d, o, o->depth, show);
        measure_columns(d, show, width, maxv);
        print_header(d, width, o->color);
        rc = o->sort ? print_sorted(d, o, show, width, maxv, &nb, &nbcap)
                     : print_tree(d, o, show, width, maxv, &nb, &nbcap);
    }
    free(show);
    free(width);
    free(maxv);
    free(nb);
    return rc;
}

/* ------------------------------------------------------------ hints */

/* A metric's name as compared for hints: lower case, up to its first '/'
 * (a view unit) or '(' (a stored unit, a kind), spaces trimmed. */
static void hint_base(const char *name, char *buf, size_t size)
{
    size_t i = 0;
    for (; name[i] && name[i] != '/' && name[i] != '(' && i + 1 < size; i++)
        buf[i] = (char)tolower((unsigned char)name[i]);
    while (i && buf[i - 1] == ' ')
        i--;
    buf[i] = '\0';
}

/* Whether a stored name is one of the time metrics view shows per unit:
 * time, cpu_time, wall_time, est_time with (s), (ms), (us) or (ns). */
static int view_time_metric(const char *name, const char *base)
{
    static const char *const bases[] = {"time", "cpu_time", "wall_time", "est_time"};
    static const char *const units[] = {"(s)", "(ms)", "(us)", "(ns)"};
    int known = 0;
    for (int i = 0; i < 4; i++)
        known |= strcmp(base, bases[i]) == 0;
    for (int i = 0; known && i < 4; i++)
        if (strstr(name, units[i]))
            return 1;
    return 0;
}

typedef struct hint_cand {
    char base[96];     /* compared with the spec's */
    char spelled[112]; /* offered */
} hint_cand;

/* The time unit a spec asks for after its '/' (s, ms, us, ns), else "ms". */
static const char *hint_unit(const char *spec)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    const char *slash = strrchr(spec, '/');
    for (int i = 0; slash && i < 4; i++)
        if (strcasecmp(slash + 1, units[i]) == 0)
            return units[i];
    return "ms";
}

int kscope__metric_hint(const kscope__ptree *t, const kscope__pflat *f, const char *spec, char *buf,
                        size_t size)
{
    const char *unit = hint_unit(spec);
    kscope__metric_info *list;
    int n = kscope__metric_list_flat(t, f, &list);
    if (n <= 0)
        return 0;
    hint_cand *c = malloc(2 * (size_t)n * sizeof *c);
    const char **names = malloc(2 * (size_t)n * sizeof *names);
    size_t k = 0;
    for (int i = 0; c && names && i < n; i++) {
        char base[80];
        hint_base(list[i].name, base, sizeof base);
        int timed = view_time_metric(list[i].name, base);
        snprintf(c[k].base, sizeof c[k].base, "%s", base);
        if (timed)
            snprintf(c[k].spelled, sizeof c[k].spelled, "%s/%s", base, unit);
        else
            snprintf(c[k].spelled, sizeof c[k].spelled, "%.100s", list[i].name);
        k++;
        if (timed && strcmp(base, "est_time") != 0) { /* its average per call too */
            snprintf(c[k].base, sizeof c[k].base, "avg_%s", base);
            snprintf(c[k].spelled, sizeof c[k].spelled, "avg_%s/%s", base, unit);
            k++;
        }
    }
    int best = -1;
    if (c && names) {
        char word[96];
        hint_base(spec, word, sizeof word);
        for (size_t i = 0; i < k; i++)
            names[i] = c[i].base;
        best = word[0] ? kscope_cli_closest(word, names, k) : -1;
        if (best >= 0 && strcasecmp(c[best].spelled, spec) == 0)
            best = -1; /* the spec itself: no spelling to offer */
        if (best >= 0)
            snprintf(buf, size, "%s", c[best].spelled);
    }
    free(names);
    free(c);
    free(list);
    return best >= 0;
}
