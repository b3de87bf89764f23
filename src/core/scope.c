/*
 * scope.c - the annotation hot path: scopes, states, marks and metrics on
 * the calling thread.
 *
 * An enter/exit with no session costs two loads and two branches (the
 * second asks whether this copy defers to kscope run's library). With
 * sessions, it touches only the calling thread's state and its own nodes:
 * no lock, no allocation once the path was seen, no string copy.
 */
#include "core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LIKELY(x)   __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline int annotating(void)
{
    return atomic_load_explicit(&kscope__g.annotate, memory_order_relaxed);
}

/* With no session here, a copy linked into the program hands the call to
 * kscope run's libkscope.so (defer.c); a copy that defers never annotates. */
#define DEFER_IDLE(...)                                                                            \
    do {                                                                                           \
        if (UNLIKELY(!annotating()))                                                               \
            KSCOPE__DEFER(__VA_ARGS__);                                                            \
    } while (0)

/* Id of a name through the thread's pointer cache. The strcmp guards
 * against a pointer reused for another string. */
static inline uint32_t name_id(kscope__thread *t, const char *name)
{
    uint32_t h = (uint32_t)((uintptr_t)name >> 3) & (KSCOPE__NAME_CACHE - 1);
    if (LIKELY(t->name_cache[h].ptr == name) &&
        strcmp(kscope__name(t->name_cache[h].id), name) == 0)
        return t->name_cache[h].id;
    uint32_t id = kscope__intern(name);
    if (id) {
        t->name_cache[h].ptr = name;
        t->name_cache[h].id = id;
    }
    return id;
}

/* Append a trace event to slot s of thread t. A buffer left from an earlier
 * session or phase in the slot is dropped here, by its owner (the writer
 * thread only ever takes full chunks of the current one, spill.c), so no
 * other thread frees memory this thread writes. A new chunk is taken
 * within the session's budget: past it the event drops, counted. */
static void ev_append(kscope__thread *t, int s, uint32_t type, uint32_t name, uint64_t u,
                      uint32_t aux)
{
    kscope__evbuf *b = &t->ev[s];
    kscope__session *ss = &kscope__sessions[s];
    uint32_t gen = KSCOPE__LOAD_RELAXED(&ss->gen);
    if (UNLIKELY(b->gen != gen)) {
        gen = KSCOPE__LOAD(&ss->gen); /* after the writer thread's last take from the list */
        kscope__evchunk *old = KSCOPE__LOAD(&b->head);
        KSCOPE__STORE(&b->head, NULL); /* finalize reads the links */
        b->tail = NULL;
        KSCOPE__STORE(&b->gen, gen);
        kscope__ev_chunks_free(ss, old);
    }
    kscope__evchunk *c = b->tail;
    uint32_t n = c ? atomic_load_explicit(&c->n, memory_order_relaxed) : KSCOPE__EV_CHUNK;
    if (UNLIKELY(n == KSCOPE__EV_CHUNK)) {
        kscope__evchunk *nc = kscope__ev_chunk_new(ss);
        if (!nc) {
            __atomic_fetch_add(&ss->dropped, 1, __ATOMIC_RELAXED);
            return;
        }
        if (c)
            KSCOPE__STORE(&c->next, nc);
        else
            KSCOPE__STORE(&b->head, nc);
        b->tail = c = nc;
        n = 0;
    }
    kscope__ev *e = &c->ev[n];
    e->u = u;
    e->name = name;
    e->type = (uint16_t)type;
    e->aux = (uint16_t)aux;
    atomic_store_explicit(&c->n, n + 1, memory_order_release);
}

static inline void stat_add(_Atomic uint64_t *p, uint64_t v)
{
    atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

/* The GPU context for work launched under node n: n, or the state node. */
static kscope__node *gpu_ctx_node(kscope__thread *t, kscope__node *n)
{
    if (t->nstates == 0)
        return n;
    kscope__node *s = kscope__node_child(t, n, t->states[t->nstates - 1], KSCOPE__NODE_STATE);
    return s ? s : n;
}

/* The context of a launch from a thread with no scope and no state: the
 * main thread's current scope, so that the kernels PyTorch's autograd
 * threads launch during `backward()` land under the scope that called it
 * (Proton's shadow context does the same). The main thread publishes its
 * depth and frames with atomic stores; a frame read while it changes is
 * still a node of its tree. Without a main thread state: the root. */
static uint64_t inherited_ctx(const kscope__thread *t)
{
    kscope__thread *m = kscope__main_thread();
    if (!m || m == t)
        return t ? (uint64_t)(uintptr_t)&t->root : 0;
    int d = KSCOPE__LOAD(&m->depth);
    if (d == 0)
        return t ? (uint64_t)(uintptr_t)&t->root : 0;
    return (uint64_t)(uintptr_t)KSCOPE__LOAD_RELAXED(&m->stack[d].node);
}

uint64_t kscope__current_ctx(void)
{
    if (!annotating())
        return 0;
    /* A thread that never annotated gets no thread state here (this runs
     * in launch callbacks, on any thread that launches). */
    kscope__thread *t = kscope__tls;
    if (!t || (t->depth == 0 && t->nstates == 0))
        return inherited_ctx(t);
    return (uint64_t)(uintptr_t)gpu_ctx_node(t, t->stack[t->depth].node);
}

/* Frame flag of an async scope's step (kscope_async_resume), pushed
 * without counting a call and popped without adding time
 * (kscope_async_begin and _end do). */
#define STEP (1u << 31)

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Push node n (named `name`) as the thread's innermost frame; `counted`
 * (a constant at each call) counts a call of it. */
static ALWAYS_INLINE int push_node(kscope__thread *t, kscope__node *n, uint32_t name,
                                   uint32_t flags, uint32_t color, int counted)
{
    int d = t->depth;
    uint64_t now = kscope__ticks();
    kscope__frame *f = &t->stack[d + 1];
    KSCOPE__STORE_RELAXED(&f->node, n); /* finalize may read open frames */
    KSCOPE__STORE_RELAXED(&f->start, now);
    f->flags = flags;
    f->name = name;
    KSCOPE__STORE(&t->depth, d + 1);
    uint32_t mask = atomic_load_explicit(&kscope__g.active_mask, memory_order_relaxed);
    uint32_t trace = atomic_load_explicit(&kscope__trace_mask, memory_order_relaxed);
    while (mask) {
        int s = __builtin_ctz(mask);
        mask &= mask - 1;
        if (trace & (1u << s))
            ev_append(t, s, KSCOPE__EV_BEGIN, name, now, 0);
        else if (counted)
            stat_add(&kscope__node_stats(n, s)->calls, 1);
    }
    if (UNLIKELY(atomic_load_explicit(&kscope__g.level, memory_order_relaxed) ==
                 KSCOPE_PROFILING_DETAILED))
        kscope__range_push(kscope__name(name), color);
    return 0;
}

static int push(kscope__thread *t, uint32_t name, uint32_t flags, uint32_t color)
{
    int d = t->depth;
    if (UNLIKELY(d >= KSCOPE__STACK_MAX))
        return kscope__fail(KSCOPE_EDEPTH, "scope '%s' would nest deeper than %d levels",
                            kscope__name(name), KSCOPE__STACK_MAX);
    kscope__frame *pf = &t->stack[d];
    kscope__node *n = pf->hint;
    if (UNLIKELY(!n || n->name != name || n->parent != pf->node)) {
        n = kscope__node_child(t, pf->node, name, KSCOPE__NODE_SCOPE);
        if (UNLIKELY(!n))
            return KSCOPE_ENOMEM;
        pf->hint = n;
    }
    return push_node(t, n, name, flags, color, 1);
}

/* Pop the innermost frame; `timed` (a constant at each call) adds its
 * time. */
static ALWAYS_INLINE void pop_frame(kscope__thread *t, int timed)
{
    uint64_t now = kscope__ticks();
    kscope__frame *f = &t->stack[t->depth];
    kscope__node *n = f->node;
    uint32_t mask = atomic_load_explicit(&kscope__g.active_mask, memory_order_relaxed);
    uint32_t trace = atomic_load_explicit(&kscope__trace_mask, memory_order_relaxed);
    while (mask) {
        int s = __builtin_ctz(mask);
        mask &= mask - 1;
        if (trace & (1u << s)) {
            ev_append(t, s, KSCOPE__EV_END, f->name, now, 0);
            continue;
        }
        if (!timed)
            continue;
        uint64_t act = atomic_load_explicit(&kscope__act_ticks[s], memory_order_relaxed);
        uint64_t dt = now - (f->start > act ? f->start : act);
        stat_add(&kscope__node_stats(n, s)->ticks, dt);
        if (f->flags & KSCOPE_CPU_TIMED)
            stat_add(kscope__node_cpu(n, s), dt);
    }
    KSCOPE__STORE(&t->depth, t->depth - 1);
    if (UNLIKELY(atomic_load_explicit(&kscope__g.level, memory_order_relaxed) ==
                 KSCOPE_PROFILING_DETAILED))
        kscope__range_pop();
}

static void pop(kscope__thread *t)
{
    pop_frame(t, 1);
}

static int check_name(const char *name, const char *what)
{
    if (!name)
        return kscope__fail(KSCOPE_EINVAL, "%s name is NULL", what);
    if (!*name)
        return kscope__fail(KSCOPE_EINVAL, "%s name is empty", what);
    return 0;
}

/* The start of a named annotation (scope, state, mark): the id of `name`,
 * the calling thread in *t; 0 when nothing is recorded, *rc then 1 (not
 * annotating) or an error. Inlined: a scope's enter is the hot path. */
static ALWAYS_INLINE uint32_t named_start(const char *name, const char *what, kscope__thread **t,
                                          int *rc)
{
    if (UNLIKELY(!name || !*name)) {
        *rc = check_name(name, what);
        return 0;
    }
    if (UNLIKELY(!annotating())) {
        *rc = 1;
        return 0;
    }
    *t = kscope__thread_get();
    if (UNLIKELY(!*t)) {
        *rc = KSCOPE_ENOMEM;
        return 0;
    }
    uint32_t id = name_id(*t, name);
    if (UNLIKELY(!id))
        *rc = kscope__fail(KSCOPE_ENOMEM, "out of memory interning '%s'", name);
    return id;
}

int kscope_enter_ex(const char *name, uint32_t color, uint32_t flags)
{
    DEFER_IDLE(enter_ex, name, color, flags);
    kscope__thread *t;
    int rc;
    uint32_t id = named_start(name, "scope", &t, &rc);
    if (UNLIKELY(!id))
        return rc;
    return push(t, id, flags, color);
}

int kscope_enter(const char *name)
{
    return kscope_enter_ex(name, 0, 0);
}

int kscope_enter_loc(kscope_loc *loc)
{
    DEFER_IDLE(enter_loc, loc);
    if (!annotating())
        return 1;
    if (UNLIKELY(!loc))
        return kscope__fail(KSCOPE_EINVAL, "scope location is NULL");
    kscope__thread *t = kscope__thread_get();
    if (UNLIKELY(!t))
        return KSCOPE_ENOMEM;
    uint32_t id = atomic_load_explicit((_Atomic uint32_t *)&loc->id, memory_order_relaxed);
    if (UNLIKELY(!id)) {
        int rc = check_name(loc->name, "scope");
        if (rc)
            return rc;
        id = kscope__intern(loc->name);
        if (!id)
            return kscope__fail(KSCOPE_ENOMEM, "out of memory interning '%s'", loc->name);
        atomic_store_explicit((_Atomic uint32_t *)&loc->id, id, memory_order_relaxed);
    }
    return push(t, id, loc->flags, loc->color);
}

/* The innermost scope may be closed when its name matches (or none is
 * given); otherwise the stack stays as it is. */
static int exit_checked(kscope__thread *t, const char *name, uint32_t id)
{
    if (UNLIKELY(t->depth == 0))
        return kscope__fail(KSCOPE_EEMPTY, "exit of scope '%s' but no scope is open on this thread",
                            name ? name : (id ? kscope__name(id) : "(innermost)"));
    kscope__frame *f = &t->stack[t->depth];
    if (id && f->name != id)
        name = kscope__name(id);
    if (name && (id ? f->name != id : strcmp(kscope__name(f->name), name) != 0))
        return kscope__fail(KSCOPE_EMISMATCH,
                            "exit of scope '%s' does not match the innermost scope '%s'", name,
                            kscope__name(f->name));
    pop(t);
    return 0;
}

/* Is the innermost scope the one named (by string or id; neither: any)? */
static int top_is(kscope__thread *t, const char *name, uint32_t id)
{
    if (t->depth == 0)
        return 0;
    uint32_t top = t->stack[t->depth].name;
    if (id)
        return top == id;
    return !name || strcmp(kscope__name(top), name) == 0;
}

const char *kscope_innermost(void)
{
    if (UNLIKELY(!annotating()))
        KSCOPE__DEFER_VALUE(innermost);
    kscope__thread *t = kscope__tls;
    return t && t->depth > 0 ? kscope__name(t->stack[t->depth].name) : NULL;
}

int kscope_exit(const char *name)
{
    DEFER_IDLE(exit, name);
    if (UNLIKELY(name && !*name))
        return check_name(name, "scope");
    kscope__thread *t = kscope__thread_get();
    if (UNLIKELY(!t))
        return KSCOPE_ENOMEM;
    if (!annotating() && !top_is(t, name, 0))
        return 1; /* its enter was not recorded either */
    return exit_checked(t, name, 0);
}

int kscope_exit_loc(kscope_loc *loc)
{
    DEFER_IDLE(exit_loc, loc);
    if (UNLIKELY(!loc))
        return kscope__fail(KSCOPE_EINVAL, "scope location is NULL");
    kscope__thread *t = kscope__thread_get();
    if (UNLIKELY(!t))
        return KSCOPE_ENOMEM;
    if (!annotating() && !top_is(t, NULL, loc->id))
        return 1;
    return exit_checked(t, NULL, loc->id);
}

int kscope_depth(void)
{
    if (UNLIKELY(!annotating()))
        KSCOPE__DEFER_VALUE(depth);
    kscope__thread *t = kscope__thread_get();
    return t ? t->depth : 0;
}

/* ------------------------------------------------------------ async scopes */

/* An async scope's resume, suspend and end: an error without the scope,
 * nothing to do (1) unless `live` (its node; for suspend, its open step). */
#define ASYNC_LIVE(a, live)                                                                        \
    do {                                                                                           \
        if (UNLIKELY(!(a)))                                                                        \
            return kscope__fail(KSCOPE_EINVAL, "async scope is NULL");                             \
        if (!(live))                                                                               \
            return 1;                                                                              \
    } while (0)

int kscope_async_begin(kscope_async *a, const char *name, uint32_t color, uint32_t flags)
{
    if (UNLIKELY(!a))
        return kscope__fail(KSCOPE_EINVAL, "async scope is NULL");
    memset(a, 0, sizeof *a);
    kscope__thread *t;
    int rc;
    uint32_t id = named_start(name, "scope", &t, &rc);
    if (!id)
        return rc;
    kscope__node *n = kscope__node_child(t, t->stack[t->depth].node, id, KSCOPE__NODE_SCOPE);
    if (UNLIKELY(!n))
        return KSCOPE_ENOMEM;
    uint32_t mask = atomic_load(&kscope__g.active_mask) & ~atomic_load(&kscope__trace_mask);
    while (mask) {
        int s = __builtin_ctz(mask);
        mask &= mask - 1;
        stat_add(&kscope__node_stats(n, s)->calls, 1);
    }
    a->node = n;
    a->name = id;
    a->color = color;
    a->flags = flags & KSCOPE_CPU_TIMED;
    a->start = kscope__ticks();
    return 0;
}

int kscope_async_resume(kscope_async *a)
{
    ASYNC_LIVE(a, a->node);
    if (a->open)
        return kscope__fail(KSCOPE_ESTATE, "async scope '%s' resumed while a step is open",
                            kscope__name(a->name));
    kscope__thread *t = kscope__thread_get();
    if (UNLIKELY(!t))
        return KSCOPE_ENOMEM;
    if (UNLIKELY(t->depth >= KSCOPE__STACK_MAX))
        return kscope__fail(KSCOPE_EDEPTH, "scope '%s' would nest deeper than %d levels",
                            kscope__name(a->name), KSCOPE__STACK_MAX);
    kscope__node *n = a->node;
    if (UNLIKELY(kscope__node_owner(n) != t)) {
        /* Resumed on another thread: only the owner adds children to its
         * nodes, so the step runs under a node of this thread's own. */
        n = kscope__node_child(t, t->stack[t->depth].node, a->name, KSCOPE__NODE_SCOPE);
        if (!n)
            return KSCOPE_ENOMEM;
    }
    int rc = push_node(t, n, a->name, a->flags | STEP, a->color, 0);
    if (rc == 0) {
        a->open = 1;
        a->thread = t;
    }
    return rc;
}

int kscope_async_suspend(kscope_async *a)
{
    ASYNC_LIVE(a, a->open);
    kscope__thread *t = kscope__thread_get();
    if (UNLIKELY(t != a->thread))
        return kscope__fail(KSCOPE_ESTATE, "async scope '%s' suspended on another thread",
                            kscope__name(a->name));
    kscope__frame *f = &t->stack[t->depth];
    if (t->depth == 0 || !(f->flags & STEP) || f->name != a->name)
        return kscope__fail(KSCOPE_EMISMATCH,
                            "async scope '%s' suspended while scope '%s' opened in its step is "
                            "still open",
                            kscope__name(a->name), t->depth ? kscope__name(f->name) : "ROOT");
    pop_frame(t, 0); /* a step adds no time: the scope's end adds it whole */
    a->open = 0;
    return 0;
}

int kscope_async_end(kscope_async *a)
{
    ASYNC_LIVE(a, a->node);
    int rc = kscope_async_suspend(a);
    if (rc < 0)
        return rc;
    kscope__node *n = a->node;
    uint64_t now = kscope__ticks();
    uint32_t mask = atomic_load(&kscope__g.active_mask) & ~atomic_load(&kscope__trace_mask);
    /* Another thread may own n: add atomically (an owner's own adds are
     * plain; the race is left to coroutines that move between threads). */
    int own = kscope__node_owner(n) == kscope__tls;
    while (mask) {
        int s = __builtin_ctz(mask);
        mask &= mask - 1;
        uint64_t act = atomic_load_explicit(&kscope__act_ticks[s], memory_order_relaxed);
        uint64_t dt = now - (a->start > act ? a->start : act);
        _Atomic uint64_t *ticks = &kscope__node_stats(n, s)->ticks;
        _Atomic uint64_t *cpu = a->flags & KSCOPE_CPU_TIMED ? kscope__node_cpu(n, s) : NULL;
        if (own) {
            stat_add(ticks, dt);
            if (cpu)
                stat_add(cpu, dt);
        } else {
            atomic_fetch_add_explicit(ticks, dt, memory_order_relaxed);
            if (cpu)
                atomic_fetch_add_explicit(cpu, dt, memory_order_relaxed);
        }
    }
    a->node = NULL;
    return 0;
}

/* A state or a mark (`what`) named `name`, recorded by act(thread, id). */
static ALWAYS_INLINE int on_name(const char *name, const char *what,
                                 int (*act)(kscope__thread *, uint32_t))
{
    kscope__thread *t;
    int rc;
    uint32_t id = named_start(name, what, &t, &rc);
    return id ? act(t, id) : rc;
}

/* ------------------------------------------------------------------ states */

/* Push the state `id` on the thread's stack of states. */
static inline int state_push(kscope__thread *t, uint32_t id)
{
    if (UNLIKELY(t->nstates >= KSCOPE__STATE_MAX))
        return kscope__fail(KSCOPE_EDEPTH, "state '%s' nests deeper than %d states",
                            kscope__name(id), KSCOPE__STATE_MAX);
    t->states[t->nstates++] = id;
    return 0;
}

int kscope_state_enter(const char *name)
{
    DEFER_IDLE(state_enter, name);
    return on_name(name, "state", state_push);
}

int kscope__state_enter_id(uint32_t id)
{
    if (!annotating())
        return 1;
    kscope__thread *t = kscope__thread_get();
    if (UNLIKELY(!t))
        return KSCOPE_ENOMEM;
    return state_push(t, id);
}

uint32_t kscope__state_top(void)
{
    kscope__thread *t = kscope__tls;
    return t && t->nstates ? t->states[t->nstates - 1] : 0;
}

int kscope_state_exit(void)
{
    DEFER_IDLE(state_exit);
    kscope__thread *t = kscope__thread_get();
    if (!t)
        return KSCOPE_ENOMEM;
    if (t->nstates == 0) {
        if (!annotating())
            return 1;
        return kscope__fail(KSCOPE_EEMPTY, "state exit but no state is set on this thread");
    }
    t->nstates--;
    return 0;
}

/* ------------------------------------------------------------------- marks */

/* A mark named `id` at the thread's innermost scope, in every session. */
static int mark_at(kscope__thread *t, uint32_t id)
{
    uint64_t now = kscope__ticks();
    uint32_t mask = atomic_load(&kscope__g.active_mask);
    uint32_t trace = atomic_load(&kscope__trace_mask);
    kscope__node *at = gpu_ctx_node(t, t->stack[t->depth].node);
    kscope__node *m = NULL;
    while (mask) {
        int s = __builtin_ctz(mask);
        mask &= mask - 1;
        if (trace & (1u << s)) {
            ev_append(t, s, KSCOPE__EV_MARK, id, now, 0);
            continue;
        }
        if (!m && !(m = kscope__node_child(t, at, id, KSCOPE__NODE_MARK)))
            return KSCOPE_ENOMEM;
        stat_add(&kscope__node_stats(m, s)->calls, 1);
    }
    if (UNLIKELY(atomic_load_explicit(&kscope__g.level, memory_order_relaxed) ==
                 KSCOPE_PROFILING_DETAILED))
        kscope__range_mark(kscope__name(id));
    return 0;
}

int kscope_mark(const char *name)
{
    DEFER_IDLE(mark, name);
    return on_name(name, "mark", mark_at);
}

/* ----------------------------------------------------------------- metrics */

static int reserved_metric(uint32_t base)
{
    const char *b = kscope__name(base);
    return strcmp(b, "cpu_time (ns)") == 0 || strcmp(b, "calls") == 0 ||
           strcmp(b, "wall_time (ns)") == 0;
}

static kscope__umetric *find_umetric(kscope__node_ext *x, const kscope__metric_def *def, int s)
{
    for (kscope__umetric *m = x->metrics; m; m = m->next)
        if (m->def == def && m->slot == s)
            return m;
    return NULL;
}

/* Combine a value into a node's metric: (pty) overwrites, others add.
 * Vectors add element-wise, growing to the longer length. Text replaces. */
static int umetric_apply(kscope__umetric *m, int type, const void *vals, size_t n)
{
    int pty = m->def->kind == KSCOPE__MK_PTY;
    if (type == KSCOPE__T_STRING) {
        char *copy = strdup(vals);
        if (!copy)
            return KSCOPE_ENOMEM;
        free(m->v.s);
        m->v.s = copy;
        return 0;
    }
    if (type == KSCOPE__T_INT) {
        m->v.i = pty ? *(const int64_t *)vals : m->v.i + *(const int64_t *)vals;
        return 0;
    }
    if (type == KSCOPE__T_DOUBLE) {
        m->v.d = pty ? *(const double *)vals : m->v.d + *(const double *)vals;
        return 0;
    }
    size_t esz = type == KSCOPE__T_INTVEC ? sizeof(int64_t) : sizeof(double);
    size_t len = pty || n > m->n ? n : m->n;
    void *cur = type == KSCOPE__T_INTVEC ? (void *)m->v.iv : (void *)m->v.dv;
    if (len != m->n || pty) {
        void *grown = calloc(len ? len : 1, esz);
        if (!grown)
            return KSCOPE_ENOMEM;
        if (!pty && cur)
            memcpy(grown, cur, m->n * esz);
        free(cur);
        cur = grown;
        m->n = (uint32_t)len;
        if (type == KSCOPE__T_INTVEC)
            m->v.iv = cur;
        else
            m->v.dv = cur;
    }
    for (size_t i = 0; i < n; i++) {
        if (type == KSCOPE__T_INTVEC)
            m->v.iv[i] = (pty ? 0 : m->v.iv[i]) + ((const int64_t *)vals)[i];
        else
            m->v.dv[i] = (pty ? 0 : m->v.dv[i]) + ((const double *)vals)[i];
    }
    return 0;
}

/* A (pty) or (exc) metric keeps one type per node: another metric of the
 * same name on the node (any suffix) must hold the same type. */
static int node_type_clash(kscope__node_ext *x, int s, const kscope__metric_def *def, int type)
{
    for (kscope__umetric *m = x->metrics; m; m = m->next)
        if (m->slot == s && m->def->base == def->base && m->type != type)
            return m->type;
    return -1;
}

int kscope__node_metric(kscope__node *node, int s, const kscope__metric_def *def, int type,
                        const void *vals, size_t n)
{
    pthread_mutex_t *lock = kscope__owner_lock(node);
    pthread_mutex_lock(lock);
    kscope__node_ext *x = kscope__node_ext_make(node);
    int had = x ? node_type_clash(x, s, def, type) : -1;
    if (had >= 0) {
        pthread_mutex_unlock(lock);
        return kscope__metric_type_error(def, had, type,
                                         type == KSCOPE__T_INT && *(const int64_t *)vals < 0);
    }
    kscope__umetric *m = x ? find_umetric(x, def, s) : NULL;
    if (!m) {
        if (!x || !(m = calloc(1, sizeof *m))) {
            pthread_mutex_unlock(lock);
            return kscope__fail(KSCOPE_ENOMEM, "out of memory adding metric");
        }
        m->def = def;
        m->slot = (uint8_t)s;
        m->type = (uint8_t)type;
        m->next = x->metrics;
        x->metrics = m;
    }
    int rc = umetric_apply(m, type, vals, n);
    pthread_mutex_unlock(lock);
    return rc;
}

/* Trace sessions keep a metric as an event; vectors keep only their sum,
 * which is what a slice's args can show. */
static void trace_metric(kscope__thread *t, int s, const kscope__metric_def *def, int type,
                         const void *vals, size_t n)
{
    uint64_t bits;
    if (type == KSCOPE__T_INT || type == KSCOPE__T_DOUBLE) {
        memcpy(&bits, vals, sizeof bits);
    } else {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += type == KSCOPE__T_INTVEC ? (double)((const int64_t *)vals)[i]
                                            : ((const double *)vals)[i];
        memcpy(&bits, &sum, sizeof bits);
        type = KSCOPE__T_DOUBLE;
    }
    ev_append(t, s, KSCOPE__EV_METRIC, def->id, bits, (uint32_t)type);
}

/* A metric recorded while this thread captures a graph belongs to the
 * graph's launches, not to now: the backend keeps it for them. Returns the
 * backend's answer (0: not capturing, the metric is recorded now). */
static int64_t capture_metric(const kscope__metric_def *def, int type, const void *vals, size_t n)
{
    if (!kscope__capturing(1))
        return 0;
    kscope__graph_value v = {.def = def, .type = type, .n = n, .vals = vals};
    return kscope__capture_value(&v);
}

/* Text goes to (pty) and (exc) metrics of tree sessions only: an inclusive
 * metric adds up to its parents, which text cannot, and a trace keeps
 * numbers in its events. */
static int check_text(const char *name, const kscope__metric_def *def, uint32_t trace_mask)
{
    if (def->kind == KSCOPE__MK_INC)
        return kscope__fail(KSCOPE_EMETRICTYPE,
                            "metric '%s' is text; only (pty) and (exc) metrics hold text", name);
    if (trace_mask & atomic_load(&kscope__g.active_mask))
        return kscope__fail(KSCOPE_ENOTSUP,
                            "metric '%s' is text; a trace session (data=trace) keeps numbers only",
                            name);
    return 0;
}

static int add_metric(const char *name, int type, const void *vals, size_t n)
{
    if (!name || !*name)
        return kscope__fail(KSCOPE_EINVAL, "metric name is NULL or empty");
    if ((type >= KSCOPE__T_INTVEC && n > 0 && !vals) || (type == KSCOPE__T_STRING && !vals))
        return kscope__fail(KSCOPE_EINVAL, "metric '%s' has NULL values", name);
    if (type == KSCOPE__T_DOUBLE && !isfinite(*(const double *)vals))
        return kscope__fail(KSCOPE_EINVAL, "metric '%s' is not a finite number", name);
    if (!annotating())
        return 1;
    const kscope__metric_def *def = kscope__metric_lookup(name);
    if (!def)
        return KSCOPE_EINVAL;
    if (reserved_metric(def->base))
        return kscope__fail(KSCOPE_ERESERVED, "metric name '%s' is reserved by kscope", name);
    uint32_t trace = atomic_load(&kscope__trace_mask);
    int rc;
    if (type == KSCOPE__T_STRING && (rc = check_text(name, def, trace)) != 0)
        return rc;
    kscope__thread *t = kscope__thread_get();
    if (!t)
        return KSCOPE_ENOMEM;
    /* Text is the host's: recorded now, even inside a graph capture. */
    int64_t kept = type == KSCOPE__T_STRING ? 0 : capture_metric(def, type, vals, n);
    if (kept != 0)
        return kept < 0 ? (int)kept : 0;
    /* Under a state, metrics land on the state's node below the scope, as
     * kernels do (Proton places them so). */
    kscope__node *node = gpu_ctx_node(t, t->stack[t->depth].node);
    uint32_t mask = atomic_load(&kscope__g.active_mask);
    int negative = type == KSCOPE__T_INT && *(const int64_t *)vals < 0;
    while (mask) {
        int s = __builtin_ctz(mask);
        mask &= mask - 1;
        rc = kscope__session_metric_type(&kscope__sessions[s], def, type, negative);
        if (rc)
            return rc;
        if (trace & (1u << s))
            trace_metric(t, s, def, type, vals, n);
        else if ((rc = kscope__node_metric(node, s, def, type, vals, n)) != 0)
            return rc;
    }
    return 0;
}

int kscope_metric_int(const char *name, int64_t value)
{
    DEFER_IDLE(metric_int, name, value);
    return add_metric(name, KSCOPE__T_INT, &value, 1);
}

int kscope_metric_double(const char *name, double value)
{
    DEFER_IDLE(metric_double, name, value);
    return add_metric(name, KSCOPE__T_DOUBLE, &value, 1);
}

int kscope_metric_int_vec(const char *name, const int64_t *values, size_t n)
{
    DEFER_IDLE(metric_int_vec, name, values, n);
    return add_metric(name, KSCOPE__T_INTVEC, values, n);
}

int kscope_metric_str(const char *name, const char *value)
{
    return add_metric(name, KSCOPE__T_STRING, value, 1);
}

int kscope_metric_double_vec(const char *name, const double *values, size_t n)
{
    DEFER_IDLE(metric_double_vec, name, values, n);
    for (size_t i = 0; values && i < n; i++)
        if (!isfinite(values[i]))
            return kscope__fail(KSCOPE_EINVAL, "metric '%s' holds a value that is not finite",
                                name ? name : "");
    return add_metric(name, KSCOPE__T_DOUBLEVEC, values, n);
}
