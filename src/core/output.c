/*
 * output.c - writing a profile file whole: to a temporary file beside the
 * target, flushed and renamed over it, so that a reader sees the old
 * profile or the new one, never half of one.
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

/* A target that is not a regular file (a device, a FIFO) cannot be replaced
 * by renaming: it is written in place, as the user pointed it there. */
static int write_in_place(const char *path, const char *buf, size_t len)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return io_error(path, errno);
    int err = write_all(fd, buf, len);
    if (close(fd) != 0 && err == 0)
        err = errno;
    return err ? io_error(path, err) : 0;
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

/* Write buf to a new file beside target, flush it to disk and rename it over
 * target: readers see the old profile or the new one, never half of one. On
 * any failure the temporary file is removed and target is left as it was. */
static int write_replacing(const char *path, const char *target, const char *buf, size_t len)
{
    static _Atomic unsigned serial;
    size_t tl = strlen(target) + 48;
    char *tmp = malloc(tl);
    if (!tmp)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory writing profile '%s'", path);
    snprintf(tmp, tl, "%s.tmp.%ld.%u", target, (long)getpid(), atomic_fetch_add(&serial, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int err = fd < 0 ? errno : write_all(fd, buf, len);
    if (fd >= 0 && err == 0 && fsync(fd) != 0)
        err = errno;
    if (fd >= 0 && close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && rename(tmp, target) != 0)
        err = errno;
    if (err && fd >= 0)
        unlink(tmp);
    if (err == 0)
        sync_dir_of(target);
    free(tmp);
    return err ? io_error(path, err) : 0;
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

/* Write a whole profile to path. A symbolic link at path is followed, so the
 * link stays and the file it names is replaced. */
int kscope__output_file(const char *path, const char *buf, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return write_in_place(path, buf, len);
    char *real = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        real = link_target(path);
    int rc = write_replacing(path, real ? real : path, buf, len);
    free(real);
    return rc;
}
