/*
 * naming.c - one output file per process: the name a process of a run
 * writes to (by rank, by pid, or the plain name for the command itself),
 * the reservation that keeps two processes from writing the same file
 * (within a run; against other runs, claims.c), and the manifest through
 * which processes tell `kscope run` what they wrote.
 */
#include "kscope-internal.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Launchers' rank variables, most specific first. */
static const char *const rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};

/* A non-negative decimal number, or -1. */
static long parse_rank(const char *s)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0)
        return -1;
    return v;
}

void kscope__run_ident_get(kscope__run_ident *id)
{
    memset(id, 0, sizeof *id);
    id->pid = (long)getpid();
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
        long r = parse_rank(getenv(rank_vars[i]));
        if (r >= 0) {
            id->has_rank = 1;
            id->rank = r;
            break;
        }
    }
    long main_pid = parse_rank(getenv(KSCOPE_RUN_ENV_MAIN_PID));
    id->is_main = main_pid >= 0 && main_pid == id->pid;
}

int kscope__run_base_path(char *buf, size_t size, const char *dir, const char *name,
                          const kscope__run_ident *id)
{
    const char *sep = dir && *dir ? "/" : "";
    int n;
    if (!dir)
        dir = "";
    if (id->has_rank)
        n = snprintf(buf, size, "%s%s%s.rank%ld", dir, sep, name, id->rank);
    else if (id->is_main)
        n = snprintf(buf, size, "%s%s%s", dir, sep, name);
    else
        n = snprintf(buf, size, "%s%s%s.pid%ld", dir, sep, name, id->pid);
    return n < 0 || (size_t)n >= size ? -1 : n;
}

int kscope__run_alt_path(char *buf, size_t size, const char *base, long pid, int n)
{
    int len;
    if (n == 0)
        len = snprintf(buf, size, "%s.pid%ld", base, pid);
    else
        len = snprintf(buf, size, "%s.pid%ld.%d", base, pid, n);
    return len < 0 || (size_t)len >= size ? -1 : len;
}

/* Candidate k for a base: k = 0 is the base itself, then the pid forms. */
static int candidate(char *buf, size_t size, const char *base, long pid, int k)
{
    if (k == 0) {
        int n = snprintf(buf, size, "%s", base);
        return n < 0 || (size_t)n >= size ? -1 : n;
    }
    return kscope__run_alt_path(buf, size, base, pid, k - 1);
}

/* The text of the manifest line with `tag` whose text is `path` (any
 * text when path is NULL), NULL when there is none. The stream is read
 * from its start; line is the caller's buffer. */
static const char *find_line(FILE *f, const char *tag, const char *path, char *line, size_t size)
{
    size_t tag_len = strlen(tag);
    rewind(f);
    while (fgets(line, (int)size, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, tag, tag_len) != 0 || line[tag_len] != '\t')
            continue;
        const char *text = strchr(line + tag_len + 1, '\t');
        if (text && (!path || strcmp(text + 1, path) == 0))
            return text + 1;
    }
    return NULL;
}

/* Whether the manifest stream holds a claim line for `path`. */
static int claimed_in(FILE *f, const char *path)
{
    char line[4096 + 64];
    return find_line(f, KSCOPE_RUN_TAG_CLAIM, path, line, sizeof line) != NULL;
}

/* When the run began (its first line), realtime ns; 0 when unknown. */
static uint64_t run_since(FILE *f)
{
    char line[4096 + 64];
    const char *text = find_line(f, KSCOPE_RUN_TAG_RUN, NULL, line, sizeof line);
    return text ? strtoull(text, NULL, 10) : 0;
}

static int claim_exclusive(const char *base, const char *ext, long pid, char *out, size_t size);

static int claim_with_manifest(const char *manifest, const char *base, const char *ext, long pid,
                               char *out, size_t size)
{
    int fd = open(manifest, O_RDWR | O_APPEND | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) /* its kscope run was killed and swept */
        return claim_exclusive(base, ext, pid, out, size);
    if (fd < 0)
        return kscope__fail(KSCOPE_EIO, "cannot open the run manifest %s: %s", manifest,
                            strerror(errno));
    FILE *f = fdopen(fd, "a+");
    if (!f) {
        close(fd);
        return kscope__fail(KSCOPE_ENOMEM, "cannot read the run manifest %s", manifest);
    }
    flock(fd, LOCK_EX);
    uint64_t since = run_since(f);
    int rc = 1;
    for (int k = 0; k < 1000 && rc == 1; k++) {
        if (candidate(out, size, base, pid, k) < 0) {
            rc = kscope__fail(KSCOPE_EINVAL, "output path %s is too long", base);
            break;
        }
        if (claimed_in(f, out))
            continue; /* another process of this run */
        rc = kscope__run_claim_folder(out, ext, manifest, since);
        if (rc == 0) {
            fprintf(f, "%s\t%ld\t%s\n", KSCOPE_RUN_TAG_CLAIM, pid, out);
            fflush(f);
        }
    }
    flock(fd, LOCK_UN);
    fclose(f);
    return rc == 1 ? kscope__fail(KSCOPE_EIO, "no free output name for %s", base) : rc;
}

static int claim_exclusive(const char *base, const char *ext, long pid, char *out, size_t size)
{
    char path[4096];
    for (int k = 0; k < 1000; k++) {
        if (candidate(out, size, base, pid, k) < 0 ||
            snprintf(path, sizeof path, "%s%s", out, ext) >= (int)sizeof path)
            return kscope__fail(KSCOPE_EINVAL, "output path %s is too long", base);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno == EACCES || errno == EROFS || errno == ENOENT)
            return kscope__fail(KSCOPE_EACCES, "cannot create %s: %s", path, strerror(errno));
        if (errno != EEXIST)
            return kscope__fail(KSCOPE_EIO, "cannot create %s: %s", path, strerror(errno));
    }
    return kscope__fail(KSCOPE_EIO, "no free output name for %s", base);
}

int kscope__run_claim(const char *manifest, const char *base, const char *ext, long pid, char *out,
                      size_t size)
{
    if (!base || !out || !ext)
        return kscope__fail(KSCOPE_EINVAL, "claim: NULL argument");
    if (manifest && *manifest)
        return claim_with_manifest(manifest, base, ext, pid, out, size);
    return claim_exclusive(base, ext, pid, out, size);
}

int kscope__run_manifest_add(const char *manifest, const char *tag, long pid, const char *text)
{
    if (!manifest || !*manifest)
        return 0;
    int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        return kscope__fail(KSCOPE_EIO, "cannot open the run manifest %s: %s", manifest,
                            strerror(errno));
    char line[4096 + 64];
    int n = snprintf(line, sizeof line, "%s\t%ld\t%s\n", tag, pid, text);
    if (n < 0 || (size_t)n >= sizeof line)
        n = (int)sizeof line - 1, line[n - 1] = '\n';
    flock(fd, LOCK_EX);
    ssize_t w = write(fd, line, (size_t)n);
    flock(fd, LOCK_UN);
    close(fd);
    return w == n ? 0 : kscope__fail(KSCOPE_EIO, "cannot write the run manifest %s", manifest);
}
