/*
 * cmd-report.c - `kscope report`: a one-page summary of a profile, the
 * first thing to read after a run: the devices and their peaks, where GPU
 * time went (kernels, copies), the heaviest kernels, and the scopes that
 * hold the most GPU time and host wall time. With --html, one
 * self-contained HTML page instead (src/report/).
 */
#include "cli/cmd.h"
#include "kscope.h"
#include "read/read.h"
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_report_summary[] = "summarise a profile: devices, GPU time, top kernels and scopes";
const char cmd_report_help[] =
    "usage: kscope report [-n N] FILE...\n"
    "       kscope report --html OUT.html PROFILE [PROFILE2]\n"
    "\n"
    "Print a one-page summary of each profile (kscope's or Proton's:\n"
    "{formats}):\n"
    "  - the devices, with their peak fp16 FLOP/s and memory bandwidth;\n"
    "  - GPU time: kernels and copies, launches, bytes copied;\n"
    "  - dropped records, when the profile counted any;\n"
    "  - the top N kernels by total GPU time (as `kscope top`);\n"
    "  - with PC samples, the N hottest source lines and their main stall\n"
    "    reasons (as `kscope top --lines`);\n"
    "  - the top N scopes by GPU time under them (inclusive) and by host wall\n"
    "    time, each with its calling context.\n"
    "\n"
    "With --html, write one HTML page that opens offline in a browser: a\n"
    "flame graph of the calling-context tree (width by any metric, click to\n"
    "zoom, search), a timeline for traces, the top kernels, each kernel's\n"
    "hottest source lines (PC samples), and with PROFILE2 a diff (PROFILE ->\n"
    "PROFILE2). Very large profiles are aggregated (the\n"
    "page says where): tree nodes under 0.01% of the total merge into\n"
    "\"(other)\" past 200000 nodes; a timeline track keeps its 250000 longest\n"
    "slices.\n"
    "\n"
    "options:\n"
    "  -n N        rows per table (default 10)\n"
    "  --html OUT  write the HTML page to OUT\n"
    "  --max-nodes N, --max-track-events N\n"
    "              the HTML page's limits (defaults 200000, 250000)\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit status: 0, or 2 when a file cannot be read (one line naming it).\n";

/* The calling context of node i as "a > b > c" (ROOT left out). */
static void node_path(const kscope__pflat *f, size_t i, char *buf, size_t size)
{
    const kscope__pnode *chain[64];
    int n = 0;
    for (int32_t j = (int32_t)i; j > 0 && n < 64; j = f->parent[j])
        chain[n++] = f->node[j];
    size_t len = 0;
    buf[0] = 0;
    char name[256];
    while (n-- > 0 && len + 4 < size)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? " > " : "",
                                kscope__escape(chain[n]->name, name, sizeof name));
}

static void print_ns(FILE *out, double ns)
{
    if (ns >= 1e9)
        fprintf(out, "%.3f s", ns / 1e9);
    else if (ns >= 1e6)
        fprintf(out, "%.3f ms", ns / 1e6);
    else if (ns >= 1e3)
        fprintf(out, "%.3f us", ns / 1e3);
    else
        fprintf(out, "%.0f ns", ns);
}

static void report_devices(const kscope__ptree *t, FILE *out)
{
    if (t->ndevices == 0) {
        fprintf(out, "devices: none recorded\n");
        return;
    }
    for (uint32_t i = 0; i < t->ndevices; i++) {
        const kscope__pdevice *d = &t->devices[i];
        char type[256], arch[256];
        fprintf(out, "device %s %u: arch %s, %lld SMs, %.0f MHz, memory %.0f MHz, %lld-bit bus",
                kscope__escape(d->type, type, sizeof type), d->id,
                kscope__escape(d->arch ? d->arch : "?", arch, sizeof arch), (long long)d->num_sms,
                d->clock_rate / 1e3, d->memory_clock_rate / 1e3, (long long)d->bus_width);
        double flops = kscope__peak_flops(d, 16), bytes = kscope__peak_bytes(d);
        if (flops > 0)
            fprintf(out, "; peak %.1f TFLOP/s fp16", flops / 1e12);
        if (bytes > 0)
            fprintf(out, ", %.0f GB/s", bytes / 1e9);
        fputc('\n', out);
    }
}

typedef struct ranked {
    size_t node;
    double value;
} ranked;

static int by_value_desc(const void *a, const void *b)
{
    double x = ((const ranked *)a)->value, y = ((const ranked *)b)->value;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The top n scopes (not GPU activities, not ROOT) by vals. */
static void report_scopes(const kscope__pflat *f, const double *vals, const double *calls,
                          const char *title, double total, long n, FILE *out)
{
    ranked *r = malloc(f->n * sizeof *r);
    size_t m = 0;
    for (size_t i = 1; r && i < f->n; i++)
        if (!kscope__pnode_is_device(f->node[i]) && !isnan(vals[i]) && vals[i] > 0)
            r[m++] = (ranked){i, vals[i]};
    if (!r || m == 0) {
        free(r);
        return;
    }
    qsort(r, m, sizeof *r, by_value_desc);
    fprintf(out, "\n%s\n%7s  %12s  %8s  %s\n", title, "%", "time", "calls", "scope");
    for (size_t k = 0; k < m && (n <= 0 || (long)k < n); k++) {
        char path[1024], t[32];
        node_path(f, r[k].node, path, sizeof path);
        FILE *mem = fmemopen(t, sizeof t, "w");
        if (mem) {
            print_ns(mem, r[k].value);
            fclose(mem);
        } else {
            t[0] = 0;
        }
        double c = calls && !isnan(calls[r[k].node]) ? calls[r[k].node] : NAN;
        fprintf(out, "%6.2f%%  %12s  ", total > 0 ? 100.0 * r[k].value / total : 0, t);
        if (isnan(c))
            fprintf(out, "%8s  %s\n", "-", path);
        else
            fprintf(out, "%8.0f  %s\n", c, path);
    }
    free(r);
}

static int report_one(const char *path, long n, FILE *out)
{
    kscope__ptree *t = NULL;
    char err[512];
    if (kscope__read_profile(path, &t, err, sizeof err) != 0) {
        fprintf(stderr, "kscope report: %s\n", err);
        return KSCOPE_EXIT_USAGE;
    }
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) != 0) {
        fprintf(stderr, "kscope report: %s: out of memory\n", KSCOPE__PATH(path));
        kscope__ptree_free(t);
        return KSCOPE_EXIT_FAIL;
    }
    double *incl = malloc(f.n * sizeof *incl), *samples = malloc(f.n * sizeof *samples);
    double *wall = malloc(f.n * sizeof *wall), *calls = malloc(f.n * sizeof *calls);
    kscope__gpu_split g;
    if (!incl || !samples || !wall || !calls || kscope__gpu_split_of(t, &g) < 0) {
        fprintf(stderr, "kscope report: %s: out of memory\n", KSCOPE__PATH(path));
        free(incl), free(samples), free(wall), free(calls);
        kscope__pflat_free(&f);
        kscope__ptree_free(t);
        return KSCOPE_EXIT_FAIL;
    }
    /* what `kscope view` shows for each: rolled up where the metric does */
    int time_up = kscope__metric_values(t, &f, "time (ns)", incl);
    int wall_up = kscope__metric_values(t, &f, "wall_time (ns)", wall);
    kscope__pflat_values(t, &f, "calls", 0, calls);
    double kernel_ns = g.kernel_ns, copy_ns = g.copy_ns;
    fprintf(out, "== %s\n", KSCOPE__PATH(path));
    report_devices(t, out);
    fprintf(out, "GPU time: ");
    print_ns(out, kernel_ns + copy_ns);
    fprintf(out, " (kernels ");
    print_ns(out, kernel_ns);
    fprintf(out, " in %.0f launches; copies and sets ", g.launches);
    print_ns(out, copy_ns);
    fprintf(out, " in %.0f, %.0f bytes)\n", g.copies, g.copied_bytes);
    const kscope__pmetric *dropped =
        kscope__pnode_metric(t->root, kscope__ptree_intern_cstr(t, "dropped_records"));
    if (dropped)
        fprintf(out, "dropped records: %.0f (the GPU totals are short by that many)\n",
                kscope__pmetric_number(dropped));
    if (kernel_ns + copy_ns > 0) {
        fputc('\n', out);
        kscope__top_print(out, t, (int)n, 0);
        report_scopes(&f, incl, calls,
                      "scopes by GPU time under them:", kscope__metric_total(&f, incl, time_up), n,
                      out);
    }
    /* PC samples: the hottest lines */
    kscope__pflat_values(t, &f, "num_samples", 0, samples);
    int sampled = 0;
    for (size_t i = 0; i < f.n && !sampled; i++)
        sampled = samples[i] > 0;
    if (sampled) {
        fprintf(out, "\nhottest source lines (PC samples):\n");
        kscope__lines_print(out, t, (int)n, 0);
    }
    double wall_total = kscope__metric_total(&f, wall, wall_up);
    report_scopes(&f, wall, calls, "scopes by host wall time:", wall_total, n, out);
    free(incl), free(samples), free(wall), free(calls);
    kscope__pflat_free(&f);
    kscope__ptree_free(t);
    return KSCOPE_EXIT_OK;
}

static int report_html(const char *out, int nfiles, char **files, const kscope__report_limits *lim)
{
    if (nfiles > 2) {
        fprintf(stderr, "kscope report: --html takes one profile, or two to compare, not %d\n",
                nfiles);
        return KSCOPE_EXIT_USAGE;
    }
    char err[KSCOPE__READ_ERRLEN], warn[KSCOPE__READ_ERRLEN];
    int rc = kscope__report_html(out, files[0], nfiles > 1 ? files[1] : NULL, lim, err, sizeof err,
                                 warn, sizeof warn);
    if (rc != 0) {
        fprintf(stderr, "kscope report: %s\n", err);
        return rc == KSCOPE_ENOMEM ? KSCOPE_EXIT_FAIL : KSCOPE_EXIT_USAGE;
    }
    if (warn[0])
        fprintf(stderr, "kscope report: warning: %s\n", warn);
    return KSCOPE_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
    long n = 10;
    const char *html = NULL;
    kscope__report_limits lim = kscope__report_default_limits();
    int first = 1;
    for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
        if (strcmp(argv[first], "--") == 0) {
            first++;
            break;
        }
        if (strcmp(argv[first], "-n") == 0 && first + 1 < argc) {
            char *end;
            n = strtol(argv[++first], &end, 10);
            if (*end || n < 0) {
                fprintf(stderr, "kscope report: -n needs a number >= 0, not '%s'\n", argv[first]);
                return KSCOPE_EXIT_USAGE;
            }
            continue;
        }
        size_t *limit = strcmp(argv[first], "--max-nodes") == 0          ? &lim.max_nodes
                        : strcmp(argv[first], "--max-track-events") == 0 ? &lim.max_track_events
                                                                         : NULL;
        if (limit && first + 1 < argc) {
            char *end;
            long v = strtol(argv[++first], &end, 10);
            if (*end || v < 1) {
                fprintf(stderr, "kscope report: %s needs a number >= 1, not '%s'\n",
                        argv[first - 1], argv[first]);
                return KSCOPE_EXIT_USAGE;
            }
            *limit = (size_t)v;
            continue;
        }
        if (strcmp(argv[first], "--html") == 0 && first + 1 < argc) {
            html = argv[++first];
            continue;
        }
        if (first + 1 == argc &&
            (limit || strcmp(argv[first], "-n") == 0 || strcmp(argv[first], "--html") == 0)) {
            fprintf(stderr, "kscope report: %s needs a value\n", argv[first]);
            return KSCOPE_EXIT_USAGE;
        }
        fprintf(stderr, "kscope report: unknown option '%s' (see `kscope report --help`)\n",
                argv[first]);
        return KSCOPE_EXIT_USAGE;
    }
    if (first >= argc) {
        fprintf(stderr, "kscope report: no FILE given (see `kscope report --help`)\n");
        return KSCOPE_EXIT_USAGE;
    }
    if (html)
        return report_html(html, argc - first, argv + first, &lim);
    int rc = KSCOPE_EXIT_OK;
    for (int i = first; i < argc; i++) {
        if (i > first)
            fputc('\n', stdout);
        int r = report_one(argv[i], n, stdout);
        rc = rc ? rc : r;
    }
    return rc;
}
