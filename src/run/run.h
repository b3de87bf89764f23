/*
 * run.h - the launcher (`kscope run`): what the command line and the
 * library side inside the profiled processes agree on.
 *
 * The command line passes its options to every process of the run through
 * KSCOPE_RUN_* environment variables. Inside a process, libkscope starts the
 * launcher session the first time one of its entry points fires (the preload
 * constructor, a GPU backend's injection entry, NVTX's
 * InitializeInjectionNvtx2),
 * finalizes it at exit or when a signal ends the process, and appends one
 * line per written profile (or per error) to the run's manifest, which the
 * command line reads back for the exit summary.
 */
#ifndef KSCOPE_RUN_H
#define KSCOPE_RUN_H

#include <stddef.h>
#include <stdint.h>

/* Environment variables set by `kscope run` for the processes it drives. */
#define KSCOPE_RUN_ENV_ON       "KSCOPE_RUN"               /* "1": act as launcher */
#define KSCOPE_RUN_ENV_NAME     "KSCOPE_RUN_NAME"          /* base name of the outputs */
#define KSCOPE_RUN_ENV_DIR      "KSCOPE_RUN_DIR"           /* output directory */
#define KSCOPE_RUN_ENV_BACKEND  "KSCOPE_RUN_BACKEND"       /* session option */
#define KSCOPE_RUN_ENV_CONTEXT  "KSCOPE_RUN_CONTEXT"       /* session option */
#define KSCOPE_RUN_ENV_DATA     "KSCOPE_RUN_DATA"          /* session option */
#define KSCOPE_RUN_ENV_MODE     "KSCOPE_RUN_MODE"          /* session option */
#define KSCOPE_RUN_ENV_DSCOPES  "KSCOPE_RUN_DEVICE_SCOPES" /* session option */
#define KSCOPE_RUN_ENV_COMPRESS "KSCOPE_RUN_COMPRESS"      /* "1": session option compress */
#define KSCOPE_RUN_ENV_HOOK     "KSCOPE_RUN_HOOK"          /* for python -m kscope */
#define KSCOPE_RUN_ENV_CAPTURE  "KSCOPE_RUN_CAPTURE"       /* a backend's capture_range */
#define KSCOPE_RUN_ENV_DELAY    "KSCOPE_RUN_DELAY"         /* seconds */
#define KSCOPE_RUN_ENV_DURATION "KSCOPE_RUN_DURATION"      /* seconds */
#define KSCOPE_RUN_ENV_MAIN_PID "KSCOPE_RUN_MAIN_PID"      /* the command's own pid */
#define KSCOPE_RUN_ENV_MANIFEST "KSCOPE_RUN_MANIFEST"      /* file of results */
#define KSCOPE_RUN_ENV_COMMAND  "KSCOPE_RUN_COMMAND"       /* the run's command, shell-quoted */
/* The AddressSanitizer runtime `kscope run` put first in LD_PRELOAD for a
 * command linking it; that process takes it out for its children. */
#define KSCOPE_RUN_ENV_SANITIZER "KSCOPE_RUN_SANITIZER"

/* Manifest lines: "<tag>\t<pid>\t<text>\n". */
#define KSCOPE_RUN_TAG_PROFILE "profile" /* text: path written */
#define KSCOPE_RUN_TAG_ERROR   "error"   /* text: one-line message */
#define KSCOPE_RUN_TAG_NOTE    "note"    /* text: a one-line warning (not a failure) */
#define KSCOPE_RUN_TAG_CLAIM   "claim"   /* text: path reserved to write */
#define KSCOPE_RUN_TAG_RUN     "run"     /* first line; text: start (realtime ns) */

/* Where the process stands among the processes of a run. */
typedef struct kscope__run_ident {
    int has_rank;
    long rank;
    long pid;
    int is_main; /* the command itself, not one of its children */
} kscope__run_ident;

/* Fill `id` from the environment: the rank from RANK, OMPI_COMM_WORLD_RANK,
 * PMI_RANK or SLURM_PROCID (first one set and numeric), is_main from
 * KSCOPE_RUN_MAIN_PID. */
void kscope__run_ident_get(kscope__run_ident *id);

/* The output path without extension for one process: "<dir>/<name>" for the
 * command itself, "<dir>/<name>.rank<R>" when a rank is set,
 * "<dir>/<name>.pid<PID>" otherwise. dir may be NULL or "". Returns the
 * length, or -1 when it does not fit in size. */
int kscope__run_base_path(char *buf, size_t size, const char *dir, const char *name,
                          const kscope__run_ident *id);

/* The fallback when that path is already taken in this run:
 * "<base>.pid<PID>" (then ".pid<PID>.<n>" for n = 1, 2, ...). */
int kscope__run_alt_path(char *buf, size_t size, const char *base, long pid, int n);

/* Reserve the output path for this process: the first of "<base>",
 * "<base>.pid<PID>", "<base>.pid<PID>.1", ... that no other process of this
 * run has reserved and no other run holds. With a manifest the
 * reservations are lines in it (taken under an exclusive lock) and a claim
 * in the output folder (kscope__run_claim_folder), so a file left by an
 * earlier run is replaced as a fresh write would, and one another run is
 * writing, or wrote since this run began, never is; without a manifest
 * (or once it is gone: its kscope run was killed), "<candidate><ext>" is
 * created with O_EXCL and an existing file is never replaced. The chosen
 * path (without extension) goes to `out`. Returns 0 or a negative
 * KSCOPE_E* code. */
int kscope__run_claim(const char *manifest, const char *base, const char *ext, long pid, char *out,
                      size_t size);

/* ---- claims.c: runs in the same folder at once, runs that were killed */

/* Now on the clock of file times (realtime), in ns: when a run begins, to
 * tell the files written since. */
uint64_t kscope__run_clock(void);

/* Make this run's folder TMPDIR/kscope-run-XXXXXX, locked for as long as
 * the process lives (lock_fd), and its manifest in it (path into
 * manifest, first line "run\t<pid>\t<since_ns>": when the run began, by
 * kscope__run_clock). 0 or a KSCOPE_E* code. */
int kscope__run_make(char *manifest, size_t size, int *lock_fd, uint64_t since_ns);

/* The run ends: its claims are released, its folder removed. */
void kscope__run_end(const char *manifest, int lock_fd);

/* Release the claims this run's manifest lists (kscope__run_end does). */
void kscope__run_release(const char *manifest);

/* Whether the run of a manifest still lives: 1, 0 (gone, or never was),
 * -1 when it cannot be told. */
int kscope__run_alive(const char *manifest);

/* Claim base (no extension) in its folder against other runs: 0 when this
 * run now holds it, 1 when another live run does or "<base><ext>" (or its
 * first part) was written at or after since_ns (0: unknown), or a negative
 * KSCOPE_E* code. */
int kscope__run_claim_folder(const char *base, const char *ext, const char *manifest,
                             uint64_t since_ns);

/* Remove what killed runs left: their TMPDIR folders, and their claims in
 * outdir. */
void kscope__run_sweep(const char *outdir);

/* Append one line to the manifest (a no-op when manifest is NULL). */
int kscope__run_manifest_add(const char *manifest, const char *tag, long pid, const char *text);

/* Start the launcher session from the KSCOPE_RUN_* environment, once per
 * process. Returns 0 (also when the process is not driven by `kscope run`)
 * or a negative error. Safe to call from any entry point. */
int kscope__run_start(void);

/* Whether this process is driven by `kscope run` and its session started. */
int kscope__run_active(void);

/* Finalize the launcher session (atexit and the signal path call it; later
 * calls wait for the first to finish and do nothing). */
void kscope__run_finish(void);

/* The handler of kscope__capture_range: the program called its profiler's
 * start (starting = 1) or stop (0). With --capture-range the launcher
 * session records only between them. */
void kscope__run_profiler_api(int starting);

/* Note that the process used the GPU runtime or NVTX: such a process always writes a
 * profile, even an empty one. */
void kscope__run_note_use(void);

/* Whether session `id` recorded anything (a scope, mark, state, kernel or
 * copy) in this process. Processes of a run that recorded nothing and used
 * neither the GPU runtime nor NVTX (shells, mpirun) write no file. */
int kscope__run_recorded(int id);

/* Whether session `id` captures GPU work (its GPU backend started). */
int kscope__run_gpu_on(int id);

/* In a child forked without exec: drop what the parent recorded before the
 * fork from the launcher session (the parent keeps it). */
int kscope__launcher_fork_child(void);

/* Give the launcher session a new output name (no extension). */
int kscope__launcher_rename(const char *name);

/* Report a problem of this process to `kscope run` (one line of its
 * result, which makes the run exit non-zero); the first one only. */
void kscope__run_report_conflict(const char *msg);

/* ---- a signal that ends the process (finisher.c, preload/signals.c) */

/* The process has something to write: start the finisher thread, once per
 * process (nothing when no launcher session runs). */
void kscope__finisher_need(void);

/* The stand-in handler's part, async-signal-safe: when the process has a
 * profile to write, wake the finisher and wait until it is written (or the
 * writer is stuck, see finisher.c). Returns the signal the process must end
 * by (the first one that came, which may be another thread's), or 0 when
 * the handler must return: the calling thread is the one writing the
 * profile (at exit; it ends the process once the file is written,
 * kscope__finisher_exit_check), or, for a signal from_outside the process,
 * the writer is stuck and this thread may hold what it waits for (the
 * finisher then ends the process). */
int kscope__finisher_fatal(int sig, int from_outside);

/* On the way out (exit, _exit): if a signal is ending the process, wait for
 * its profile and end by that signal instead of returning. */
void kscope__finisher_exit_check(void);

/* The calling thread starts (on = 1) or ends writing the profile (see
 * kscope__finisher_fatal). */
void kscope__finisher_writing(int on);

/* In a child after fork: no finisher (threads do not survive a fork).
 * Returns whether the parent had one. */
int kscope__finisher_forked(void);

/* libkscope.so only (preload/signals.c): install the stand-in handlers for
 * the covered signals whose disposition is SIG_DFL; after a fork, make the
 * child the table's owner; end the process by `sig` with its default
 * action (restored for real), from any thread. */
void kscope__signals_install(void);
void kscope__signals_forked(void);
_Noreturn void kscope__signals_die(int sig);

#endif
