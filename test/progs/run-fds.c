/*
 * run-fds.c - a program's file descriptors, for the `kscope run` tests that
 * compare a bare run with a run under kscope (test/cli-run-fds.sh). With
 * ANNOTATE=1 it records a scope first (through the libkscope it links).
 *
 * Usage: run-fds MODE [ARG]
 *   closeall raise|wait  close fds 3..1023, open a.bin and b.bin (fds 3
 *                        and 4), write to them, then raise SIGTERM or wait
 *                        for it; "still alive" if it survives
 *   readlater            close fds 3..1023, open in.txt (fd 3), read it
 *                        20 ms later
 *   dup2                 dup2 stdout over fds 3 and 4; the parent and a
 *                        forked child write through them
 *   firstfd              the descriptor the first open gets
 *   maxfds               how many descriptors open before EMFILE
 *   pipefork             a pipe (fds 3 and 4) shared with a forked child
 *   threads              how many threads the process has
 */
#define _GNU_SOURCE
#include "kscope.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void say(const char *s)
{
    printf("%s\n", s);
    fflush(stdout);
}

static void close_from_3(void)
{
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int closeall(const char *how)
{
    close_from_3();
    int a = open("a.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int b = open("b.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    printf("fds %d %d\n", a, b);
    if (write(a, "AAAA", 4) != 4 || write(b, "BBBB", 4) != 4)
        say("write failed");
    if (strcmp(how, "raise") == 0) {
        raise(SIGTERM);
    } else {
        say("ready");
        sleep_ms(20000);
    }
    if (write(b, "BBBB", 4) != 4)
        say("write failed");
    say("still alive after SIGTERM");
    return 0;
}

static int readlater(void)
{
    close_from_3();
    int fd = open("in.txt", O_RDONLY);
    sleep_ms(20);
    char buf[64] = {0};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    printf("fd %d read %zd: %s\n", fd, n, buf);
    return 0;
}

static int dup2_mode(void)
{
    dup2(1, 3);
    dup2(2, 4);
    dprintf(3, "parent via fd 3\n");
    pid_t pid = fork();
    if (pid == 0) {
        dprintf(3, "child via fd 3\n");
        dprintf(4, "child via fd 4\n");
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    dprintf(4, "parent via fd 4, child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}

static int maxfds(void)
{
    int n = 0, fd;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0)
        n++;
    printf("opened %d before %s\n", n, errno == EMFILE ? "EMFILE" : strerror(errno));
    return 0;
}

static int pipefork(void)
{
    int p[2];
    if (pipe(p) != 0)
        return 1;
    printf("pipe fds %d %d\n", p[0], p[1]);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        if (write(p[1], "hello from the child", 20) != 20)
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    char buf[64] = {0};
    ssize_t n, got = 0;
    while ((n = read(p[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
        got += n;
    waitpid(pid, NULL, 0);
    printf("read %zd: %s\n", got, buf);
    return 0;
}

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    printf("%d thread(s)\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (getenv("ANNOTATE"))
        kscope_enter("main");
    if (strcmp(mode, "closeall") == 0)
        return closeall(argc > 2 ? argv[2] : "wait");
    if (strcmp(mode, "readlater") == 0)
        return readlater();
    if (strcmp(mode, "dup2") == 0)
        return dup2_mode();
    if (strcmp(mode, "firstfd") == 0) {
        printf("first fd %d\n", open("/dev/null", O_RDONLY));
        return 0;
    }
    if (strcmp(mode, "maxfds") == 0)
        return maxfds();
    if (strcmp(mode, "pipefork") == 0)
        return pipefork();
    if (strcmp(mode, "threads") == 0)
        return threads();
    fprintf(stderr, "run-fds: unknown mode %s\n", mode);
    return 2;
}
