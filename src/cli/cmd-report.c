/*
 * cmd-report.c - `kscope report`: a one-page summary of a profile, the
 * first thing to read after a run: the devices and their peaks, where GPU
 * time went (kernels, copies), the heaviest kernels, and the scopes that
 * hold the most GPU time and host wall time. With --html, one
 * self-contained HTML page instead (src/report/).
 */
#include "cli/cmd.h"
#include "format/file-out.h"
#include "kscope.h"
#include "read/read.h"
#include "report/report.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char cmd_report_summary[] = "summarise a profile: devices, GPU time, top kernels and scopes";
const char cmd_report_help[] =
    "usage: kscope report [-n N] FILE...\n"
    "       kscope report --html OUT.html PROFILE [PROFILE2]\n"
    "       kscope report --html OUT.html DATASET\n"
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
    "A folder given to --html is a fleet dataset (kscope fleet export): the\n"
    "page is the fleet page (rank x scope heat map of time and imbalance,\n"
    "stragglers, top kernels), made by `kscope fleet report` (see `kscope help\n"
    "fleet`; -n N goes with it).\n"
    "\n"
    "options:\n"
    "  -n N        rows per table (default 10)\n"
    "  --html OUT  write the HTML page to OUT\n"
    "  --max-nodes N, --max-track-events N\n"
    "              the HTML page's limits (defaults 200000, 250000)\n"
    "  -h, --help  this text\n"
    "\n"
    "OUT is written whole: until the page is complete the old OUT stays as it\n"
    "was (a symbolic link is written through, a device or FIFO in place).\n"
    "On success `kscope report: wrote OUT (SIZE)` goes to stderr.\n"
    "\n"
    "Exit status: 0; 2 on bad options or when a file cannot be read (one line\n"
    "naming it); 1 when OUT cannot be written (one line naming it and why).\n";

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
    double *calls = malloc(f.n * sizeof *calls);
    kscope__gpu_split g;
    if (!incl || !samples || !calls || kscope__gpu_split_of(t, &g) < 0) {
        fprintf(stderr, "kscope report: %s: out of memory\n", KSCOPE__PATH(path));
        free(incl), free(samples), free(calls);
        kscope__pflat_free(&f);
        kscope__ptree_free(t);
        return KSCOPE_EXIT_FAIL;
    }
    /* what `kscope view` shows for each: rolled up where the metric does */
    int time_up = kscope__metric_values(t, &f, "time (ns)", incl);
    kscope__pflat_values(t, &f, "calls", 0, calls);
    double kernel_ns = g.kernel_ns, copy_ns = g.copy_ns;
    fprintf(out, "== %s\n", KSCOPE__PATH(path));
    report_devices(t, out);
    fprintf(out, "GPU time: ");
    kscope__print_ns(out, kernel_ns + copy_ns);
    fprintf(out, " (kernels ");
    kscope__print_ns(out, kernel_ns);
    fprintf(out, " in %.0f launches; copies and sets ", g.launches);
    kscope__print_ns(out, copy_ns);
    fprintf(out, " in %.0f, %.0f bytes)\n", g.copies, g.copied_bytes);
    const kscope__pmetric *dropped =
        kscope__pnode_metric(t->root, kscope__ptree_intern_cstr(t, "dropped_records"));
    if (dropped)
        fprintf(out, "dropped records: %.0f (the GPU totals are short by that many)\n",
                kscope__pmetric_number(dropped));
    if (kernel_ns + copy_ns > 0) {
        fputc('\n', out);
        kscope__top_print(out, t, (int)n, 0);
        kscope__scopes_print(out, &f, incl, calls, "scopes by GPU time under them:",
                             kscope__metric_total(&f, incl, time_up), n);
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
    kscope__scopes_by_wall(out, t, &f, n);
    free(incl), free(samples), free(calls);
    kscope__pflat_free(&f);
    kscope__ptree_free(t);
    return KSCOPE_EXIT_OK;
}

static int is_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A fleet dataset's page: the fleet command makes it, from the same
 * queries as its summary (cmd-fleet.c). */
static int report_fleet(const char *out, const char *dir, long n)
{
    char rows[32];
    snprintf(rows, sizeof rows, "%ld", n);
    char *args[] = {"report", "--html", (char *)out, (char *)dir, "-n", rows};
    return kscope_cli_fleet_exec("kscope report", n > 0 ? 6 : 4, args);
}

/* The page into OUT, whole (format/file-out.h): bad input or a failed
 * write leaves an existing OUT as it was. */
static int report_html(const char *out, int nfiles, char **files, const kscope__report_limits *lim)
{
    if (nfiles > 2) {
        fprintf(stderr, "kscope report: --html takes one profile, or two to compare, not %d\n",
                nfiles);
        return KSCOPE_EXIT_USAGE;
    }
    char err[KSCOPE__READ_ERRLEN], warn[KSCOPE__READ_ERRLEN];
    kscope__out o;
    if (kscope__out_open(&o, out, err, sizeof err) < 0)
        return kscope_cli_write_failed("report", err, sizeof err);
    FILE *f = kscope__out_stream(&o);
    int rc = f ? kscope__report_page(f, files[0], nfiles > 1 ? files[1] : NULL, lim, err,
                                     sizeof err, warn, sizeof warn)
               : KSCOPE_ENOMEM;
    if (rc != 0 && !o.err) { /* an input, not OUT */
        kscope__out_abort(&o);
        fprintf(stderr, "kscope report: %s\n", rc == KSCOPE_ENOMEM ? "out of memory" : err);
        return rc == KSCOPE_ENOMEM ? KSCOPE_EXIT_FAIL : KSCOPE_EXIT_USAGE;
    }
    if (kscope__out_commit(&o, err, sizeof err) < 0)
        return kscope_cli_write_failed("report", err, sizeof err);
    if (warn[0])
        fprintf(stderr, "kscope report: warning: %s\n", warn);
    kscope_cli_wrote("report", out);
    return KSCOPE_EXIT_OK;
}

/* `kscope report out.html a.hatchet`: the page was meant (--html left
 * out). Says so with the command that writes it; 1 when it did. */
static int forgot_html(const char *file, int nfiles, char **files)
{
    const char *dot = strrchr(file, '.');
    if (!dot || (strcmp(dot, ".html") != 0 && strcmp(dot, ".htm") != 0))
        return 0;
    char name[512], cmd[2048];
    int n = snprintf(cmd, sizeof cmd, "kscope report --html %s", file);
    for (int i = 0; i < nfiles && n > 0 && (size_t)n < sizeof cmd; i++)
        if (files[i] != file)
            n += snprintf(cmd + n, sizeof cmd - (size_t)n, " %s", files[i]);
    fprintf(stderr,
            "kscope report: %s is an HTML name, not a profile: --html writes the page there "
            "(`%s`)\n",
            kscope__escape(file, name, sizeof name), kscope__escape(cmd, cmd, sizeof cmd));
    return 1;
}

int cmd_report(int argc, char **argv)
{
    long n = 10;
    int n_given = 0;
    const char *html = NULL;
    kscope__report_limits lim = kscope__report_default_limits();
    int first = 1;
    for (; first < argc && argv[first][0] == '-' && argv[first][1]; first++) {
        if (strcmp(argv[first], "--") == 0) {
            first++;
            break;
        }
        if (strcmp(argv[first], "-n") == 0 && first + 1 < argc) {
            n_given = 1;
            if (kscope_cli_whole(argv[++first], 0, LONG_MAX, &n) != 0)
                return kscope_cli_error("report", KSCOPE_EXIT_USAGE,
                                        "-n needs a number >= 0, not '%s'", argv[first]);
            continue;
        }
        size_t *limit = strcmp(argv[first], "--max-nodes") == 0          ? &lim.max_nodes
                        : strcmp(argv[first], "--max-track-events") == 0 ? &lim.max_track_events
                                                                         : NULL;
        if (limit && first + 1 < argc) {
            long v;
            if (kscope_cli_whole(argv[++first], 1, LONG_MAX, &v) != 0)
                return kscope_cli_error("report", KSCOPE_EXIT_USAGE,
                                        "%s needs a number >= 1, not '%s'", argv[first - 1],
                                        argv[first]);
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
    if (is_folder(argv[first]) && (!html || argc - first > 1)) {
        char shown[1024];
        fprintf(stderr,
                "kscope report: %s is a folder: a fleet dataset's page is `kscope report "
                "--html OUT DIR` (one folder); its summary `kscope fleet summary DIR`\n",
                kscope__escape(argv[first], shown, sizeof shown));
        return KSCOPE_EXIT_USAGE;
    }
    if (html && is_folder(argv[first]))
        return report_fleet(html, argv[first], n_given ? n : 0);
    if (html)
        return report_html(html, argc - first, argv + first, &lim);
    for (int i = first; i < argc; i++)
        if (forgot_html(argv[i], argc - first, argv + first))
            return KSCOPE_EXIT_USAGE;
    int rc = KSCOPE_EXIT_OK;
    for (int i = first; i < argc; i++) {
        if (i > first)
            fputc('\n', stdout);
        int r = report_one(argv[i], n, stdout);
        rc = rc ? rc : r;
    }
    return rc;
}
