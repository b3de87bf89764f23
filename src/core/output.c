/*
 * output.c - writing a profile file, whole or streamed as a writer makes
 * it: to a temporary file beside the target, flushed and renamed over it,
 * so that a reader sees the old profile or the new one, never half of one.
 */
#define _GNU_SOURCE
#include "core.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int io_error(const char *path, int err)
{
    int code = err == ENOSPC || err == EDQUOT                  ? KSCOPE_ENOSPC
               : err == EACCES || err == EPERM || err == EROFS ? KSCOPE_EACCES
                                                               : KSCOPE_EIO;
    return kscope__fail(code, "cannot write profile '%s': %s", path, strerror(err));
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

/* Make a rename into dir durable; best effort (some file systems refuse). */
static void sync_dir_of(const char *file)
{
    char *copy = strdup(file);
    if (!copy)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

/* What the symbolic link at path names (its folder prepended to a relative
 * name), malloc'd; NULL when it cannot be read. The file need not exist. */
static char *link_target(const char *path)
{
    char name[4096];
    ssize_t n = readlink(path, name, sizeof name - 1);
    if (n <= 0)
        return NULL;
    name[n] = '\0';
    char *dir = strdup(path);
    size_t size = strlen(path) + (size_t)n + 2;
    char *out = dir ? malloc(size) : NULL;
    if (out && name[0] == '/')
        snprintf(out, size, "%s", name);
    else if (out)
        snprintf(out, size, "%s/%s", dirname(dir), name);
    free(dir);
    return out;
}

struct kscope__outfile {
    char *path;   /* as given, for messages */
    char *target; /* the file replaced: path, or what a link at path names */
    char *tmp;    /* the new file beside it; NULL: written in place */
    int fd;
    int err; /* the first errno */
};

static void outfile_free(kscope__outfile *o)
{
    if (o->fd >= 0)
        close(o->fd);
    free(o->path);
    free(o->target);
    free(o->tmp);
    free(o);
}

/* A target that is not a regular file (a device, a FIFO) cannot be replaced
 * by renaming: it is written in place, as the user pointed it there. Else
 * the bytes go to a new file beside the target, flushed and renamed over it
 * at the end: readers see the old profile or the new one, never half of
 * one. A symbolic link at path is followed, so the link stays and the file
 * it names is replaced. */
int kscope__output_open(const char *path, kscope__outfile **out)
{
    static _Atomic unsigned serial;
    kscope__outfile *o = calloc(1, sizeof *o);
    if (!o || !(o->path = strdup(path))) {
        free(o);
        return kscope__fail(KSCOPE_ENOMEM, "out of memory writing profile '%s'", path);
    }
    o->fd = -1;
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    } else {
        if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            o->target = link_target(path);
        if (!o->target)
            o->target = strdup(path);
        size_t tl = o->target ? strlen(o->target) + 48 : 0;
        if (tl && (o->tmp = malloc(tl)) != NULL) {
            snprintf(o->tmp, tl, "%s.tmp.%ld.%u", o->target, (long)getpid(),
                     atomic_fetch_add(&serial, 1));
            o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        } else {
            errno = ENOMEM;
        }
    }
    if (o->fd < 0) {
        int err = errno;
        free(o->tmp); /* not made: nothing to remove */
        o->tmp = NULL;
        outfile_free(o);
        return io_error(path, err);
    }
    *out = o;
    return 0;
}

int kscope__output_write(void *outfile, const void *buf, size_t len)
{
    kscope__outfile *o = outfile;
    if (!o->err)
        o->err = write_all(o->fd, buf, len);
    return o->err ? io_error(o->path, o->err) : 0;
}

int kscope__output_close(kscope__outfile *o, int commit)
{
    int err = o->err;
    if (commit && !err && o->tmp && fsync(o->fd) != 0)
        err = errno;
    if (close(o->fd) != 0 && !err)
        err = errno;
    o->fd = -1;
    if (commit && !err && o->tmp && rename(o->tmp, o->target) != 0)
        err = errno;
    if (o->tmp && (!commit || err))
        unlink(o->tmp);
    else if (o->tmp)
        sync_dir_of(o->target);
    int rc = commit && err ? io_error(o->path, err) : 0;
    outfile_free(o);
    return rc;
}

/* Write a whole profile to path. */
int kscope__output_file(const char *path, const char *buf, size_t len)
{
    kscope__outfile *o;
    int rc = kscope__output_open(path, &o);
    if (rc != 0)
        return rc;
    rc = kscope__output_write(o, buf, len);
    int end = kscope__output_close(o, rc == 0);
    return rc ? rc : end;
}
