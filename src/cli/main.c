/*
 * main.c - the kscope command line: dispatch to one subcommand per file,
 * `kscope help <cmd>`, and suggestions for mistyped commands.
 */
#include "cli/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KSCOPE_CMD_ENTRY(n) {#n, cmd_##n, cmd_##n##_summary, cmd_##n##_help},

const kscope_cmd kscope_cmds[] = {KSCOPE_CMDS(KSCOPE_CMD_ENTRY){NULL, NULL, NULL, NULL}};

const kscope_cmd *kscope_cmd_find(const char *name)
{
    for (const kscope_cmd *c = kscope_cmds; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

void kscope_cmd_print_help(const kscope_cmd *cmd)
{
    kscope_cli_print_text(cmd->help, stdout);
}

int kscope_cmd_wants_help(const kscope_cmd *cmd, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            kscope_cmd_print_help(cmd);
            return 1;
        }
    }
    return 0;
}

/* Edit distance between two short strings (commands are < 32 chars). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31)
        return 99;
    int d[32][32];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int best = sub < del ? sub : del;
            d[i][j] = best < ins ? best : ins;
        }
    }
    return d[la][lb];
}

/* Words other profilers' users type (nsys profile, perf record, ...) and
 * the command that does that here: offered as suggestions, never run. */
static const char *const kscope_cmd_aliases[][2] = {
    {"profile", "run"}, {"record", "run"},   {"launch", "run"},   {"show", "view"},
    {"tree", "view"},   {"compare", "diff"}, {"stats", "report"}, {"export", "convert"},
};

int kscope_cli_closest(const char *word, const char *const *names, size_t n)
{
    int best = -1;
    int best_d = 3; /* more than two edits away is no suggestion */
    for (size_t i = 0; i < n; i++) {
        int d = edit_distance(word, names[i]);
        if (d < best_d || (strncmp(word, names[i], strlen(word)) == 0 && strlen(word) >= 2)) {
            best_d = d < best_d ? d : best_d;
            best = (int)i;
        }
    }
    return best;
}

const char *kscope_cmd_suggest(const char *name)
{
    for (size_t i = 0; i < sizeof kscope_cmd_aliases / sizeof kscope_cmd_aliases[0]; i++)
        if (strcmp(name, kscope_cmd_aliases[i][0]) == 0)
            return kscope_cmd_aliases[i][1];
    const char *names[32];
    size_t n = 0;
    for (const kscope_cmd *c = kscope_cmds; c->name && n < 32; c++)
        names[n++] = c->name;
    int i = kscope_cli_closest(name, names, n);
    return i < 0 ? NULL : names[i];
}

const char cmd_help_summary[] = "show help for kscope or one of its commands";
const char cmd_help_help[] = "usage: kscope help [COMMAND]\n"
                             "\n"
                             "Without COMMAND, list the commands. With one, describe it and every\n"
                             "option it takes (the same text as `kscope COMMAND --help`).\n";

static void print_overview(FILE *f)
{
    fprintf(f, "usage: kscope <command> [options]\n\ncommands:\n");
    for (const kscope_cmd *c = kscope_cmds; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "\nSee `kscope help <command>` for a command's options.\n");
}

static int unknown_command(const char *name)
{
    const char *s = kscope_cmd_suggest(name);
    if (s)
        fprintf(stderr, "kscope: '%s' is not a command. Did you mean '%s'?\n", name, s);
    else
        fprintf(stderr, "kscope: '%s' is not a command. See `kscope help`.\n", name);
    return KSCOPE_EXIT_USAGE;
}

int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stdout);
        return KSCOPE_EXIT_OK;
    }
    const kscope_cmd *c = kscope_cmd_find(argv[1]);
    if (!c)
        return unknown_command(argv[1]);
    kscope_cmd_print_help(c);
    return KSCOPE_EXIT_OK;
}

/* A full disk behind stdout is a failure, not a success: as Linux perf's
 * run_builtin, flush stdout, check its error flag and its close. A reader
 * that went away (EPIPE) is not reported: it wanted no more. */
static int check_stdout(const char *name, int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int err = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad || err == EPIPE)
        return rc;
    fprintf(stderr, "kscope %s: cannot write to standard output: %s\n", name,
            err ? strerror(err) : "write error");
    return rc ? rc : KSCOPE_EXIT_FAIL;
}

static int run_command(int argc, char **argv)
{
    if (argc < 2) {
        print_overview(stderr);
        return KSCOPE_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0)
        name = "help";
    else if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0)
        name = "version";
    const kscope_cmd *c = kscope_cmd_find(name);
    if (!c)
        return unknown_command(name);
    if (c->fn != cmd_help && kscope_cmd_wants_help(c, argc - 1, argv + 1))
        return KSCOPE_EXIT_OK;
    return c->fn(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    kscope_cli_take_launcher();
    int rc = run_command(argc, argv);
    return check_stdout(argc > 1 ? argv[1] : "", rc);
}
