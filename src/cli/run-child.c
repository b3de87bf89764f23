/*
 * run-child.c - `kscope run` between its caller and the program: start it,
 * pass on every signal sent to kscope, and end as it ended.
 *
 * A signal reaches a program three ways: sent to its pid, to its process
 * group, or from the terminal to the foreground group. Whoever holds
 * kscope's pid must reach the program through kscope exactly once, so
 * kscope chooses the groups so that no signal reaches both:
 *  - kscope does not lead its group (a script's child, under `timeout`,
 *    make, a Python parent): the program stays in that group, where it
 *    would have been without kscope, and kscope moves to a group of its own.
 *    What is sent to the group (timeout's kill(0), the terminal's Ctrl-C
 *    and Ctrl-Z) reaches the program alone; what is sent to kscope's pid
 *    is passed to the program's pid.
 *  - kscope leads its group, alone in it (a shell's job, a new session):
 *    the program leads a group of its own, as it would have led the job,
 *    and gets the terminal's foreground if kscope's group had it (as a
 *    shell hands it to a job); kscope takes it back when the program stops
 *    or ends. A signal sent to kscope is passed to the program's group (a
 *    job's signal reaches all of the job).
 *  - kscope leads a group it shares (a pipeline `kscope run prog | tee`):
 *    the program stays in it, so the terminal's signals reach it and the
 *    rest of the pipeline alike; kscope passes on only the signals not
 *    sent by the terminal (a signal sent to the whole group then arrives
 *    twice: the one case left).
 * When the program stops, kscope stops too by the same signal (a job's
 * shell sees it stopped), except in a group it does not lead, where it
 * stops only when the stop was sent to kscope itself: the group's owner
 * continues the group, which kscope has left. The program gets SIGKILL if
 * kscope dies first (PR_SET_PDEATHSIG), as it would have died with the
 * group or the job. SIGSTOP sent to kscope stops kscope alone: it cannot be
 * caught, so it cannot be passed on.
 */
#define _GNU_SOURCE
#include "cli/run-child.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

enum { GROUP_LEFT, GROUP_OWN, GROUP_SHARED };

static struct {
    volatile sig_atomic_t pid;        /* the program, 0 before and after */
    volatile sig_atomic_t mode;       /* GROUP_* */
    volatile sig_atomic_t stop_asked; /* a stop signal was sent to kscope */
    volatile sig_atomic_t tty;        /* the controlling terminal (GROUP_OWN), or -1 */
    volatile sig_atomic_t gave_tty;   /* the program's group holds its foreground */
    volatile sig_atomic_t continued;  /* a SIGCONT came since stop_like began */
} C = {.tty = -1};

static struct sigaction saved[NSIG]; /* kscope's own actions, for the child */
static unsigned char changed[NSIG];

/* Signals passed on: every one that can be caught, but SIGCHLD (kscope's
 * own) and the faults (a handler returning from one would loop). */
static int passed_on(int sig)
{
    switch (sig) {
    case SIGKILL:
    case SIGSTOP:
    case SIGCHLD:
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGTRAP:
    case SIGSYS:
        return 0;
    default:
        return 1;
    }
}

static int is_stop(int sig)
{
    return sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Hand the terminal to the program's group, if kscope's group has it. */
static void tty_to_program(void)
{
    if (C.tty >= 0 && C.pid > 0 && tcgetpgrp(C.tty) == getpgrp()) {
        if (tcsetpgrp(C.tty, (pid_t)C.pid) == 0)
            C.gave_tty = 1;
    }
}

/* Take the terminal back for kscope's group (SIGTTOU blocked: kscope is in
 * the background until then). */
static void tty_to_kscope(void)
{
    if (C.tty < 0 || !C.gave_tty)
        return;
    sigset_t ttou, old;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &old);
    tcsetpgrp(C.tty, getpgrp());
    sigprocmask(SIG_SETMASK, &old, NULL);
    C.gave_tty = 0;
}

static void pass_on(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    int saved_errno = errno;
    pid_t pid = (pid_t)C.pid;
    /* Not what kscope caused itself (a write to a closed pipe, raise), and
     * in a shared group not what the terminal sent to all of it. */
    int own = info->si_code != SI_KERNEL && info->si_pid == getpid();
    int from_tty = info->si_code == SI_KERNEL;
    if (sig == SIGCONT)
        C.continued = 1;
    if (pid > 0 && !own && !(C.mode == GROUP_SHARED && from_tty)) {
        if (sig == SIGCONT && C.mode == GROUP_OWN)
            tty_to_program();
        if (is_stop(sig))
            C.stop_asked = 1;
        if (C.mode == GROUP_OWN)
            killpg(pid, sig);
        else
            kill(pid, sig);
    }
    errno = saved_errno;
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = pass_on;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    for (int sig = 1; sig < NSIG; sig++)
        changed[sig] = passed_on(sig) && sigaction(sig, &sa, &saved[sig]) == 0;
}

static void uninstall(void)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (changed[sig])
            sigaction(sig, &saved[sig], NULL);
}

/* Whether another process is in kscope's process group (a pipeline). */
static int group_shared(void)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t self = getpid(), pgrp = getpgrp();
    int shared = 0;
    struct dirent *e;
    while (!shared && (e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == self)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            continue;
        buf[n] = 0;
        const char *p = strrchr(buf, ')'); /* the name may hold spaces */
        char state;
        long ppid, group;
        if (p && sscanf(p + 1, " %c %ld %ld", &state, &ppid, &group) == 3 && group == pgrp)
            shared = 1;
    }
    closedir(d);
    return shared;
}

/* Which groups (see the top of the file); opens the terminal for
 * GROUP_OWN when kscope's group has its foreground. */
static int choose_groups(void)
{
    if (getpgrp() != getpid())
        return GROUP_LEFT;
    if (group_shared())
        return GROUP_SHARED;
    int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (tty >= 0 && tcgetpgrp(tty) != getpgrp()) {
        close(tty);
        tty = -1;
    }
    C.tty = tty;
    return GROUP_OWN;
}

/* In the child, between fork and exec; every signal is blocked. */
static _Noreturn void exec_child(char *const argv[], void (*setup)(void *), void *arg, pid_t parent,
                                 const sigset_t *mask)
{
    uninstall();
    if (C.mode == GROUP_OWN) {
        setpgid(0, 0);
        if (C.tty >= 0)
            tcsetpgrp(C.tty, getpid());
    }
    /* Killed with kscope, as it would have been with the job. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(128 + SIGKILL);
    sigprocmask(SIG_SETMASK, mask, NULL);
    setup(arg);
    execvp(argv[0], argv);
    fprintf(stderr, "kscope run: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* Stop kscope by `sig` as the program stopped, until it is continued. */
static void stop_like(int sig)
{
    tty_to_kscope();
    struct sigaction dfl, mine;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    int set = sig != SIGSTOP && sigaction(sig, &dfl, &mine) == 0;
    C.continued = 0;
    raise(sig); /* continued here by SIGCONT, which pass_on sends on */
    if (set)
        sigaction(sig, &mine, NULL);
    /* In an orphaned process group (kscope's parent is in another session)
     * the kernel drops SIGTSTP, SIGTTIN and SIGTTOU: stop anyway. */
    if (!C.continued)
        raise(SIGSTOP);
}

static int wait_child(pid_t pid)
{
    int status;
    for (;;) {
        if (waitpid(pid, &status, WUNTRACED) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (!WIFSTOPPED(status))
            return status;
        if (C.mode != GROUP_LEFT || C.stop_asked)
            stop_like(WSTOPSIG(status));
        C.stop_asked = 0;
    }
}

int kscope_cli_run_child(char *const argv[], void (*setup)(void *), void *arg)
{
    C.mode = choose_groups();
    sigset_t all, mask;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &mask);
    install();
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        exec_child(argv, setup, arg, parent, &mask);
    if (pid < 0) {
        int err = errno;
        uninstall();
        sigprocmask(SIG_SETMASK, &mask, NULL);
        fprintf(stderr, "kscope run: cannot start %s: %s\n", argv[0], strerror(err));
        return -1;
    }
    if (C.mode == GROUP_OWN) {
        setpgid(pid, pid); /* also here: the child may not have run yet */
        C.pid = pid;
        tty_to_program();
    } else {
        if (C.mode == GROUP_LEFT)
            setpgid(0, 0);
        C.pid = pid;
    }
    sigprocmask(SIG_SETMASK, &mask, NULL);
    int status = wait_child(pid);
    C.pid = 0;
    tty_to_kscope();
    uninstall();
    /* Out of the terminal's foreground group, a write of the summary to it
     * must not stop kscope (TOSTOP). */
    if (C.mode == GROUP_LEFT)
        signal(SIGTTOU, SIG_IGN);
    if (C.tty >= 0)
        close(C.tty);
    C.tty = -1;
    return status;
}

int kscope_cli_end_like(int status)
{
    fflush(NULL);
    if (!WIFSIGNALED(status))
        return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    /* The program's core file, if any, is the one: none of kscope's. */
    prctl(PR_SET_DUMPABLE, 0);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig;
}
