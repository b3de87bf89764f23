/*
 * backend.c - the core's side of the GPU backends: which one a session
 * uses, starting it for the first session and stopping it after the last,
 * and the calls that go to it (launch metadata, the device type of the
 * output), and host scopes to the registry's range sinks at the `detailed`
 * level. The backends and sinks themselves are the registry's
 * (src/gpu/registry.c); nothing here names one.
 */
#include "core.h"

#include <string.h>

static int gpu_users;    /* sessions that started the active backend */
static int pcs_users;    /* of them, sessions that asked for PC samples */
static int dscope_users; /* of them, sessions recording device scopes */
/* The started backend: launch metadata goes to it, read without a lock. */
static _Atomic(const kscope__backend *) active;
/* The backend started last: its device type names the output's devices
 * also after it stopped (the tree is built after the last session ends). */
static _Atomic(const kscope__backend *) last_started;

/* ---------------------------------------------------------------- look-up */

const kscope__backend *kscope__backend_find(const char *name)
{
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        if (strcmp(b->name, name) == 0)
            return b;
    return NULL;
}

const kscope__backend *kscope__backend_default(void)
{
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        if (b->start)
            return b;
    return NULL;
}

/* "a, b or none": the names backend= accepts, for messages. */
static void backend_names(char *buf, size_t size)
{
    size_t used = 0;
    const kscope__backend *b;
    buf[0] = '\0';
    for (size_t i = 0; (b = kscope__backend_at(i)) && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s, ", b->name);
    if (used >= 2 && used < size)
        buf[used - 2] = '\0';
    used = strlen(buf);
    snprintf(buf + used, size - used, "%snone", used ? " or " : "");
}

int kscope__backend_check(const char *name)
{
    if (!name || strcmp(name, "none") == 0 || kscope__backend_find(name))
        return 0;
    char names[512];
    backend_names(names, sizeof names);
    return kscope__fail(KSCOPE_EBACKEND, "backend '%s' is not %s", name, names);
}

const char *kscope__gpu_device_type(void)
{
    const kscope__backend *b = atomic_load(&last_started);
    if (!b)
        b = kscope__backend_default();
    if (!b)
        b = kscope__backend_at(0);
    return b && b->device_type ? b->device_type : "GPU";
}

/* ------------------------------------------------------------- sessions */

/* The built backend a session asking for `name` uses, or NULL: none was
 * asked for, none is built, or the one asked for was left out of this
 * build (said once on stderr, naming what the build lacked). */
static const kscope__backend *choose(const char *name)
{
    if (!name)
        return kscope__backend_default();
    if (strcmp(name, "none") == 0)
        return NULL;
    const kscope__backend *b = kscope__backend_find(name);
    if (b && !b->start)
        kscope__warn_once("no-backend-build",
                          "backend %s requested but this kscope was built without %s; "
                          "recording host scopes only",
                          b->name, b->needs ? b->needs : "it");
    return b && b->start ? b : NULL;
}

/* Start b for the first session (caller holds kscope__session_lock). */
static int first_start(const kscope__backend *b)
{
    int rc = b->start();
    if (rc != 0) {
        kscope__warn_once("gpu-start", "GPU capture unavailable (%s); recording host scopes only",
                          kscope_last_error()[0] ? kscope_last_error() : kscope_strerror(rc));
        return rc;
    }
    atomic_store(&active, b);
    atomic_store(&last_started, b);
    return 0;
}

/* Turn PC sampling on for the first session that asks for it; the
 * session records kernels anyway when it cannot start. */
static void pcs_attach(const kscope__backend *b, kscope__session *s)
{
    if (!b->pc_sampling) {
        kscope__warn_once("pcs-none", "backend %s cannot sample PCs; recording without samples",
                          b->name);
        s->pcs = 0;
        return;
    }
    int rc = b->pc_sampling(1, s->pcs);
    if (rc != 0) {
        kscope__warn_once("pcs-start", "PC sampling unavailable (%s); recording without samples",
                          kscope_last_error()[0] ? kscope_last_error() : kscope_strerror(rc));
        s->pcs = 0;
        return;
    }
    pcs_users++;
}

/* Turn device scopes on for the first session that asks; the others
 * share its options (said once when theirs differ). */
static void dscope_attach(const kscope__backend *b, kscope__session *s)
{
    int rc = b->device_scopes ? b->device_scopes(1, &s->dso) : KSCOPE_ENOTSUP;
    if (rc != 0) {
        kscope__warn_once("dscope-start", "device scopes unavailable (%s); recording without them",
                          rc == KSCOPE_ENOTSUP     ? "this backend has none"
                          : kscope_last_error()[0] ? kscope_last_error()
                                                   : kscope_strerror(rc));
        s->dscope = 0;
        return;
    }
    dscope_users++;
}

/* Session s gives back its share of a feature it records (`on`; *ended
 * set once given back) that *users sessions share: the backend to turn the
 * feature off with when s was its last user, else NULL. */
static const kscope__backend *share_end(const kscope__session *s, int on, int *ended, int *users)
{
    const kscope__backend *b = atomic_load(&active);
    if (!s->gpu || !on || *ended || !b)
        return NULL;
    *ended = 1;
    return --*users == 0 ? b : NULL;
}

void kscope__gpu_dscope_end(kscope__session *s)
{
    const kscope__backend *b = share_end(s, s->dscope, &s->dscope_ended, &dscope_users);
    if (b)
        b->device_scopes(0, NULL);
}

/* ------------------------------------------------- following launches */

static _Atomic int contexts_seen; /* a thread has annotated */

int kscope__calls_wanted(void)
{
    if (atomic_load(&contexts_seen))
        return 1;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++)
        if (kscope__sessions[i].in_use && kscope__sessions[i].trace)
            return 1;
    return 0;
}

void kscope__gpu_contexts_seen(void)
{
    if (atomic_exchange(&contexts_seen, 1))
        return;
    const kscope__backend *b = atomic_load(&active); /* after the store: see first_start */
    if (b && b->session_changed)
        b->session_changed();
}

int kscope__gpu_attach(kscope__session *s, const char *name)
{
    const kscope__backend *b = choose(name);
    if (!b)
        return 0;
    if (gpu_users > 0 && b != atomic_load(&active)) {
        kscope__warn_once("gpu-other",
                          "backend %s not started: another backend is capturing; "
                          "recording host scopes only",
                          b->name);
        return 0;
    }
    int fresh = gpu_users == 0;
    if (fresh && first_start(b) != 0)
        return 0;
    gpu_users++;
    s->gpu = 1;
    if (fresh) /* a started backend captures: the sampler may shut it */
        kscope__sampling_backend_started();
    if (b->session_changed)
        b->session_changed();
    if (s->pcs)
        pcs_attach(b, s);
    if (s->dscope)
        dscope_attach(b, s);
    return 0;
}

void kscope__gpu_pcs_end(kscope__session *s)
{
    const kscope__backend *b = share_end(s, s->pcs != 0, &s->pcs_ended, &pcs_users);
    if (b)
        b->pc_sampling(0, 0);
}

void kscope__gpu_detach(kscope__session *s)
{
    const kscope__backend *b = atomic_load(&active);
    if (!s->gpu || !b)
        return;
    kscope__gpu_pcs_end(s);
    kscope__gpu_dscope_end(s);
    s->gpu = 0;
    if (--gpu_users == 0) {
        b->stop();
        atomic_store(&active, NULL);
    } else if (b->session_changed) {
        b->session_changed();
    }
}

int kscope__gpu_gate(int state)
{
    const kscope__backend *b = atomic_load(&active);
    return b && b->gate ? b->gate(state) : 0;
}

/* A flush put off while a graph capture was open, owed to the sessions
 * (kscope__session_lock held). */
static int flush_owed;

int kscope__gpu_flush(kscope__session *s)
{
    const kscope__backend *b = atomic_load(&active);
    if (!s->gpu || !b || !b->flush)
        return 0;
    if (b->capturing && b->capturing(0)) {
        flush_owed = 1; /* a sync or flush now would end the capture */
        return 1;
    }
    flush_owed = 0;
    b->flush();
    return 0;
}

int kscope__gpu_flush_owed(void)
{
    const kscope__backend *b = atomic_load(&active);
    if (!flush_owed || !b || (b->capturing && b->capturing(0)))
        return 0;
    flush_owed = 0;
    b->flush();
    return 1;
}

/* ---------------------------------------------------------- graph capture */

int kscope__capturing(int this_thread)
{
    const kscope__backend *b = atomic_load_explicit(&active, memory_order_acquire);
    return b && b->capturing ? b->capturing(this_thread) : 0;
}

int64_t kscope__capture_value(kscope__graph_value *v)
{
    const kscope__backend *b = atomic_load_explicit(&active, memory_order_acquire);
    if (!b || !b->capture_value)
        return 0;
    v->ctx = kscope__current_ctx();
    v->ns = kscope_now_ns();
    return b->capture_value(v);
}

void kscope__capture_hide(int on)
{
    const kscope__backend *b = atomic_load_explicit(&active, memory_order_acquire);
    if (b && b->capture_hide)
        b->capture_hide(on);
}

size_t kscope__capture_released(int64_t *out, size_t n)
{
    /* Also after the backend stopped: stopping releases what it held. */
    const kscope__backend *b = atomic_load_explicit(&last_started, memory_order_acquire);
    return b && b->capture_released ? b->capture_released(out, n) : 0;
}

/* ------------------------------------------------------- launch metadata */

int kscope__launch_meta_check(const kscope_launch_meta *m)
{
    if (!m)
        return kscope__fail(KSCOPE_EINVAL, "launch metadata: NULL");
    if (m->n_custom && (!m->custom_names || !m->custom_values))
        return kscope__fail(KSCOPE_EINVAL,
                            "launch metadata: %zu custom metrics but no names or values",
                            m->n_custom);
    for (size_t i = 0; i < m->n_custom; i++)
        if (!m->custom_names[i] || !m->custom_names[i][0])
            return kscope__fail(KSCOPE_EINVAL, "launch metadata: custom metric %zu has no name", i);
    return 0;
}

/* Public (kscope.h): metadata for the next kernel launched on this thread.
 * Checked always; kept only while a backend captures. No lock: a launch
 * path may call it before every kernel. */
int kscope_launch_metadata(const kscope_launch_meta *meta)
{
    const kscope__backend *b = atomic_load_explicit(&active, memory_order_acquire);
    if (!b) /* a copy that defers never starts a backend (defer.c) */
        KSCOPE__DEFER(launch_metadata, meta);
    int rc = kscope__launch_meta_check(meta);
    if (rc < 0)
        return rc;
    return b && b->launch_metadata ? b->launch_metadata(meta) : 0;
}

/* ---------------------------------------------------------------- ranges */

/* The registry's range sinks that opened, whatever backend a session uses
 * (also none): a `detailed` scope shows in each vendor's timeline. */
#define SINKS_MAX 8
static const kscope__range_sink *open_sinks[SINKS_MAX];
static size_t n_open_sinks;
static pthread_once_t sinks_once = PTHREAD_ONCE_INIT;

static void open_all_sinks(void)
{
    const kscope__range_sink *k;
    for (size_t i = 0; (k = kscope__range_sink_at(i)) && n_open_sinks < SINKS_MAX; i++)
        if (!k->open || k->open())
            open_sinks[n_open_sinks++] = k;
}

void kscope__range_push(const char *name, uint32_t color)
{
    pthread_once(&sinks_once, open_all_sinks);
    for (size_t i = 0; i < n_open_sinks; i++)
        open_sinks[i]->push(name, color);
}

void kscope__range_pop(void)
{
    pthread_once(&sinks_once, open_all_sinks);
    for (size_t i = n_open_sinks; i-- > 0;)
        open_sinks[i]->pop();
}

void kscope__range_mark(const char *name)
{
    pthread_once(&sinks_once, open_all_sinks);
    for (size_t i = 0; i < n_open_sinks; i++)
        if (open_sinks[i]->mark)
            open_sinks[i]->mark(name);
}
