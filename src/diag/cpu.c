/*
 * cpu.c - CPU time, RSS and thread counts of processes, from /proc.
 *
 * One read of /proc/<pid>/stat gives everything: user and system ticks,
 * thread count, RSS pages and the start time, which tells a reused pid
 * apart from the process that was followed.
 */
#include "kscope-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Fields of /proc/<pid>/stat counted from the one after "(comm)" (state). */
enum {
    STAT_UTIME = 11,
    STAT_STIME = 12,
    STAT_THREADS = 17,
    STAT_STARTTIME = 19,
    STAT_RSS = 21,
    STAT_FIELDS = 22,
};

/* Read a small /proc file into buf (NUL-terminated); -errno on failure. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, size - 1);
    int saved = errno;
    close(fd);
    if (n < 0)
        return -saved;
    buf[n] = '\0';
    return n;
}

/* Split the fields after the command name (which may hold spaces and
 * parentheses, so it ends at the last ')'). Returns 0 when all are there. */
static int parse_stat(char *text, char *state, unsigned long long *field)
{
    char *p = strrchr(text, ')');
    if (!p || p[1] != ' ' || !p[2])
        return -1;
    *state = p[2];
    p += 3;
    field[0] = 0;
    for (int i = 1; i < STAT_FIELDS; i++) {
        char *end;
        field[i] = strtoull(p, &end, 10);
        if (end == p)
            return -1;
        p = end;
    }
    return 0;
}

int kscope_cpu_read(int pid, kscope_cpu_reading *out)
{
    if (pid <= 0 || !out)
        return kscope__fail(KSCOPE_EINVAL, "bad process id %d", pid);
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    ssize_t n = read_small(path, text, sizeof text);
    if (n == -ENOENT || n == -ESRCH)
        return kscope__fail(KSCOPE_ENOPROC, "no process %d", pid);
    if (n < 0)
        return kscope__fail(KSCOPE_EIO, "cannot read %s: %s", path, strerror((int)-n));
    char state = 0;
    unsigned long long f[STAT_FIELDS];
    if (parse_stat(text, &state, f) != 0)
        return kscope__fail(KSCOPE_EPARSE, "%s: unexpected format", path);
    if (state == 'Z' || state == 'X')
        return kscope__fail(KSCOPE_ENOPROC, "process %d has exited", pid);
    long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE); /* constants, cheap */
    out->pid = pid;
    out->user_s = (double)f[STAT_UTIME] / (double)hz;
    out->system_s = (double)f[STAT_STIME] / (double)hz;
    out->threads = (uint32_t)f[STAT_THREADS];
    out->start_ticks = f[STAT_STARTTIME];
    out->rss_bytes = (uint64_t)f[STAT_RSS] * (uint64_t)page;
    out->t_ns = kscope_now_ns();
    return 0;
}

int kscope_cpu_begin(kscope_cpu_proc *procs, size_t n)
{
    if (!procs && n)
        return kscope__fail(KSCOPE_EINVAL, "kscope_cpu_begin: no processes");
    for (size_t i = 0; i < n; i++) {
        int pid = procs[i].pid;
        memset(&procs[i], 0, sizeof procs[i]);
        procs[i].pid = pid;
        int err = kscope_cpu_read(pid, &procs[i].first);
        if (err < 0)
            return err;
        procs[i].last = procs[i].first;
        procs[i].rss_bytes = procs[i].first.rss_bytes;
        procs[i].threads = procs[i].first.threads;
    }
    return 0;
}

/* Take a new reading of one process, or mark it exited (keeping the last
 * reading) when it is gone or its pid now names another process. */
static void update_one(kscope_cpu_proc *p)
{
    kscope_cpu_reading now;
    if (!p->exited && kscope_cpu_read(p->pid, &now) == 0 &&
        now.start_ticks == p->first.start_ticks) {
        p->last = now;
        p->rss_bytes = now.rss_bytes;
        p->threads = now.threads;
    } else {
        p->exited = 1;
        p->rss_bytes = 0;
        p->threads = 0;
    }
    p->user = p->last.user_s - p->first.user_s;
    p->system = p->last.system_s - p->first.system_s;
}

int kscope_cpu_update(kscope_cpu_proc *procs, size_t n, kscope_cpu_stats *out)
{
    if (!procs && n)
        return kscope__fail(KSCOPE_EINVAL, "kscope_cpu_update: no processes");
    uint64_t now_ns = kscope_now_ns();
    kscope_cpu_stats total = {0};
    for (size_t i = 0; i < n; i++) {
        kscope_cpu_proc *p = &procs[i];
        if (p->first.pid != p->pid)
            return kscope__fail(KSCOPE_ESTATE, "process %d: kscope_cpu_begin was not called",
                                p->pid);
        update_one(p);
        double elapsed = (double)(now_ns - p->first.t_ns) / 1e9;
        p->user_percent = elapsed > 0 ? 100.0 * p->user / elapsed : 0;
        p->system_percent = elapsed > 0 ? 100.0 * p->system / elapsed : 0;
        total.user += p->user;
        total.system += p->system;
        total.rss_bytes += p->rss_bytes;
        total.threads += p->threads;
        total.exited += (uint32_t)p->exited;
        if (elapsed > total.elapsed)
            total.elapsed = elapsed;
    }
    if (total.elapsed > 0) {
        total.user_percent = 100.0 * total.user / total.elapsed;
        total.system_percent = 100.0 * total.system / total.elapsed;
    }
    if (out)
        *out = total;
    return 0;
}
