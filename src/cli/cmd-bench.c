/*
 * cmd-bench.c - `kscope bench`: what kscope costs per GPU launch on this
 * machine, every way of running it measured in one run.
 *
 * A loop of empty kernels (the GPU backend's bench: launched through the
 * driver, no compiler needed) runs in a process of its own per way, the
 * ways alternating round after round so that a busy stretch of the machine
 * falls on all of them: bare, the floor (the backend's bare activity
 * capture, what any tracer of that interface pays), kscope in-process,
 * `kscope run` and `kscope run --sample`; then kscope's own states (shut,
 * quiet, open) interleaved in one process. Where python3 has torch on the
 * same GPU, a torch loop of tiny ops runs bare, under kscope run (full and
 * sampled), Proton and torch.profiler. The command runs itself for the
 * loop (`kscope bench --child MODE N`) and prints medians, quartiles and
 * ratios, with a bootstrap interval for what each way adds over the floor.
 */
#define _GNU_SOURCE
#include "cli/cmd.h"
#include "kscope-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char cmd_bench_summary[] = "measure what kscope costs per GPU launch on this machine";
const char cmd_bench_help[] =
    "usage: kscope bench [options]\n"
    "\n"
    "Measure what kscope costs per {device_type} launch here, every way in one run.\n"
    "A loop of empty kernels runs in a process of its own per way, the ways\n"
    "alternating round after round:\n"
    "  bare        no profiler\n"
    "  floor       the bare activity capture that any tracer of the\n"
    "              {default_backend} interface pays (kernel records, no callbacks)\n"
    "  in-process  a kscope session started by the program\n"
    "  kscope run  kscope run -- the loop (tree): a program that never annotates,\n"
    "              whose launches kscope need not follow one by one\n"
    "  kscope run, annotated  the same with the loop inside one scope: every\n"
    "              launch is followed to tell its scope\n"
    "  sampled     kscope run --sample SPEC -- the loop\n"
    "Then one process interleaves kscope's own states, a block of launches\n"
    "each per round, the loop inside a scope and one step in three captured:\n"
    "shut (nothing captured), quiet (activity records only: kscope's floor)\n"
    "and open (every launch followed); what open adds over shut, as a\n"
    "multiple of what quiet adds, is the cost of telling each launch's scope,\n"
    "free of the drift between processes.\n"
    "Where python3 has torch on the same GPU, a loop of tiny torch ops runs\n"
    "bare, under kscope run (full and sampled), Proton (if installed) and\n"
    "torch.profiler. Each table gives per way the median microseconds per\n"
    "launch, its quartiles and the ratio to bare; for the kernel loop, what\n"
    "the way adds over bare as a multiple of what the floor adds, with a\n"
    "bootstrap 95% interval over rounds (the machine's noise can be as large\n"
    "as the costs: read the intervals).\n"
    "\n"
    "options:\n"
    "  -n, --launches N     launches per loop (default 20000, at least 100)\n"
    "  -r, --rounds R       rounds of the kernel loop (default 9, at least 3)\n"
    "      --torch-rounds R rounds of the torch loop (default 3; 0: none)\n"
    "      --sample SPEC    the sampled way (default time:on=1ms,every=1h,first=1h:\n"
    "                       no window opens in the loop, so it measures what a\n"
    "                       launch costs between windows)\n"
    "      --child MODE N   run one loop (bare, floor, inproc, scoped, or interleaved\n"
    "                       with blocks of N) and print its microseconds per launch\n"
    "                       (what kscope bench runs)\n"
    "\n"
    "Exit status: 0; 2 on bad options; 77 when this machine has no GPU (one\n"
    "line says why).\n";

#define OFF_SPEC        "time:on=1ms,every=1h,first=1h"
#define INTERLEAVE_SPEC "step:on=1,every=3"
#define MAX_WAYS        8
#define MAX_ROUND       200
#define DRAWS           4000

typedef struct bench_opts {
    long launches, rounds, torch_rounds;
    const char *sample, *child;
} bench_opts;

typedef struct way {
    const char *label;
    char *argv[24];
    double v[MAX_ROUND]; /* NaN: that run failed */
} way;

/* A torch loop of tiny ops on the default accelerator (no vendor's name:
 * torch.accelerator picks it): argv N MODE, prints "us X". */
static const char torch_loop[] = "import sys, time\n"
                                 "import torch\n"
                                 "acc = getattr(torch, 'accelerator', None)\n"
                                 "if acc is None or not acc.is_available():\n"
                                 "    sys.exit(77)\n"
                                 "mode = sys.argv[2]\n"
                                 "if mode == 'check':\n"
                                 "    try:\n"
                                 "        import triton.profiler\n"
                                 "        print('proton')\n"
                                 "    except Exception:\n"
                                 "        print('no-proton')\n"
                                 "    sys.exit(0)\n"
                                 "n = int(sys.argv[1])\n"
                                 "x = torch.zeros(1, device=acc.current_accelerator())\n"
                                 "def loop(k):\n"
                                 "    t0 = time.perf_counter()\n"
                                 "    for _ in range(k):\n"
                                 "        x.add_(1)\n"
                                 "    acc.synchronize()\n"
                                 "    return time.perf_counter() - t0\n"
                                 "loop(2000)\n"
                                 "if mode == 'proton':\n"
                                 "    import triton.profiler as proton\n"
                                 "    proton.start('kscope_bench_proton')\n"
                                 "    loop(500)\n"
                                 "    dt = loop(n)\n"
                                 "    proton.finalize()\n"
                                 "elif mode == 'torch_profiler':\n"
                                 "    from torch.profiler import profile, supported_activities\n"
                                 "    with profile(activities=supported_activities()):\n"
                                 "        loop(500)\n"
                                 "        dt = loop(n)\n"
                                 "else:\n"
                                 "    dt = loop(n)\n"
                                 "print(f'us {dt * 1e6 / n:.4f}')\n";

/* ----------------------------------------------------------- parsing */

static int count_arg(const char *opt, const char *v, long least, long most, long *out)
{
    if (kscope_cli_whole(v, least, most, out) == 0)
        return 0;
    fprintf(stderr, "kscope bench: %s needs a whole number from %ld to %ld, not '%s'\n", opt, least,
            most, v);
    return -1;
}

static int parse_args(int argc, char **argv, bench_opts *o)
{
    *o = (bench_opts){.launches = 20000, .rounds = 9, .torch_rounds = 3, .sample = OFF_SPEC};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = strcmp(a, "-n") == 0 || strcmp(a, "--launches") == 0 || strcmp(a, "-r") == 0 ||
                    strcmp(a, "--rounds") == 0 || strcmp(a, "--torch-rounds") == 0 ||
                    strcmp(a, "--sample") == 0 || strcmp(a, "--child") == 0;
        if (!takes)
            return kscope_cli_usage("bench", "unknown option '%s'", a);
        if (!v || (strcmp(a, "--child") == 0 && i + 2 >= argc))
            return kscope_cli_usage("bench", "option %s needs a value", a);
        i++;
        int rc = 0;
        if (strcmp(a, "-n") == 0 || strcmp(a, "--launches") == 0)
            rc = count_arg(a, v, 100, 100000000, &o->launches);
        else if (strcmp(a, "-r") == 0 || strcmp(a, "--rounds") == 0)
            rc = count_arg(a, v, 3, MAX_ROUND, &o->rounds);
        else if (strcmp(a, "--torch-rounds") == 0)
            rc = count_arg(a, v, 0, MAX_ROUND, &o->torch_rounds);
        else if (strcmp(a, "--sample") == 0)
            o->sample = v;
        else if (strcmp(a, "--child") == 0) {
            o->child = v;
            rc = count_arg("--child", argv[++i], 1, 100000000, &o->launches);
        }
        if (rc)
            return KSCOPE_EXIT_USAGE;
    }
    if (kscope__sampling_check(o->sample) != 0)
        return kscope_cli_usage("bench", "%s", kscope_last_error());
    return 0;
}

/* The registry's first backend with a launch loop, or NULL. */
static const kscope__backend *bench_backend(void)
{
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        if (b->start && b->bench)
            return b;
    return NULL;
}

/* ------------------------------------------------------------- child */

/* The interleaved way's block hook: a step of its sampled session. */
static void next_step(int block, void *arg)
{
    (void)block, (void)arg;
    kscope_step();
}

/* The session of an in-process way, written into the current folder (and
 * removed after): "inproc" every launch, "interleaved" one step in three. */
static int child_session(int interleaved)
{
    kscope_session_opts so = {.name =
                                  interleaved ? "kscope-bench-interleaved" : "kscope-bench-inproc",
                              .sample = interleaved ? INTERLEAVE_SPEC : "off"};
    int s = kscope_start(&so);
    if (s < 0)
        fprintf(stderr, "kscope bench: cannot start a session: %s\n", kscope_last_error());
    return s;
}

/* The interleaved way's rounds: block b ran after step b + 1, captured when
 * that step is a multiple of three (open), quiet the step after, shut the
 * next. Prints "round R shut S quiet Q open O" per round. */
static void print_rounds(const double *block_us, long rounds)
{
    for (long r = 0; r < rounds; r++) {
        double st[3]; /* open, quiet, shut */
        for (int k = 0; k < 3; k++)
            st[(r * 3 + k + 1) % 3] = block_us[r * 3 + k];
        printf("round %ld shut %.4f quiet %.4f open %.4f\n", r, st[2], st[1], st[0]);
    }
}

/* One loop in this process; prints "us X records R device NAME" (the
 * interleaved way its rounds first). */
static int run_child(const bench_opts *o)
{
    int floor = strcmp(o->child, "floor") == 0, inproc = strcmp(o->child, "inproc") == 0;
    int scoped = strcmp(o->child, "scoped") == 0;
    int interleaved = strcmp(o->child, "interleaved") == 0;
    if (!floor && !inproc && !scoped && !interleaved && strcmp(o->child, "bare") != 0)
        return kscope_cli_usage(
            "bench", "--child '%s': use bare, floor, inproc, scoped or interleaved", o->child);
    const kscope__backend *b = bench_backend();
    if (!b) {
        fprintf(stderr, "kscope bench: this kscope was built without a GPU backend\n");
        return KSCOPE_EXIT_SKIP;
    }
    int s = inproc || interleaved ? child_session(interleaved) : -1;
    if ((inproc || interleaved) && s < 0)
        return KSCOPE_EXIT_FAIL;
    static double block_us[3 * MAX_ROUND];
    kscope__bench_loop loop = {.launches = o->launches,
                               .blocks = interleaved ? (int)(3 * o->rounds) : 1,
                               .floor = floor,
                               .before = interleaved ? next_step : NULL,
                               .block_us = interleaved ? block_us : NULL};
    kscope__bench_result r;
    if (scoped || interleaved) /* an annotated program: every launch is followed */
        kscope_enter("kscope-bench-loop");
    int rc = b->bench(&loop, &r);
    if (scoped || interleaved)
        kscope_exit("kscope-bench-loop");
    if (s >= 0) {
        kscope_finalize(s, NULL);
        unlink(interleaved ? "kscope-bench-interleaved.hatchet" : "kscope-bench-inproc.hatchet");
    }
    if (rc < 0) {
        fprintf(stderr, "kscope bench: %s\n", kscope_last_error());
        return rc == KSCOPE_ENOGPU ? KSCOPE_EXIT_SKIP : KSCOPE_EXIT_FAIL;
    }
    if (interleaved)
        print_rounds(block_us, o->rounds);
    printf("us %.4f records %llu device %s\n", r.us_per_launch, (unsigned long long)r.records,
           r.device);
    return KSCOPE_EXIT_OK;
}

/* -------------------------------------------------------- processes */

/* Run argv in dir; its stdout into out, the last line of its stderr into
 * err. Returns its exit status (128+N for signal N), -1 if it did not run. */
static int run_capture(char *const argv[], const char *dir, char *out, size_t outsz, char *err,
                       size_t errsz)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        if (dir && chdir(dir) != 0)
            _exit(127);
        execv(argv[0], argv);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    size_t no = 0, ne = 0;
    char ebuf[8192];
    struct pollfd p[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
    int open_fds = pid > 0 ? 2 : 0;
    while (open_fds > 0) {
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char tmp[4096];
            ssize_t k = read(p[i].fd, tmp, sizeof tmp);
            if (k <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
                open_fds--;
                continue;
            }
            char *dst = i == 0 ? out : ebuf;
            size_t *used = i == 0 ? &no : &ne, cap = i == 0 ? outsz : sizeof ebuf;
            for (ssize_t j = 0; j < k; j++) {
                if (*used + 1 >= cap) /* keep the end of a long stream */
                    *used = 0;
                dst[(*used)++] = tmp[j];
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    out[no] = '\0';
    ebuf[ne] = '\0';
    while (ne > 0 && ebuf[ne - 1] == '\n')
        ebuf[--ne] = '\0';
    const char *last = strrchr(ebuf, '\n');
    const char *line = last ? last + 1 : ebuf;
    size_t n = strlen(line) < errsz ? strlen(line) : errsz - 1; /* the line, cut to fit */
    memcpy(err, line, n);
    err[n] = '\0';
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The number after "us " in a loop's output, NaN when there is none. */
static double us_of(const char *out)
{
    const char *p = strstr(out, "us ");
    while (p && p != out && p[-1] != '\n')
        p = strstr(p + 1, "us ");
    return p ? strtod(p + 3, NULL) : NAN;
}

/* -------------------------------------------------------------- stats */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of sorted s[0..k), interpolated. */
static double sorted_quantile(const double *s, long k, double q)
{
    double pos = q * (double)(k - 1);
    long lo = (long)pos;
    return lo + 1 < k ? s[lo] + (pos - (double)lo) * (s[lo + 1] - s[lo]) : s[lo];
}

/* The q-quantile (0..1) of the values of v[0..n) (n <= MAX_ROUND) that
 * are not NaN; NaN if none. */
static double quantile(const double *v, long n, double q)
{
    double s[MAX_ROUND];
    long k = 0;
    for (long i = 0; i < n && k < MAX_ROUND; i++)
        if (!isnan(v[i]))
            s[k++] = v[i];
    if (k == 0)
        return NAN;
    qsort(s, (size_t)k, sizeof *s, cmp_double);
    return sorted_quantile(s, k, q);
}

/* (median(w) - median(bare)) / (median(floor) - median(bare)) over the
 * rounds in pick[0..n); NaN when the floor adds nothing. */
static double vs_floor(const way *w, const way *bare, const way *floor, const long *pick, long n)
{
    double a[MAX_ROUND], b[MAX_ROUND], f[MAX_ROUND];
    for (long i = 0; i < n; i++) {
        a[i] = w->v[pick[i]];
        b[i] = bare->v[pick[i]];
        f[i] = floor->v[pick[i]];
    }
    double mb = quantile(b, n, 0.5), mf = quantile(f, n, 0.5) - mb;
    return mf > 0 ? (quantile(a, n, 0.5) - mb) / mf : NAN;
}

/* The bootstrap 95% interval of vs_floor: rounds drawn with replacement. */
static void interval(const way *w, const way *bare, const way *floor, long rounds, double *lo,
                     double *hi)
{
    long full[MAX_ROUND], nfull = 0, pick[MAX_ROUND];
    for (long r = 0; r < rounds; r++)
        if (!isnan(w->v[r]) && !isnan(bare->v[r]) && !isnan(floor->v[r]))
            full[nfull++] = r;
    *lo = *hi = NAN;
    if (nfull < 3)
        return;
    static double d[DRAWS];
    long nd = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < DRAWS; k++) {
        for (long i = 0; i < nfull; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            pick[i] = full[(seed >> 33) % (uint64_t)nfull];
        }
        double v = vs_floor(w, bare, floor, pick, nfull);
        if (!isnan(v))
            d[nd++] = v;
    }
    if (nd < DRAWS / 2)
        return;
    qsort(d, (size_t)nd, sizeof *d, cmp_double);
    *lo = sorted_quantile(d, nd, 0.025);
    *hi = sorted_quantile(d, nd, 0.975);
}

/* The table of ways[0..nways): ways[0] is the base ("vs bare"), and with
 * with_floor ways[1] the floor; `names` the base's and the floor's
 * column names (NULL: "bare", "floor"). */
static void print_table(const char *title, way *ways, int nways, long rounds, int with_floor,
                        const char *const names[2])
{
    const char *base = names ? names[0] : "bare", *fl = names ? names[1] : "floor";
    char col[32];
    printf("\n%s\n", title);
    snprintf(col, sizeof col, "vs %s", base);
    printf("%-30s%5s%9s%9s%9s%9s", "way", "runs", "median", "q1", "q3", col);
    snprintf(col, sizeof col, "vs %s", fl);
    if (with_floor)
        printf("%10s%16s", col, "95% interval");
    printf("   (us per launch)\n");
    double bare = quantile(ways[0].v, rounds, 0.5);
    for (int i = 0; i < nways; i++) {
        way *w = &ways[i];
        long runs = 0;
        for (long r = 0; r < rounds; r++)
            runs += !isnan(w->v[r]);
        printf("%-30s%5ld", w->label, runs);
        if (runs == 0) {
            printf("   (every run failed)\n");
            continue;
        }
        double m = quantile(w->v, rounds, 0.5);
        printf("%9.3f%9.3f%9.3f", m, quantile(w->v, rounds, 0.25), quantile(w->v, rounds, 0.75));
        if (isnan(bare))
            printf("%9s", "-");
        else
            printf("%9.3f", m / bare);
        if (with_floor) {
            long full[MAX_ROUND], nfull = 0; /* the rounds where all three ran */
            for (long r = 0; r < rounds; r++)
                if (!isnan(w->v[r]) && !isnan(ways[0].v[r]) && !isnan(ways[1].v[r]))
                    full[nfull++] = r;
            double lo, hi, v = nfull ? vs_floor(w, &ways[0], &ways[1], full, nfull) : NAN;
            interval(w, &ways[0], &ways[1], rounds, &lo, &hi);
            if (isnan(v))
                printf("%10s", "-");
            else
                printf("%10.2f", v);
            char ci[48] = "-";
            if (!isnan(lo))
                snprintf(ci, sizeof ci, "%.2f - %.2f", lo, hi);
            printf("%16s", ci);
        }
        printf("\n");
    }
}

/* ------------------------------------------------------------- parent */

typedef struct plan {
    way ways[MAX_WAYS];
    int nways;
    char self[PATH_MAX], n[32], dir[PATH_MAX];
} plan;

/* A way with this label and no run yet (every value NaN). */
static void way_init(way *w, const char *label)
{
    w->label = label;
    for (int r = 0; r < MAX_ROUND; r++)
        w->v[r] = NAN;
}

/* A way: its label and argv (NULL-ended list of strings, copied). */
static way *add_way(plan *p, const char *label, const char *const *args)
{
    way *w = &p->ways[p->nways++];
    way_init(w, label);
    int i = 0;
    for (; args[i] && i < 23; i++)
        w->argv[i] = (char *)args[i];
    w->argv[i] = NULL;
    return w;
}

/* Run every way `rounds` times, the order rotating each round. */
static void run_rounds(plan *p, long rounds, int quiet)
{
    char out[4096], err[512];
    for (long r = 0; r < rounds; r++) {
        for (int i = 0; i < p->nways; i++) {
            way *w = &p->ways[(i + r) % p->nways];
            int rc = run_capture(w->argv, p->dir, out, sizeof out, err, sizeof err);
            w->v[r] = rc == 0 ? us_of(out) : NAN;
            if (rc != 0 && !quiet)
                fprintf(stderr, "kscope bench: %s, round %ld: exit %d%s%s\n", w->label, r + 1, rc,
                        err[0] ? ": " : "", err);
        }
    }
}

static void kernel_ways(plan *p, const bench_opts *o)
{
    const char *s = p->self, *n = p->n;
    add_way(p, "bare", (const char *[]){s, "bench", "--child", "bare", n, NULL});
    add_way(p, "floor", (const char *[]){s, "bench", "--child", "floor", n, NULL});
    add_way(p, "in-process", (const char *[]){s, "bench", "--child", "inproc", n, NULL});
    add_way(p, "kscope run",
            (const char *[]){s, "run", "--top", "0", "-o", p->dir, "--", s, "bench", "--child",
                             "bare", n, NULL});
    add_way(p, "kscope run, annotated",
            (const char *[]){s, "run", "--top", "0", "-o", p->dir, "--", s, "bench", "--child",
                             "scoped", n, NULL});
    add_way(p, strcmp(o->sample, OFF_SPEC) == 0 ? "sampled (between windows)" : "sampled",
            (const char *[]){s, "run", "--sample", o->sample, "--top", "0", "-o", p->dir, "--", s,
                             "bench", "--child", "bare", n, NULL});
}

static void torch_ways(plan *p, const bench_opts *o, int proton)
{
    const char *s = p->self, *n = p->n, *py = "python3", *c = "-c", *t = torch_loop;
    add_way(p, "bare", (const char *[]){py, c, t, n, "bare", NULL});
    add_way(
        p, "kscope run",
        (const char *[]){s, "run", "--top", "0", "-o", p->dir, "--", py, c, t, n, "bare", NULL});
    add_way(p, strcmp(o->sample, OFF_SPEC) == 0 ? "sampled (between windows)" : "sampled",
            (const char *[]){s, "run", "--sample", o->sample, "--top", "0", "-o", p->dir, "--", py,
                             c, t, n, "bare", NULL});
    if (proton)
        add_way(p, "Proton", (const char *[]){py, c, t, n, "proton", NULL});
    add_way(p, "torch.profiler", (const char *[]){py, c, t, n, "torch_profiler", NULL});
}

/* The interleaved way: kscope's three states in one process (shut, quiet,
 * open), a block of launches each per round, so that what following the
 * launches adds is measured against kscope's own floor without the drift
 * between processes. Its rounds: three per round of the other ways. */
static void interleaved_part(const bench_opts *o, plan *p)
{
    long rounds = 3 * o->rounds < MAX_ROUND ? 3 * o->rounds : MAX_ROUND;
    long block = o->launches / 4 > 100 ? o->launches / 4 : 100;
    char r_arg[32], n_arg[32], err[512];
    snprintf(r_arg, sizeof r_arg, "%ld", rounds);
    snprintf(n_arg, sizeof n_arg, "%ld", block);
    char *argv[] = {p->self, "bench", "-r", r_arg, "--child", "interleaved", n_arg, NULL};
    size_t cap = 64 * (size_t)MAX_ROUND + 4096;
    char *out = malloc(cap);
    way *w = calloc(3, sizeof *w);
    if (!out || !w) {
        free(out);
        free(w);
        return;
    }
    static const char *const labels[3] = {"shut (no capture)", "quiet (activity records)",
                                          "open (every launch followed)"};
    for (int k = 0; k < 3; k++)
        way_init(&w[k], labels[k]);
    int rc = run_capture(argv, p->dir, out, cap, err, sizeof err);
    for (const char *line = out; rc == 0 && line && *line; line = strchr(line, '\n')) {
        line += *line == '\n';
        long r;
        double sh, qu, op;
        if (sscanf(line, "round %ld shut %lf quiet %lf open %lf", &r, &sh, &qu, &op) == 4 &&
            r >= 0 && r < rounds)
            w[0].v[r] = sh, w[1].v[r] = qu, w[2].v[r] = op;
    }
    char title[200];
    snprintf(title, sizeof title,
             "kscope in one process, one step in three captured: %ld rounds of %ld launches "
             "per state",
             rounds, block);
    if (rc != 0)
        printf("\n%s: failed (exit %d%s%s)\n", title, rc, err[0] ? ": " : "", err);
    else
        print_table(title, w, 3, rounds, 1, (const char *const[2]){"shut", "quiet"});
    free(out);
    free(w);
}

/* The torch loop, where python3 has torch on a GPU. */
static void torch_part(const bench_opts *o, plan *base)
{
    plan *p = calloc(1, sizeof *p);
    if (!p)
        return;
    memcpy(p->self, base->self, sizeof p->self);
    memcpy(p->n, base->n, sizeof p->n);
    memcpy(p->dir, base->dir, sizeof p->dir);
    char out[256], err[512];
    char *check[] = {"python3", "-c", (char *)torch_loop, "0", "check", NULL};
    int rc = run_capture(check, p->dir, out, sizeof out, err, sizeof err);
    if (rc != 0) {
        printf("\ntorch loop: skipped (%s)\n",
               rc == KSCOPE_EXIT_SKIP
                   ? "torch sees no GPU, or is older than 2.6 (no torch.accelerator)"
                   : "no python3 with torch");
        free(p);
        return;
    }
    torch_ways(p, o, strncmp(out, "proton", 6) == 0);
    run_rounds(p, o->torch_rounds, 0);
    char title[160];
    snprintf(title, sizeof title, "torch loop: %s x.add_(1) on one element per run, %ld rounds",
             p->n, o->torch_rounds);
    print_table(title, p->ways, p->nways, o->torch_rounds, 0, NULL);
    free(p);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    return remove(path);
}

int cmd_bench(int argc, char **argv)
{
    bench_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (o.child)
        return run_child(&o);
    if (!bench_backend()) {
        fprintf(stderr, "kscope bench: this kscope was built without a GPU backend: nothing "
                        "to measure\n");
        return KSCOPE_EXIT_SKIP;
    }
    plan *p = calloc(1, sizeof *p);
    if (!p) {
        fprintf(stderr, "kscope bench: out of memory\n");
        return KSCOPE_EXIT_FAIL;
    }
    ssize_t len = readlink("/proc/self/exe", p->self, sizeof p->self - 1);
    snprintf(p->dir, sizeof p->dir, "%s/kscope-bench-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (len <= 0 || !mkdtemp(p->dir)) {
        fprintf(stderr, "kscope bench: cannot set up: %s\n", strerror(errno));
        free(p);
        return KSCOPE_EXIT_FAIL;
    }
    snprintf(p->n, sizeof p->n, "%ld", o.launches);
    /* A first loop says whether there is a GPU at all, and which. */
    char out[4096], err[512];
    char *probe[] = {p->self, "bench", "--child", "bare", "1000", NULL};
    rc = run_capture(probe, p->dir, out, sizeof out, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err[0] ? err : "kscope bench: the launch loop failed");
        nftw(p->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
        free(p);
        return rc == KSCOPE_EXIT_SKIP ? KSCOPE_EXIT_SKIP : KSCOPE_EXIT_FAIL;
    }
    const char *dev = strstr(out, " device ");
    char device[160];
    snprintf(device, sizeof device, "%s", dev ? dev + 8 : "?");
    device[strcspn(device, "\n")] = '\0';
    printf("kscope bench: %s, %s launches per run\n", device, p->n);
    kernel_ways(p, &o);
    run_rounds(p, o.rounds, 0);
    char title[160];
    snprintf(title, sizeof title, "empty kernels (<<<1,1>>>): %s per run, %ld rounds", p->n,
             o.rounds);
    print_table(title, p->ways, p->nways, o.rounds, 1, NULL);
    interleaved_part(&o, p);
    if (o.torch_rounds > 0)
        torch_part(&o, p);
    nftw(p->dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    free(p);
    return KSCOPE_EXIT_OK;
}
