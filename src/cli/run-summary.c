/*
 * run-summary.c - the exit summary of `kscope run`. Each process of the run
 * that wrote a profile appended to the manifest the name it reserved
 * ("claim") and what it wrote ("profile"), or what went wrong ("error");
 * this reads those lines back and summarises every profile with the
 * top-kernels table of the readers.
 */
#include "cli/run-summary.h"
#include "format/run-facts.h"
#include "kscope-internal.h"
#include "read/read.h"
#include "run/run.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct profile_line {
    long pid;
    uint64_t wall_ns;
    int64_t dropped;
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

/* Whether `dir`/kscope is this very executable (`self`, resolved). */
static int is_self_in(const char *dir, size_t len, const char *self)
{
    char cand[PATH_MAX], real[PATH_MAX];
    if (len == 0 || len + sizeof "/kscope" > sizeof cand)
        return 0;
    snprintf(cand, sizeof cand, "%.*s/kscope", (int)len, dir);
    return realpath(cand, real) && strcmp(real, self) == 0;
}

/* The kscope command as the user can type it: "kscope" when PATH finds
 * this executable under that name, else this executable's full path (a
 * build tree, a venv not activated), so the printed commands work as shown. */
static const char *self_command(void)
{
    static char self[PATH_MAX];
    if (!realpath("/proc/self/exe", self))
        return "kscope";
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (is_self_in(path, len, self))
            return "kscope";
        path += len + (path[len] == ':');
    }
    return self;
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
    if (n > rows && rows > 0)
        fprintf(out,
                "top %d of %d kernels and copies: %.1f%% of all GPU time (all: %s top -n 0 "
                "%s)\n",
                rows, n, share, self_command(), path);
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

static void summarise(const profile_line *p, long top, FILE *out)
{
    char err[KSCOPE__READ_ERRLEN];
    const char *shown = display_path(p->path);
    kscope__ptree *t = read_back(p, shown, out, err, sizeof err);
    if (!t) {
        fprintf(out, "kscope run: cannot read back %s\n", err);
        return;
    }
    if (top > 0)
        print_top(t, top, shown, out);
    char busy[32], wall[32];
    double gpu = total_gpu_ns(t);
    kscope__format_ns(isnan(gpu) ? 0 : gpu, busy, sizeof busy);
    kscope__format_ns((double)p->wall_ns, wall, sizeof wall);
    fprintf(out, "GPU time %s in %s wall (%.1f%%)", busy, wall,
            p->wall_ns && !isnan(gpu) ? gpu / (double)p->wall_ns * 100.0 : 0.0);
    if (p->dropped > 0)
        fprintf(out, "; %" PRId64 " GPU records dropped", p->dropped);
    char note[256];
    if (kscope__sampled_note(t, note, sizeof note))
        fprintf(out, "\n%s", note);
    size_t base_len = 0;
    const char *ext = NULL;
    if (last_part(shown, &base_len, &ext) > 0) /* parts: each alone, or all summed */
        fprintf(out,
                "\nview them with: %s view %.*s.part_0%s (each part), or %s merge -o %.*s%s "
                "%.*s.part_*%s (all summed)\n",
                self_command(), (int)base_len, shown, ext, self_command(), (int)base_len, shown,
                ext, (int)base_len, shown, ext);
    else
        fprintf(out, "\nview it with: %s view %s\n", self_command(), shown);
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
 * give it the run's plain name, unless another process of the run took it. */
static void plain_name_for_single(const char *manifest, profile_line *p)
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
    if (taken(manifest, base))
        return;
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

int kscope__run_report(const char *manifest, long top, FILE *out)
{
    FILE *f = fopen(manifest, "r");
    if (!f) {
        fprintf(out, "kscope run: cannot read the run's results from %s\n", manifest);
        return 1;
    }
    int errors = 0, nprof = 0;
    char line[8192];
    profile_line *profiles = NULL;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        const char *tag;
        long pid;
        char *rest = split_line(line, &tag, &pid);
        if (!rest)
            continue;
        if (strcmp(tag, KSCOPE_RUN_TAG_ERROR) == 0) {
            fprintf(out, "kscope run: pid %ld: %s\n", pid, rest);
            errors++;
        } else if (strcmp(tag, KSCOPE_RUN_TAG_PROFILE) == 0) {
            profile_line *np = realloc(profiles, (size_t)(nprof + 1) * sizeof *np);
            if (!np)
                break;
            profiles = np;
            profiles[nprof].pid = pid;
            if (parse_profile(rest, &profiles[nprof]) == 0)
                nprof++;
        }
    }
    fclose(f);
    if (nprof == 1)
        plain_name_for_single(manifest, &profiles[0]);
    if (nprof == 0 && errors == 0) {
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
    for (int i = 0; i < nprof; i++)
        summarise(&profiles[i], top, out);
    if (nprof > 1)
        fprintf(out, "\nkscope: %d profiles written (one per process)\n", nprof);
    free(profiles);
    return errors;
}
