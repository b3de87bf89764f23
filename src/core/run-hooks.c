/*
 * run-hooks.c - what the core offers `kscope run` (src/run/) and what it
 * passes on to it.
 *
 * Backends' entry points (interposed profiler calls, the GPU runtime's
 * injection entry) must reach the launcher, yet a backend also goes into
 * the Python extension, which has no launcher. So they call the core's
 * hooks here, and the launcher registers its handlers when libkscope
 * loads: without it a hook does nothing. The other way, the launcher acts
 * on the sessions it drives through the functions below, never on the
 * core's structures.
 */
#include "core.h"

static kscope__run_hooks hooks; /* set once at load, read after */

void kscope__set_run_hooks(const kscope__run_hooks *h)
{
    hooks = *h;
}

int kscope__run_hooked(void)
{
    return hooks.capture_range != NULL;
}

void kscope__capture_range(int starting)
{
    if (hooks.capture_range)
        hooks.capture_range(starting);
}

void kscope__report_conflict(const char *msg)
{
    if (hooks.report_conflict)
        hooks.report_conflict(msg);
}

void kscope__gpu_injected(void)
{
    if (hooks.gpu_injected)
        hooks.gpu_injected();
}

void kscope__run_recording(void)
{
    if (hooks.recording)
        hooks.recording();
}

static _Atomic int ending;

void kscope__set_ending(void)
{
    atomic_store(&ending, 1);
}

int kscope__ending(void)
{
    return atomic_load_explicit(&ending, memory_order_relaxed);
}

void kscope__ranges_injected(void)
{
    if (hooks.ranges_injected)
        hooks.ranges_injected();
}

/* ------------------------------------------------------ sessions of run */

/* The session with public id `id` (kscope run knows sessions by id), or
 * NULL. */
static kscope__session *id_session(int id)
{
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++)
        if (kscope__sessions[i].in_use && kscope__sessions[i].id == id)
            return &kscope__sessions[i];
    return NULL;
}

int kscope__session_rename(int id, const char *name)
{
    kscope__session *s = id_session(id);
    if (!s)
        return kscope__fail(KSCOPE_ENOSESSION, "no session %d to rename", id);
    pthread_mutex_lock(&s->lock);
    snprintf(s->name, sizeof s->name, "%s", name);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* A child forked without exec inherits a copy of the parent's session: it
 * keeps the settings and drops the data, so it writes its own work only. */
void kscope__fork_child_reset(int id)
{
    kscope__session *s = id_session(id);
    if (!s)
        return;
    int slot = s->slot;
    /* Another thread of the parent may have held these at the fork. */
    pthread_mutex_init(&s->lock, NULL);
    kscope__reset_slot(slot);
    __atomic_fetch_add(&s->gen, 1, __ATOMIC_RELEASE); /* threads read it as they record */
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
    const kscope__evchunk *head = KSCOPE__LOAD(&b->head); /* the owner may be appending */
    return KSCOPE__LOAD(&b->gen) == kscope__sessions[slot].gen && head &&
           atomic_load_explicit(&head->n, memory_order_relaxed) > 0;
}

int kscope__session_recorded(int id)
{
    kscope__session *s = id_session(id);
    if (!s)
        return 0;
    int slot = s->slot;
    pthread_mutex_lock(&s->lock);
    int any = s->ngev > 0 || s->phase > 0; /* an ended phase was recorded */
    pthread_mutex_unlock(&s->lock);
    any = any || siblings_recorded(atomic_load(&kscope__g.root.first_child), slot);
    kscope__threads_lock();
    for (kscope__thread *t = kscope__threads(); t && !any; t = t->next)
        any =
            siblings_recorded(atomic_load(&t->root.first_child), slot) || events_recorded(t, slot);
    kscope__threads_unlock();
    return any;
}

int kscope__session_gpu_on(int id)
{
    kscope__session *s = id_session(id);
    return s ? s->gpu : 0;
}

void kscope__session_gpu_attach(int id, const char *name)
{
    kscope__session *s = id_session(id);
    if (!s)
        return;
    pthread_mutex_lock(&kscope__session_lock);
    if (s->in_use && !s->gpu)
        kscope__gpu_attach(s, name);
    pthread_mutex_unlock(&kscope__session_lock);
}
