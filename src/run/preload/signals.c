/*
 * signals.c - the profiled program's signal dispositions under `kscope run`
 * (libkscope.so only: never the Python extension or a static copy, which
 * must not define libc's calls).
 *
 * A process ended by a signal whose action is the default one must still
 * write its profile, yet the program must see and get exactly what it
 * would without kscope. So kscope stands in only for the default action of
 * the signals that end a process (SIGTERM, SIGINT, SIGHUP, SIGUSR1...; not
 * the faults, which leave the heap in no state to write anything): while
 * the program's disposition of such a signal is SIG_DFL, kscope's handler
 * is installed in its place. libkscope interposes sigaction and the calls
 * that libc implements without it (signal, sysv_signal, sigset,
 * sigignore, siginterrupt), so that:
 *  - a query returns the program's own disposition (SIG_DFL, with the
 *    flags and mask it set), never kscope's handler;
 *  - setting a handler or SIG_IGN installs it for real (kscope steps
 *    aside: the program's handler gets the signal and its siginfo);
 *  - setting SIG_DFL puts the stand-in back.
 * The stand-in (which blocks every signal on its thread) asks the
 * finisher thread to write the profile and waits for it, bounded
 * (finisher.c), then restores SIG_DFL, unblocks the signal and raises it
 * again: the process ends by that signal, and nothing more runs on the
 * thread it interrupted.
 */
#define _GNU_SOURCE
#include "kscope-internal.h"
#include "run/run.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static struct {
    _Atomic(sigaction_fn) real;
    _Atomic int armed;                 /* stand-ins installed: this process runs under kscope run */
    _Atomic long owner;                /* the process whose table this is (not a vfork child) */
    atomic_flag lock;                  /* writers, with every signal blocked */
    _Atomic unsigned seq;              /* odd while a writer changes the table */
    _Atomic unsigned char stand[NSIG]; /* kscope's handler is installed for this signal */
    struct sigaction view[NSIG];       /* the program's disposition where stand[sig] */
    sigset_t intr; /* siginterrupt's signals (signal() then sets no SA_RESTART) */
} S = {.lock = ATOMIC_FLAG_INIT};

/* The signals whose default action ends the process and that come from
 * outside it (or from raise/kill/alarm, a closed pipe, a limit). Not the
 * faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT): they
 * stop a thread in no state to write anything, and a debugger or a
 * sanitizer may want them untouched. Not the real-time signals either, which
 * programs use among themselves: each stand-in costs two calls at every
 * exec. Those end the process as they would, without its profile. */
static int covered(int sig)
{
    switch (sig) {
    case SIGHUP:
    case SIGINT:
    case SIGQUIT:
    case SIGUSR1:
    case SIGUSR2:
    case SIGPIPE:
    case SIGALRM:
    case SIGTERM:
    case SIGSTKFLT:
    case SIGXCPU:
    case SIGXFSZ:
    case SIGVTALRM:
    case SIGPROF:
    case SIGIO:
    case SIGPWR:
        return 1;
    default:
        return 0;
    }
}

static sigaction_fn real_sigaction(void)
{
    sigaction_fn f = atomic_load_explicit(&S.real, memory_order_acquire);
    if (!f) {
        f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        atomic_store_explicit(&S.real, f, memory_order_release);
    }
    return f;
}

static int call_real(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn f = real_sigaction();
    if (!f)
        return errno = ENOSYS, -1;
    return f(sig, act, old);
}

/* --------------------------------------------------------------- handler */

void kscope__signals_die(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    call_real(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    for (;;) /* not reached: the action of a covered signal ends the process */
        syscall(SYS_exit_group, 128 + sig);
}

/* kscope's handler, in place of the default action. */
static void stand_in(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    /* raise(), kill() of itself, a write to a closed pipe: the program's
     * own doing, after which nothing of it may run. */
    int own = info->si_code <= 0 && info->si_pid == getpid();
    int end_by = kscope__finisher_fatal(sig, !own);
    if (end_by) /* else this thread writes the profile, or goes on (finisher.c) */
        kscope__signals_die(end_by);
}

static void stand_in_action(struct sigaction *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sa_sigaction = stand_in;
    sigfillset(&sa->sa_mask); /* nothing else runs on the thread it stopped */
    sa->sa_flags = SA_SIGINFO | SA_RESTART;
}

/* ----------------------------------------------------------------- table */

static void write_begin(sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, saved);
    while (atomic_flag_test_and_set_explicit(&S.lock, memory_order_acquire))
        ;
    atomic_fetch_add_explicit(&S.seq, 1, memory_order_acq_rel);
}

static void write_end(const sigset_t *saved)
{
    atomic_fetch_add_explicit(&S.seq, 1, memory_order_acq_rel);
    atomic_flag_clear_explicit(&S.lock, memory_order_release);
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The program's disposition of a covered signal into old: its own view
 * where the stand-in is installed, else what the kernel holds. */
static int query_locked(int sig, struct sigaction *old)
{
    if (atomic_load_explicit(&S.stand[sig], memory_order_acquire)) {
        memcpy(old, &S.view[sig], sizeof *old);
        return 0;
    }
    return call_real(sig, NULL, old);
}

/* The same without the lock (a handler may ask): read again when a writer
 * changed the table meanwhile. */
static int query(int sig, struct sigaction *old)
{
    for (;;) {
        unsigned seq = atomic_load_explicit(&S.seq, memory_order_acquire);
        if (seq & 1)
            continue;
        int rc = query_locked(sig, old);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&S.seq, memory_order_relaxed) == seq)
            return rc;
    }
}

/* Set a covered signal's disposition for the program; caller is between
 * write_begin and write_end. SIG_DFL keeps (or puts back) the stand-in and
 * records what the kernel would hold; anything else is installed for real. */
static int set_locked(int sig, const struct sigaction *act)
{
    if (act->sa_handler != SIG_DFL) {
        int rc = call_real(sig, act, NULL);
        if (rc == 0)
            atomic_store_explicit(&S.stand[sig], 0, memory_order_release);
        return rc;
    }
    /* Through the kernel, so the view holds the flags and mask exactly as
     * a query would return them without kscope. The signal is blocked: it
     * waits for the stand-in. */
    struct sigaction view, mine;
    stand_in_action(&mine);
    if (call_real(sig, act, NULL) != 0)
        return -1;
    if (call_real(sig, &mine, &view) != 0)
        return 0; /* SIG_DFL stays, as asked */
    S.view[sig] = view;
    atomic_store_explicit(&S.stand[sig], 1, memory_order_release);
    return 0;
}

void kscope__signals_install(void)
{
    if (atomic_load(&S.armed) || !real_sigaction())
        return;
    sigset_t saved;
    write_begin(&saved);
    struct sigaction mine, old;
    stand_in_action(&mine);
    for (int sig = 1; sig < 32; sig++) {
        /* Asked first, not swapped: putting back an ignored action would
         * change the flags a query returns. */
        if (!covered(sig) || call_real(sig, NULL, &old) != 0 || old.sa_handler != SIG_DFL)
            continue; /* ignored (nohup) or handled: theirs */
        if (call_real(sig, &mine, NULL) == 0) {
            S.view[sig] = old;
            atomic_store_explicit(&S.stand[sig], 1, memory_order_release);
        }
    }
    atomic_store(&S.owner, (long)getpid());
    atomic_store(&S.armed, 1);
    write_end(&saved);
}

void kscope__signals_forked(void)
{
    atomic_store(&S.owner, (long)getpid());
    /* Another thread may have been changing the table at the fork. */
    if (atomic_load(&S.seq) & 1)
        atomic_fetch_add(&S.seq, 1);
    atomic_flag_clear(&S.lock);
}

/* ----------------------------------------------------------- interposers */

static int managed(int sig)
{
    return sig > 0 && sig < NSIG && atomic_load_explicit(&S.armed, memory_order_acquire) &&
           covered(sig);
}

KSCOPE_EXTERN int sigaction(int sig, const struct sigaction *act, struct sigaction *old);
KSCOPE_EXTERN int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    /* A vfork child shares this table with its parent: it changes its own
     * dispositions only. */
    if (!managed(sig) || (act && (long)getpid() != atomic_load(&S.owner)))
        return call_real(sig, act, old);
    if (!act)
        return old ? query(sig, old) : 0;
    sigset_t saved;
    write_begin(&saved);
    struct sigaction prev;
    int rc = query_locked(sig, &prev);
    if (rc == 0)
        rc = set_locked(sig, act);
    write_end(&saved);
    if (rc == 0 && old)
        *old = prev;
    return rc;
}

KSCOPE_EXTERN int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
KSCOPE_EXTERN int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return sigaction(sig, act, old);
}

/* The glibc calls below set dispositions without going through the
 * exported sigaction; each is written again on top of it, with glibc's
 * flags and masks. */

static int bad_signal(int sig, sighandler_t handler)
{
    return handler == SIG_ERR || sig < 1 || sig >= NSIG;
}

/* Set sig's handler through the exported sigaction, with `flags`, the
 * signal blocked in its handler when `block_self`: what signal() and
 * sysv_signal() share. The old handler, or SIG_ERR with errno set. */
static sighandler_t set_handler(int sig, sighandler_t handler, int flags, int block_self)
{
    if (bad_signal(sig, handler))
        return errno = EINVAL, SIG_ERR;
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    if (block_self)
        sigaddset(&act.sa_mask, sig);
    act.sa_flags = flags;
    if (sigaction(sig, &act, &old) < 0)
        return SIG_ERR;
    return old.sa_handler;
}

/* signal(), BSD semantics: the signal blocked in its handler, calls
 * restarted unless siginterrupt said otherwise. */
KSCOPE_EXTERN sighandler_t signal(int sig, sighandler_t handler)
{
    return set_handler(sig, handler, sigismember(&S.intr, sig) ? 0 : SA_RESTART, 1);
}

KSCOPE_EXTERN sighandler_t bsd_signal(int sig, sighandler_t handler);
KSCOPE_EXTERN sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return signal(sig, handler);
}

KSCOPE_EXTERN sighandler_t ssignal(int sig, sighandler_t handler)
{
    return signal(sig, handler);
}

/* System V semantics: one shot, not blocked in its handler, interrupting. */
KSCOPE_EXTERN sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    int flags = (int)(SA_RESETHAND | SA_NODEFER);
#ifdef SA_INTERRUPT
    flags |= SA_INTERRUPT; /* as glibc, though Linux keeps nothing of it */
#endif
    return set_handler(sig, handler, flags, 0);
}

KSCOPE_EXTERN sighandler_t __sysv_signal(int sig, sighandler_t handler);
KSCOPE_EXTERN sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
    return sysv_signal(sig, handler);
}

KSCOPE_EXTERN sighandler_t sigset(int sig, sighandler_t disp)
{
    if (bad_signal(sig, disp))
        return errno = EINVAL, SIG_ERR;
    sigset_t set, oset;
    sigemptyset(&set);
    sigaddset(&set, sig);
    struct sigaction act, old;
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &set, &oset) < 0)
            return SIG_ERR;
        if (sigismember(&oset, sig))
            return SIG_HOLD;
        if (sigaction(sig, NULL, &old) < 0)
            return SIG_ERR;
        return old.sa_handler;
    }
    memset(&act, 0, sizeof act);
    act.sa_handler = disp;
    sigemptyset(&act.sa_mask);
    if (sigaction(sig, &act, &old) < 0)
        return SIG_ERR;
    if (sigprocmask(SIG_UNBLOCK, &set, &oset) < 0)
        return SIG_ERR;
    return sigismember(&oset, sig) ? SIG_HOLD : old.sa_handler;
}

KSCOPE_EXTERN int sigignore(int sig)
{
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = SIG_IGN;
    sigemptyset(&act.sa_mask);
    return sigaction(sig, &act, NULL);
}

KSCOPE_EXTERN int siginterrupt(int sig, int interrupt)
{
    struct sigaction act;
    if (sigaction(sig, NULL, &act) < 0)
        return -1;
    if (interrupt) {
        sigaddset(&S.intr, sig);
        act.sa_flags &= ~SA_RESTART;
    } else {
        sigdelset(&S.intr, sig);
        act.sa_flags |= SA_RESTART;
    }
    return sigaction(sig, &act, NULL);
}

/* Resolve libc's sigaction at load, not in a handler. */
__attribute__((constructor)) static void signals_constructor(void)
{
    real_sigaction();
}
