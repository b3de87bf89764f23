/*
 * args.c - what the commands' argument parsing shares: the one-line error
 * a command ends with, getopt_long's two complaints, and option values
 * read as whole numbers, numbers and --color's words, so every command
 * says the same thing the same way.
 */
#include "cli/cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int kscope_cli_error(const char *cmd, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kscope %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

int kscope_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kscope %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see `kscope %s --help`)\n", cmd);
    va_end(ap);
    return KSCOPE_EXIT_USAGE;
}

int kscope_cli_bad_option(const char *cmd, int c, char **argv)
{
    if (c == ':')
        return kscope_cli_error(cmd, KSCOPE_EXIT_USAGE, "%s needs a value", argv[optind - 1]);
    return kscope_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
}

int kscope_cli_whole(const char *s, long least, long most, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < least || v > most)
        return -1;
    *out = v;
    return 0;
}

int kscope_cli_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

int kscope_cli_color(const char *word, int *color)
{
    if (strcmp(word, "always") == 0)
        *color = 1;
    else if (strcmp(word, "never") == 0)
        *color = 0;
    else if (strcmp(word, "auto") != 0)
        return -1;
    return 0;
}
