/*
 * fake-roctx.c - a stand-in libroctx64 for the roctx range sink's tests,
 * loaded through KSCOPE_ROCTX_LIBRARY on machines without ROCm.
 *
 * It keeps, per thread, the stack of open ranges and a log of the calls
 * ("push:a push:b pop mark:m pop"), and counts a pop with no range open,
 * a NULL or empty name and a level roctx would not return as bad calls.
 * fake_roctx_log() gives the calling thread's log, fake_roctx_depth() its
 * open ranges, fake_roctx_bad() the bad calls of every thread,
 * fake_roctx_calls() every thread's calls.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define API __attribute__((visibility("default")))

static __thread char log_text[4096];
static __thread int depth;
static atomic_int bad, calls;

static void note(const char *what, const char *name)
{
    atomic_fetch_add(&calls, 1);
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s%s%s%s", used ? " " : "", what,
             name ? ":" : "", name ? name : "");
}

API int roctxRangePushA(const char *name)
{
    if (!name || !*name)
        atomic_fetch_add(&bad, 1);
    note("push", name ? name : "(null)");
    return depth++; /* the level before, as roctx returns it */
}

API int roctxRangePop(void)
{
    note("pop", NULL);
    if (depth == 0) {
        atomic_fetch_add(&bad, 1);
        return -1;
    }
    return --depth;
}

API void roctxMarkA(const char *name)
{
    if (!name || !*name)
        atomic_fetch_add(&bad, 1);
    note("mark", name ? name : "(null)");
}

API const char *fake_roctx_log(void)
{
    return log_text;
}

API void fake_roctx_clear(void)
{
    log_text[0] = '\0';
}

API int fake_roctx_depth(void)
{
    return depth;
}

API int fake_roctx_bad(void)
{
    return atomic_load(&bad);
}

API int fake_roctx_calls(void)
{
    return atomic_load(&calls);
}
