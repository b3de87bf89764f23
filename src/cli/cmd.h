/*
 * cmd.h - the kscope command table: one function and one help text per
 * subcommand, each in its own file (cmd-<name>.c).
 */
#ifndef KSCOPE_CMD_H
#define KSCOPE_CMD_H

#include <stddef.h>
#include <stdio.h>

typedef struct kscope_cmd {
    const char *name;
    int (*fn)(int argc, char **argv); /* argv[0] is the command name */
    const char *summary;              /* one line for `kscope help` */
    const char *help;                 /* full text for `kscope help <cmd>` */
} kscope_cmd;

/* Exit codes shared by every command. */
#define KSCOPE_EXIT_OK    0
#define KSCOPE_EXIT_FAIL  1
#define KSCOPE_EXIT_USAGE 2
/* Nothing to do on this machine (kscope bench without a GPU): the status
 * test harnesses read as "skipped". */
#define KSCOPE_EXIT_SKIP 77

/* The table (NULL-terminated by name), defined in main.c. */
extern const kscope_cmd kscope_cmds[];

/* Look a command up; NULL when unknown. */
const kscope_cmd *kscope_cmd_find(const char *name);

/* Print a command's help text to stdout. */
void kscope_cmd_print_help(const kscope_cmd *cmd);

/* If argv holds -h or --help, print the command's help and return 1. */
int kscope_cmd_wants_help(const kscope_cmd *cmd, int argc, char **argv);

/* ---- args.c: what the commands' argument parsing shares */

/* One line "kscope CMD: <message>" on stderr; returns `status` (the exit
 * status the command ends with). */
int kscope_cli_error(const char *cmd, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A usage error: "kscope CMD: <message> (see `kscope CMD --help`)" on
 * stderr; returns KSCOPE_EXIT_USAGE. */
int kscope_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* getopt_long returned c, ':' (an option's value is missing) or '?' (an
 * unknown option): its line, naming the option; returns KSCOPE_EXIT_USAGE.
 * The command's optstring starts with ':' and opterr is 0. */
int kscope_cli_bad_option(const char *cmd, int c, char **argv);

/* `s` as a whole number from least to most (decimal, nothing after it)
 * into *out; -1, *out untouched, when it is not one. */
int kscope_cli_whole(const char *s, long least, long most, long *out);

/* `s` as a number (strtod's forms, nothing after it) into *out; -1, *out
 * untouched, when it is not one. */
int kscope_cli_number(const char *s, double *out);

/* --color's word: "always" sets *color to 1, "never" to 0, "auto" leaves
 * it; -1 for any other word. */
int kscope_cli_color(const char *word, int *color);

/* The lists of the registries (backends.c) that messages and help texts
 * show: the -b names (the backends, then "none"), the --capture-range
 * values, the GPU vendors' diagnostics libraries (src/diag/gpu.c's list)
 * and the range sources. */
typedef enum kscope_cli_list_kind {
    KSCOPE_CLI_BACKENDS,
    KSCOPE_CLI_CAPTURE_RANGES,
    KSCOPE_CLI_GPU_LIBRARIES,
    KSCOPE_CLI_RANGE_SOURCES,
} kscope_cli_list_kind;

/* List `which` into buf as "a, b or c" (truncated to size). */
void kscope_cli_list(kscope_cli_list_kind which, char *buf, size_t size);

/* Whether `name` is a -b name, a --capture-range value. */
int kscope_cli_is_backend(const char *name);
int kscope_cli_is_capture_range(const char *name);

/* Each backend's and range source's injection variables, set to libkscope's
 * path `lib` (kscope run's child environment). */
void kscope_cli_set_inject_env(const char *lib);

/* Print a help text with {backends}, {default_backend}, {capture_range},
 * {device_type}, {gpu_libraries} and {range_sources} replaced by the
 * registries' words. */
void kscope_cli_print_text(const char *text, FILE *f);

/* Run the Python package's fleet command (kscope.fleet) with argv, in
 * $KSCOPE_PYTHON or python3; `prog` names it in messages. Returns only
 * when the interpreter cannot be run (after one line saying so). */
int kscope_cli_fleet_exec(const char *prog, int argc, char **argv);

/* ---- hints.c: commands as the user types them, a writer's last line */

/* The environment variable through which the wheel's `kscope` launcher
 * names itself (python/kscope/cli.py); main removes it at once. */
#define KSCOPE_CLI_LAUNCHER_ENV "KSCOPE_LAUNCHER"

/* Read and remove KSCOPE_LAUNCHER (main calls it first). */
void kscope_cli_take_launcher(void);

/* The kscope command as the user types it: "kscope" when the first
 * `kscope` on PATH is this binary or the wheel's launcher of it, else this
 * binary's path (shell-quoted when it must be). */
const char *kscope_cli_self(void);

/* arg shell-quoted when it must be, control characters escaped, into buf. */
const char *kscope_cli_quote(const char *arg, char *buf, size_t size);

/* "<kscope> SUB ARGS..." as the user types it (each argument quoted as
 * kscope_cli_quote does), into buf. */
const char *kscope_cli_command(char *buf, size_t size, const char *sub, const char *const *args,
                               int n);

/* A writer's line on success, on stderr: "kscope CMD: wrote PATH (SIZE)"
 * (no size for an output that is not a regular file). */
void kscope_cli_wrote(const char *cmd, const char *path);

/* A writer's line when its output could not be opened or completed
 * (format/file-out.h's message in err, escaped here in place), on stderr:
 * "kscope CMD: <err>". Returns KSCOPE_EXIT_FAIL. */
int kscope_cli_write_failed(const char *cmd, char *err, size_t size);

/* The command closest in spelling to `name`, NULL if none is close. */
const char *kscope_cmd_suggest(const char *name);

/* The index of the name among names[0..n) closest in spelling to `word`
 * (at most two edits away, or one that `word` begins), -1 if none: what
 * mistyped commands and metric names are offered. */
int kscope_cli_closest(const char *word, const char *const *names, size_t n);

/* Every subcommand, once, in the order `kscope help` lists them: the
 * declarations below and the table in main.c are made from this list, so
 * adding a command is one line here and its cmd-<name>.c. */
#define KSCOPE_CMDS(X)                                                                             \
    X(help)                                                                                        \
    X(run)                                                                                         \
    X(version)                                                                                     \
    X(monitor)                                                                                     \
    X(pids)                                                                                        \
    X(view)                                                                                        \
    X(top)                                                                                         \
    X(diff)                                                                                        \
    X(merge)                                                                                       \
    X(fleet)                                                                                       \
    X(convert)                                                                                     \
    X(report)                                                                                      \
    X(bench)

#define KSCOPE_CMD_DECL(n)                                                                         \
    int cmd_##n(int argc, char **argv);                                                            \
    extern const char cmd_##n##_summary[];                                                         \
    extern const char cmd_##n##_help[];

KSCOPE_CMDS(KSCOPE_CMD_DECL)

#endif
