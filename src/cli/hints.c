/*
 * hints.c - the words every command shares when it tells the user what to
 * do next: commands as the user would type them (plain `kscope` when that
 * is what PATH runs, shell-quoted arguments, no control characters), and
 * the lines a writer prints on success and when its output fails.
 *
 * Style of the messages: a command named inside a sentence is in
 * backquotes (see `kscope view --help`); a command offered to run next
 * ends the line after a colon, unquoted, ready to paste.
 */
#define _GNU_SOURCE
#include "cli/cmd.h"
#include "kscope-internal.h"
#include "read/read.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The wheel's `kscope` launcher (a Python script) names itself here when
 * it starts this binary (python/kscope/cli.py); read once, then removed
 * so that no program kscope runs inherits it. */
static char launcher[PATH_MAX];

void kscope_cli_take_launcher(void)
{
    const char *l = getenv(KSCOPE_CLI_LAUNCHER_ENV);
    if (l && *l && !realpath(l, launcher))
        launcher[0] = 0;
    unsetenv(KSCOPE_CLI_LAUNCHER_ENV);
}

/* The file `kscope` typed at a shell runs: the first executable named
 * kscope on PATH, resolved; 0 when there is none. */
static int kscope_on_path(char *out)
{
    const char *path = getenv("PATH");
    while (path && *path) {
        size_t len = strcspn(path, ":");
        char cand[PATH_MAX];
        struct stat st;
        if (len > 0 && len + sizeof "/kscope" <= sizeof cand) {
            snprintf(cand, sizeof cand, "%.*s/kscope", (int)len, path);
            if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
                return realpath(cand, out) != NULL;
        }
        path += len + (path[len] == ':');
    }
    return 0;
}

const char *kscope_cli_self(void)
{
    static char self[PATH_MAX], shown[PATH_MAX + 64];
    if (shown[0])
        return shown;
    char first[PATH_MAX];
    snprintf(shown, sizeof shown, "kscope");
    if (!realpath("/proc/self/exe", self) || !kscope_on_path(first))
        return self[0] ? kscope_cli_quote(self, shown, sizeof shown) : shown;
    if (strcmp(first, self) == 0 || (launcher[0] && strcmp(first, launcher) == 0))
        return shown;
    return kscope_cli_quote(self, shown, sizeof shown);
}

const char *kscope_cli_quote(const char *arg, char *buf, size_t size)
{
    char *q = kscope__command_line(&arg, 1);
    char esc[PATH_MAX * 2];
    kscope__escape(q ? q : arg, esc, sizeof esc);
    free(q);
    /* Cut to the caller's buffer (a path quoted for a hint line). */
    size_t n = strlen(esc);
    if (n >= size)
        n = size - 1;
    memcpy(buf, esc, n);
    buf[n] = '\0';
    return buf;
}

const char *kscope_cli_command(char *buf, size_t size, const char *sub, const char *const *args,
                               int n)
{
    int len = snprintf(buf, size, "%s %s", kscope_cli_self(), sub);
    for (int i = 0; i < n && len > 0 && (size_t)len < size; i++) {
        char q[PATH_MAX * 2];
        len +=
            snprintf(buf + len, size - (size_t)len, " %s", kscope_cli_quote(args[i], q, sizeof q));
    }
    return buf;
}

/* n bytes as ls -h would say them, in binary units. */
static void format_size(double n, char *buf, size_t size)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) {
        snprintf(buf, size, "%.0f bytes", n);
        return;
    }
    int u = -1;
    while (n >= 1024 && u < 3) {
        n /= 1024;
        u++;
    }
    snprintf(buf, size, n < 10 ? "%.1f %s" : "%.0f %s", n, units[u]);
}

void kscope_cli_wrote(const char *cmd, const char *path)
{
    char name[PATH_MAX * 2], size[32];
    struct stat st;
    kscope__escape(path, name, sizeof name);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        format_size((double)st.st_size, size, sizeof size);
        fprintf(stderr, "kscope %s: wrote %s (%s)\n", cmd, name, size);
    } else {
        fprintf(stderr, "kscope %s: wrote %s\n", cmd, name);
    }
}

int kscope_cli_write_failed(const char *cmd, char *err, size_t size)
{
    kscope__escape_in_place(err, size);
    fprintf(stderr, "kscope %s: %s\n", cmd, err);
    return KSCOPE_EXIT_FAIL;
}
