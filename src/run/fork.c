/*
 * fork.c - the launcher session across fork() without exec, and the test
 * of whether a process recorded anything at all.
 *
 * A child forked without exec (Python multiprocessing, a forking server)
 * inherits a copy of the parent's session. It must write its own file with
 * its own work only: the copy is renamed and emptied in the child, while
 * the parent keeps what it recorded before the fork. The core does the
 * work on the session (kscope__fork_child_reset and its neighbours).
 */
#include "kscope-internal.h"
#include "run/run.h"

int kscope__launcher_rename(const char *name)
{
    int id = kscope__launcher_session();
    if (id < 0)
        return kscope__fail(KSCOPE_ENOSESSION, "no launcher session to rename");
    return kscope__session_rename(id, name);
}

int kscope__launcher_fork_child(void)
{
    int id = kscope__launcher_session();
    if (id < 0)
        return kscope__fail(KSCOPE_ENOSESSION, "no launcher session to carry over the fork");
    kscope__fork_child_reset(id);
    return 0;
}

int kscope__run_recorded(int id)
{
    return kscope__session_recorded(id);
}

int kscope__run_gpu_on(int id)
{
    return kscope__session_gpu_on(id);
}
