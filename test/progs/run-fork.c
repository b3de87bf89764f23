/*
 * run-fork.c - a process tree for `kscope run`: the parent records a
 * scope, forks two children that record their own (one keeps running the
 * same program, one execs this program again), and waits for them. Each
 * process must write its own profile with only its own scopes.
 * Usage: run-fork | run-fork child NAME
 */
#include "kscope.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void scope(const char *name)
{
    kscope_enter(name);
    kscope_exit(name);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0) {
        scope(argv[2]);
        return 0;
    }
    scope("parent-before-fork");
    pid_t a = fork();
    if (a == 0) {
        scope("forked-child");
        _exit(0);
    }
    pid_t b = fork();
    if (b == 0) {
        execl("/proc/self/exe", argv[0], "child", "exec-child", (char *)NULL);
        _exit(127);
    }
    int st1 = 0, st2 = 0;
    waitpid(a, &st1, 0);
    waitpid(b, &st2, 0);
    scope("parent-after-fork");
    return WIFEXITED(st1) && WEXITSTATUS(st1) == 0 && WIFEXITED(st2) && WEXITSTATUS(st2) == 0 ? 0
                                                                                              : 3;
}
