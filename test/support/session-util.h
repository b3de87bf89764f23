/*
 * session-util.h - the set-up and tear-down shared by the C tests that
 * record through the public API (include after cmocka.h and kscope.h).
 */
#ifndef KSCOPE_SESSION_UTIL_H
#define KSCOPE_SESSION_UTIL_H

#include "kscope.h"

#include <glob.h>
#include <stdio.h>
#include <unistd.h>

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

/* A test's own session, started before the test and ended after it: list
 * the test as TU_SESSION_TEST(test_fn, .name = "t_x", .data = "tree");
 * tu_setup_session starts the session (backend "none", with these name,
 * data and mode), the test reads its id with tu_session_id(state), and
 * tu_teardown_session finalizes everything (tu_teardown_profiling) and
 * removes the files the session wrote (every "<name>.*"). */
typedef struct {
    const char *name;
    const char *data;
    const char *mode;
    int id;
} tu_session;

#define TU_SESSION_TEST(f, ...)                                                                    \
    cmocka_unit_test_prestate_setup_teardown(f, tu_setup_session, tu_teardown_session,             \
                                             (&(tu_session){__VA_ARGS__}))

static inline int tu_setup_session(void **state)
{
    tu_session *t = *state;
    t->id = tu_start_opts((kscope_session_opts){
        .name = t->name, .data = t->data, .mode = t->mode, .backend = "none"});
    return 0;
}

static inline int tu_session_id(void **state)
{
    return ((tu_session *)*state)->id;
}

static inline int tu_teardown_session(void **state)
{
    tu_teardown_profiling(state);
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s.*", ((tu_session *)*state)->name);
    glob_t g = {0};
    if (glob(pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            unlink(g.gl_pathv[i]);
    globfree(&g);
    return 0;
}

#endif
