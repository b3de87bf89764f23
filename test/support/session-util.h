/*
 * session-util.h - the set-up and tear-down shared by the C tests that
 * record through the public API (include after cmocka.h and kscope.h).
 */
#ifndef KSCOPE_SESSION_UTIL_H
#define KSCOPE_SESSION_UTIL_H

#include "kscope.h"

/* cmocka teardown: leave every open scope, finalize every session, so a
 * failed test leaves nothing to the next. */
static inline int tu_teardown(void **state)
{
    (void)state;
    while (kscope_depth() > 0)
        kscope_exit(NULL);
    kscope_finalize(KSCOPE_ALL, NULL);
    return 0;
}

/* tu_teardown, then profiling switched back on (for the tests that switch
 * it off). */
static inline int tu_teardown_profiling(void **state)
{
    tu_teardown(state);
    kscope_set_profiling(KSCOPE_PROFILING_ON);
    return 0;
}

/* A session with these options; fails the test, saying why, if it does
 * not start. */
static inline int tu_start_opts(kscope_session_opts o)
{
    int s = kscope_start(&o);
    if (s < 0)
        fail_msg("kscope_start(%s): %s", o.name ? o.name : "default name", kscope_last_error());
    return s;
}

/* A session without a GPU backend (data: "tree", "trace" or NULL for the
 * default); fails the test if it does not start. */
static inline int tu_start(const char *name, const char *data)
{
    return tu_start_opts((kscope_session_opts){.name = name, .data = data, .backend = "none"});
}

#endif
