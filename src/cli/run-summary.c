/*
 * run-summary.c - the exit summary of `kscope run`. Each process of the run
 * that wrote a profile appended to the manifest the name it reserved
 * ("claim") and what it wrote ("profile"), or what went wrong ("error");
 * this reads those lines back and summarises every profile with the
 * top-kernels table of the readers (the heaviest scopes by wall time for a
 * profile without GPU work). A process that reserved a name and ended
 * before saying what it wrote (killed) is told from the files themselves.
 */
#include "cli/run-summary.h"
#include "cli/cmd.h"
#include "format/format.h"
#include "format/run-facts.h"
#include "kscope-internal.h"
#include "read/read.h"
#include "run/run.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct profile_line {
    long pid;
    uint64_t wall_ns;
    int64_t dropped;
    int unreported; /* found on disk: the process ended before saying so */
    char path[4096];
} profile_line;

/* Split "tag\tpid\trest": returns rest, or NULL when malformed. */
static char *split_line(char *line, const char **tag, long *pid)
{
    char *t1 = strchr(line, '\t');
    if (!t1)
        return NULL;
    *t1 = 0;
    char *end;
    *pid = strtol(t1 + 1, &end, 10);
    if (*end != '\t')
        return NULL;
    *tag = line;
    return end + 1;
}

static int parse_profile(char *rest, profile_line *p)
{
    char *end;
    p->wall_ns = strtoull(rest, &end, 10);
    if (*end != '\t')
        return -1;
    p->dropped = strtoll(end + 1, &end, 10);
    if (*end != '\t')
        return -1;
    snprintf(p->path, sizeof p->path, "%s", end + 1);
    return 0;
}

/* GPU time of the whole profile: the total of "time (ns)". */
static double total_gpu_ns(const kscope__ptree *t)
{
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) != 0)
        return NAN;
    double total = NAN;
    double *vals = malloc((f.n ? f.n : 1) * sizeof *vals);
    if (vals && f.n) {
        int up = kscope__metric_values(t, &f, "time (ns)", vals);
        total = kscope__metric_total(&f, vals, up);
    }
    free(vals);
    kscope__pflat_free(&f);
    return total;
}

/* The readers' top-kernels table, with the share of all GPU time its rows
 * cover, and the hint for the rows left out pointing at `kscope top`. */
static void print_top(const kscope__ptree *t, long top, const char *path, FILE *out)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) {
        kscope__top_print(out, t, top > 1000000 ? 1000000 : (int)top, 0);
        return;
    }
    int n = kscope__top_print(mem, t, top > 1000000 ? 1000000 : (int)top, 0);
    fclose(mem);
    double share = 0;
    int rows = 0;
    for (char *line = buf, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char *end;
        double pct = strtod(line, &end);
        if (end != line && *end == '%') {
            share += pct;
            rows++;
        }
        if (line[0] == '(')
            continue; /* replaced below */
        fprintf(out, "%s\n", line);
    }
    char cmd[8192];
    const char *args[] = {"-n", "0", path};
    if (n > rows && rows > 0)
        fprintf(out, "top %d of %d kernels and copies: %.1f%% of all GPU time (all: %s)\n", rows, n,
                share, kscope_cli_command(cmd, sizeof cmd, "top", args, 3));
    free(buf);
}

/* A path as the user would type it from here: relative to the current
 * directory when it lies under it. */
static const char *display_path(const char *path)
{
    static char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return path;
    size_t n = strlen(cwd);
    if (n > 1 && strncmp(path, cwd, n) == 0 && path[n] == '/')
        return path + n + 1;
    return path;
}

/* Periodic flushing names its files "<base>.part_<N><ext>" and reports
 * the last. Returns N, the length of <base> and <ext>, or 0 when path is
 * not a part after the first. */
static long last_part(const char *path, size_t *base_len, const char **ext)
{
    const char *p = NULL;
    for (const char *q = strstr(path, ".part_"); q; q = strstr(q + 1, ".part_"))
        p = q;
    if (!p || strchr(p, '/'))
        return 0;
    char *end;
    long n = strtol(p + 6, &end, 10);
    if (end == p + 6 || *end != '.' || n < 1 || n > 1000000)
        return 0;
    *base_len = (size_t)(p - path);
    *ext = end;
    return n;
}

/* Parts 0..n of the periodic profile whose last part is `path`, read and
 * summed into one tree; NULL with err when one cannot be read. */
static kscope__ptree *read_parts(const char *path, size_t base_len, const char *ext, long n,
                                 char *err, size_t errlen)
{
    kscope__merger *mg = kscope__merger_new();
    int rc = mg ? 0 : KSCOPE_ENOMEM;
    if (!mg)
        snprintf(err, errlen, "out of memory");
    for (long i = 0; i <= n && rc == 0; i++) {
        char part[4200];
        snprintf(part, sizeof part, "%.*s.part_%ld%s", (int)base_len, path, i, ext);
        kscope__ptree *t = NULL;
        rc = kscope__read_profile(part, &t, err, errlen);
        rc = rc ? rc : kscope__merger_add(mg, t, err, errlen);
        kscope__ptree_free(t);
    }
    kscope__ptree *all = NULL;
    if (rc == 0 && kscope__merger_finish(mg, &all, err, errlen) != 0)
        all = NULL;
    kscope__merger_free(mg);
    return all;
}

/* The profile of path, or of all its parts; NULL with err. */
static kscope__ptree *read_back(const profile_line *p, const char *shown, FILE *out, char *err,
                                size_t errlen)
{
    size_t base_len = 0, shown_len = 0;
    const char *ext = NULL;
    long n = last_part(p->path, &base_len, &ext);
    if (n > 0 && last_part(shown, &shown_len, &ext) == n) {
        fprintf(out, "\nkscope: profile of pid %ld: %ld parts, %.*s.part_0%s to %s\n", p->pid,
                n + 1, (int)shown_len, shown, ext, shown);
        return read_parts(p->path, base_len, ext, n, err, errlen);
    }
    fprintf(out, "\nkscope: profile of pid %ld: %s\n", p->pid, shown);
    kscope__ptree *t = NULL;
    return kscope__read_profile(p->path, &t, err, errlen) == 0 ? t : NULL;
}

/* Whether the profile holds any GPU activity (kernel or copy). */
static int has_gpu_work(const kscope__ptree *t)
{
    kscope__pflat f;
    if (kscope__pflat_build(t, &f) != 0)
        return 1; /* out of memory: the kernels' table says what it can */
    int found = 0;
    for (size_t i = 1; i < f.n && !found; i++)
        found = kscope__pnode_is_device(f.node[i]);
    kscope__pflat_free(&f);
    return found;
}

/* GPU time against wall time, dropped records (a trace's: events), the
 * sampling note. */
static void print_totals(const profile_line *p, const kscope__ptree *t, int gpu_work, FILE *out)
{
    char busy[32], wall[32];
    double gpu = total_gpu_ns(t);
    kscope__format_ns(isnan(gpu) ? 0 : gpu, busy, sizeof busy);
    kscope__format_ns((double)p->wall_ns, wall, sizeof wall);
    if (!gpu_work && p->wall_ns)
        fprintf(out, "no GPU work recorded (host scopes only) in %s wall", wall);
    else if (!gpu_work)
        fprintf(out, "no GPU work recorded (host scopes only)");
    else if (p->wall_ns)
        fprintf(out, "GPU time %s in %s wall (%.1f%%)", busy, wall,
                !isnan(gpu) ? gpu / (double)p->wall_ns * 100.0 : 0.0);
    else
        fprintf(out, "GPU time %s", busy);
    const kscope__format *f = kscope__format_by_path(p->path);
    if (p->dropped > 0 && f && f->kind == KSCOPE__KIND_TRACE) /* a trace's budget: trace/spill.c */
        fprintf(out,
                "; %" PRId64 " events dropped (the disk did not keep up; "
                "$KSCOPE_TRACE_BUFFER holds more in memory)",
                p->dropped);
    else if (p->dropped > 0)
        fprintf(out, "; %" PRId64 " GPU records dropped", p->dropped);
    char note[256];
    if (kscope__sampled_note(t, note, sizeof note))
        fprintf(out, "\n%s", note);
    fputc('\n', out);
}

/* The commands that show the profile next, as the user types them. */
static void print_next(const char *shown, int gpu_work, FILE *out)
{
    char cmd[8192], cmd2[8192], q[8192];
    size_t base_len = 0;
    const char *ext = NULL;
    if (last_part(shown, &base_len, &ext) > 0) { /* parts: each alone, or all summed */
        char first[4200], merged[4200], parts[4200];
        snprintf(first, sizeof first, "%.*s.part_0%s", (int)base_len, shown, ext);
        snprintf(merged, sizeof merged, "%.*s%s", (int)base_len, shown, ext);
        snprintf(parts, sizeof parts, "%.*s.part_", (int)base_len, shown);
        const char *margs[] = {"-o", merged};
        fprintf(out, "view them with: %s (each part), or %s %s*%s (all summed)\n",
                kscope_cli_command(cmd, sizeof cmd, "view", (const char *[]){first}, 1),
                kscope_cli_command(cmd2, sizeof cmd2, "merge", margs, 2),
                kscope_cli_quote(parts, q, sizeof q), ext);
        return;
    }
    fprintf(out, "view it with: %s\n", kscope_cli_command(cmd, sizeof cmd, "view", &shown, 1));
    if (gpu_work)
        return;
    /* the page: OUT named after the profile, its extension swapped */
    char html[4200];
    const char *slash = strrchr(shown, '/'), *dot = strrchr(shown, '.');
    int keep = dot && (!slash || dot > slash) ? (int)(dot - shown) : (int)strlen(shown);
    snprintf(html, sizeof html, "%.*s.html", keep, shown);
    const char *args[] = {"--html", html, shown};
    fprintf(out, "or as a page (flame graph, timeline): %s\n",
            kscope_cli_command(cmd, sizeof cmd, "report", args, 3));
}

static void summarise(const profile_line *p, long top, FILE *out)
{
    char err[KSCOPE__READ_ERRLEN];
    const char *shown = display_path(p->path);
    if (p->unreported)
        fprintf(out,
                "\nkscope run: pid %ld ended before it said what it wrote (was it killed?); "
                "its profile is on disk:",
                p->pid);
    kscope__ptree *t = read_back(p, shown, out, err, sizeof err);
    if (!t) {
        fprintf(out, "kscope run: cannot read back %s\n", err);
        return;
    }
    int gpu_work = has_gpu_work(t);
    if (top > 0 && gpu_work)
        print_top(t, top, shown, out);
    else if (top > 0) { /* where a host-only run spent its time */
        kscope__pflat f;
        if (kscope__pflat_build(t, &f) == 0) {
            if (kscope__scopes_by_wall(out, t, &f, top) > 0)
                fputc('\n', out);
            kscope__pflat_free(&f);
        }
    }
    print_totals(p, t, gpu_work, out);
    print_next(shown, gpu_work, out);
    kscope__ptree_free(t);
}

/* Whether `base` (without extension) was reserved by a process of this
 * run (processes reserve a name only to write a profile). */
static int taken(const char *manifest, const char *base)
{
    FILE *f = fopen(manifest, "r");
    if (!f)
        return 1;
    char line[8192];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        const char *tag;
        long pid;
        char *rest = split_line(line, &tag, &pid);
        found = rest && strcmp(tag, KSCOPE_RUN_TAG_CLAIM) == 0 && strcmp(rest, base) == 0;
    }
    fclose(f);
    return found;
}

/* When a single process wrote a profile and it was named by pid (the
 * command was a wrapper, such as a shell script, that started the program),
 * give it the run's plain name, unless another process of the run took it
 * or another run holds it (run/claims.c). */
static void plain_name_for_single(const char *manifest, uint64_t since, profile_line *p)
{
    char tag[32], base[sizeof p->path];
    snprintf(tag, sizeof tag, ".pid%ld.", p->pid);
    char *at = strstr(p->path, tag);
    if (!at || strstr(at + 1, ".pid"))
        return;
    size_t head = (size_t)(at - p->path);
    const char *ext = at + strlen(tag) - 1;
    if (strchr(ext + 1, '.'))
        return; /* parts of a periodic run keep their names together */
    snprintf(base, sizeof base, "%.*s", (int)head, p->path);
    if (taken(manifest, base) || kscope__run_claim_folder(base, ext, manifest, since) != 0)
        return;
    kscope__run_manifest_add(manifest, KSCOPE_RUN_TAG_CLAIM, (long)getpid(), base);
    char plain[sizeof p->path];
    int n = snprintf(plain, sizeof plain, "%s%s", base, ext);
    if (n <= 0 || (size_t)n >= sizeof plain || rename(p->path, plain) != 0)
        return;
    /* the run's facts beside a tree profile follow it (a trace has none) */
    char old_facts[sizeof p->path + 16], new_facts[sizeof plain + 16];
    snprintf(old_facts, sizeof old_facts, "%s%s", p->path, KSCOPE__FACTS_EXT);
    snprintf(new_facts, sizeof new_facts, "%s%s", plain, KSCOPE__FACTS_EXT);
    rename(old_facts, new_facts);
    memcpy(p->path, plain, (size_t)n + 1);
}

/* ---- fleet: rank profiles (NAME.rank<R>.EXT) are analysed together with
 * `kscope fleet`; the run of rank 0 (or the one around the launcher) says
 * how, once. */
static void fleet_hint(const profile_line *p, int n, FILE *out)
{
    kscope__run_ident id;
    kscope__run_ident_get(&id);
    for (int i = 0; i < n && !(id.has_rank && id.rank != 0); i++) {
        const char *shown = display_path(p[i].path), *ext = strrchr(shown, '.'), *at = NULL;
        for (const char *q = strstr(shown, ".rank"); q; q = strstr(q + 1, ".rank"))
            at = q[5] >= '0' && q[5] <= '9' ? q : at; /* the last ".rank<digit>" */
        if (!at || strchr(at, '/') || !ext || ext <= at)
            continue;
        int len = (int)(at - shown);
        fprintf(out,
                "\nrank profiles: export and summarise them all with\n  %s fleet export -o "
                "%.*s.fleet %.*s.rank*%s\n  %s fleet summary %.*s.fleet\n",
                kscope_cli_self(), len, shown, len, shown, ext, kscope_cli_self(), len, shown);
        return;
    }
}
/* ---- */

/* What the manifest says. */
typedef struct run_lines {
    profile_line *profiles;
    int nprof, errors, nclaims;
    long *err_pids; /* [errors] */
    uint64_t since; /* the run's start (realtime ns), 0: unknown */
    struct claim {
        long pid;
        char base[4096];
    } * claims;
} run_lines;

static int add_profile(run_lines *r, long pid, char *rest)
{
    profile_line *np = realloc(r->profiles, (size_t)(r->nprof + 1) * sizeof *np);
    if (!np)
        return -1;
    r->profiles = np;
    memset(&np[r->nprof], 0, sizeof *np);
    np[r->nprof].pid = pid;
    if (parse_profile(rest, &np[r->nprof]) == 0)
        r->nprof++;
    return 0;
}

static int add_claim(run_lines *r, long pid, const char *base)
{
    struct claim *nc = realloc(r->claims, (size_t)(r->nclaims + 1) * sizeof *nc);
    if (!nc)
        return -1;
    r->claims = nc;
    nc[r->nclaims].pid = pid;
    snprintf(nc[r->nclaims++].base, sizeof nc->base, "%s", base);
    return 0;
}

/* Read the manifest; errors are printed as they come. */
static int read_manifest(const char *manifest, run_lines *r, FILE *out)
{
    FILE *f = fopen(manifest, "r");
    if (!f)
        return -1;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        const char *tag;
        long pid;
        char *rest = split_line(line, &tag, &pid);
        int rc = 0;
        if (!rest)
            continue;
        if (strcmp(tag, KSCOPE_RUN_TAG_ERROR) == 0) {
            fprintf(out, "kscope run: pid %ld: %s\n", pid, rest);
            long *ne = realloc(r->err_pids, (size_t)(r->errors + 1) * sizeof *ne);
            if (ne)
                (r->err_pids = ne)[r->errors] = pid;
            r->errors++;
        } else if (strcmp(tag, KSCOPE_RUN_TAG_NOTE) == 0) {
            fprintf(out, "kscope run: pid %ld: %s\n", pid, rest);
        } else if (strcmp(tag, KSCOPE_RUN_TAG_PROFILE) == 0) {
            rc = add_profile(r, pid, rest);
        } else if (strcmp(tag, KSCOPE_RUN_TAG_CLAIM) == 0) {
            rc = add_claim(r, pid, rest);
        } else if (strcmp(tag, KSCOPE_RUN_TAG_RUN) == 0) {
            r->since = strtoull(rest, NULL, 10);
        }
        if (rc)
            break;
    }
    fclose(f);
    return 0;
}

/* path exists and was written during the run (at or after since). */
static int written_in_run(const char *path, uint64_t since)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    uint64_t m = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    return m >= since;
}

/* The profile a process wrote under its claimed base before it could say
 * so: "<base><ext>" or its last periodic part, in any format of the table
 * (a gzip trace, a MessagePack tree, as well as the defaults). 1 with the
 * path in p, 0 when there is none. */
static int find_on_disk(const char *base, uint64_t since, profile_line *p)
{
    char *path = p->path;
    size_t size = sizeof p->path;
    for (int id = 0; id < KSCOPE__FORMAT_COUNT; id++) {
        const kscope__format *f = kscope__format_get((kscope__format_id)id);
        char ext[32];
        if (!f || !kscope__format_ext(f, ext, sizeof ext))
            continue;
        int n = snprintf(path, size, "%s%s", base, ext);
        if (n > 0 && (size_t)n < size && written_in_run(path, since))
            return p->unreported = 1;
        long last = -1;
        for (long i = 0; i < 1000000; i++) {
            n = snprintf(path, size, "%s.part_%ld%s", base, i, ext);
            if (n <= 0 || (size_t)n >= size || !written_in_run(path, since))
                break;
            last = i;
        }
        if (last >= 0) {
            snprintf(path, size, "%s.part_%ld%s", base, last, ext);
            return p->unreported = 1;
        }
    }
    return 0;
}

/* Whether process pid reported a profile, or an error. */
static int reported(const run_lines *r, long pid)
{
    for (int i = 0; i < r->nprof; i++)
        if (r->profiles[i].pid == pid && !r->profiles[i].unreported)
            return 1;
    for (int i = 0; r->err_pids && i < r->errors; i++)
        if (r->err_pids[i] == pid)
            return 1;
    return 0;
}

/* Processes that reserved a name and ended without reporting (killed
 * while or after writing): their profile is found on disk, or they are
 * said to have written none. */
static void find_unreported(run_lines *r, FILE *out)
{
    for (int i = 0; i < r->nclaims; i++) {
        if (reported(r, r->claims[i].pid))
            continue;
        profile_line p = {.pid = r->claims[i].pid};
        if (find_on_disk(r->claims[i].base, r->since, &p)) {
            profile_line *np = realloc(r->profiles, (size_t)(r->nprof + 1) * sizeof *np);
            if (!np)
                return;
            r->profiles = np;
            np[r->nprof++] = p;
        } else {
            fprintf(out, "kscope run: pid %ld ended before it wrote its profile (was it killed?)\n",
                    r->claims[i].pid);
        }
    }
}

int kscope__run_report(const char *manifest, long top, FILE *out)
{
    run_lines r = {0};
    if (read_manifest(manifest, &r, out) != 0) {
        fprintf(out, "kscope run: cannot read the run's results from %s\n", manifest);
        return 1;
    }
    int reported_ones = r.nprof;
    find_unreported(&r, out);
    if (reported_ones == 1 && r.nprof == 1)
        plain_name_for_single(manifest, r.since, &r.profiles[0]);
    if (r.nprof == 0 && r.nclaims == 0 && r.errors == 0) {
        char ranges[128] = "";
        const kscope__range_source *src;
        for (size_t i = 0, used = 0; (src = kscope__range_source_at(i)) && used < sizeof ranges;
             i++)
            used += (size_t)snprintf(ranges + used, sizeof ranges - used, "%s%s", i ? ", " : "",
                                     src->name);
        fprintf(out,
                "kscope: no process recorded anything (no %s, %s or kscope calls); "
                "no profile written\n",
                kscope__gpu_device_type(), ranges);
    }
    for (int i = 0; i < r.nprof; i++)
        summarise(&r.profiles[i], top, out);
    if (r.nprof > 1)
        fprintf(out, "\nkscope: %d profiles written (one per process)\n", r.nprof);
    fleet_hint(r.profiles, r.nprof, out);
    free(r.profiles);
    free(r.claims);
    free(r.err_pids);
    return r.errors;
}
