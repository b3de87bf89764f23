/*
 * launcher.c - the library side of `kscope run` inside each profiled
 * process: start the launcher session from the KSCOPE_RUN_* environment at
 * the first entry point that fires (preload constructor, a GPU backend's
 * injection entry through kscope__gpu_injected, a range source's through
 * kscope__ranges_injected), gate recording by --delay/--duration
 * and by the program's profiler start/stop calls (--capture-range), and
 * finalize at exit, or when a signal ends the process (finisher.c, with
 * the stand-in handlers of preload/signals.c), so a killed process still
 * writes what it recorded.
 *
 * GPU capture starts at the GPU runtime's injection entry (inside its
 * initialisation, where a bare activity tracer starts too), not with the
 * session: a process that never uses the GPU never loads the vendor's
 * libraries, and one that does pays per launch what an in-process
 * session pays, with nothing set up before the runtime was.
 *
 * Nothing here touches the program's file descriptors, and no thread is
 * started for a process that does not need one: the finisher when the
 * process first has something to write, the gate thread only with
 * --delay or --duration.
 */
#define _GNU_SOURCE
#include "kscope-internal.h"
#include "format/format.h"
#include "run/run.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* libkscope.so's signal layer (preload/signals.c): absent from a static
 * copy, which never starts a launcher session. */
extern void kscope__signals_install(void) __attribute__((weak));
extern void kscope__signals_forked(void) __attribute__((weak));

typedef struct run_state {
    pthread_mutex_t lock; /* start, finish, activation */
    int tried;            /* kscope__run_start ran its checks */
    int session;          /* >= 0 once started */
    int finished;
    int claimed;          /* R.base is reserved in the run (else provisional) */
    _Atomic int used;     /* the GPU runtime or NVTX used */
    _Atomic int used_gpu; /* a backend's injection entry was called */
    int want_gpu;         /* the backend was not set to "none" */
    int gpu_tried;        /* the GPU backend was attached (or failed to be) */
    char backend[64];     /* the backend asked for ("": the default) */
    char gpu_reason[256]; /* why GPU capture did not start */
    char base[4096];      /* output path without extension */
    const char *manifest;
    kscope__run_ident ident;
    uint64_t start_ns;
    /* activation gates */
    int capture;     /* --capture-range=<a backend's value> */
    int capture_on;  /* between the program's profiler start and stop */
    int window_open; /* past --delay, before the end of --duration */
    int recording;   /* what the session is set to now */
    double delay_s, duration_s;
    pthread_cond_t gate_cond; /* wakes the gate thread (CLOCK_MONOTONIC) */
    int gate_running;
} run_state;

static run_state R = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .session = -1,
};

/* -------------------------------------------------------------- helpers */

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v && strcmp(v, value) == 0;
}

static const char *env_or_null(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static double env_seconds(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end;
    double d = strtod(v, &end);
    return *end || d < 0 ? 0 : d;
}

/* Only the shared libkscope acts as launcher: a copy linked statically into
 * the program (or into the kscope command itself) stays out of the way. */
static int in_shared_library(void)
{
    Dl_info info;
    if (!dladdr((void *)&in_shared_library, &info) || !info.dli_fname)
        return 0;
    return kscope__run_is_shared_library(info.dli_fname);
}

/* Report a launcher failure: into the manifest for `kscope run` to print,
 * or on stderr when no manifest is set. */
static void report_error(const char *what, int err)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s: %s", what,
             kscope_last_error()[0] ? kscope_last_error() : kscope_strerror(err));
    if (R.manifest)
        kscope__run_manifest_add(R.manifest, KSCOPE_RUN_TAG_ERROR, R.ident.pid, msg);
    else
        kscope__warn_once("run-error", "%s", msg);
}

void kscope__run_report_conflict(const char *msg)
{
    static _Atomic int reported;
    if (atomic_exchange(&reported, 1))
        return;
    if (R.manifest)
        kscope__run_manifest_add(R.manifest, KSCOPE_RUN_TAG_ERROR, R.ident.pid, msg);
    else
        kscope__warn_once("run-conflict", "%s", msg);
}

/* ------------------------------------------------------------ activation */

/* Bring the session in line with the gates; caller holds R.lock. */
static void apply_gates(void)
{
    int want = R.window_open && (!R.capture || R.capture_on);
    if (R.session < 0 || R.finished || want == R.recording)
        return;
    if (want)
        kscope_activate(R.session);
    else
        kscope_deactivate(R.session, 0);
    R.recording = want;
}

void kscope__run_profiler_api(int starting)
{
    pthread_mutex_lock(&R.lock);
    if (R.capture) {
        R.capture_on = starting != 0;
        apply_gates();
    }
    pthread_mutex_unlock(&R.lock);
}

void kscope__run_note_use(void)
{
    atomic_store(&R.used, 1);
    kscope__finisher_need();
}

int kscope__run_active(void)
{
    return R.session >= 0 && !R.finished;
}

static void read_options(kscope_session_opts *o);
static int reserve_name(const kscope_session_opts *o);

/* ---------------------------------------------------------------- finish */

/* Whether this process has anything worth a file: it used the GPU runtime
 * or NVTX or recorded something. Without a manifest (not under `kscope
 * run`) the reserved file exists already and is always written. */
static int worth_writing(void)
{
    return atomic_load(&R.used) || !R.manifest || kscope__run_recorded(R.session);
}

/* Finalize the session into its profile (its path into path) and, beside
 * a tree profile, the run's facts, taken while the session still exists.
 * 0 when the profile was written (a facts file that could not be is
 * reported, yet the profile stands), else the error, reported. */
static int write_profile(char *path, size_t size)
{
    char *facts = NULL;
    size_t nfacts = 0;
    int rc = kscope_output_path(R.session, NULL, path, size);
    int mrc = kscope__run_facts_text(R.session, &facts, &nfacts);
    int frc = kscope__launcher_finalize();
    if (frc < 0 || rc < 0) {
        free(facts);
        report_error("cannot write the profile", frc < 0 ? frc : rc);
        return frc < 0 ? frc : rc;
    }
    if (mrc == 0)
        mrc = kscope__run_facts_save(path, facts, nfacts);
    free(facts);
    if (mrc < 0)
        report_error("cannot write the run's facts beside the profile", mrc);
    return 0;
}

/* Finalize; caller holds R.lock. */
static void finish_locked(void)
{
    if (R.session < 0 || R.finished)
        return;
    R.finished = 1;
    if (!worth_writing())
        return;
    if (atomic_load(&R.used_gpu) && R.want_gpu && !kscope__run_gpu_on(R.session)) {
        char msg[512];
        snprintf(msg, sizeof msg, "the program used %s but its GPU work was not captured: %s",
                 kscope__gpu_device_type(),
                 R.gpu_reason[0] ? R.gpu_reason : "the GPU backend did not start");
        kscope__run_report_conflict(msg);
    }
    if (!R.claimed) {
        kscope_session_opts o;
        read_options(&o);
        int rc = reserve_name(&o);
        if (rc < 0 || (rc = kscope__launcher_rename(R.base)) < 0) {
            report_error("cannot name the profile", rc);
            return;
        }
    }
    uint64_t wall = kscope_now_ns() - R.start_ns;
    int64_t dropped = kscope_dropped(R.session);
    char path[4096];
    int rc = write_profile(path, sizeof path);
    if (rc == 0 && R.manifest) {
        char text[4096 + 64];
        snprintf(text, sizeof text, "%llu\t%lld\t%s", (unsigned long long)wall, (long long)dropped,
                 path);
        kscope__run_manifest_add(R.manifest, KSCOPE_RUN_TAG_PROFILE, R.ident.pid, text);
    }
}

void kscope__run_finish(void)
{
    kscope__finisher_writing(1); /* a signal on this thread waits for the file */
    pthread_mutex_lock(&R.lock);
    finish_locked();
    pthread_mutex_unlock(&R.lock);
    kscope__finisher_writing(0);
}

/* At exit, unless a signal is ending the process: then it ends by that
 * signal once the finisher is done, as it would have before exit. */
static void at_exit(void)
{
    kscope__finisher_exit_check();
    kscope__run_finish();
    kscope__finisher_exit_check();
}

/* A coverage build (tools/coverage.sh) writes its counts at a normal exit;
 * a process that ends through _exit does not get there, so it writes them
 * first. Nothing in other builds (a weak, unset symbol). */
extern void __gcov_dump(void) __attribute__((weak));

static void coverage_dump(void)
{
    if (__gcov_dump)
        __gcov_dump();
}

/* ----------------------------------------------------------------- gates */

/* Seconds since the start of the next gate deadline, -1 when there is
 * none; caller holds R.lock. */
static double next_deadline(void)
{
    double now = (double)(kscope_now_ns() - R.start_ns) / 1e9;
    if (R.delay_s > 0 && !R.window_open && now < R.delay_s)
        return R.delay_s;
    if (R.duration_s > 0 && now < R.delay_s + R.duration_s)
        return R.delay_s + R.duration_s;
    return -1;
}

static void update_window(void)
{
    double now = (double)(kscope_now_ns() - R.start_ns) / 1e9;
    R.window_open = now >= R.delay_s && (R.duration_s <= 0 || now < R.delay_s + R.duration_s);
    apply_gates();
}

/* The --delay/--duration thread: opens and closes the window on time,
 * then ends. */
static void *gate_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&R.lock);
    double next;
    while (!R.finished && (next = next_deadline()) >= 0) {
        uint64_t at = R.start_ns + (uint64_t)(next * 1e9) + 1000000;
        struct timespec ts = {(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)};
        pthread_cond_timedwait(&R.gate_cond, &R.lock, &ts);
        update_window();
    }
    R.gate_running = 0;
    pthread_mutex_unlock(&R.lock);
    return NULL;
}

/* Start the gate thread when --delay or --duration asks for one; caller
 * holds R.lock. */
static void start_gates(void)
{
    if ((R.delay_s <= 0 && R.duration_s <= 0) || R.gate_running)
        return;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* kscope_now_ns's clock */
    pthread_cond_init(&R.gate_cond, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the program's signals are not its */
    pthread_t th;
    if (pthread_create(&th, NULL, gate_main, NULL) == 0) {
        pthread_detach(th);
        R.gate_running = 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ----------------------------------------------------------------- start */

/* Whether `name` is a backend's --capture-range value. */
static int capture_range_known(const char *name)
{
    const kscope__backend *b;
    for (size_t i = 0; name && (b = kscope__backend_at(i)); i++)
        if (b->capture_range && strcmp(b->capture_range, name) == 0)
            return 1;
    return 0;
}

static void read_options(kscope_session_opts *o)
{
    memset(o, 0, sizeof *o);
    o->backend = env_or_null(KSCOPE_RUN_ENV_BACKEND);
    o->context = env_or_null(KSCOPE_RUN_ENV_CONTEXT);
    o->data = env_or_null(KSCOPE_RUN_ENV_DATA);
    o->mode = env_or_null(KSCOPE_RUN_ENV_MODE);
    o->device_scopes = env_or_null(KSCOPE_RUN_ENV_DSCOPES);
    R.capture = capture_range_known(env_or_null(KSCOPE_RUN_ENV_CAPTURE));
    R.delay_s = env_seconds(KSCOPE_RUN_ENV_DELAY);
    R.duration_s = env_seconds(KSCOPE_RUN_ENV_DURATION);
    R.manifest = env_or_null(KSCOPE_RUN_ENV_MANIFEST);
}

/* This process's output path by its rank or pid, not yet reserved. */
static int base_name(char *base, size_t size)
{
    const char *name = env_or_null(KSCOPE_RUN_ENV_NAME);
    kscope__run_ident_get(&R.ident);
    if (kscope__run_base_path(base, size, env_or_null(KSCOPE_RUN_ENV_DIR), name ? name : "kscope",
                              &R.ident) < 0)
        return kscope__fail(KSCOPE_EINVAL, "output path for %s is too long", name);
    return 0;
}

/* Reserve this process's output name into R.base; caller holds R.lock.
 * Done when the profile is written, not at start: an image that execs
 * another program (shells, interpreter shims) reserves nothing. */
static int reserve_name(const kscope_session_opts *o)
{
    char base[4096];
    int rc = base_name(base, sizeof base);
    if (rc < 0)
        return rc;
    int trace = o->data && strcmp(o->data, "trace") == 0;
    char ext[32];
    kscope__format_ext(kscope__format_default(trace ? KSCOPE__KIND_TRACE : KSCOPE__KIND_TREE), ext,
                       sizeof ext);
    rc = kscope__run_claim(R.manifest, base, ext, R.ident.pid, R.base, sizeof R.base);
    R.claimed = rc == 0;
    return rc;
}

static void after_fork_child(void);

/* Why GPU capture did not start: the backend's error, else what the build
 * lacked (the backend asked for, or the first one, left out of it). */
static void note_gpu_reason(const char *backend)
{
    const kscope__backend *b = backend ? kscope__backend_find(backend) : kscope__backend_at(0);
    if (kscope_last_error()[0])
        snprintf(R.gpu_reason, sizeof R.gpu_reason, "%s", kscope_last_error());
    else
        snprintf(R.gpu_reason, sizeof R.gpu_reason, "this kscope was built without %s",
                 b && b->needs ? b->needs : "a GPU backend");
}

/* Start the session; caller holds R.lock and has checked the environment. */
static int start_locked(void)
{
    kscope_session_opts o;
    read_options(&o);
    /* Periodic parts are written as the run goes: reserve the name now. */
    int periodic = 0;
    uint32_t interval;
    if (o.mode && kscope__mode_parse(o.mode, &periodic, &interval) != 0)
        periodic = 0; /* the session's start says what is wrong */
    int rc = periodic ? reserve_name(&o) : base_name(R.base, sizeof R.base);
    if (rc < 0)
        return rc;
    o.name = R.base;
    R.start_ns = kscope_now_ns();
    R.window_open = R.delay_s <= 0;
    R.want_gpu = !o.backend || strcmp(o.backend, "none") != 0;
    snprintf(R.backend, sizeof R.backend, "%s", o.backend ? o.backend : "");
    o.backend = "none"; /* GPU capture starts at the runtime's injection entry */
    int sid = kscope__launcher_start(&o);
    if (sid < 0)
        return sid;
    R.session = sid;
    kscope__session_set_command(sid, env_or_null(KSCOPE_RUN_ENV_COMMAND));
    R.recording = 1;
    apply_gates();
    start_gates();
    if (kscope__signals_install)
        kscope__signals_install();
    atexit(at_exit);
    pthread_atfork(NULL, NULL, after_fork_child);
    return 0;
}

int kscope__run_start(void)
{
    pthread_mutex_lock(&R.lock);
    if (R.tried) {
        pthread_mutex_unlock(&R.lock);
        return R.session >= 0 ? 0 : KSCOPE_ESTATE;
    }
    R.tried = 1;
    int rc = 0;
    if (env_is(KSCOPE_RUN_ENV_ON, "1") && in_shared_library()) {
        rc = start_locked();
        if (rc < 0)
            report_error("cannot start profiling", rc);
    }
    pthread_mutex_unlock(&R.lock);
    /* Without `kscope run` reading a manifest, every process writes its
     * file, so every one may have to on a signal. */
    if (rc == 0 && R.session >= 0 && !R.manifest)
        kscope__finisher_need();
    return rc;
}

/* A child forked without exec starts an empty session of its own; the
 * parent keeps what was recorded before the fork. It reserves its own name
 * when it writes its profile. It has the parent's descriptors, and kscope
 * has none among them to close. */
static void after_fork_child(void)
{
    pthread_mutex_init(&R.lock, NULL);
    R.gate_running = 0;
    int had_finisher = kscope__finisher_forked();
    if (kscope__signals_forked)
        kscope__signals_forked();
    if (R.session < 0 || R.finished)
        return;
    if (kscope__launcher_fork_child() < 0) {
        report_error("cannot profile the forked child", KSCOPE_ESTATE);
        R.finished = 1;
        return;
    }
    R.ident.pid = (long)getpid();
    R.ident.is_main = 0;
    R.claimed = 0;
    R.start_ns = kscope_now_ns();
    start_gates();
    /* The child records through the parent's thread state (no new one
     * tells it to start a finisher): it needs one if the parent did. */
    if (had_finisher)
        kscope__finisher_need();
}

/* ------------------------------------------------------------ _exit */

/* Processes that end with _exit (Python's multiprocessing children, which
 * call os._exit, forked servers) run no atexit handler: as the preloaded
 * library, kscope stands in for _exit to write their profile first. Only
 * the process that owns the session does so (a vfork child shares the
 * parent's memory and must not). */
static _Noreturn void exit_now(int status)
{
    /* Also when the profile is being written by another thread (the
     * finisher, on SIGTERM): the process then ends by that signal once it
     * is written, as it would have before this call. */
    if (R.session >= 0 && (long)getpid() == R.ident.pid) {
        kscope__finisher_exit_check();
        kscope__run_finish();
        kscope__finisher_exit_check();
    }
    coverage_dump();
    for (;;)
        syscall(SYS_exit_group, status);
}

KSCOPE_EXTERN void _exit(int status)
{
    exit_now(status);
}

KSCOPE_EXTERN void _Exit(int status)
{
    exit_now(status);
}

/* ----------------------------------------------------------- entry points */

/* A backend's report of a second profiler counts only while a launcher
 * session runs (kscope holds the GPU's profiling interface then). */
static void conflict_hook(const char *msg)
{
    if (kscope__run_active())
        kscope__run_report_conflict(msg);
}

/* Start GPU capture for the launcher session, once. */
static void attach_gpu(void)
{
    pthread_mutex_lock(&R.lock);
    if (R.session >= 0 && !R.finished && R.want_gpu && !R.gpu_tried) {
        R.gpu_tried = 1;
        const char *backend = R.backend[0] ? R.backend : NULL;
        kscope__session_gpu_attach(R.session, backend);
        if (!kscope__run_gpu_on(R.session))
            note_gpu_reason(backend);
    }
    pthread_mutex_unlock(&R.lock);
}

/* A backend's injection entry (the GPU runtime loading libkscope, inside
 * its initialisation): GPU capture starts here. */
static void injected_hook(void)
{
    atomic_store(&R.used_gpu, 1);
    kscope__run_start();
    kscope__run_note_use();
    attach_gpu();
}

/* The program recorded something (its first scope on a thread, a phase):
 * from now on a signal that ends it must leave its profile. */
static void recording_hook(void)
{
    kscope__finisher_need();
}

/* `kscope run` put the command's AddressSanitizer runtime first in
 * LD_PRELOAD (it must come first of all libraries): take it out again, so
 * that this process's children get the LD_PRELOAD they would have had. */
static void drop_sanitizer_preload(void)
{
    const char *san = getenv(KSCOPE_RUN_ENV_SANITIZER);
    const char *pre = getenv("LD_PRELOAD");
    if (!san)
        return;
    size_t n = strlen(san);
    if (n && pre && strncmp(pre, san, n) == 0 && (pre[n] == ' ' || pre[n] == ':')) {
        char *rest = strdup(pre + n + 1);
        if (rest)
            setenv("LD_PRELOAD", rest, 1);
        free(rest);
    }
    unsetenv(KSCOPE_RUN_ENV_SANITIZER);
}

/* A range source's injection entry (NVTX's, at its first call): the
 * session starts; GPU capture waits for the GPU runtime's own entry. */
static void ranges_injected_hook(void)
{
    kscope__run_start();
    kscope__run_note_use();
}

/* LD_PRELOAD entry: programs that never use the GPU are profiled too. The
 * backends' entry points reach the launcher through the core's hooks. */
__attribute__((constructor)) static void kscope_run_constructor(void)
{
    static const kscope__run_hooks hooks = {
        .capture_range = kscope__run_profiler_api,
        .report_conflict = conflict_hook,
        .gpu_injected = injected_hook,
        .recording = recording_hook,
        .ranges_injected = ranges_injected_hook,
    };
    kscope__set_run_hooks(&hooks);
    if (env_is(KSCOPE_RUN_ENV_ON, "1")) {
        drop_sanitizer_preload();
        kscope__run_start();
    }
}
