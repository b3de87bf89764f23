/*
 * fork.c - the launcher session across fork() without exec, and the test
 * of whether a process recorded anything at all.
 *
 * A child forked without exec (Python multiprocessing, a forking server)
 * inherits a copy of the parent's session. It must write its own file with
 * its own work only: the copy is renamed and emptied in the child, while
 * the parent keeps what it recorded before the fork.
 */
#include "core/core.h"
#include "run/run.h"

#include <string.h>

int kscope__launcher_rename(const char *name)
{
    int slot = kscope__launcher_session();
    if (slot < 0)
        return kscope__fail(KSCOPE_ENOSESSION, "no launcher session to rename");
    kscope__session *s = &kscope__sessions[slot];
    pthread_mutex_lock(&s->lock);
    snprintf(s->name, sizeof s->name, "%s", name);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int kscope__launcher_fork_child(void)
{
    int slot = kscope__launcher_session();
    if (slot < 0)
        return kscope__fail(KSCOPE_ENOSESSION, "no launcher session to carry over the fork");
    kscope__session *s = &kscope__sessions[slot];
    /* Another thread of the parent may have held these at the fork. */
    pthread_mutex_init(&s->lock, NULL);
    kscope__reset_slot(slot);
    s->gen++;
    s->phase = 0;
    s->ngev = 0;
    s->dropped = 0;
    s->start_ns = kscope_now_ns();
    s->niv = 0;
    if (s->capiv > 0) {
        s->iv[0] = (kscope__interval){s->start_ns, s->active ? UINT64_MAX : s->start_ns};
        s->niv = 1;
    }
    if (s->active)
        atomic_store(&kscope__act_ticks[slot], kscope__ticks());
    return 0;
}

/* Whether node n (for session slot) or a sibling after it holds anything. */
static int siblings_recorded(const kscope__node *n, int slot)
{
    for (; n; n = n->next_sibling)
        if (atomic_load_explicit(&n->stats[slot].calls, memory_order_relaxed) > 0 || n->gpu[slot])
            return 1;
    return 0;
}

/* Whether thread t holds trace events of the current session in slot. */
static int events_recorded(const kscope__thread *t, int slot)
{
    const kscope__evbuf *b = &t->ev[slot];
    return b->gen == kscope__sessions[slot].gen && b->head &&
           atomic_load_explicit(&b->head->n, memory_order_relaxed) > 0;
}

int kscope__run_recorded(int slot)
{
    if (slot < 0 || slot >= KSCOPE_MAX_SESSIONS)
        return 0;
    kscope__session *s = &kscope__sessions[slot];
    pthread_mutex_lock(&s->lock);
    int any = s->ngev > 0;
    pthread_mutex_unlock(&s->lock);
    any = any || siblings_recorded(atomic_load(&kscope__g.root.first_child), slot);
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t && !any; t = t->next)
        any =
            siblings_recorded(atomic_load(&t->root.first_child), slot) || events_recorded(t, slot);
    kscope__threads_unlock();
    return any;
}

int kscope__run_gpu_on(int slot)
{
    if (slot < 0 || slot >= KSCOPE_MAX_SESSIONS)
        return 0;
    return kscope__sessions[slot].gpu;
}
