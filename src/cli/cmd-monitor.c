/*
 * cmd-monitor.c - `kscope monitor`: sample GPUs and processes at an
 * interval, as a live table and/or into a CSV or JSON Lines file, while a
 * command runs, for a duration, or until interrupted.
 *
 * Rows are written by the recorder's thread as each sample is taken (the
 * on_sample callback), so a file is complete up to the last tick even if
 * the run is cut short.
 */
#include "cli/cmd.h"
#include "kscope.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char cmd_monitor_summary[] = "sample GPU and process CPU metrics at an interval";
const char cmd_monitor_help[] =
    "usage: kscope monitor [--interval MS] [--pid P[,P...]]... [--port N]\n"
    "                      [-o FILE.csv|FILE.jsonl] [--duration S] [--no-gpu]\n"
    "                      [-- COMMAND [ARGS...]]\n"
    "\n"
    "Sample every GPU (through {gpu_libraries}) and a set of processes (from /proc) at an\n"
    "interval. The processes are those given with --pid, those serving a TCP\n"
    "port (--port, with their descendants), or the COMMAND that monitor starts;\n"
    "then monitor exits with the command's exit status (128+N if killed by\n"
    "signal N, 127 if it could not be run). Without a command it runs until\n"
    "--duration elapses, every given process has exited, or it is interrupted\n"
    "(SIGINT or SIGTERM; exit status 0, the output complete).\n"
    "\n"
    "options:\n"
    "  --interval MS    sampling interval in milliseconds (default 100, at least 1)\n"
    "  --pid P[,P...]   follow these processes (repeatable)\n"
    "  --port N         follow the processes listening on TCP port N\n"
    "  -o FILE          write every sample to FILE: .csv (one row per sample) or\n"
    "                   .jsonl (one JSON object per sample, MAX's field names)\n"
    "  --duration S     stop after S seconds\n"
    "  --no-gpu         do not sample GPUs\n"
    "\n"
    "Without -o, or when standard output is a terminal, a table is printed as\n"
    "samples arrive. CPU % is of one core, summed over the processes. A metric a\n"
    "GPU does not report is an empty CSV cell or a JSON null. process_used_bytes\n"
    "is the GPU memory of the processes followed. Without {gpu_libraries} the\n"
    "GPU columns are left out, with one message, and the CPU part still runs.\n";

typedef enum { OUT_NONE, OUT_CSV, OUT_JSONL } out_format;

typedef struct monitor_opts {
    double interval_ms, duration_s;
    int *pids;
    size_t npids;
    int port, no_gpu;
    const char *out_path;
    out_format format;
    char **command; /* NULL-terminated, or NULL */
} monitor_opts;

typedef struct monitor_state {
    FILE *out;
    out_format format;
    int table, rows;
    int ngpu;
    uint64_t t0_ns;
    atomic_int all_exited; /* every followed process is gone */
    int write_failed;
} monitor_state;

static volatile sig_atomic_t got_signal;
static volatile pid_t child_pid;

/* ------------------------------------------------------------ arguments */

static int usage_error(const char *fmt, const char *arg)
{
    fputs("kscope monitor: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see kscope help monitor)\n", stderr);
    return -1;
}

/* Append a comma-separated list of pids. */
static int add_pids(monitor_opts *o, const char *text)
{
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v <= 0 || v > 0x3fffffff || (*end && *end != ','))
            return usage_error("bad --pid '%s' (expected P or P,P,...)", text);
        p = *end ? end + 1 : end;
        int seen = 0; /* a pid given twice is followed once */
        for (size_t i = 0; i < o->npids; i++)
            seen |= o->pids[i] == (int)v;
        if (seen)
            continue;
        int *grown = realloc(o->pids, (o->npids + 1) * sizeof *grown);
        if (!grown)
            return usage_error("%s", "out of memory");
        o->pids = grown;
        o->pids[o->npids++] = (int)v;
    }
    return 0;
}

static int set_output(monitor_opts *o, const char *path)
{
    size_t n = strlen(path);
    o->out_path = path;
    if (n > 4 && strcmp(path + n - 4, ".csv") == 0)
        o->format = OUT_CSV;
    else if (n > 6 && strcmp(path + n - 6, ".jsonl") == 0)
        o->format = OUT_JSONL;
    else
        return usage_error("-o '%s': the file name must end in .csv or .jsonl", path);
    return 0;
}

/* One option with its value; returns the number of argv slots used, or -1. */
static int parse_option(monitor_opts *o, int argc, char **argv, int i)
{
    const char *opt = argv[i];
    if (strcmp(opt, "--no-gpu") == 0) {
        o->no_gpu = 1;
        return 1;
    }
    int known = !strcmp(opt, "--interval") || !strcmp(opt, "--pid") || !strcmp(opt, "--port") ||
                !strcmp(opt, "-o") || !strcmp(opt, "--duration");
    if (!known)
        return usage_error("unknown option '%s'", opt);
    if (i + 1 >= argc)
        return usage_error("%s needs a value", opt);
    const char *v = argv[i + 1];
    if (!strcmp(opt, "--interval")) {
        if (kscope_cli_number(v, &o->interval_ms) != 0 || !(o->interval_ms >= 1.0))
            return usage_error("--interval '%s' refused: at least 1 ms", v);
    } else if (!strcmp(opt, "--duration")) {
        if (kscope_cli_number(v, &o->duration_s) != 0 || !(o->duration_s > 0))
            return usage_error("bad --duration '%s' (seconds, above 0)", v);
    } else if (!strcmp(opt, "--port")) {
        long p;
        if (kscope_cli_whole(v, 1, 65535, &p) < 0)
            return usage_error("bad --port '%s' (expected 1..65535)", v);
        o->port = (int)p;
    } else if (!strcmp(opt, "--pid")) {
        return add_pids(o, v) == 0 ? 2 : -1;
    } else {
        return set_output(o, v) == 0 ? 2 : -1;
    }
    return 2;
}

static int parse_args(monitor_opts *o, int argc, char **argv)
{
    o->interval_ms = 100;
    for (int i = 1; i < argc;) {
        if (strcmp(argv[i], "--") == 0) {
            if (i + 1 >= argc)
                return usage_error("%s", "nothing after '--': give a COMMAND");
            o->command = argv + i + 1;
            break;
        }
        int used = parse_option(o, argc, argv, i);
        if (used < 0)
            return -1;
        i += used;
    }
    if (o->command && (o->npids || o->port))
        return usage_error("%s", "--pid/--port and a COMMAND cannot be combined");
    if (o->npids && o->port)
        return usage_error("%s", "--pid and --port cannot be combined");
    return 0;
}

/* --------------------------------------------------------------- output */

static double mib(uint64_t bytes)
{
    return (double)bytes / (1024.0 * 1024.0);
}

/* The GPU's name in every output ("nv0"; kscope_gpu_id). */
static const char *gpu_id(uint32_t device, char *buf, size_t size)
{
    if (kscope_gpu_id(device, buf, size) < 0)
        snprintf(buf, size, "gpu%u", device);
    return buf;
}

static void table_header(FILE *f, int ngpu)
{
    char id[32];
    fprintf(f, "%9s %7s %9s %5s", "time_s", "cpu_%", "rss_MiB", "thr");
    for (int d = 0; d < ngpu; d++)
        fprintf(f, " | %s %4s %9s %9s %5s %6s %4s %s", gpu_id((uint32_t)d, id, sizeof id), "gpu%",
                "used_MiB", "proc_MiB", "sm", "W", "C", "throttle");
    fputc('\n', f);
}

/* Print a value or '-' when absent. */
static void cell(FILE *f, int present, const char *fmt, double v, int width)
{
    if (present)
        fprintf(f, fmt, width, v);
    else
        fprintf(f, " %*s", width, "-");
}

static void table_row(monitor_state *m, const kscope_sample *s, double t)
{
    FILE *f = stdout;
    if (m->rows++ % 25 == 0)
        table_header(f, m->ngpu);
    fprintf(f, "%9.2f", t);
    cell(f, s->nproc > 0, " %*.1f", s->cpu_percent, 7);
    cell(f, s->nproc > 0, " %*.1f", mib(s->rss_bytes), 9);
    cell(f, s->nproc > 0, " %*.0f", s->threads, 5);
    for (uint32_t d = 0; d < s->ngpu; d++) {
        const kscope_gpu_stats *g = &s->gpu[d];
        char reasons[160], id[32];
        kscope_gpu_throttle_format(g->throttle_reasons, reasons, sizeof reasons);
        fprintf(f, " | %s", gpu_id(d, id, sizeof id));
        cell(f, g->has & KSCOPE_GPU_HAS_UTIL, " %*.0f", g->gpu_usage_percent, 4);
        cell(f, g->has & KSCOPE_GPU_HAS_MEMORY, " %*.0f", mib(g->used_bytes), 9);
        cell(f, g->has & KSCOPE_GPU_HAS_PROCESS, " %*.0f", mib(g->process_bytes), 9);
        cell(f, g->has & KSCOPE_GPU_HAS_CORE_CLOCK, " %*.0f", g->core_mhz, 5);
        cell(f, g->has & KSCOPE_GPU_HAS_POWER, " %*.1f", g->power_mw / 1000.0, 6);
        cell(f, g->has & KSCOPE_GPU_HAS_TEMPERATURE, " %*.0f", g->temperature_c, 4);
        fprintf(f, " %s", g->has & KSCOPE_GPU_HAS_THROTTLE ? (*reasons ? reasons : "none") : "-");
    }
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f))
        m->table = 0; /* the reader went away (a closed pipe): files go on */
}

static const char *const csv_gpu_fields[] = {"gpu_usage_percent", "memory_activity_percent",
                                             "total_bytes",       "free_bytes",
                                             "used_bytes",        "reserved_bytes",
                                             "core_mhz",          "core_max_mhz",
                                             "mem_mhz",           "mem_max_mhz",
                                             "power_w",           "temperature_c",
                                             "throttle_reasons",  "hardware_throttled",
                                             "process_used_bytes"};

static void csv_header(FILE *f, int ngpu)
{
    fputs("t_s,cpu_percent,user_percent,system_percent,rss_bytes,threads,alive", f);
    char id[32];
    for (int d = 0; d < ngpu; d++)
        for (size_t k = 0; k < sizeof csv_gpu_fields / sizeof *csv_gpu_fields; k++)
            fprintf(f, ",%s_%s", gpu_id((uint32_t)d, id, sizeof id), csv_gpu_fields[k]);
    fputc('\n', f);
}

/* A CSV cell: ",value" or "," when absent. */
static void csv_num(FILE *f, int present, double v)
{
    if (present)
        fprintf(f, ",%.15g", v);
    else
        fputc(',', f);
}

static void csv_gpu(FILE *f, const kscope_gpu_stats *g)
{
    uint32_t h = g->has;
    csv_num(f, h & KSCOPE_GPU_HAS_UTIL, g->gpu_usage_percent);
    csv_num(f, h & KSCOPE_GPU_HAS_MEM_ACTIVITY, g->memory_activity_percent);
    csv_num(f, h & KSCOPE_GPU_HAS_MEMORY, (double)g->total_bytes);
    csv_num(f, h & KSCOPE_GPU_HAS_MEMORY, (double)g->free_bytes);
    csv_num(f, h & KSCOPE_GPU_HAS_MEMORY, (double)g->used_bytes);
    csv_num(f, h & KSCOPE_GPU_HAS_RESERVED, (double)g->reserved_bytes);
    csv_num(f, h & KSCOPE_GPU_HAS_CORE_CLOCK, g->core_mhz);
    csv_num(f, h & KSCOPE_GPU_HAS_CORE_MAX, g->core_max_mhz);
    csv_num(f, h & KSCOPE_GPU_HAS_MEM_CLOCK, g->mem_mhz);
    csv_num(f, h & KSCOPE_GPU_HAS_MEM_MAX, g->mem_max_mhz);
    csv_num(f, h & KSCOPE_GPU_HAS_POWER, g->power_mw / 1000.0);
    csv_num(f, h & KSCOPE_GPU_HAS_TEMPERATURE, g->temperature_c);
    if (h & KSCOPE_GPU_HAS_THROTTLE) {
        char reasons[160];
        kscope_gpu_throttle_format(g->throttle_reasons, reasons, sizeof reasons);
        for (char *c = reasons; *c; c++) /* ';' keeps the list in one cell */
            if (*c == ',')
                *c = ';';
        fprintf(f, ",%s,%d", reasons, (g->throttle_reasons & KSCOPE_THROTTLE_HARDWARE) != 0);
    } else {
        fputs(",,", f);
    }
    csv_num(f, h & KSCOPE_GPU_HAS_PROCESS, (double)g->process_bytes);
}

static void csv_row(FILE *f, const kscope_sample *s, double t)
{
    int cpu = s->nproc > 0;
    fprintf(f, "%.6f", t);
    csv_num(f, cpu, s->cpu_percent);
    csv_num(f, cpu, s->user_percent);
    csv_num(f, cpu, s->system_percent);
    csv_num(f, cpu, (double)s->rss_bytes);
    csv_num(f, cpu, s->threads);
    csv_num(f, cpu, s->alive);
    for (uint32_t d = 0; d < s->ngpu; d++)
        csv_gpu(f, &s->gpu[d]);
    fputc('\n', f);
}

/* A JSON number or null. */
static void json_num(FILE *f, const char *key, int present, double v, int comma)
{
    fprintf(f, "%s\"%s\":", comma ? "," : "", key);
    if (present)
        fprintf(f, "%.15g", v);
    else
        fputs("null", f);
}

static void json_throttle(FILE *f, const kscope_gpu_stats *g)
{
    if (!(g->has & KSCOPE_GPU_HAS_THROTTLE)) {
        fputs(",\"throttle_reasons\":null,\"hardware_throttled\":null", f);
        return;
    }
    fputs(",\"throttle_reasons\":[", f);
    int n = 0;
    for (int bit = 0; bit < 64; bit++) {
        const char *name = kscope_gpu_throttle_name(1ull << bit);
        if (name && (g->throttle_reasons & (1ull << bit)))
            fprintf(f, "%s\"%s\"", n++ ? "," : "", name);
    }
    fprintf(f, "],\"hardware_throttled\":%s",
            g->throttle_reasons & KSCOPE_THROTTLE_HARDWARE ? "true" : "false");
}

static void json_gpu(FILE *f, const kscope_gpu_stats *g)
{
    uint32_t h = g->has;
    fputs("{\"memory\":{", f);
    json_num(f, "total_bytes", h & KSCOPE_GPU_HAS_MEMORY, (double)g->total_bytes, 0);
    json_num(f, "free_bytes", h & KSCOPE_GPU_HAS_MEMORY, (double)g->free_bytes, 1);
    json_num(f, "used_bytes", h & KSCOPE_GPU_HAS_MEMORY, (double)g->used_bytes, 1);
    json_num(f, "reserved_bytes", h & KSCOPE_GPU_HAS_RESERVED, (double)g->reserved_bytes, 1);
    json_num(f, "process_used_bytes", h & KSCOPE_GPU_HAS_PROCESS, (double)g->process_bytes, 1);
    fputs("},\"utilization\":{", f);
    json_num(f, "gpu_usage_percent", h & KSCOPE_GPU_HAS_UTIL, g->gpu_usage_percent, 0);
    json_num(f, "memory_activity_percent", h & KSCOPE_GPU_HAS_MEM_ACTIVITY,
             g->memory_activity_percent, 1);
    fputs("},\"clocks\":{", f);
    json_num(f, "core_mhz", h & KSCOPE_GPU_HAS_CORE_CLOCK, g->core_mhz, 0);
    json_num(f, "core_max_mhz", h & KSCOPE_GPU_HAS_CORE_MAX, g->core_max_mhz, 1);
    json_num(f, "mem_mhz", h & KSCOPE_GPU_HAS_MEM_CLOCK, g->mem_mhz, 1);
    json_num(f, "mem_max_mhz", h & KSCOPE_GPU_HAS_MEM_MAX, g->mem_max_mhz, 1);
    json_throttle(f, g);
    fputc('}', f);
    json_num(f, "power_w", h & KSCOPE_GPU_HAS_POWER, g->power_mw / 1000.0, 1);
    json_num(f, "temperature_c", h & KSCOPE_GPU_HAS_TEMPERATURE, g->temperature_c, 1);
    fputc('}', f);
}

static void jsonl_row(FILE *f, const kscope_sample *s, double t)
{
    fprintf(f, "{\"t_s\":%.6f,\"cpu\":", t);
    if (s->nproc > 0) {
        fputc('{', f);
        json_num(f, "cpu_percent", 1, s->cpu_percent, 0);
        json_num(f, "user_percent", 1, s->user_percent, 1);
        json_num(f, "system_percent", 1, s->system_percent, 1);
        json_num(f, "rss_bytes", 1, (double)s->rss_bytes, 1);
        json_num(f, "threads", 1, s->threads, 1);
        json_num(f, "processes", 1, s->nproc, 1);
        json_num(f, "alive", 1, s->alive, 1);
        fputc('}', f);
    } else {
        fputs("null", f);
    }
    fputs(",\"gpus\":{", f);
    char id[32];
    for (uint32_t d = 0; d < s->ngpu; d++) {
        fprintf(f, "%s\"%s\":", d ? "," : "", gpu_id(s->gpu[d].device, id, sizeof id));
        json_gpu(f, &s->gpu[d]);
    }
    fputs("}}\n", f);
}

/* The recorder's callback: one row per sample, written as it arrives. */
static void on_sample(const kscope_sample *s, void *arg)
{
    monitor_state *m = arg;
    double t = (double)(s->t_ns - m->t0_ns) / 1e9;
    if (m->table)
        table_row(m, s, t);
    if (m->format == OUT_CSV)
        csv_row(m->out, s, t);
    else if (m->format == OUT_JSONL)
        jsonl_row(m->out, s, t);
    if (m->out && fflush(m->out) != 0)
        m->write_failed = 1;
    if (s->nproc > 0 && s->alive == 0)
        atomic_store(&m->all_exited, 1);
}

/* -------------------------------------------------------------- running */

static void on_signal(int sig)
{
    got_signal = sig;
    if (child_pid > 0)
        kill(child_pid, sig);
}

/* Fork the command, held at a gate until *gate is closed, so the recorder
 * can follow its pid before it runs (even a command that ends at once).
 * Returns its pid, or -1. One that cannot be executed exits 127 after
 * saying why. */
static pid_t fork_command(char **command, int *gate)
{
    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "kscope monitor: cannot start '%s': %s\n", command[0], strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "kscope monitor: cannot start '%s': %s\n", command[0], strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        char byte;
        close(fds[1]);
        while (read(fds[0], &byte, 1) < 0 && errno == EINTR)
            ;
        close(fds[0]);
        signal(SIGINT, SIG_DFL); /* monitor ignores these; the command must not */
        signal(SIGPIPE, SIG_DFL);
        execvp(command[0], command);
        fprintf(stderr, "kscope monitor: cannot run '%s': %s\n", command[0], strerror(errno));
        _exit(127);
    }
    close(fds[0]);
    *gate = fds[1];
    return pid;
}

/* Wait for the command; its exit status the way a shell reports it. */
static int wait_command(pid_t pid)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return KSCOPE_EXIT_FAIL;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + WTERMSIG(status);
}

/* Without a command: until the duration, a signal, or every process gone. */
static void wait_until_done(const monitor_opts *o, monitor_state *m)
{
    uint64_t end = o->duration_s > 0 ? m->t0_ns + (uint64_t)(o->duration_s * 1e9) : 0;
    while (!got_signal && !atomic_load(&m->all_exited)) {
        uint64_t now = kscope_now_ns();
        if (end && now >= end)
            break;
        uint64_t left = end ? end - now : 50000000ull;
        if (left > 50000000ull)
            left = 50000000ull;
        struct timespec ts = {0, (long)left};
        nanosleep(&ts, NULL);
    }
}

/* The processes of --port, resolved once at start. */
static int resolve_port(monitor_opts *o)
{
    int n = kscope_pids_for_port(o->port, NULL, 0);
    if (n > 0) {
        o->pids = malloc((size_t)n * sizeof *o->pids);
        if (!o->pids)
            return usage_error("%s", "out of memory");
        n = kscope_pids_for_port(o->port, o->pids, (size_t)n);
    }
    if (n < 0) {
        fprintf(stderr, "kscope monitor: %s\n", kscope_last_error());
        return -1;
    }
    if (n == 0) {
        fprintf(stderr, "kscope monitor: no process listens on TCP port %d\n", o->port);
        return -1;
    }
    o->npids = (size_t)n;
    return 0;
}

/* Decide on GPUs: their count, or 0 with the reason in why[]. */
static int probe_gpus(const monitor_opts *o, char *why, size_t size)
{
    snprintf(why, size, "--no-gpu given");
    if (o->no_gpu)
        return 0;
    int n = kscope_gpu_init();
    if (n < 0) {
        snprintf(why, size, "%s", kscope_last_error());
        return 0;
    }
    char libs[128];
    kscope_cli_list(KSCOPE_CLI_GPU_LIBRARIES, libs, sizeof libs);
    snprintf(why, size, "%s found no GPU", libs);
    kscope_gpu_shutdown();
    return n > KSCOPE_SAMPLE_GPUS ? KSCOPE_SAMPLE_GPUS : n;
}

static int open_output(const monitor_opts *o, monitor_state *m)
{
    m->format = o->format;
    m->table = !o->out_path || isatty(STDOUT_FILENO);
    if (!o->out_path)
        return 0;
    m->out = fopen(o->out_path, "w");
    if (!m->out) {
        fprintf(stderr, "kscope monitor: cannot write '%s': %s\n", o->out_path, strerror(errno));
        return -1;
    }
    if (o->format == OUT_CSV)
        csv_header(m->out, m->ngpu);
    return 0;
}

static int close_output(const monitor_opts *o, monitor_state *m)
{
    if (!m->out)
        return 0;
    int failed = m->write_failed | (fclose(m->out) != 0);
    if (failed)
        fprintf(stderr, "kscope monitor: writing '%s' failed: %s\n", o->out_path, strerror(errno));
    return failed ? -1 : 0;
}

static int start_recorder(const monitor_opts *o, monitor_state *m, kscope_recorder **rec)
{
    kscope_recorder_opts ro = {.interval_ms = o->interval_ms,
                               .pids = o->pids,
                               .npids = o->npids,
                               .no_gpu = m->ngpu == 0,
                               .capacity = 4, /* rows are written as they come */
                               .on_sample = on_sample,
                               .arg = m};
    m->t0_ns = kscope_now_ns();
    if (kscope_recorder_start(&ro, rec) != 0) {
        fprintf(stderr, "kscope monitor: %s\n", kscope_last_error());
        return -1;
    }
    return 0;
}

static void install_signals(int with_command)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* Ctrl-C reaches the command too (same process group): let it decide. */
    if (with_command)
        sa.sa_handler = SIG_IGN;
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = SIG_IGN; /* a closed stdout ends the table, not the run */
    sigaction(SIGPIPE, &sa, NULL);
}

static int run_monitor(monitor_opts *o)
{
    monitor_state m = {0};
    if (o->port && resolve_port(o) != 0)
        return KSCOPE_EXIT_FAIL;
    char why[600];
    m.ngpu = probe_gpus(o, why, sizeof why);
    if (m.ngpu == 0 && !o->npids && !o->command) {
        fprintf(stderr,
                "kscope monitor: nothing to monitor: %s, and no --pid, --port or "
                "COMMAND given\n",
                why);
        return KSCOPE_EXIT_FAIL;
    }
    if (m.ngpu == 0 && !o->no_gpu)
        fprintf(stderr, "kscope monitor: %s; monitoring CPU only\n", why);
    if (open_output(o, &m) != 0)
        return KSCOPE_EXIT_FAIL;
    install_signals(o->command != NULL);
    pid_t pid = 0;
    int gate = -1;
    if (o->command) {
        if ((pid = fork_command(o->command, &gate)) < 0)
            return close_output(o, &m), KSCOPE_EXIT_FAIL;
        child_pid = pid;
        o->npids = 1;
        o->pids = malloc(sizeof *o->pids);
        if (!o->pids)
            o->npids = 0;
        else
            o->pids[0] = pid;
    }
    kscope_recorder *rec = NULL;
    int rc = start_recorder(o, &m, &rec) == 0 ? KSCOPE_EXIT_OK : KSCOPE_EXIT_FAIL;
    if (pid > 0) {
        if (rc != KSCOPE_EXIT_OK)
            kill(pid, SIGKILL); /* never let it run unwatched */
        close(gate);            /* now it runs */
        int status = wait_command(pid);
        rc = rc == KSCOPE_EXIT_OK ? status : rc;
    } else if (rc == KSCOPE_EXIT_OK) {
        wait_until_done(o, &m);
    }
    if (rec) {
        kscope_recorder_stop(rec);
        kscope_recorder_free(rec);
    }
    if (close_output(o, &m) != 0 && rc == KSCOPE_EXIT_OK)
        rc = KSCOPE_EXIT_FAIL;
    return rc;
}

int cmd_monitor(int argc, char **argv)
{
    monitor_opts o = {0};
    if (parse_args(&o, argc, argv) != 0) {
        free(o.pids);
        return KSCOPE_EXIT_USAGE;
    }
    int rc = run_monitor(&o);
    free(o.pids);
    return rc;
}
