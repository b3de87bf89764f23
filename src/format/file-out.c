/*
 * file-out.c - writing an output file whole (see file-out.h): regular
 * files through a locked temporary beside them and a rename, symbolic
 * links through to the file they name, devices and FIFOs in place.
 */
#define _GNU_SOURCE
#include "format/file-out.h"
#include "kscope.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINKS 40 /* as the kernel's own limit on a path's links */
#define RAND_LEN  6

static int code_of(int err)
{
    return err == ENOSPC || err == EDQUOT                  ? KSCOPE_ENOSPC
           : err == EACCES || err == EPERM || err == EROFS ? KSCOPE_EACCES
           : err == ENOMEM                                 ? KSCOPE_ENOMEM
                                                           : KSCOPE_EIO;
}

static int fail(const char *path, const char *what, int err, char *msg, size_t len)
{
    /* a very long path is cut in the middle: the reason must fit */
    size_t n = strlen(path);
    int head = n > 400 ? 200 : (int)n;
    const char *tail = n > 400 ? path + n - 150 : "";
    const char *cut = n > 400 ? "..." : "";
    if (len && err == ENOMEM)
        snprintf(msg, len, "%.*s%s%s: out of memory", head, path, cut, tail);
    else if (len)
        snprintf(msg, len, "%.*s%s%s: %s: %s", head, path, cut, tail, what, strerror(err));
    return code_of(err);
}

/* Write all of buf to fd: 0 or an errno (a short write is a full disk). */
static int write_all(int fd, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : ENOSPC;
        off += (size_t)n;
    }
    return 0;
}

/* dir + "/" + name (name alone when dir is NULL), malloc'd. */
static char *join(const char *dir, size_t dirlen, const char *name)
{
    size_t size = dirlen + strlen(name) + 2;
    char *out = malloc(size);
    if (out && dir)
        snprintf(out, size, "%.*s/%s", (int)dirlen, dir, name);
    else if (out)
        snprintf(out, size, "%s", name);
    return out;
}

/* The name a chain of symbolic links starting at path ends at (path itself
 * when it is no link; a link to nothing ends at the name it holds, which
 * the write creates), malloc'd; NULL with errno. */
static char *final_name(const char *path)
{
    char *cur = strdup(path);
    for (int hops = 0; cur; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return cur;
        char name[PATH_MAX];
        ssize_t n = hops < MAX_LINKS ? readlink(cur, name, sizeof name - 1) : -1;
        if (n <= 0) {
            int e = hops < MAX_LINKS && n == 0 ? ENOENT : hops < MAX_LINKS ? errno : ELOOP;
            free(cur);
            errno = e;
            return NULL;
        }
        name[n] = '\0';
        const char *slash = strrchr(cur, '/');
        char *next =
            name[0] == '/' || !slash ? strdup(name) : join(cur, (size_t)(slash - cur), name);
        free(cur);
        cur = next;
    }
    errno = ENOMEM;
    return NULL;
}

/* Six characters for a temporary file's name, unpredictable enough that a
 * name planted in advance is unlikely (O_EXCL refuses it anyway). */
static void random_tag(char out[RAND_LEN + 1])
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static _Atomic unsigned serial;
    unsigned char r[RAND_LEN];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        unsigned long x = (unsigned long)ts.tv_nsec * 2654435761u ^
                          (unsigned long)atomic_fetch_add(&serial, 1) * 40503u ^ (unsigned)getpid();
        for (int i = 0; i < RAND_LEN; i++, x /= 62)
            r[i] = (unsigned char)(x % 62);
    }
    for (int i = 0; i < RAND_LEN; i++)
        out[i] = chars[r[i] % 62];
    out[RAND_LEN] = '\0';
}

/* Whether `rest` (what follows "<target>.kscope-tmp.") is "<pid>.<tag>". */
static int is_tmp_suffix(const char *rest)
{
    size_t digits = strspn(rest, "0123456789");
    if (digits == 0 || rest[digits] != '.')
        return 0;
    const char *tag = rest + digits + 1;
    return strlen(tag) == RAND_LEN && strspn(tag, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
                                                  "RSTUVWXYZ0123456789") == RAND_LEN;
}

int kscope__out_clean_stale(const char *target)
{
    const char *slash = strrchr(target, '/');
    const char *base = slash ? slash + 1 : target;
    char *dir = slash ? strndup(target, (size_t)(slash - target) + (slash == target)) : NULL;
    DIR *d = opendir(dir ? dir : ".");
    free(dir);
    if (!d)
        return 0;
    size_t blen = strlen(base), tlen = strlen(KSCOPE__TMP_TAG);
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, base, blen) != 0 ||
            strncmp(e->d_name + blen, KSCOPE__TMP_TAG, tlen) != 0 ||
            !is_tmp_suffix(e->d_name + blen + tlen))
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        /* its writer holds the lock until the rename: free, it is gone */
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            flock(fd, LOCK_EX | LOCK_NB) == 0 && unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return removed;
}

/* Create and lock a new temporary file beside target, with the mode of
 * the file it replaces (else 0644 less the umask). 0 or an errno. */
static int make_tmp(kscope__out *o, const struct stat *old)
{
    size_t size = strlen(o->target) + sizeof KSCOPE__TMP_TAG + 32;
    o->tmp = malloc(size);
    if (!o->tmp)
        return ENOMEM;
    for (int tries = 0; tries < 100; tries++) {
        char tag[RAND_LEN + 1];
        random_tag(tag);
        snprintf(o->tmp, size, "%s" KSCOPE__TMP_TAG "%ld.%s", o->target, (long)getpid(), tag);
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0)
            return errno;
        /* a cleaner that opened it before the lock removed it: another name */
        struct stat st;
        int busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
        if (busy || (fstat(fd, &st) == 0 && st.st_nlink == 0)) {
            close(fd);
            continue;
        }
        if (old)
            (void)fchmod(fd, old->st_mode & 07777);
        o->fd = fd;
        return 0;
    }
    return EEXIST;
}

int kscope__out_open(kscope__out *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->path = path;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return fail(path, "cannot write", EISDIR, err, errlen);
        /* a device or FIFO: written where it is, as the user pointed there */
        o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        return o->fd < 0 ? fail(path, "cannot write", errno, err, errlen) : 0;
    }
    o->target = final_name(path);
    if (!o->target)
        return fail(path, "cannot write", errno, err, errlen);
    int exists = stat(o->target, &st) == 0 && S_ISREG(st.st_mode);
    kscope__out_clean_stale(o->target);
    int e = make_tmp(o, exists ? &st : NULL);
    if (e) {
        free(o->tmp);
        free(o->target);
        o->tmp = o->target = NULL;
        return fail(path, "cannot write", e, err, errlen);
    }
    return 0;
}

void kscope__out_write(kscope__out *o, const void *buf, size_t len)
{
    if (o->err || o->fd < 0)
        return;
    o->err = write_all(o->fd, buf, len);
}

/* The stream's writes go through kscope__out_write, which keeps the first
 * failure for commit to report. */
static ssize_t stream_write(void *cookie, const char *buf, size_t len)
{
    kscope__out *o = cookie;
    kscope__out_write(o, buf, len);
    if (o->err) {
        errno = o->err;
        return -1;
    }
    return (ssize_t)len;
}

FILE *kscope__out_stream(kscope__out *o)
{
    if (!o->f && o->fd >= 0)
        o->f = fopencookie(o, "w", (cookie_io_functions_t){.write = stream_write});
    if (!o->f && !o->err)
        o->err = ENOMEM;
    return o->f;
}

/* Close the stream and the descriptor: 0 or an errno. */
static int close_out(kscope__out *o)
{
    if (o->f)
        fclose(o->f); /* flushed before: its errors are in o->err */
    o->f = NULL;
    int e = o->fd >= 0 && close(o->fd) != 0 ? errno : 0;
    o->fd = -1;
    return e;
}

/* Make a rename into target's folder durable; best effort. */
static void sync_dir_of(const char *file)
{
    const char *slash = strrchr(file, '/');
    char *dir = slash ? strndup(file, (size_t)(slash - file) + (slash == file)) : NULL;
    int fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

static void release(kscope__out *o)
{
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
}

int kscope__out_commit(kscope__out *o, char *err, size_t errlen)
{
    if (o->f && (fflush(o->f) != 0 || ferror(o->f)) && !o->err)
        o->err = EIO;
    int e = o->err;
    if (!o->tmp) { /* in place */
        int ce = close_out(o);
        e = e ? e : ce;
        release(o);
        return e ? fail(o->path, "cannot write", e, err, errlen) : 0;
    }
    /* on disk before the rename, and renamed while still locked: a
     * cleaner never takes a finished file for a dead writer's */
    if (!e && fsync(o->fd) != 0)
        e = errno;
    if (!e && rename(o->tmp, o->target) != 0)
        e = errno;
    int ce = close_out(o);
    e = e ? e : ce;
    if (e)
        unlink(o->tmp);
    else
        sync_dir_of(o->target);
    release(o);
    return e ? fail(o->path, "cannot write", e, err, errlen) : 0;
}

void kscope__out_abort(kscope__out *o)
{
    close_out(o);
    if (o->tmp)
        unlink(o->tmp);
    release(o);
}

int kscope__out_file(const char *path, const void *buf, size_t len, char *err, size_t errlen)
{
    kscope__out o;
    int rc = kscope__out_open(&o, path, err, errlen);
    if (rc < 0)
        return rc;
    kscope__out_write(&o, buf, len);
    return kscope__out_commit(&o, err, errlen);
}
