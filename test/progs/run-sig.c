/*
 * run-sig.c - a program's signals, for the `kscope run` tests that compare
 * a bare run with a run under kscope (test/cli-run-sig*.sh). With
 * ANNOTATE=1 in the environment it records a scope first (through the
 * libkscope it links; nothing happens without kscope run), so a profile
 * is written when a signal ends it.
 *
 * Usage: run-sig MODE [SIGNAL] [threads] [from-thread]
 *   raise SIG      print, raise SIG, print "after" (not reached by default)
 *   wait           print "ready", then wait up to 20 s to be killed
 *   handler SIG    an SA_SIGINFO handler; once it ran, print what it got
 *   ignore SIG     SIG_IGN, raise, "ready", read stdin to its end, exit 0
 *   block SIG      blocked, raise, show it pending, "ready", stdin, exit 0
 *   query          every signal's disposition as sigaction returns it
 *   restore SIG    old = signal(SIG, h); signal(SIG, old); raise SIG
 *   restore-sa SIG the same with sigaction's struct
 *   reraise SIG    a handler that sets SIG_DFL and raises SIG again
 *   sysv SIG       sysv_signal (one shot): raise twice
 *   sigset SIG     sigset(SIG_HOLD), raise, sigset(handler)
 *   interrupt      siginterrupt(SIGALRM, 1), then the flags it left
 *   setters        each call that sets a disposition, then what sigaction
 *                  returns for it
 */
#define _GNU_SOURCE
#include "kscope.h"

/* sigset and siginterrupt are old, and a program may still call them. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* glibc declares it for old X/Open programs only; it still exports it. */
extern sighandler_t bsd_signal(int sig, sighandler_t handler);

static volatile sig_atomic_t count, got_code, got_pid, got_uid;

static int sig_of(const char *name)
{
    static const struct {
        const char *name;
        int sig;
    } names[] = {{"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},   {"QUIT", SIGQUIT},
                 {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"ALRM", SIGALRM}, {"PIPE", SIGPIPE},
                 {"XCPU", SIGXCPU}, {"PROF", SIGPROF}, {"PWR", SIGPWR},   {"WINCH", SIGWINCH},
                 {"CONT", SIGCONT}, {"URG", SIGURG}};
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].sig;
    if (name && strncmp(name, "RTMIN+", 6) == 0)
        return SIGRTMIN + atoi(name + 6);
    fprintf(stderr, "run-sig: unknown signal %s\n", name ? name : "(none)");
    exit(2);
}

static void say(const char *s)
{
    printf("%s\n", s);
    fflush(stdout);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void on_info(int sig, siginfo_t *info, void *uc)
{
    (void)sig;
    (void)uc;
    count++;
    got_code = info->si_code;
    got_pid = info->si_pid;
    got_uid = info->si_uid == getuid();
}

static void on_plain(int sig)
{
    (void)sig;
    count++;
}

static void on_reraise(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
}

static void *idle_thread(void *arg)
{
    if (arg)
        kscope_enter("thread");
    for (;;)
        pause();
    return NULL;
}

static void *raise_thread(void *arg)
{
    raise(*(int *)arg);
    say("after (thread)");
    return NULL;
}

static void drain_stdin(void)
{
    char buf[256];
    while (read(0, buf, sizeof buf) > 0)
        ;
}

static void show(const char *what, int sig)
{
    struct sigaction sa;
    sigaction(sig, NULL, &sa);
    unsigned long mask = 0;
    for (int s = 1; s < 64 && s < NSIG; s++)
        if (sigismember(&sa.sa_mask, s))
            mask |= 1ul << s;
    printf("%s: %s flags=%#x mask=%#lx\n", what,
           sa.sa_handler == SIG_DFL   ? "DFL"
           : sa.sa_handler == SIG_IGN ? "IGN"
                                      : "handler",
           (unsigned)sa.sa_flags, mask);
}

/* Each call that sets a disposition, on signals kscope stands in for. */
static void setters(void)
{
    sysv_signal(SIGUSR1, on_plain);
    show("sysv_signal(SIGUSR1, h)", SIGUSR1);
    signal(SIGUSR2, on_plain);
    show("signal(SIGUSR2, h)", SIGUSR2);
    sigset(SIGHUP, on_plain);
    show("sigset(SIGHUP, h)", SIGHUP);
    sigignore(SIGALRM);
    show("sigignore(SIGALRM)", SIGALRM);
    siginterrupt(SIGPROF, 1);
    show("siginterrupt(SIGPROF, 1)", SIGPROF);
    signal(SIGPROF, on_plain);
    show("then signal(SIGPROF, h)", SIGPROF);
    sysv_signal(SIGTERM, SIG_DFL);
    show("sysv_signal(SIGTERM, SIG_DFL)", SIGTERM);
    sigset(SIGINT, SIG_DFL);
    show("sigset(SIGINT, SIG_DFL)", SIGINT);
    bsd_signal(SIGQUIT, SIG_IGN);
    show("bsd_signal(SIGQUIT, SIG_IGN)", SIGQUIT);
    printf("signal(0) %s, signal(SIGKILL, h) %s\n",
           signal(0, on_plain) == SIG_ERR ? "SIG_ERR" : "ok",
           signal(SIGKILL, on_plain) == SIG_ERR ? "SIG_ERR" : "ok");
}

static void query(void)
{
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) != 0) {
            printf("%d: error\n", sig);
            continue;
        }
        const char *h = sa.sa_handler == SIG_DFL   ? "DFL"
                        : sa.sa_handler == SIG_IGN ? "IGN"
                                                   : "handler";
        unsigned long mask = 0;
        for (int s = 1; s < 64 && s < NSIG; s++)
            if (sigismember(&sa.sa_mask, s))
                mask |= 1ul << s;
        printf("%d: %s flags=%#x mask=%#lx\n", sig, h, (unsigned)sa.sa_flags, mask);
    }
}

static void handler_mode(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_info;
    sa.sa_flags = SA_SIGINFO;
    sigaction(sig, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    say("ready");
    while (!count)
        sigsuspend(&none);
    sleep_ms(100); /* a second delivery would come meanwhile */
    const char *sender = getenv("SENDER");
    const char *from = got_pid == getpid()                 ? "self"
                       : sender && got_pid == atoi(sender) ? "the sender"
                                                           : "another process";
    printf("handled %d time(s), si_code %d, from %s, uid %s\n", (int)count, (int)got_code,
           getenv("ANY_SENDER") ? "-" : from, got_uid ? "same" : "other");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int threads = 0, from_thread = 0, annotate = getenv("ANNOTATE") != NULL;
    for (int i = 2; i < argc; i++) {
        threads |= strcmp(argv[i], "threads") == 0;
        from_thread |= strcmp(argv[i], "from-thread") == 0;
    }
    if (annotate)
        kscope_enter("main");
    for (int i = 0; threads && i < 3; i++) {
        pthread_t th;
        pthread_create(&th, NULL, idle_thread, annotate ? (void *)1 : NULL);
    }
    int sig = strcmp(mode, "wait") && strcmp(mode, "query") && strcmp(mode, "interrupt") &&
                      strcmp(mode, "setters")
                  ? sig_of(argc > 2 ? argv[2] : NULL)
                  : 0;
    if (strcmp(mode, "raise") == 0) {
        say("before");
        if (from_thread) {
            pthread_t th;
            pthread_create(&th, NULL, raise_thread, &sig);
            pthread_join(th, NULL);
        } else {
            raise(sig);
        }
        say("after");
    } else if (strcmp(mode, "wait") == 0) {
        say("ready");
        sleep_ms(20000);
        say("not killed");
    } else if (strcmp(mode, "handler") == 0) {
        handler_mode(sig);
    } else if (strcmp(mode, "ignore") == 0) {
        signal(sig, SIG_IGN);
        raise(sig);
        say("alive after raise");
        say("ready");
        drain_stdin();
        say("alive");
    } else if (strcmp(mode, "block") == 0) {
        sigset_t set, pending;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_BLOCK, &set, NULL);
        raise(sig);
        sigpending(&pending);
        say(sigismember(&pending, sig) ? "pending" : "not pending");
        say("ready");
        drain_stdin();
        say("alive");
    } else if (strcmp(mode, "query") == 0) {
        query();
    } else if (strcmp(mode, "setters") == 0) {
        setters();
    } else if (strcmp(mode, "restore") == 0) {
        sighandler_t old = signal(sig, on_plain);
        printf("old was %s\n", old == SIG_DFL ? "SIG_DFL" : "something else");
        signal(sig, old);
        say("before");
        raise(sig);
        say("after");
    } else if (strcmp(mode, "restore-sa") == 0) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_plain;
        sigaction(sig, &sa, &old);
        sigaction(sig, &old, NULL);
        say("before");
        raise(sig);
        say("after");
    } else if (strcmp(mode, "reraise") == 0) {
        signal(sig, on_reraise);
        say("before");
        raise(sig);
        say("after");
    } else if (strcmp(mode, "sysv") == 0) {
        sysv_signal(sig, on_plain);
        raise(sig);
        printf("handled %d\n", (int)count);
        fflush(stdout);
        raise(sig);
        say("after");
    } else if (strcmp(mode, "sigset") == 0) {
        sighandler_t old = sigset(sig, SIG_HOLD);
        printf("old was %s\n", old == SIG_DFL ? "SIG_DFL" : "something else");
        raise(sig);
        printf("handled %d while held\n", (int)count);
        old = sigset(sig, on_plain);
        printf("old was %s, handled %d\n", old == SIG_HOLD ? "SIG_HOLD" : "something else",
               (int)count);
        sigset(sig, SIG_DFL);
        raise(sig);
        say("after");
    } else if (strcmp(mode, "interrupt") == 0) {
        siginterrupt(SIGALRM, 1);
        struct sigaction sa;
        sigaction(SIGALRM, NULL, &sa);
        printf("SIGALRM %s, SA_RESTART %s\n", sa.sa_handler == SIG_DFL ? "SIG_DFL" : "other",
               sa.sa_flags & SA_RESTART ? "on" : "off");
        signal(SIGALRM, on_plain);
        sigaction(SIGALRM, NULL, &sa);
        printf("signal() after siginterrupt: SA_RESTART %s\n",
               sa.sa_flags & SA_RESTART ? "on" : "off");
    } else {
        fprintf(stderr, "run-sig: unknown mode %s\n", mode);
        return 2;
    }
    if (annotate)
        kscope_exit("main");
    return 0;
}
