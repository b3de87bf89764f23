/*
 * capture.h - what a piece of code writes on stderr, for the C tests that
 * check kscope's one-line notices. Include after cmocka.h.
 */
#ifndef KSCOPE_TEST_CAPTURE_H
#define KSCOPE_TEST_CAPTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* What fd 2 received while fn(arg) ran, NUL-terminated (the first 8 KiB;
 * the text stays until the next capture). */
static inline const char *tu_capture_stderr_arg(void (*fn)(void *), void *arg)
{
    static char text[8192];
    char path[] = "/tmp/kscope-test-stderr-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return text;
}

typedef struct tu_plain_fn {
    void (*fn)(void);
} tu_plain_fn;

static inline void tu_call_plain(void *plain)
{
    ((tu_plain_fn *)plain)->fn();
}

/* What fd 2 received while fn() ran (as tu_capture_stderr_arg). */
static inline const char *tu_capture_stderr(void (*fn)(void))
{
    tu_plain_fn plain = {fn};
    return tu_capture_stderr_arg(tu_call_plain, &plain);
}

#endif
