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
    "Print a one-page summary of each profile (.hatchet, .hatchet_msgpack or\n"
    "Chrome trace JSON, ours or Proton's):\n"
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
    "OUT is written whole: until the page is complete the old OUT stays as it\n"
    "was (a symbolic link is written through, a device or FIFO in place).\n"
    "On success `kscope report: wrote OUT (SIZE)` goes to stderr.\n"
    "\n"
    "Exit status: 0; 2 on bad options or when a file cannot be read (one line\n"
    "naming it); 1 when OUT cannot be written (one line naming it and why).\n";

static int is_copy(const kscope__pnode *n)
{
    return strncmp(n->name, "Memcpy", 6) == 0 || strncmp(n->name, "Memset", 6) == 0 ||
           strncmp(n->name, "[memcpy", 7) == 0 || strncmp(n->name, "[memset", 7) == 0;
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
        fprintf(stderr, "kscope report: %s: out of memory\n", path);
        kscope__ptree_free(t);
        return KSCOPE_EXIT_FAIL;
    }
    double *own = malloc(f.n * sizeof *own), *incl = malloc(f.n * sizeof *incl);
    double *count = malloc(f.n * sizeof *count), *bytes = malloc(f.n * sizeof *bytes);
    double *calls = malloc(f.n * sizeof *calls);
    if (!own || !incl || !count || !bytes || !calls) {
        fprintf(stderr, "kscope report: %s: out of memory\n", path);
        free(own), free(incl), free(count), free(bytes), free(calls);
        kscope__pflat_free(&f);
        kscope__ptree_free(t);
        return KSCOPE_EXIT_FAIL;
    }
    kscope__pflat_values(t, &f, "time (ns)", 0, own);
    kscope__pflat_values(t, &f, "time (ns)", 1, incl);
    kscope__pflat_values(t, &f, "count", 0, count);
    kscope__pflat_values(t, &f, "bytes", 0, bytes);
    kscope__pflat_values(t, &f, "calls", 0, calls);

    double kernel_ns = 0, copy_ns = 0, launches = 0, copies = 0, copied = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (!kscope__pnode_is_device(f.node[i]) || isnan(own[i]))
            continue;
        double c = isnan(count[i]) ? 0 : count[i];
        if (is_copy(f.node[i])) {
            copy_ns += own[i];
            copies += c;
            copied += isnan(bytes[i]) ? 0 : bytes[i];
        } else {
            kernel_ns += own[i];
            launches += c;
        }
    }
    fprintf(out, "== %s\n", path);
    report_devices(t, out);
    fprintf(out, "GPU time: ");
    kscope__print_ns(out, kernel_ns + copy_ns);
    fprintf(out, " (kernels ");
    kscope__print_ns(out, kernel_ns);
    fprintf(out, " in %.0f launches; copies and sets ", launches);
    kscope__print_ns(out, copy_ns);
    fprintf(out, " in %.0f, %.0f bytes)\n", copies, copied);
    const kscope__pmetric *dropped =
        kscope__pnode_metric(t->root, kscope__ptree_intern_cstr(t, "dropped_records"));
    if (dropped)
        fprintf(out, "dropped records: %.0f (the GPU totals are short by that many)\n",
                kscope__pmetric_number(dropped));
    if (kernel_ns + copy_ns > 0) {
        fputc('\n', out);
        kscope__top_print(out, t, (int)n, 0);
        kscope__scopes_print(out, &f, incl, calls,
                             "scopes by GPU time under them:", kernel_ns + copy_ns, n);
    }
    /* PC samples: the hottest lines (bytes' array is free again) */
    kscope__pflat_values(t, &f, "num_samples", 0, bytes);
    int sampled = 0;
    for (size_t i = 0; i < f.n && !sampled; i++)
        sampled = bytes[i] > 0;
    if (sampled) {
        fprintf(out, "\nhottest source lines (PC samples):\n");
        kscope__lines_print(out, t, (int)n, 0);
    }
    kscope__scopes_by_wall(out, t, &f, n);
    free(own), free(incl), free(count), free(bytes), free(calls);
    kscope__pflat_free(&f);
    kscope__ptree_free(t);
    return KSCOPE_EXIT_OK;
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
    if (kscope__out_open(&o, out, err, sizeof err) < 0) {
        kscope__escape_in_place(err, sizeof err);
        fprintf(stderr, "kscope report: %s\n", err);
        return KSCOPE_EXIT_FAIL;
    }
    FILE *f = kscope__out_stream(&o);
    int rc = f ? kscope__report_page(f, files[0], nfiles > 1 ? files[1] : NULL, lim, err,
                                     sizeof err, warn, sizeof warn)
               : KSCOPE_ENOMEM;
    if (rc != 0 && !o.err) { /* an input, not OUT */
        kscope__out_abort(&o);
        fprintf(stderr, "kscope report: %s\n", rc == KSCOPE_ENOMEM ? "out of memory" : err);
        return rc == KSCOPE_ENOMEM ? KSCOPE_EXIT_FAIL : KSCOPE_EXIT_USAGE;
    }
    if (kscope__out_commit(&o, err, sizeof err) < 0) {
        kscope__escape_in_place(err, sizeof err);
        fprintf(stderr, "kscope report: %s\n", err);
        return KSCOPE_EXIT_FAIL;
    }
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
