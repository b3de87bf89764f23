/*
 * port.c - the processes listening on a TCP port, and their descendants.
 *
 * /proc/net/tcp and tcp6 list the listening sockets with their inodes; the
 * owner of a socket is whichever process has an fd linking to
 * "socket:[inode]". Descendants come from the ppid field of every
 * /proc/<pid>/stat. This is what `kscope pids --port` and
 * `kscope monitor --port` use to find a server's processes.
 */
#include "kscope-internal.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TCP_LISTEN 0x0A

/* A growable array of 64-bit values (inodes, pids, pid/ppid pairs). */
typedef struct vec {
    uint64_t *v;
    size_t n, cap;
} vec;

static int vec_push(vec *a, uint64_t x)
{
    if (a->n == a->cap && KSCOPE__ROOM(a->v, a->cap, a->n + 1, 64) != 0)
        return -1;
    a->v[a->n++] = x;
    return 0;
}

static int vec_has(const vec *a, uint64_t x)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i] == x)
            return 1;
    return 0;
}

/* Add the inodes of sockets listening on `port` in one /proc/net table.
 * A missing table (no IPv6) is not an error. */
static int listening_inodes(const char *table, int port, vec *inodes)
{
    FILE *f = fopen(table, "r");
    if (!f)
        return 0;
    char line[512];
    int err = 0;
    if (!fgets(line, sizeof line, f)) /* header */
        line[0] = '\0';
    while (!err && fgets(line, sizeof line, f)) {
        char local[64];
        unsigned int state, lport;
        unsigned long long inode;
        /* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %63s %*s %x %*s %*s %*s %*s %*s %llu", local, &state, &inode) != 3)
            continue;
        char *colon = strrchr(local, ':');
        if (!colon || sscanf(colon + 1, "%x", &lport) != 1)
            continue;
        if (state == TCP_LISTEN && (int)lport == port && inode != 0 && !vec_has(inodes, inode))
            err = vec_push(inodes, inode);
    }
    fclose(f);
    return err;
}

/* A /proc entry name that is a pid; 0 otherwise. */
static int dir_pid(const char *name)
{
    if (!isdigit((unsigned char)name[0]))
        return 0;
    char *end;
    long v = strtol(name, &end, 10);
    return *end == '\0' && v > 0 && v < INT32_MAX ? (int)v : 0;
}

/* Does process `pid` hold an fd on one of the socket inodes? Sets *denied
 * when its fds cannot be read. */
static int owns_socket(int pid, const vec *inodes, int *denied)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    if (!d) {
        if (errno == EACCES)
            *denied = 1;
        return 0;
    }
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char target[64];
        ssize_t n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        unsigned long long inode;
        if (sscanf(target, "socket:[%llu]", &inode) == 1 && vec_has(inodes, inode))
            found = 1;
    }
    closedir(d);
    return found;
}

/* The parent of a process, 0 when it cannot be read. */
static int parent_of(int pid)
{
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *p = strrchr(text, ')');
    int ppid = 0;
    if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
        return 0;
    return ppid;
}

/* Walk /proc once: owners of the sockets go to `found`, every pid with its
 * parent to `family` as (pid << 32 | ppid). */
static int scan_processes(const vec *inodes, vec *found, vec *family, int *denied)
{
    DIR *d = opendir("/proc");
    if (!d)
        return kscope__fail(KSCOPE_EIO, "cannot list /proc: %s", strerror(errno));
    int err = 0;
    struct dirent *e;
    while (!err && (e = readdir(d))) {
        int pid = dir_pid(e->d_name);
        if (!pid)
            continue;
        if (owns_socket(pid, inodes, denied))
            err = vec_push(found, (uint64_t)pid);
        if (!err)
            err = vec_push(family, (uint64_t)pid << 32 | (uint32_t)parent_of(pid));
    }
    closedir(d);
    return err ? kscope__fail(KSCOPE_ENOMEM, "out of memory listing processes") : 0;
}

/* Add every descendant of the pids already in `found` (breadth first). */
static int add_descendants(vec *found, const vec *family)
{
    for (size_t i = 0; i < found->n; i++) {
        for (size_t j = 0; j < family->n; j++) {
            uint64_t pid = family->v[j] >> 32, ppid = family->v[j] & 0xffffffffu;
            if (ppid == found->v[i] && !vec_has(found, pid) && vec_push(found, pid) != 0)
                return kscope__fail(KSCOPE_ENOMEM, "out of memory listing processes");
        }
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int kscope_pids_for_port(int port, int *pids, size_t cap)
{
    if (port < 1 || port > 65535)
        return kscope__fail(KSCOPE_EINVAL, "bad TCP port %d (expected 1..65535)", port);
    if (!pids && cap)
        return kscope__fail(KSCOPE_EINVAL, "kscope_pids_for_port: no output array");
    vec inodes = {0}, found = {0}, family = {0};
    int err = 0, denied = 0;
    if (listening_inodes("/proc/net/tcp", port, &inodes) != 0 ||
        listening_inodes("/proc/net/tcp6", port, &inodes) != 0)
        err = kscope__fail(KSCOPE_ENOMEM, "out of memory reading the socket tables");
    if (!err && inodes.n > 0)
        err = scan_processes(&inodes, &found, &family, &denied);
    if (!err && inodes.n > 0 && found.n == 0 && denied)
        err = kscope__fail(KSCOPE_EACCES,
                           "TCP port %d is listened on by a process whose files cannot be read "
                           "(another user's; try as that user or root)",
                           port);
    if (!err)
        err = add_descendants(&found, &family);
    if (!err) {
        if (found.n > 1)
            qsort(found.v, found.n, sizeof *found.v, cmp_u64);
        for (size_t i = 0; i < found.n && i < cap; i++)
            pids[i] = (int)found.v[i];
        err = (int)found.n;
    }
    free(inodes.v);
    free(found.v);
    free(family.v);
    return err;
}
