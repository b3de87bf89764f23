/*
 * claims.c - one name, one run: how runs of `kscope run` that write into
 * the same folder at once keep their profiles apart, and what a run leaves
 * behind when it is killed.
 *
 * A run lives in a folder of its own, TMPDIR/kscope-run-XXXXXX, holding
 * its manifest; `kscope run` keeps that folder locked (flock) for as long
 * as it lives, so anyone can tell a live run from one that was killed: the
 * lock is free once the process is gone, whatever pid namespace it was in.
 *
 * Within a run, names are reserved in the manifest (naming.c). Against
 * other runs, a name is claimed in the output folder itself: a file
 * ".<name>.kscope-claim" created with O_EXCL, naming the claiming run's
 * manifest, under a lock on the folder. A name is taken when another live
 * run claims it, or when its profile was written since this run began (a
 * run that ended while this one went on); the process then writes
 * "<name>.pid<PID>" instead. `kscope run` removes its claims when it ends;
 * the claims and run folders of killed runs are removed by the next run.
 */
#define _GNU_SOURCE
#include "kscope-internal.h"
#include "run/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RUN_PREFIX  "kscope-run-"
#define CLAIM_TAG   ".kscope-claim"
#define MANIFEST_IN "/manifest"

/* "<dir>" and "<name>" of a path (dir "." when it has no slash). */
static void split_path(const char *path, char *dir, size_t dsize, const char **name)
{
    const char *slash = strrchr(path, '/');
    *name = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, dsize, ".");
    else
        snprintf(dir, dsize, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* The run folder of a manifest (its parent folder) into dir. */
static void run_dir_of(const char *manifest, char *dir, size_t size)
{
    const char *name;
    split_path(manifest, dir, size, &name);
}

int kscope__run_alive(const char *manifest)
{
    char dir[4096];
    run_dir_of(manifest, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
    int alive = -1;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0)
        alive = 0; /* the lock is free: its kscope run is gone */
    else if (errno == EWOULDBLOCK)
        alive = 1;
    close(fd);
    return alive;
}

/* The manifest named in a claim file (opened at dfd/name), into owner. */
static int read_owner(int dfd, const char *name, char *owner, size_t size)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, owner, size - 1);
    close(fd);
    if (n <= 0)
        return -1;
    owner[n] = 0;
    owner[strcspn(owner, "\n")] = 0;
    return 0;
}

/* Whether the file dir/name was written or put there (renamed: its
 * change time) at or after since_ns (realtime, read finely: see
 * kscope__run_clock). */
static int written_since(int dfd, const char *name, uint64_t since_ns)
{
    struct stat st;
    if (since_ns == 0 || fstatat(dfd, name, &st, 0) != 0)
        return 0;
    uint64_t c = (uint64_t)st.st_ctim.tv_sec * 1000000000ull + (uint64_t)st.st_ctim.tv_nsec;
    return c >= since_ns;
}

/* Whether another run's profile of this name (or its first periodic part)
 * was written since this run began. */
static int profile_newer(int dfd, const char *name, const char *ext, uint64_t since_ns)
{
    char f[4096];
    snprintf(f, sizeof f, "%s%s", name, ext);
    if (written_since(dfd, f, since_ns))
        return 1;
    snprintf(f, sizeof f, "%s.part_0%s", name, ext);
    return written_since(dfd, f, since_ns);
}

/* Take the claim file: a new one, or one whose run is gone (only with the
 * folder locked, so no two processes take the same stale claim). Returns
 * an open descriptor, -2 when another live run holds it, -1 on error. */
static int take_claim(int dfd, const char *claim, const char *manifest, int locked)
{
    int fd = openat(dfd, claim, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST)
        return fd;
    char owner[4096];
    if (read_owner(dfd, claim, owner, sizeof owner) == 0 && strcmp(owner, manifest) == 0)
        return openat(dfd, claim, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    if (!locked || kscope__run_alive(owner) != 0)
        return -2; /* a live run's, or one we cannot tell */
    return openat(dfd, claim, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
}

int kscope__run_claim_folder(const char *base, const char *ext, const char *manifest,
                             uint64_t since_ns)
{
    char dir[4096], claim[4096];
    const char *name;
    split_path(base, dir, sizeof dir, &name);
    if (snprintf(claim, sizeof claim, ".%s" CLAIM_TAG, name) >= (int)sizeof claim)
        return kscope__fail(KSCOPE_EINVAL, "output path %s is too long", base);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return kscope__fail(KSCOPE_EACCES, "cannot open the output folder %s: %s", dir,
                            strerror(errno));
    int locked = flock(dfd, LOCK_EX) == 0;
    int rc = 0, fd = take_claim(dfd, claim, manifest, locked);
    if (fd == -1)
        rc = kscope__fail(errno == EACCES || errno == EROFS ? KSCOPE_EACCES : KSCOPE_EIO,
                          "cannot claim %s%s: %s", base, ext, strerror(errno));
    else if (fd == -2 || profile_newer(dfd, name, ext, since_ns))
        rc = 1;
    if (fd >= 0 && rc == 0) {
        size_t len = strlen(manifest);
        int bad = write(fd, manifest, len) != (ssize_t)len || write(fd, "\n", 1) != 1;
        if (bad)
            rc = kscope__fail(KSCOPE_EIO, "cannot claim %s%s: %s", base, ext, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    if (fd >= 0 && rc != 0)
        unlinkat(dfd, claim, 0);
    if (locked)
        flock(dfd, LOCK_UN);
    close(dfd);
    return rc;
}

/* Remove base's claim file when it is this run's. */
static void release_claim(const char *base, const char *manifest)
{
    char dir[4096], claim[4096], owner[4096];
    const char *name;
    split_path(base, dir, sizeof dir, &name);
    snprintf(claim, sizeof claim, ".%s" CLAIM_TAG, name);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return;
    int locked = flock(dfd, LOCK_EX) == 0;
    if (read_owner(dfd, claim, owner, sizeof owner) == 0 && strcmp(owner, manifest) == 0)
        unlinkat(dfd, claim, 0);
    if (locked)
        flock(dfd, LOCK_UN);
    close(dfd);
}

void kscope__run_release(const char *manifest)
{
    FILE *f = fopen(manifest, "re");
    if (!f)
        return;
    char line[4096 + 64];
    size_t tl = strlen(KSCOPE_RUN_TAG_CLAIM);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, KSCOPE_RUN_TAG_CLAIM, tl) != 0 || line[tl] != '\t')
            continue;
        const char *base = strchr(line + tl + 1, '\t');
        if (base)
            release_claim(base + 1, manifest);
    }
    fclose(f);
}

/* The fine clock, not the coarse one file times were once taken from:
 * file systems with fine-grained change times (Linux 6.13 and later) stamp
 * a profile written just before this run began later than a coarse
 * reading taken after it, and a re-run would then take its own name for
 * another run's. A file stamped coarsely within the tick this run began
 * in reads as older than the run: only a run that ended within that tick
 * could be mistaken, where the coarse clock mistook every re-run. */
uint64_t kscope__run_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int kscope__run_make(char *manifest, size_t size, int *lock_fd, uint64_t since_ns)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    struct stat st;
    *lock_fd = -1;
    for (int tries = 0; tries < 10; tries++) {
        snprintf(dir, sizeof dir, "%s/" RUN_PREFIX "XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir))
            return kscope__fail(KSCOPE_EIO, "cannot create %s: %s", dir, strerror(errno));
        *lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*lock_fd < 0 && errno == ENOENT)
            continue; /* swept already (below) */
        if (*lock_fd < 0)
            break;
        flock(*lock_fd, LOCK_EX); /* held for as long as this run lives */
        /* another run's sweep may have taken it for a dead run's before
         * the lock: then it is gone, and a new one is made */
        if (fstat(*lock_fd, &st) == 0 && st.st_nlink > 0)
            break;
        close(*lock_fd);
        *lock_fd = -1;
    }
    snprintf(manifest, size, "%s" MANIFEST_IN, dir);
    int fd = open(manifest, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        rmdir(dir);
        return kscope__fail(KSCOPE_EIO, "cannot create %s: %s", manifest, strerror(e));
    }
    dprintf(fd, "%s\t%ld\t%llu\n", KSCOPE_RUN_TAG_RUN, (long)getpid(),
            (unsigned long long)since_ns);
    close(fd);
    return 0;
}

void kscope__run_end(const char *manifest, int lock_fd)
{
    char dir[4096];
    kscope__run_release(manifest);
    run_dir_of(manifest, dir, sizeof dir);
    unlink(manifest);
    rmdir(dir);
    if (lock_fd >= 0)
        close(lock_fd);
}

/* TMPDIR/kscope-run-XXXXXX folders of this user whose run is gone. */
static void sweep_runs(const char *tmp)
{
    DIR *d = opendir(tmp);
    if (!d)
        return;
    struct dirent *e;
    size_t pl = strlen(RUN_PREFIX);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, RUN_PREFIX, pl) != 0 || strlen(e->d_name) != pl + 6)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != geteuid())
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
            unlinkat(fd, MANIFEST_IN + 1, 0);
            unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
        }
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
}

/* Claim files in an output folder whose run is gone. */
static void sweep_claims(const char *outdir)
{
    int dfd = open(outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    if (flock(dfd, LOCK_EX) != 0) { /* without the lock, a claim may be in the making */
        closedir(d);
        return;
    }
    struct dirent *e;
    size_t tl = strlen(CLAIM_TAG);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char owner[4096];
        if (e->d_name[0] != '.' || n <= tl + 1 || strcmp(e->d_name + n - tl, CLAIM_TAG) != 0)
            continue;
        if (read_owner(dfd, e->d_name, owner, sizeof owner) == 0 && kscope__run_alive(owner) == 0)
            unlinkat(dfd, e->d_name, 0);
    }
    flock(dfd, LOCK_UN);
    closedir(d);
}

void kscope__run_sweep(const char *outdir)
{
    const char *tmp = getenv("TMPDIR");
    sweep_runs(tmp && *tmp ? tmp : "/tmp");
    sweep_claims(outdir);
}
