/*
 * error.c - error codes, their messages, and the per-thread last-error
 * message that names the objects involved in a failure.
 */
#include "kscope-internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* A pointer, not an array: libkscope may be dlopen'd (GPU driver and NVTX
 * injection), where its thread-locals must fit glibc's small static TLS
 * reserve. The buffer is allocated on a thread's first failure. */
#define LAST_ERROR_SIZE 512
static __thread char *last_error;

/* Every code with its name and message, from the one X-macro list. */
typedef struct error_row {
    int code;
    const char *name, *msg;
} error_row;

#define XX(name, msg) {KSCOPE_##name, "KSCOPE_" #name, msg},
static const error_row errors[] = {{KSCOPE_OK, "KSCOPE_OK", "success"}, KSCOPE_ERRNO_MAP(XX)};
#undef XX

/* The row of code `err`, or NULL for a code not in the list. */
static const error_row *error_find(int err)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].code == err)
            return &errors[i];
    return NULL;
}

const char *kscope_strerror(int err)
{
    const error_row *e = error_find(err);
    return e ? e->msg : "unknown error";
}

const char *kscope_err_name(int err)
{
    const error_row *e = error_find(err);
    return e ? e->name : "KSCOPE_UNKNOWN";
}

const char *kscope_last_error(void)
{
    return last_error ? last_error : "";
}

static pthread_key_t error_key;
static pthread_once_t error_key_once = PTHREAD_ONCE_INIT;

/* Runs on the ending thread: later failures there start a new buffer. */
static void free_error(void *p)
{
    free(p);
    last_error = NULL;
}

static void make_error_key(void)
{
    pthread_key_create(&error_key, free_error);
}

int kscope__fail(int err, const char *fmt, ...)
{
    if (!last_error) {
        if (!(last_error = malloc(LAST_ERROR_SIZE)))
            return err;
        pthread_once(&error_key_once, make_error_key);
        pthread_setspecific(error_key, last_error);
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, LAST_ERROR_SIZE, fmt, ap);
    va_end(ap);
    return err;
}

/* Keys already warned about; a handful at most, so a short list will do. */
static const char *warned[32];
static int nwarned;
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;

void kscope__warn_once(const char *key, const char *fmt, ...)
{
    pthread_mutex_lock(&warn_lock);
    for (int i = 0; i < nwarned; i++) {
        if (strcmp(warned[i], key) == 0) {
            pthread_mutex_unlock(&warn_lock);
            return;
        }
    }
    if (nwarned < 32)
        warned[nwarned++] = key;
    pthread_mutex_unlock(&warn_lock);
    if (getenv("KSCOPE_QUIET"))
        return;
    char line[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "kscope: %s\n", line);
}
