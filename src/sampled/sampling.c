/*
 * sampling.c - the sampled mode: GPU capture in windows, host scopes
 * always, for a profile cheap enough to leave on in production.
 *
 * A spec says when the windows are: "time:on=50ms,every=1s" (the first
 * 50 ms of each second) or "step:on=1,every=10" (one step in ten, steps
 * marked by kscope_step); ",first=" delays the first window. The process
 * has one schedule, set by its first sampled session. In a window the GPU
 * backend captures as usual; between windows its gate is shut (no launch
 * callback, no activity), so a launch costs what it costs without kscope.
 * Right after a window the gate is quiet for a while (a step, or the
 * window's length and at least 100 ms): launches are no longer followed,
 * but the kernels the window launched that the GPU has not run yet still
 * deliver their records.
 * A session that is not sampled keeps the gate open; sampled sessions
 * then keep only the records of the windows.
 *
 * The windows actually captured are kept ([open, close) on kscope's
 * clock: opened once the gate is open, closed before it shuts). Records
 * count when their launch fell in a window, the fraction sampled is the
 * session's time (or steps) in windows over all of it, and the tree gets
 * est_<metric> = <metric> / fraction on every GPU node.
 *
 * Locks: gate_lock serialises every switch (schedule changes and the
 * backend's gate, which may block on the backend); S.lock guards the
 * schedule and the windows and is never held across a call out, so the
 * buffer thread (kscope__sampling_in_window) never waits on the backend.
 * Order: session lock, then gate_lock, then S.lock.
 */
#define _GNU_SOURCE
#include "core/core.h"
#include "util/util.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { BY_TIME = 1, BY_STEP = 2 };

#define MS            1000000ull
#define MAX_DURATION  (1000000ull * 1000000000ull) /* 10^6 s */
#define MAX_STEPS     1000000000000ull
#define RETRY_NS      MS         /* a refused switch is tried again this soon */
#define TAIL_MIN_NS   (100 * MS) /* time windows: the GPU's lag behind the host */
#define SAMPLE_ENV    "KSCOPE_SAMPLE"
#define SPEC_TEXT_MAX 128

typedef struct spec {
    int kind;                  /* 0: not sampled, BY_TIME, BY_STEP */
    uint64_t on, every, first; /* ns (time) or steps */
} spec;

typedef struct window {
    uint64_t open, close; /* close: UINT64_MAX while open */
} window;

static struct {
    pthread_mutex_t lock; /* everything below */
    spec sp;
    char text[SPEC_TEXT_MAX];
    int users;  /* sampled sessions */
    int forced; /* sessions not sampled that capture GPU work */
    uint64_t t0, step;
    int want; /* the schedule says: capture */
    int gate; /* the backend's KSCOPE__GATE_* (a started backend's is open) */
    uint64_t quiet_since, quiet_step; /* when the gate went quiet */
    int retry;                        /* the last switch was refused */
    window *win;
    size_t nwin, capwin;
    int th_on, th_stop;
    pthread_t th;
    pthread_cond_t cond;
} S = {.lock = PTHREAD_MUTEX_INITIALIZER, .gate = KSCOPE__GATE_OPEN};

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int by_step; /* kscope_step has windows to switch */
static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

/* ---------------------------------------------------------------- parsing */

static int bad(const char *text, const char *fmt, const char *what)
{
    char why[256];
    snprintf(why, sizeof why, fmt, what);
    return kscope__fail(KSCOPE_EINVAL,
                        "sample '%.100s': %s (e.g. time:on=50ms,every=1s or step:on=1,every=10)",
                        text, why);
}

/* "50ms" -> ns. 0, or -1 when it is not a number with a unit. */
static int parse_duration(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || !isfinite(d) || d < 0)
        return -1;
    double unit = strcmp(end, "ns") == 0    ? 1
                  : strcmp(end, "us") == 0  ? 1e3
                  : strcmp(end, "ms") == 0  ? 1e6
                  : strcmp(end, "s") == 0   ? 1e9
                  : strcmp(end, "min") == 0 ? 60e9
                  : strcmp(end, "h") == 0   ? 3600e9
                                            : 0;
    if (unit == 0 || d * unit > (double)MAX_DURATION)
        return -1;
    *out = (uint64_t)(d * unit + 0.5); /* d >= 0: rounded, without libm */
    return 0;
}

static int parse_count(const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end || v[0] == '-' || n > MAX_STEPS)
        return -1;
    *out = n;
    return 0;
}

/* One "key=value" of a spec into sp; seen bits: 1 on, 2 every, 4 first. */
static int parse_item(const char *text, char *item, spec *sp, int *seen)
{
    static const char *const keys[] = {"on", "every", "first"};
    char *eq = strchr(item, '=');
    if (!eq)
        return bad(text, "'%s' is not key=value", item);
    *eq = '\0';
    int k = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(item, keys[i]) == 0)
            k = i;
    if (k < 0)
        return bad(text, "unknown key '%s' (keys: on, every, first)", item);
    if (*seen & (1 << k))
        return bad(text, "'%s' given twice", item);
    *seen |= 1 << k;
    uint64_t *dst = k == 0 ? &sp->on : k == 1 ? &sp->every : &sp->first;
    const char *v = eq + 1;
    if (sp->kind == BY_TIME && parse_duration(v, dst) != 0)
        return bad(text, "bad duration '%s' (a number and a unit: ns, us, ms, s, min, h)", v);
    if (sp->kind == BY_STEP && parse_count(v, dst) != 0)
        return bad(text, "bad step count '%s' (a whole number)", v);
    return 0;
}

/* Parse a spec; "", "off" and "none" give kind 0. 0 or KSCOPE_EINVAL. */
static int parse(const char *text, spec *sp)
{
    memset(sp, 0, sizeof *sp);
    if (!text || !*text || strcmp(text, "off") == 0 || strcmp(text, "none") == 0)
        return 0;
    char buf[SPEC_TEXT_MAX];
    if (strlen(text) >= sizeof buf)
        return bad(text, "%s", "longer than 127 characters");
    snprintf(buf, sizeof buf, "%s", text);
    char *body = strchr(buf, ':');
    if (body)
        *body++ = '\0';
    sp->kind = strcmp(buf, "time") == 0 ? BY_TIME : strcmp(buf, "step") == 0 ? BY_STEP : 0;
    if (!sp->kind || !body)
        return bad(text, "%s", "expected time:... or step:...");
    int seen = 0, rc = 0;
    for (char *save = NULL, *it = strtok_r(body, ",", &save); it && rc == 0;
         it = strtok_r(NULL, ",", &save))
        rc = parse_item(text, it, sp, &seen);
    if (rc)
        return rc;
    if ((seen & 3) != 3)
        return bad(text, "%s", "needs both on= and every=");
    uint64_t least = sp->kind == BY_TIME ? MS : 1;
    if (sp->on < least || sp->every < least)
        return bad(text, "%s",
                   sp->kind == BY_TIME ? "windows and periods must be at least 1ms"
                                       : "on and every must be at least 1");
    if (sp->on > sp->every)
        return bad(text, "%s", "on is longer than every");
    return 0;
}

int kscope__sampling_check(const char *text)
{
    spec sp;
    return parse(text, &sp);
}

static int same_spec(const spec *a, const spec *b)
{
    return a->kind == b->kind && a->on == b->on && a->every == b->every && a->first == b->first;
}

/* -------------------------------------------------------------- schedule */

/* Whether the schedule captures at time `now` (ns) or step `now`. */
static int wanted(const spec *sp, uint64_t t0, uint64_t now)
{
    if (now < t0 + sp->first)
        return 0;
    return (now - t0 - sp->first) % sp->every < sp->on;
}

/* The next time the time schedule changes its mind after now. */
static uint64_t next_change(const spec *sp, uint64_t t0, uint64_t now)
{
    uint64_t start = t0 + sp->first;
    if (now < start)
        return start;
    uint64_t base = now - (now - start) % sp->every;
    return now < base + sp->on ? base + sp->on : base + sp->every;
}

/* Open or close the last window to match `recording` at time t. S.lock. */
static void note_windows(int recording, uint64_t t)
{
    int is_open = S.nwin > 0 && S.win[S.nwin - 1].close == UINT64_MAX;
    if (!recording && is_open) {
        S.win[S.nwin - 1].close = t;
    } else if (recording && !is_open) {
        if (S.nwin == S.capwin && KSCOPE__ROOM(S.win, S.capwin, S.nwin + 1, 64) != 0) {
            kscope__warn_once("sample-oom", "out of memory noting a sampling window");
            return;
        }
        S.win[S.nwin++] = (window){t, UINT64_MAX};
    }
}

/* How long the work a time window launched gets to reach the GPU and
 * deliver its records after the window closes: the window's length, and
 * no less than TAIL_MIN_NS. */
static uint64_t tail_ns(const spec *sp)
{
    return sp->on > TAIL_MIN_NS ? sp->on : TAIL_MIN_NS;
}

/* Whether the quiet tail after a window is over: a step later (steps),
 * or tail_ns after the close (time). S.lock held. */
static int tail_over(uint64_t now)
{
    if (S.sp.kind == BY_STEP)
        return S.step > S.quiet_step;
    return now >= S.quiet_since + tail_ns(&S.sp);
}

/* The gate state the schedule asks for now: open in a window (or with no
 * sampled session, or one that is not sampled), quiet just after a window
 * (the GPU still runs what it launched: a training loop's host is ahead
 * of its GPU by most of a step), shut after that. S.lock held. */
static int target_state(uint64_t now)
{
    if (S.users == 0 || S.want || S.forced)
        return KSCOPE__GATE_OPEN;
    int window_open = S.nwin > 0 && S.win[S.nwin - 1].close == UINT64_MAX;
    if (S.gate == KSCOPE__GATE_OPEN && window_open)
        return KSCOPE__GATE_QUIET;
    if (S.gate == KSCOPE__GATE_QUIET && !tail_over(now))
        return KSCOPE__GATE_QUIET;
    return KSCOPE__GATE_SHUT;
}

/* Bring the backend's gate and the windows in line with the schedule.
 * gate_lock held, S.lock not: the gate may block on the backend. Returns
 * whether the schedule's GPU capture is on. */
static int sync_gate(void)
{
    pthread_mutex_lock(&S.lock);
    int cur = S.gate, target = target_state(kscope_now_ns());
    pthread_mutex_unlock(&S.lock);
    int rc = target != cur ? kscope__gpu_gate(target) : 0;
    /* A window closes once the gate has moved: a launch that got through
     * while it moved is inside, whenever its record is delivered. */
    uint64_t now = kscope_now_ns();
    pthread_mutex_lock(&S.lock);
    if (rc == 0 && target != cur) {
        S.gate = target;
        S.quiet_since = now;
        S.quiet_step = S.step;
    }
    S.retry = rc != 0;
    int recording = S.users > 0 && S.want && S.gate == KSCOPE__GATE_OPEN;
    note_windows(recording, now);
    pthread_mutex_unlock(&S.lock);
    return recording;
}

/* ------------------------------------------------------------ time thread */

static void init_cond(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&S.cond, &a);
    pthread_condattr_destroy(&a);
}

/* Wait on S.cond until `ns` from now or a stop. S.lock held. */
static void wait_for(uint64_t ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t = (uint64_t)ts.tv_nsec + ns;
    ts.tv_sec += (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    while (!S.th_stop && pthread_cond_timedwait(&S.cond, &S.lock, &ts) == EINTR)
        ;
}

/* Switch at each window's edges (time specs). */
static void *time_main(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&gate_lock);
        uint64_t now = kscope_now_ns();
        pthread_mutex_lock(&S.lock);
        int stop = S.th_stop;
        S.want = wanted(&S.sp, S.t0, now);
        pthread_mutex_unlock(&S.lock);
        if (!stop)
            sync_gate();
        pthread_mutex_unlock(&gate_lock);
        if (stop)
            return NULL;
        pthread_mutex_lock(&S.lock);
        now = kscope_now_ns();
        uint64_t next = S.retry ? now + RETRY_NS : next_change(&S.sp, S.t0, now);
        if (S.gate == KSCOPE__GATE_QUIET && S.quiet_since + tail_ns(&S.sp) < next)
            next = S.quiet_since + tail_ns(&S.sp);
        wait_for(next > now ? next - now : 0);
        pthread_mutex_unlock(&S.lock);
    }
}

/* Start the time thread with every signal blocked (signals are the
 * program's). gate_lock held. */
static int start_thread(void)
{
    pthread_once(&cond_once, init_cond);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    S.th_stop = 0;
    int rc = pthread_create(&S.th, NULL, time_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return kscope__fail(KSCOPE_ENOMEM, "cannot start the sampling thread: %s", strerror(rc));
    S.th_on = 1;
    return 0;
}

static void stop_thread(void)
{
    pthread_mutex_lock(&S.lock);
    int on = S.th_on;
    S.th_stop = 1;
    S.th_on = 0;
    if (on)
        pthread_cond_signal(&S.cond);
    pthread_mutex_unlock(&S.lock);
    if (on)
        pthread_join(S.th, NULL);
}

/* A child forked without exec has no time thread and no GPU capture. */
static void after_fork_child(void)
{
    pthread_mutex_init(&S.lock, NULL);
    pthread_mutex_init(&gate_lock, NULL);
    S.th_on = 0;
    S.nwin = 0;
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void register_fork(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* -------------------------------------------------------------- sessions */

int kscope__sampling_resolve(const char *asked, const char **out)
{
    const char *text = asked;
    const char *from = "";
    if (!text) {
        text = getenv(SAMPLE_ENV);
        from = SAMPLE_ENV "=";
    }
    spec sp;
    int rc = parse(text, &sp);
    if (rc) {
        if (*from) { /* name the variable the text came from */
            char msg[512];
            snprintf(msg, sizeof msg, "%s", kscope_last_error());
            kscope__fail(rc, "%s%s", from, msg);
        }
        return rc;
    }
    *out = sp.kind ? text : NULL;
    if (!sp.kind)
        return 0;
    pthread_mutex_lock(&S.lock);
    int clash = S.users > 0 && !same_spec(&S.sp, &sp);
    char running[SPEC_TEXT_MAX];
    snprintf(running, sizeof running, "%s", S.text);
    pthread_mutex_unlock(&S.lock);
    if (clash)
        return kscope__fail(KSCOPE_EINVAL,
                            "sample '%s': another session samples by '%s' (one schedule "
                            "per process)",
                            text, running);
    return 0;
}

/* Count the sessions that are not sampled and capture GPU work, leaving
 * out `gone` (being released). Session lock held. */
static void recount_forced(const kscope__session *gone)
{
    int n = 0;
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        const kscope__session *s = &kscope__sessions[i];
        n += s != gone && s->in_use && s->gpu && !s->sampled;
    }
    pthread_mutex_lock(&S.lock);
    S.forced = n;
    pthread_mutex_unlock(&S.lock);
}

/* Mark s sampled (or not); its fraction counts from `since` (ns). */
static void set_sampled(kscope__session *s, int on, int recording, uint64_t since)
{
    pthread_mutex_lock(&s->lock);
    s->sampled = on;
    s->since_ns = since;
    __atomic_store_n(&s->steps, on ? 1 : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sampled_steps, on && recording ? 1 : 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&s->lock);
}

/* The first sampled session sets the schedule. gate_lock held. */
static int first_user(const spec *sp, const char *text)
{
    pthread_mutex_lock(&S.lock);
    S.sp = *sp;
    snprintf(S.text, sizeof S.text, "%s", text);
    S.t0 = kscope_now_ns();
    S.step = 0;
    S.want = wanted(sp, 0, 0); /* time 0 or step 0 of the schedule */
    S.nwin = 0;
    pthread_mutex_unlock(&S.lock);
    if (sp->kind == BY_STEP)
        atomic_store(&by_step, 1);
    return sp->kind == BY_TIME ? start_thread() : 0;
}

int kscope__sampling_attach(kscope__session *s, const char *text)
{
    pthread_once(&fork_once, register_fork);
    spec sp;
    if (parse(text, &sp) != 0 || !sp.kind) {
        set_sampled(s, 0, 0, 0);
        recount_forced(NULL); /* it may keep the gate open */
        pthread_mutex_lock(&gate_lock);
        sync_gate();
        pthread_mutex_unlock(&gate_lock);
        return 0;
    }
    pthread_mutex_lock(&gate_lock);
    pthread_mutex_lock(&S.lock);
    int first = S.users++ == 0;
    pthread_mutex_unlock(&S.lock);
    int rc = first ? first_user(&sp, text) : 0;
    if (rc != 0) {
        pthread_mutex_lock(&S.lock);
        S.users--;
        pthread_mutex_unlock(&S.lock);
        pthread_mutex_unlock(&gate_lock);
        return rc;
    }
    set_sampled(s, 1, 0, s->start_ns);
    recount_forced(NULL); /* s no longer holds the gate open */
    int recording = sync_gate();
    pthread_mutex_unlock(&gate_lock);
    set_sampled(s, 1, recording, s->start_ns);
    return 0;
}

void kscope__sampling_detach(kscope__session *s)
{
    int was = s->sampled;
    recount_forced(s);
    if (was) {
        pthread_mutex_lock(&S.lock);
        int last = --S.users == 0;
        pthread_mutex_unlock(&S.lock);
        if (last) {
            atomic_store(&by_step, 0);
            stop_thread();
        }
    }
    pthread_mutex_lock(&gate_lock);
    sync_gate(); /* the last sampled session leaves the gate open */
    pthread_mutex_unlock(&gate_lock);
    set_sampled(s, 0, 0, 0);
}

void kscope__sampling_backend_started(void)
{
    recount_forced(NULL);
    pthread_mutex_lock(&gate_lock);
    pthread_mutex_lock(&S.lock);
    S.gate = KSCOPE__GATE_OPEN;
    pthread_mutex_unlock(&S.lock);
    sync_gate();
    pthread_mutex_unlock(&gate_lock);
}

void kscope__sampling_phase(kscope__session *s)
{
    if (!s->sampled)
        return;
    pthread_mutex_lock(&S.lock);
    int recording = S.users > 0 && S.want && S.gate == KSCOPE__GATE_OPEN;
    pthread_mutex_unlock(&S.lock);
    set_sampled(s, 1, recording, kscope_now_ns());
}

/* -------------------------------------------------------------- steps */

/* Count a step begun in every active sampled session. */
static void count_step(int recording)
{
    pthread_mutex_lock(&kscope__session_lock);
    for (int i = 0; i < KSCOPE_MAX_SESSIONS; i++) {
        kscope__session *s = &kscope__sessions[i];
        if (!s->in_use || !s->sampled || !s->active)
            continue;
        __atomic_fetch_add(&s->steps, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s->sampled_steps, recording ? 1 : 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&kscope__session_lock);
}

int kscope_step(void)
{
    if (!atomic_load_explicit(&by_step, memory_order_relaxed)) {
        KSCOPE__DEFER(step); /* a copy that defers never samples by step */
        return 0;
    }
    pthread_mutex_lock(&gate_lock);
    pthread_mutex_lock(&S.lock);
    int live = S.users > 0 && S.sp.kind == BY_STEP;
    if (live) {
        S.step++;
        S.want = wanted(&S.sp, 0, S.step);
    }
    pthread_mutex_unlock(&S.lock);
    int recording = live ? sync_gate() : 0;
    pthread_mutex_unlock(&gate_lock);
    if (live)
        count_step(recording);
    return 0;
}

/* ------------------------------------------------------------ records */

int kscope__sampling_in_window(uint64_t ns)
{
    pthread_mutex_lock(&S.lock);
    size_t lo = 0, hi = S.nwin; /* first window opening after ns */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (S.win[mid].open <= ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    int in = lo > 0 && ns < S.win[lo - 1].close;
    pthread_mutex_unlock(&S.lock);
    return in;
}

void kscope__sampling_windows(uint64_t t0, uint64_t t1,
                              void (*fn)(uint64_t open, uint64_t close, void *arg), void *arg)
{
    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.nwin; i++)
        if (S.win[i].open <= t1 && S.win[i].close > t0)
            fn(S.win[i].open, S.win[i].close, arg);
    pthread_mutex_unlock(&S.lock);
}

/* ----------------------------------------------------------------- output */

/* The session's time (ns) since `from` in its active intervals, and the
 * part of it in windows; windows counts those it overlaps. s->lock and
 * S.lock held. */
static void time_in_windows(const kscope__session *s, uint64_t from, uint64_t now, double *total,
                            double *inside, int64_t *windows)
{
    *total = *inside = 0;
    *windows = 0;
    size_t w = 0;
    size_t last_counted = SIZE_MAX;
    for (size_t i = 0; i < s->niv; i++) {
        uint64_t a = s->iv[i].start_ns > from ? s->iv[i].start_ns : from;
        uint64_t b = s->iv[i].end_ns < now ? s->iv[i].end_ns : now;
        if (b <= a)
            continue;
        *total += (double)(b - a);
        while (w < S.nwin && (S.win[w].close < now ? S.win[w].close : now) <= a)
            w++;
        for (size_t k = w; k < S.nwin && S.win[k].open < b; k++) {
            uint64_t o = S.win[k].open > a ? S.win[k].open : a;
            uint64_t c = S.win[k].close < b ? S.win[k].close : b;
            if (c > o) {
                *inside += (double)(c - o);
                *windows += k != last_counted;
                last_counted = k;
            }
        }
    }
}

/* est_<key> = value * scale for the numbers of a GPU node (not the
 * per-call extremes min_/max_). */
static int estimate_node(kscope__ptree *t, kscope__pnode *n, double scale)
{
    uint32_t count = n->nmetrics;
    for (uint32_t i = 0; i < count; i++) {
        const kscope__pmetric *m = &n->metrics[i]; /* re-read: adding may move them */
        if ((m->type != KSCOPE__V_INT && m->type != KSCOPE__V_DOUBLE) ||
            strncmp(m->key, "min_", 4) == 0 || strncmp(m->key, "max_", 4) == 0 ||
            strncmp(m->key, "est_", 4) == 0)
            continue;
        char key[256];
        snprintf(key, sizeof key, "est_%s", m->key);
        double v = kscope__pmetric_number(m) * scale;
        int rc = kscope__ptree_is_inclusive(t, m->key) ? kscope__ptree_add_inclusive(t, key) : 0;
        rc = rc ? rc : kscope__pnode_set_double(t, n, key, v);
        if (rc)
            return rc;
    }
    return 0;
}

/* Estimates on every GPU node (those that name their device type). */
static int estimate_tree(kscope__ptree *t, double scale)
{
    const char *devkey = kscope__ptree_intern_cstr(t, "device_type");
    size_t cap = 256, n = 0;
    kscope__pnode **stack = malloc(cap * sizeof *stack);
    if (!stack || !devkey) {
        free(stack);
        return KSCOPE_ENOMEM;
    }
    stack[n++] = t->root;
    int rc = 0;
    while (n > 0 && rc == 0) {
        kscope__pnode *p = stack[--n];
        if (p != t->root && kscope__pnode_metric(p, devkey))
            rc = estimate_node(t, p, scale);
        if (n + p->nchildren > cap) {
            while (n + p->nchildren > cap)
                cap *= 2;
            kscope__pnode **s2 = realloc(stack, cap * sizeof *s2);
            if (!s2) {
                rc = KSCOPE_ENOMEM;
                break;
            }
            stack = s2;
        }
        for (uint32_t i = 0; i < p->nchildren; i++)
            stack[n++] = p->children[i];
    }
    free(stack);
    return rc;
}

int kscope__sampling_tree(kscope__session *s, kscope__ptree *t, uint64_t now_ns)
{
    pthread_mutex_lock(&s->lock);
    if (!s->sampled || !s->gpu) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    pthread_mutex_lock(&S.lock);
    int by_steps = S.sp.kind == BY_STEP;
    double total, inside;
    int64_t windows;
    time_in_windows(s, s->since_ns, now_ns, &total, &inside, &windows);
    pthread_mutex_unlock(&S.lock);
    pthread_mutex_unlock(&s->lock);
    uint64_t steps = __atomic_load_n(&s->steps, __ATOMIC_RELAXED);
    uint64_t sampled = __atomic_load_n(&s->sampled_steps, __ATOMIC_RELAXED);
    double fraction =
        by_steps ? (steps ? (double)sampled / (double)steps : 0) : (total > 0 ? inside / total : 0);
    int rc = kscope__pnode_set_double(t, t->root, "sampled_fraction", fraction);
    rc = rc ? rc : kscope__pnode_set_int(t, t->root, "sample_windows", windows);
    if (rc == 0 && by_steps) {
        rc = kscope__pnode_set_int(t, t->root, "steps", (int64_t)steps);
        rc = rc ? rc : kscope__pnode_set_int(t, t->root, "sampled_steps", (int64_t)sampled);
    }
    if (rc == 0 && fraction > 0)
        rc = estimate_tree(t, 1.0 / fraction);
    return rc;
}
