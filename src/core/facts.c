/*
 * facts.c - the run's facts of a session (format/run-facts.h): the
 * command a launcher gave it (else the process's own command line, read
 * from /proc/self/cmdline), the host, the pid, the start time and the
 * version. A trace carries them in its metadata (trace.c hands them to the
 * writer); beside a tree profile the launchers write them to
 * "<profile>.meta.json", as atomically as the profile itself.
 *
 * Nothing here runs while the program records: only at start (the
 * launcher's command) and when a profile is written.
 */
#define _GNU_SOURCE
#include "core.h"
#include "format/format.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Whether a word reads back as itself in a POSIX shell without quotes. */
static int plain_word(const char *w)
{
    if (!*w)
        return 0;
    for (const char *c = w; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-", *c))
            return 0;
    return 1;
}

char *kscope__command_line(const char *const *argv, int argc)
{
    size_t size = 1;
    for (int i = 0; i < argc; i++)
        size += 4 * strlen(argv[i]) + 3;
    char *out = malloc(size), *at = out;
    if (!out)
        return NULL;
    for (int i = 0; i < argc; i++) {
        if (i)
            *at++ = ' ';
        if (plain_word(argv[i])) {
            at = stpcpy(at, argv[i]);
            continue;
        }
        *at++ = '\''; /* a quote inside becomes '\'' */
        for (const char *c = argv[i]; *c; c++)
            at = *c == '\'' ? stpcpy(at, "'\\''") : (*at = *c, at + 1);
        *at++ = '\'';
    }
    *at = 0;
    return out;
}

/* This process's command line, shell-quoted; NULL when unreadable. */
static char *own_command_line(void)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    ssize_t n;
    while (buf && (n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        char *grown = len + 1 < cap ? buf : realloc(buf, cap *= 2);
        if (!grown)
            free(buf);
        buf = grown;
    }
    close(fd);
    if (!buf || len == 0) {
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    int argc = 0;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
        argc++;
    const char **argv = malloc((size_t)argc * sizeof *argv);
    char *out = NULL;
    if (argv) {
        int k = 0;
        for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
            argv[k++] = buf + i;
        out = kscope__command_line(argv, argc);
    }
    free(argv);
    free(buf);
    return out;
}

int kscope__session_set_command(int session, const char *command)
{
    char *copy = command ? strdup(command) : NULL;
    if (command && !copy)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory keeping the command");
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_find(session);
    if (!s) {
        pthread_mutex_unlock(&kscope__session_lock);
        free(copy);
        return kscope__fail(KSCOPE_ENOSESSION, "no session %d", session);
    }
    free(s->command);
    s->command = copy;
    pthread_mutex_unlock(&kscope__session_lock);
    return 0;
}

/* The session's start on the wall clock, as ISO 8601 UTC with ms. */
static void start_time(const kscope__session *s, char *buf, size_t size)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int64_t wall = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    wall -= (int64_t)(kscope_now_ns() - s->start_ns);
    time_t sec = (time_t)(wall / 1000000000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, size, "%s.%03dZ", day, (int)(wall % 1000000000 / 1000000));
}

void kscope__run_facts_fill(const kscope__session *s, kscope__facts_buf *b)
{
    memset(b, 0, sizeof *b);
    b->own = own_command_line();
    if (gethostname(b->host, sizeof b->host - 1) != 0)
        snprintf(b->host, sizeof b->host, "unknown");
    start_time(s, b->start, sizeof b->start);
    const char *cmd = s->command ? s->command : b->own;
    b->f = (kscope__run_facts){
        .command = cmd,
        .process = b->own && cmd != b->own && strcmp(cmd, b->own) != 0 ? b->own : NULL,
        .host = b->host,
        .start_time = b->start,
        .version = KSCOPE_VERSION_STRING,
        .pid = (long)getpid(),
    };
}

void kscope__run_facts_done(kscope__facts_buf *b)
{
    free(b->own);
    b->own = NULL;
}

int kscope__run_facts_text(int session, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    pthread_mutex_lock(&kscope__session_lock);
    kscope__session *s = kscope__session_find(session);
    if (!s) {
        pthread_mutex_unlock(&kscope__session_lock);
        return kscope__fail(KSCOPE_ENOSESSION, "session %d does not exist", session);
    }
    kscope__facts_buf b;
    kscope__run_facts_fill(s, &b);
    pthread_mutex_unlock(&kscope__session_lock);
    kscope__jsonw w;
    kscope__jw_init(&w);
    kscope__run_facts_json(&w, &b.f);
    kscope__jw_raw(&w, "\n", 1);
    kscope__run_facts_done(&b);
    int rc = kscope__jw_finish(&w, out, len);
    return rc ? kscope__fail(rc, "out of memory writing the run's facts") : 0;
}

int kscope__run_facts_save(const char *profile, const char *text, size_t len)
{
    const kscope__format *f = kscope__format_by_path(profile);
    if (f && f->kind == KSCOPE__KIND_TRACE)
        return 0; /* a trace holds them in its metadata */
    size_t size = strlen(profile) + sizeof KSCOPE__FACTS_EXT;
    char *path = malloc(size);
    if (!path)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory writing the run's facts");
    snprintf(path, size, "%s%s", profile, KSCOPE__FACTS_EXT);
    int rc = kscope__output_file(path, text, len);
    free(path);
    return rc;
}
