/*
 * cmd-run.c - `kscope run [options] -- COMMAND [ARGS]`: profile an
 * unmodified program and summarise it when it ends.
 *
 * The command runs with libkscope attached three ways (each GPU backend's
 * injection variables and each range source's, from the registry, and LD_PRELOAD for processes
 * that never touch the GPU) and with the options in KSCOPE_RUN_* variables, so every
 * process it starts is profiled into its own file. The processes report
 * what they wrote in a manifest file; once the command ends, its profiles
 * are summarised on stderr and kscope ends as the command did (its exit
 * code, or the signal that killed it).
 */
#define _GNU_SOURCE
#include "cli/cmd.h"
#include "cli/run-child.h"
#include "cli/run-summary.h"
#include "core/core.h"
#include "kscope-internal.h"
#include "run/run.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char cmd_run_summary[] = "profile a program without changing it, summarise at exit";
const char cmd_run_help[] =
    "usage: kscope run [options] -- COMMAND [ARGS...]\n"
    "\n"
    "Run COMMAND with kscope attached: every {device_type} kernel and copy, every {range_sources}\n"
    "range and every kscope scope of the program (and of the processes it\n"
    "starts) is recorded, one profile file per process. When the command\n"
    "ends, a summary of its top kernels (its heaviest scopes, without GPU\n"
    "work) is printed on stderr, and kscope exits with the command's exit\n"
    "code, or ends by the signal that ended it.\n"
    "The -- may be left out when no argument of COMMAND is -h or --help.\n"
    "\n"
    "options:\n"
    "  -n, --name NAME        output name without extension (default: kscope)\n"
    "  -o, --output-dir DIR   where profiles are written (default: .)\n"
    "  -b, --backend B        GPU backend: {backends} (default: {default_backend} when\n"
    "                         available)\n"
    "  -c, --context C        shadow (default) or python (Python call stacks;\n"
    "                         a python COMMAND is run as python -m kscope)\n"
    "  -d, --data D           tree ({tree_ext}, default) or trace ({trace_ext}); a\n"
    "                         trace holds at most $KSCOPE_TRACE_BUFFER (default 64M)\n"
    "                         of events in memory, the rest goes to disk as it runs\n"
    "      --compress         write the trace gzip-compressed (.gz ends its name;\n"
    "                         Perfetto UI and kscope open it as is)\n"
    "  -m, --mode M           periodic_flushing: write parts as the run goes;\n"
    "                         pcsampling[:interval=N]: as --pc-sampling\n"
    "      --pc-sampling[=N]  sample where each kernel's warps are every N GPU\n"
    "                         cycles (32 to 2^31, a power of two; default 1024):\n"
    "                         samples per source line and stall reason below\n"
    "                         each kernel (see `kscope top --lines`)\n"
    "      --device-scopes[=OPTS]\n"
    "                         record the device-side scopes of kernels built with\n"
    "                         kscope/device.h (children of each kernel; per-SM\n"
    "                         tracks with -d trace). OPTS, comma-separated:\n"
    "                         clock=globaltimer|clock64, granularity=warp|cta,\n"
    "                         sample=N (every Nth warp or CTA), buffer=N[k|M]\n"
    "                         (records per context; default 1M),\n"
    "                         full=keep-first|keep-newest\n"
    "  -k, --hook H           launch hook for Python programs (e.g. triton)\n"
    "      --top N            kernels listed in the summary (default 10; 0: no\n"
    "                         summary)\n"
    "      --capture-range={capture_range}\n"
    "                         record only between the program's calls to its\n"
    "                         GPU runtime's profiler start and stop\n"
    "      --delay S          start recording S seconds after each process starts\n"
    "      --duration S       stop recording S seconds after recording started\n"
    "      --sample SPEC      sampled mode: host scopes always, {device_type} work only in\n"
    "                         windows, with capture fully off between them:\n"
    "                         time:on=50ms,every=1s (50 ms each second) or\n"
    "                         step:on=1,every=10 (one step in ten; the program\n"
    "                         marks steps with kscope_step() or kscope.step());\n"
    "                         ,first=X delays the first window. The profile says\n"
    "                         what fraction it sampled (sampled_fraction) and adds\n"
    "                         est_ metrics, the recorded ones over that fraction.\n"
    "                         Default: $KSCOPE_SAMPLE\n"
    "\n"
    "Files: <name>{tree_ext} for the command itself, <name>.rank<R>{tree_ext} for a\n"
    "process with a rank (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID),\n"
    "<name>.pid<PID>{tree_ext} for other child processes ({trace_ext} with\n"
    "-d trace). No process of a run overwrites another's file, nor does a run\n"
    "started beside it with the same name and folder: a name another live run\n"
    "holds, or whose profile was written since this run began, gives\n"
    "<name>.pid<PID>. Processes that record nothing and use neither\n"
    "{device_type} nor {range_sources} (shells, mpirun) write no file; when a\n"
    "single process wrote one (the command was a wrapper), it gets the plain\n"
    "<name>{tree_ext}.\n"
    "\n"
    "Signals sent to kscope are passed on to the command. A process ended by a\n"
    "signal whose action is the default one (SIGTERM, SIGINT, SIGHUP, ...) still\n"
    "writes what it recorded.\n"
    "\n"
    "examples:\n"
    "  kscope run -- ./app --iters 10\n"
    "  kscope run -n train -o prof --top 20 -- python train.py\n"
    "  kscope run -- mpirun -np 4 ./app\n";

typedef struct run_opts {
    const char *name, *dir, *backend, *context, *data, *mode, *hook, *capture;
    const char *pcs;   /* --pc-sampling's interval ("" for the default), or NULL */
    char pcs_mode[64]; /* the mode it makes */
    const char *delay, *duration, *sample;
    const char *dscopes; /* --device-scopes's options ("on" without), or NULL */
    int compress;        /* --compress */
    long top;
    char **argv;         /* the command */
    char sanitizer[256]; /* the AddressSanitizer runtime it links, to preload first */
} run_opts;

/* ---------------------------------------------------------------- parsing */

/* Match "-s", "--long" or "--long=value"; sets *value (from the next
 * argument when not inline). Returns 1 on a match, -1 when the value is
 * missing, 0 otherwise. */
static int match_opt(int argc, char **argv, int *i, const char *s, const char *l,
                     const char **value)
{
    const char *a = argv[*i];
    size_t ll = strlen(l);
    if (strncmp(a, l, ll) == 0 && a[ll] == '=') {
        *value = a + ll + 1;
        return 1;
    }
    if (strcmp(a, l) != 0 && !(s && strcmp(a, s) == 0))
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

static int one_of(const char *v, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcmp(v, *allowed) == 0)
            return 1;
    return 0;
}

static int check_seconds(const char *opt, const char *v)
{
    double d;
    if (kscope_cli_number(v, &d) < 0 || d < 0) {
        fprintf(stderr, "kscope run: %s needs a number of seconds >= 0, not '%s'\n", opt, v);
        return -1;
    }
    return 0;
}

static int check_values(const run_opts *o)
{
    static const char *const contexts[] = {"shadow", "python", NULL};
    static const char *const datas[] = {"tree", "trace", NULL};
    char list[512];
    if (o->backend && !kscope_cli_is_backend(o->backend)) {
        kscope_cli_list(KSCOPE_CLI_BACKENDS, list, sizeof list);
        return kscope_cli_usage("run", "unknown backend '%s': use %s", o->backend, list);
    }
    if (o->context && !one_of(o->context, contexts))
        return kscope_cli_usage("run", "unknown context '%s': use shadow or python", o->context);
    if (o->data && !one_of(o->data, datas))
        return kscope_cli_usage("run", "unknown data kind '%s': use tree or trace", o->data);
    int periodic;
    uint32_t interval;
    if (o->mode && kscope__mode_parse(o->mode, &periodic, &interval) != 0)
        return kscope_cli_usage("run", "%s", kscope_last_error());
    if (o->mode && interval && o->data && strcmp(o->data, "trace") == 0)
        return kscope_cli_usage("run", "%s", "PC sampling records into a tree: leave out -d trace");
    if (o->compress && !(o->data && strcmp(o->data, "trace") == 0))
        return kscope_cli_usage("run", "%s", "--compress writes a trace compressed: add -d trace");
    size_t budget;
    if (o->data && strcmp(o->data, "trace") == 0 && kscope__trace_budget(NULL, &budget) != 0)
        return kscope_cli_usage("run", "%s", kscope_last_error());
    if (o->capture && !kscope_cli_is_capture_range(o->capture)) {
        kscope_cli_list(KSCOPE_CLI_CAPTURE_RANGES, list, sizeof list);
        return kscope_cli_usage("run", "unknown capture range '%s': use %s", o->capture, list);
    }
    if (!*o->name || strchr(o->name, '/'))
        return kscope_cli_usage(
            "run", "bad name '%s': a file name without '/' (use -o for a directory)", o->name);
    if ((o->delay && check_seconds("--delay", o->delay)) ||
        (o->duration && check_seconds("--duration", o->duration)))
        return KSCOPE_EXIT_USAGE;
    if (kscope__sampling_check(o->sample) != 0)
        return kscope_cli_usage("run", "%s", kscope_last_error());
    const char *spec = o->sample ? o->sample : getenv("KSCOPE_SAMPLE");
    if (!o->sample && kscope__sampling_check(spec) != 0)
        return kscope_cli_usage("run", "KSCOPE_SAMPLE: %s", kscope_last_error());
    int sampled = spec && *spec && strcmp(spec, "off") != 0 && strcmp(spec, "none") != 0;
    if (o->mode && interval && sampled)
        return kscope_cli_usage(
            "run", "sample '%s': PC sampling and the sampled mode cannot be combined", spec);
    kscope__devscope_opts d;
    if (o->dscopes && kscope__devscope_parse(o->dscopes, &d) != 0)
        return kscope_cli_usage("run", "%s", kscope_last_error());
    if (o->dscopes && sampled)
        return kscope_cli_usage(
            "run", "sample '%s': device scopes and the sampled mode cannot be combined", spec);
    return 0;
}

/* --pc-sampling without a value (a pointer of its own, told apart from an
 * empty --pc-sampling=). */
static const char pcs_default[] = "";

/* --pc-sampling[=N] becomes the mode pcsampling[:interval=N]. */
static int pc_sampling_mode(run_opts *o)
{
    if (!o->pcs)
        return 0;
    if (o->mode)
        return kscope_cli_usage("run", "--pc-sampling and --mode %s cannot be combined", o->mode);
    if (o->pcs != pcs_default)
        snprintf(o->pcs_mode, sizeof o->pcs_mode, "pcsampling:interval=%.40s", o->pcs);
    else
        snprintf(o->pcs_mode, sizeof o->pcs_mode, "pcsampling");
    int periodic;
    uint32_t interval;
    if (kscope__mode_parse(o->pcs_mode, &periodic, &interval) != 0) {
        fprintf(stderr,
                "kscope run: --pc-sampling: '%s' is not a number of cycles from 32 to "
                "2147483648 (see `kscope run --help`)\n",
                o->pcs);
        return KSCOPE_EXIT_USAGE;
    }
    o->mode = o->pcs_mode;
    return 0;
}

static int parse_args(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->name = "kscope";
    o->dir = ".";
    o->top = 10;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *v = NULL, *top = NULL;
        int m = 0;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (strcmp(a, "--pc-sampling") == 0 || strncmp(a, "--pc-sampling=", 14) == 0) {
            o->pcs = a[13] ? a + 14 : pcs_default;
            continue;
        }
        if (strcmp(a, "--device-scopes") == 0 || strncmp(a, "--device-scopes=", 16) == 0) {
            o->dscopes = a[15] ? a + 16 : "on";
            continue;
        }
        if (strcmp(a, "--compress") == 0) {
            o->compress = 1;
            continue;
        }
#define OPT(s, l, field)                                                                           \
    if (!m && (m = match_opt(argc, argv, &i, s, l, &v)) == 1)                                      \
        o->field = v;
        OPT("-n", "--name", name)
        OPT("-o", "--output-dir", dir)
        OPT("-b", "--backend", backend)
        OPT("-c", "--context", context)
        OPT("-d", "--data", data)
        OPT("-m", "--mode", mode)
        OPT("-k", "--hook", hook)
        OPT(NULL, "--capture-range", capture)
        OPT(NULL, "--delay", delay)
        OPT(NULL, "--duration", duration)
        OPT(NULL, "--sample", sample)
#undef OPT
        if (!m && (m = match_opt(argc, argv, &i, NULL, "--top", &top)) == 1) {
            if (kscope_cli_whole(top, 0, LONG_MAX, &o->top) < 0)
                return kscope_cli_usage("run", "--top needs a count >= 0, not '%s'", top);
        }
        if (m == -1)
            return kscope_cli_usage("run", "option %s needs a value", a);
        if (m == 0)
            return kscope_cli_usage("run", "unknown option '%s'", a);
    }
    if (i >= argc)
        return kscope_cli_usage("run", "%s",
                                "no command given: kscope run [options] -- COMMAND [ARGS]");
    o->argv = argv + i;
    int rc = pc_sampling_mode(o);
    return rc ? rc : check_values(o);
}

/* ------------------------------------------------------------ the command */

/* Full path of an executable found as the shell would (PATH when the name
 * has no '/'). Returns 0, or -1 with errno set (ENOENT, EACCES). */
static int find_command(const char *cmd, char *out, size_t size)
{
    if (strchr(cmd, '/')) {
        snprintf(out, size, "%s", cmd);
        if (access(out, F_OK) != 0)
            return -1;
        struct stat st;
        if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
            return errno = EISDIR, -1;
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int denied = 0;
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        snprintf(out, size, "%.*s%s%s", (int)len, p, len ? "/" : "", cmd);
        struct stat st;
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            denied = 1;
        }
        p += len + (p[len] == ':');
    }
    errno = denied ? EACCES : ENOENT;
    return -1;
}

/* Whether the ELF file at path lists a library whose name starts with
 * `prefix` among its needed libraries. Files that are not ELF (scripts)
 * say no. On a yes, the library's name goes to lib. */
static int elf_needs(const char *path, const char *prefix, char *lib, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return 0;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    int found = 0;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff == 0 || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
        goto out;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > len || strs->sh_offset + strs->sh_size > len)
            continue;
        const Elf64_Dyn *d = (const Elf64_Dyn *)(m + sh[i].sh_offset);
        size_t n = sh[i].sh_size / sizeof *d;
        for (size_t k = 0; k < n && d[k].d_tag != DT_NULL; k++) {
            if (d[k].d_tag != DT_NEEDED || d[k].d_un.d_val >= strs->sh_size)
                continue;
            const char *name = (const char *)m + strs->sh_offset + d[k].d_un.d_val;
            if (strnlen(name, strs->sh_size - d[k].d_un.d_val) < strs->sh_size - d[k].d_un.d_val &&
                strncmp(name, prefix, strlen(prefix)) == 0) {
                snprintf(lib, size, "%s", name);
                found = 1;
                break;
            }
        }
    }
out:
    munmap((void *)m, len);
    return found;
}

/* Where the install puts libkscope.so, relative to the kscope binary. */
#ifndef KSCOPE_BIN_TO_LIB
#define KSCOPE_BIN_TO_LIB "../lib"
#endif

/* libkscope.so to attach: $KSCOPE_LIBRARY, else next to this executable
 * (the install's library folder, ../lib, ../lib64, or the same directory,
 * which is the build tree). */
static int find_library(char *out, size_t size)
{
    const char *env = getenv("KSCOPE_LIBRARY");
    if (env && *env) {
        if (!realpath(env, out) || access(out, R_OK) != 0) {
            fprintf(stderr, "kscope run: KSCOPE_LIBRARY=%s: %s\n", env, strerror(errno));
            return -1;
        }
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        fprintf(stderr, "kscope run: cannot locate the kscope executable: %s\n", strerror(errno));
        return -1;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    *slash = 0;
    static const char *const rel[] = {"/" KSCOPE_BIN_TO_LIB "/libkscope.so", "/../lib/libkscope.so",
                                      "/../lib64/libkscope.so", "/libkscope.so"};
    char cand[PATH_MAX + 32];
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
        if (realpath(cand, out) && access(out, R_OK) == 0)
            return 0;
    }
    fprintf(stderr,
            "kscope run: libkscope.so not found in %s/../lib or %s; set KSCOPE_LIBRARY to its "
            "path\n",
            exe, exe);
    (void)size;
    return -1;
}

/* The output directory must exist (it is created when missing) and be
 * writable, or nothing the run records could be kept. */
static int check_output_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        if (errno != ENOENT || mkdir(dir, 0777) != 0) {
            fprintf(stderr, "kscope run: cannot create output directory %s: %s\n", dir,
                    strerror(errno));
            return -1;
        }
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "kscope run: output directory %s is not a directory\n", dir);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "kscope run: cannot write to output directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* A python interpreter, by its file name (python, python3, python3.11). */
static int is_python(const char *cmd)
{
    const char *base = strrchr(cmd, '/');
    base = base ? base + 1 : cmd;
    return strncmp(base, "python", 6) == 0 && strspn(base + 6, "0123456789.") == strlen(base + 6);
}

/* Python-level options need the kscope package inside the interpreter:
 * `python X...` becomes `python -m kscope X...` (it reads KSCOPE_RUN_*). */
static char **python_argv(const run_opts *o)
{
    int needs = (o->context && strcmp(o->context, "python") == 0) || o->hook;
    if (!needs || !is_python(o->argv[0]) || !o->argv[1] || strcmp(o->argv[1], "-m") == 0 ||
        strcmp(o->argv[1], "-c") == 0)
        return NULL;
    int n = 0;
    while (o->argv[n])
        n++;
    char **v = calloc((size_t)n + 3, sizeof *v);
    if (!v)
        return NULL;
    v[0] = o->argv[0];
    v[1] = "-m";
    v[2] = "kscope";
    for (int i = 1; i <= n; i++)
        v[i + 2] = o->argv[i];
    return v;
}

static void set_env(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

/* The command as typed, for the profiles' run facts; a very long one is
 * cut (the environment has a limit per variable) and ends in "...". */
static void set_command_env(const run_opts *o)
{
    int n = 0;
    while (o->argv[n])
        n++;
    char *line = kscope__command_line((const char *const *)o->argv, n);
    if (!line)
        return;
    if (strlen(line) > 16384)
        strcpy(line + 16380, " ...");
    setenv(KSCOPE_RUN_ENV_COMMAND, line, 1);
    free(line);
}

/* The child's environment: libkscope attached three ways, options as
 * KSCOPE_RUN_* variables. */
/* Whether an LD_PRELOAD list already has an AddressSanitizer runtime. */
static int has_asan(const char *list)
{
    return list && (strstr(list, "libasan") || strstr(list, "libclang_rt.asan"));
}

/* LD_PRELOAD: what it held, then libkscope. A command built with
 * AddressSanitizer needs its runtime first of all libraries: it goes in
 * front, and the command's process takes it out again for its own
 * children (KSCOPE_RUN_SANITIZER, read by the launcher). */
static void set_preload(const run_opts *o, const char *lib)
{
    char buf[PATH_MAX * 2 + 512];
    const char *pre = getenv("LD_PRELOAD");
    int n = snprintf(buf, sizeof buf, "%s", "");
    if (o->sanitizer[0] && !has_asan(pre)) {
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s ", o->sanitizer);
        setenv(KSCOPE_RUN_ENV_SANITIZER, o->sanitizer, 1);
    }
    if (pre && *pre)
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%s ", pre);
    snprintf(buf + n, sizeof buf - (size_t)n, "%s", lib);
    setenv("LD_PRELOAD", buf, 1);
}

static void child_env(const run_opts *o, const char *lib, const char *manifest)
{
    /* Absolute, so a program that changes directory writes where asked. */
    char dir[PATH_MAX];
    if (!realpath(o->dir, dir))
        snprintf(dir, sizeof dir, "%s", o->dir);
    char buf[PATH_MAX * 2 + 64];
    set_preload(o, lib);
    kscope_cli_set_inject_env(lib); /* the registry says which variables */
    setenv(KSCOPE_RUN_ENV_ON, "1", 1);
    setenv(KSCOPE_RUN_ENV_NAME, o->name, 1);
    setenv(KSCOPE_RUN_ENV_DIR, dir, 1);
    set_env(KSCOPE_RUN_ENV_BACKEND, o->backend);
    set_env(KSCOPE_RUN_ENV_CONTEXT, o->context);
    set_env(KSCOPE_RUN_ENV_DATA, o->data);
    set_env(KSCOPE_RUN_ENV_MODE, o->mode);
    set_env(KSCOPE_RUN_ENV_DSCOPES, o->dscopes);
    set_env(KSCOPE_RUN_ENV_COMPRESS, o->compress ? "1" : NULL);
    set_env(KSCOPE_RUN_ENV_HOOK, o->hook);
    set_env(KSCOPE_RUN_ENV_CAPTURE,
            o->capture && strcmp(o->capture, "none") != 0 ? o->capture : NULL);
    set_env(KSCOPE_RUN_ENV_DELAY, o->delay);
    set_env(KSCOPE_RUN_ENV_DURATION, o->duration);
    if (o->sample) /* else the program keeps the KSCOPE_SAMPLE it has */
        setenv("KSCOPE_SAMPLE", o->sample, 1);
    setenv(KSCOPE_RUN_ENV_MANIFEST, manifest, 1);
    set_command_env(o);
    /* Every process would print its own notes (no GPU, ...) among the
     * program's output; what matters comes back through the manifest. */
    setenv("KSCOPE_QUIET", "1", 0);
    snprintf(buf, sizeof buf, "%ld", (long)getpid());
    setenv(KSCOPE_RUN_ENV_MAIN_PID, buf, 1);
}

/* Whether another tool already holds a backend's injection variable: only
 * one client of its profiling interface can profile a process. */
static int other_tool_attached(void)
{
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++) {
        for (const char *const *v = b->inject_env; v && *v; v++) {
            const char *other = getenv(*v);
            if (other && *other && !strstr(other, "libkscope")) {
                fprintf(stderr,
                        "kscope run: another %s tool is attached (%s=%s); only one %s client can "
                        "profile a process\n",
                        b->device_type, *v, other, b->label);
                return 1;
            }
        }
    }
    return 0;
}

/* Whether the program links a backend's own library (it then drives the
 * profiling interface itself, which only one client may). */
static int program_drives_backend(const char *cmd, const char *path)
{
    const kscope__backend *b;
    char lib[256];
    for (size_t i = 0; (b = kscope__backend_at(i)); i++) {
        if (b->conflict_lib && elf_needs(path, b->conflict_lib, lib, sizeof lib)) {
            fprintf(stderr,
                    "kscope run: %s uses %s itself (it links %s); only one %s client can "
                    "profile a process, so kscope cannot profile it\n",
                    cmd, b->label, lib, b->label);
            return 1;
        }
    }
    return 0;
}

/* Checks made before anything runs; each failure is one line. */
static int preflight(run_opts *o, char *lib, size_t libsize)
{
    char path[PATH_MAX];
    if (find_command(o->argv[0], path, sizeof path) != 0) {
        if (errno == ENOENT)
            fprintf(stderr, "kscope run: command not found: %s\n", o->argv[0]);
        else
            fprintf(stderr, "kscope run: cannot run %s: %s\n", o->argv[0], strerror(errno));
        return 127;
    }
    if (other_tool_attached() || program_drives_backend(o->argv[0], path))
        return KSCOPE_EXIT_FAIL;
    if (check_output_dir(o->dir) != 0 || find_library(lib, libsize) != 0)
        return KSCOPE_EXIT_FAIL;
    /* AddressSanitizer refuses to run unless its runtime comes first. */
    if (!elf_needs(path, "libasan.", o->sanitizer, sizeof o->sanitizer))
        elf_needs(path, "libclang_rt.asan", o->sanitizer, sizeof o->sanitizer);
    return 0;
}

/* ------------------------------------------------------------- running */

typedef struct child_setup {
    const run_opts *o;
    const char *lib, *manifest;
} child_setup;

static void setup_child(void *arg)
{
    const child_setup *c = arg;
    child_env(c->o, c->lib, c->manifest);
}

/* The run's folder and manifest (run/claims.c), after removing what
 * killed runs left behind; lock_fd keeps the run marked alive. */
static int make_manifest(const run_opts *o, char *path, size_t size, int *lock_fd, uint64_t since)
{
    kscope__run_sweep(o->dir);
    if (kscope__run_make(path, size, lock_fd, since) != 0) {
        fprintf(stderr, "kscope run: %s\n", kscope_last_error());
        return -1;
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    uint64_t since = kscope__run_clock(); /* files written from now are this run's time */
    run_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    char lib[PATH_MAX], manifest[PATH_MAX];
    int lock_fd = -1;
    if ((rc = preflight(&o, lib, sizeof lib)) != 0)
        return rc;
    if (make_manifest(&o, manifest, sizeof manifest, &lock_fd, since) != 0)
        return KSCOPE_EXIT_FAIL;
    char **pyargv = python_argv(&o);
    child_setup setup = {&o, lib, manifest};
    int status = kscope_cli_run_child(pyargv ? pyargv : o.argv, setup_child, &setup);
    free(pyargv);
    int errors = kscope__run_report(manifest, o.top, stderr);
    kscope__run_end(manifest, lock_fd);
    if (status < 0)
        return KSCOPE_EXIT_FAIL;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && errors > 0)
        return KSCOPE_EXIT_FAIL;
    return kscope_cli_end_like(status);
}
