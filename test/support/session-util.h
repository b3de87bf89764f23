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

/* A session without a GPU backend (data: "tree", "trace" or NULL for the
 * default); fails the test if it does not start. */
static inline int tu_start(const char *name, const char *data)
{
    kscope_session_opts o = {.name = name, .data = data, .backend = "none"};
    int s = kscope_start(&o);
    assert_true(s >= 0);
    return s;
}

#endif
