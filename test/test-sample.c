/*
 * test-sample.c - the sampled mode through stand-in GPU backends: one
 * with a gate (capture really switches off: a launch it does not see
 * delivers nothing, as CUPTI with callbacks and activity disabled), one
 * without (the core keeps only the windows' records). Windows open and
 * close at the right steps and times, nothing is recorded between them,
 * the tree says what fraction it sampled, and its est_ metrics are the
 * measured ones divided by that fraction, exactly.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "read/read.h"
#include "support/readutil.h"

/* ------------------------------------------------------- the stand-ins */

/* The gated stand-in's capture of new launches (the time thread sets it),
 * and whether it is quiet (work launched before still delivers). */
static _Atomic int gate_state = 1, gate_quiet;
static _Atomic int gate_calls, refuse;
static int syncs;

static int gated_start(void)
{
    gate_state = 1;
    return 0;
}

static void nothing(void) {}

static void gated_flush(void)
{
    syncs++;
}

/* Serialises the gate's moves with a launch's look at it (launch_at), so
 * that whether a launch got through is decided, not raced. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;

static int gated_gate(int open)
{
    gate_calls++;
    if (refuse) /* a stream captures a CUDA graph */
        return KSCOPE_EBUSY;
    pthread_mutex_lock(&gate_mu);
    gate_state = open == KSCOPE__GATE_OPEN;
    gate_quiet = open == KSCOPE__GATE_QUIET;
    pthread_mutex_unlock(&gate_mu);
    return 0;
}

static const kscope__backend gated = {
    .name = "gated",
    .label = "Gated",
    .device_type = "STANDIN",
    .needs = "nothing",
    .start = gated_start,
    .stop = nothing,
    .flush = gated_flush,
    .gate = gated_gate,
};

static const kscope__backend plain = {
    .name = "plain",
    .label = "Plain",
    .device_type = "STANDIN",
    .needs = "nothing",
    .start = gated_start,
    .stop = nothing,
    .flush = nothing,
};

#define NAME "/tmp/kscope-test-sample"

/* One kernel launched now from the calling thread's context, delivered as
 * the backend's buffer thread would; `always`: also with the gate shut (a
 * backend that cannot switch). Returns whether it was delivered. */
static int launch(int always, uint64_t *when)
{
    uint64_t now = kscope_now_ns();
    if (when)
        *when = now;
    if (!always && !gate_state)
        return 0;
    kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = "k"};
    r.launch_ns = now;
    r.launch_end_ns = now + 10;
    r.start_ns = now + 100;
    r.end_ns = now + 1100; /* 1000 ns each */
    kscope__record_gpu(kscope__current_ctx(), &r);
    return 1;
}

/* A record of a kernel launched at `when` that the GPU runs now: the
 * stand-in delivers it while its activity is on (open or quiet), as CUPTI
 * does. Returns whether it was delivered. */
static int ran_now(uint64_t when)
{
    if (!gate_state && !gate_quiet)
        return 0;
    kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = "late"};
    r.launch_ns = when;
    r.launch_end_ns = when + 10;
    r.start_ns = kscope_now_ns();
    r.end_ns = r.start_ns + 1000;
    kscope__record_gpu(kscope__current_ctx(), &r);
    return 1;
}

static int start_sampled(const char *backend, const char *sample, const char *data)
{
    kscope_session_opts o = {.name = NAME, .backend = backend, .sample = sample, .data = data};
    return kscope_start(&o);
}

/* Every est_ metric of a GPU node is its measured one over the fraction. */
static void assert_estimates(kscope__ptree *t, kscope__pnode *k, double fraction)
{
    static const char *const keys[] = {"count", "time (ns)"};
    for (int i = 0; i < 2; i++) {
        char est[64];
        snprintf(est, sizeof est, "est_%s", keys[i]);
        assert_close(metric(k, est), metric(k, keys[i]) / fraction);
        assert_true(kscope__ptree_is_inclusive(t, kscope__ptree_intern_cstr(t, est)));
    }
    assert_true(isnan(metric(k, "est_min_time (ns)")));
    assert_true(isnan(metric(k, "est_max_time (ns)")));
}

/* ------------------------------------------------------------- parsing */

static void test_specs_are_checked(void **state)
{
    (void)state;
    static const char *const good[] = {"time:on=50ms,every=1s",
                                       "time:every=2.5s,on=100ms,first=10s",
                                       "time:on=1min,every=1h",
                                       "step:on=1,every=10",
                                       "step:on=3,every=3,first=0",
                                       "off",
                                       "",
                                       NULL};
    for (const char *const *g = good; *g; g++)
        assert_int_equal(kscope__sampling_check(*g), 0);
    static const struct {
        const char *spec, *says;
    } bad[] = {
        {"sometimes", "expected time:... or step:..."},
        {"time", "expected time:... or step:..."},
        {"time:on=50,every=1s", "bad duration '50'"},
        {"time:on=50ms", "needs both on= and every="},
        {"time:on=2s,every=1s", "on is longer than every"},
        {"time:on=100us,every=1s", "at least 1ms"},
        {"time:on=1ms,every=1s,on=2ms", "'on' given twice"},
        {"time:on=1ms,every=1s,often=3", "unknown key 'often'"},
        {"time:on=1ms,every", "'every' is not key=value"},
        {"step:on=1.5,every=10", "bad step count '1.5'"},
        {"step:on=0,every=10", "at least 1"},
        {"step:on=-1,every=10", "bad step count '-1'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(kscope__sampling_check(bad[i].spec), KSCOPE_EINVAL);
        if (!strstr(kscope_last_error(), bad[i].says) || !strstr(kscope_last_error(), "sample '"))
            fail_msg("%s: %s", bad[i].spec, kscope_last_error());
    }
    /* the session start refuses it with the same message */
    assert_int_equal(start_sampled("gated", "step:on=0,every=1", NULL), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "at least 1"));
    /* and names the variable it came from */
    setenv("KSCOPE_SAMPLE", "time:on=1d,every=2d", 1);
    assert_int_equal(start_sampled("gated", NULL, NULL), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "KSCOPE_SAMPLE=sample 'time:on=1d"));
    unsetenv("KSCOPE_SAMPLE");
}

/* ----------------------------------------------------------- steps */

/* step:on=2,every=5,first=1: steps 1, 2, 6, 7, 11 are captured. */
static void test_step_windows(void **state)
{
    (void)state;
    gate_calls = 0;
    int s = start_sampled("gated", "step:on=2,every=5,first=1", NULL);
    assert_true(s >= 0);
    assert_int_equal(gate_state, 0); /* step 0 is outside */
    assert_int_equal(kscope_enter("train"), 0);
    static const int want[12] = {0, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 1};
    int delivered = 0;
    for (int step = 0; step < 12; step++) {
        if (step > 0)
            assert_int_equal(kscope_step(), 0);
        if (gate_state != want[step])
            fail_msg("step %d: capture %s", step, gate_state ? "on" : "off");
        for (int i = 0; i < 3; i++)
            delivered += launch(0, NULL);
    }
    assert_int_equal(kscope_exit("train"), 0);
    assert_int_equal(delivered, 15);
    /* off at 0, on at 1, quiet at 3, off 4, on 6, quiet 8, off 9, on 11 */
    assert_int_equal(gate_calls, 8);
    kscope__ptree *t = session_read_ok(s);
    assert_close(metric(t->root, "sampled_fraction"), 5.0 / 12.0);
    assert_close(metric(t->root, "steps"), 12);
    assert_close(metric(t->root, "sampled_steps"), 5);
    assert_close(metric(t->root, "sample_windows"), 3);
    kscope__pnode *k = PATH(t, "train", "k");
    assert_close(metric(k, "count"), 15);
    assert_close(metric(k, "time (ns)"), 15000);
    assert_estimates(t, k, 5.0 / 12.0);
    assert_close(metric(k, "est_count"), 36);
    /* host scopes stay on: the scope is there whatever the windows */
    assert_close(metric(PATH(t, "train"), "calls"), 1);
    for (uint32_t i = 0; i < t->root->nmetrics; i++)
        assert_int_not_equal(t->root->metrics[i].type, KSCOPE__V_STRING);
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(gate_state, 1);    /* left as a start leaves it */
    assert_int_equal(kscope_step(), 0); /* nothing samples: a no-op */
    unlink(NAME ".hatchet");
}

/* No switch while a stream captures a CUDA graph: the window waits for
 * the next step, and the step it missed is not counted as sampled. */
static void test_no_switch_while_capturing(void **state)
{
    (void)state;
    int s = start_sampled("gated", "step:on=1,every=2", NULL);
    assert_true(s >= 0);
    assert_int_equal(gate_state, 1); /* step 0 */
    assert_int_equal(launch(0, NULL), 1);
    refuse = 1;
    assert_int_equal(kscope_step(), 0); /* step 1 would close: refused */
    assert_int_equal(gate_state, 1);
    assert_int_equal(launch(0, NULL), 1); /* delivered (still on), outside the schedule */
    refuse = 0;
    assert_int_equal(kscope_step(), 0); /* step 2: on anyway */
    assert_int_equal(launch(0, NULL), 1);
    refuse = 1;
    assert_int_equal(kscope_step(), 0); /* step 3: stays on */
    refuse = 0;
    assert_int_equal(kscope_step(), 0); /* step 4 on */
    assert_int_equal(kscope_step(), 0); /* step 5 off */
    assert_int_equal(gate_state, 0);
    assert_int_equal(launch(0, NULL), 0);
    refuse = 1;
    assert_int_equal(kscope_step(), 0); /* step 6 would open: refused */
    assert_int_equal(gate_state, 0);
    assert_int_equal(launch(0, NULL), 0);
    refuse = 0;
    kscope__ptree *t = session_read_ok(s);
    /* steps 0-6: the schedule's 0, 2 and 4 were captured (6 could not
     * open); what step 1 delivered while the gate could not shut is not
     * in a window, so not kept */
    assert_close(metric(t->root, "steps"), 7);
    assert_close(metric(t->root, "sampled_steps"), 3);
    kscope__pnode *k = PATH(t, "k");
    assert_close(metric(k, "count"), 2);
    assert_estimates(t, k, 3.0 / 7.0);
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".hatchet");
}

/* A window's kernels that the GPU runs after the window closed (the host
 * runs ahead of the GPU) keep their records: the gate is quiet for a step
 * (no new launch followed, activity on), then shuts. */
static void test_window_work_after_close(void **state)
{
    (void)state;
    int s = start_sampled("gated", "step:on=1,every=3", NULL);
    assert_true(s >= 0);
    uint64_t queued;
    assert_int_equal(launch(1, &queued), 1); /* step 0: launched, not run yet */
    assert_int_equal(kscope_step(), 0);      /* step 1: the window closes */
    assert_int_equal(gate_state, 0);
    assert_int_equal(gate_quiet, 1);
    assert_int_equal(launch(0, NULL), 0); /* not followed */
    assert_int_equal(ran_now(queued), 1); /* the window's kernel runs now */
    uint64_t queued_late;
    launch(1, &queued_late);
    assert_int_equal(kscope_step(), 0); /* step 2: shut */
    assert_int_equal(gate_quiet, 0);
    assert_int_equal(ran_now(queued), 0);
    kscope__ptree *t = session_read_ok(s);
    assert_close(metric(PATH(t, "late"), "count"), 1);
    assert_close(metric(PATH(t, "k"), "count"), 1); /* the step-0 launch; not step 1's */
    assert_close(metric(t->root, "sampled_steps"), 1);
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".hatchet");
}

/* A session that is not sampled keeps capture on; the sampled one still
 * keeps only its windows. */
static void test_full_session_keeps_the_gate_open(void **state)
{
    (void)state;
    int a = start_sampled("gated", "step:on=1,every=3", NULL);
    assert_true(a >= 0);
    assert_int_equal(kscope_step(), 0); /* step 1: off */
    assert_int_equal(gate_state, 0);
    kscope_session_opts o = {.name = NAME "-full", .backend = "gated", .sample = "off"};
    int b = kscope_start(&o);
    assert_true(b >= 0);
    assert_int_equal(gate_state, 1);
    assert_int_equal(launch(0, NULL), 1); /* step 1: b only */
    assert_int_equal(kscope_step(), 0);   /* step 2: off in a */
    assert_int_equal(gate_state, 1);
    assert_int_equal(launch(0, NULL), 1);
    assert_int_equal(kscope_step(), 0); /* step 3: on in a */
    assert_int_equal(launch(0, NULL), 1);
    kscope__ptree *ta = session_read_ok(a), *tb = session_read_ok(b);
    assert_close(metric(PATH(ta, "k"), "count"), 1);
    assert_close(metric(PATH(tb, "k"), "count"), 3);
    assert_true(isnan(metric(tb->root, "sampled_fraction")));
    assert_true(isnan(metric(PATH(tb, "k"), "est_count")));
    kscope__ptree_free(ta);
    kscope__ptree_free(tb);
    assert_int_equal(kscope_finalize(b, NULL), 0);
    assert_int_equal(kscope_step(), 0); /* step 4: off, and nothing holds it open */
    assert_int_equal(gate_state, 0);
    assert_int_equal(kscope_finalize(a, NULL), 0);
    unlink(NAME ".hatchet");
    unlink(NAME "-full.hatchet");
}

static void test_one_schedule_per_process(void **state)
{
    (void)state;
    int a = start_sampled("gated", "step:on=1,every=3", NULL);
    assert_true(a >= 0);
    int b = start_sampled("gated", "step:on=1,every=4", NULL);
    assert_int_equal(b, KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "another session samples by 'step:on=1,every=3'"));
    b = start_sampled("gated", "step:every=3,on=1", NULL); /* the same schedule */
    assert_true(b >= 0);
    assert_int_equal(kscope_finalize(KSCOPE_ALL, NULL), 0);
    unlink(NAME ".hatchet");
}

/* A backend that cannot switch: the core keeps the windows' records only. */
static void test_backend_without_gate(void **state)
{
    (void)state;
    int s = start_sampled("plain", "step:on=1,every=2", NULL);
    assert_true(s >= 0);
    for (int step = 0; step < 6; step++) {
        if (step)
            kscope_step();
        for (int i = 0; i <= step; i++)
            launch(1, NULL); /* delivered whatever the windows */
    }
    kscope__ptree *t = session_read_ok(s);
    kscope__pnode *k = PATH(t, "k");
    assert_close(metric(k, "count"), 1 + 3 + 5); /* steps 0, 2, 4 */
    assert_close(metric(t->root, "sampled_fraction"), 0.5);
    assert_estimates(t, k, 0.5);
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".hatchet");
}

/* A figure at ROOT as readers see it: a 0 there reads as "rolls up". */
static double root(kscope__ptree *t, const char *key)
{
    double v = metric(t->root, key);
    if (isnan(v) && kscope__ptree_is_inclusive(t, kscope__ptree_intern_cstr(t, key)))
        return 0;
    return v;
}

static kscope__ptree *read_part(int n)
{
    char path[128];
    snprintf(path, sizeof path, NAME ".part_%d.hatchet", n);
    kscope__ptree *t = read_path_ok(path);
    unlink(path);
    return t;
}

/* Periodic flushing: each part says what fraction of its own steps it
 * sampled. */
static void test_periodic_parts(void **state)
{
    (void)state;
    kscope_session_opts o = {.name = NAME,
                             .backend = "gated",
                             .sample = "step:on=1,every=2",
                             .mode = "periodic_flushing"};
    int s = kscope_start(&o);
    assert_true(s >= 0);
    for (int step = 0; step < 4; step++) { /* 0..3: 0 and 2 sampled */
        if (step)
            kscope_step();
        launch(0, NULL);
    }
    assert_int_equal(kscope_deactivate(s, 1), 0); /* part 0 */
    kscope_step();                                /* 4: not counted, the session is paused */
    assert_int_equal(kscope_activate(s), 0);
    launch(0, NULL);
    kscope_step(); /* 5 */
    launch(0, NULL);
    assert_int_equal(kscope_finalize(s, NULL), 0); /* part 1 */
    kscope__ptree *t = read_part(0);
    assert_close(metric(t->root, "steps"), 4);
    assert_close(metric(t->root, "sampled_steps"), 2);
    assert_close(metric(PATH(t, "k"), "count"), 2);
    kscope__ptree_free(t);
    t = read_part(1); /* step 3 (where the part began), 5: none sampled */
    assert_close(root(t, "steps"), 2);
    assert_close(root(t, "sampled_steps"), 0);
    assert_close(root(t, "sampled_fraction"), 0);
    char note[256];
    assert_int_equal(kscope__sampled_note(t, note, sizeof note), 1);
    assert_non_null(strstr(note, "recorded in 0 of 2 steps (0.00%)"));
    kscope__ptree_free(t);
}

/* -------------------------------------------------------------- time */

typedef struct win_list {
    uint64_t open[4096], close[4096];
    int n;
} win_list;

static void note_window(uint64_t open, uint64_t close, void *arg)
{
    win_list *w = arg;
    if (w->n < 4096) {
        w->open[w->n] = open;
        w->close[w->n++] = close;
    }
}

static int in_windows(const win_list *w, uint64_t t)
{
    for (int i = 0; i < w->n; i++)
        if (t >= w->open[i] && t < w->close[i])
            return 1;
    return 0;
}

#define TIME_LAUNCHES 500   /* at least: over several windows */
#define MAX_LAUNCHES  20000 /* at most, on a machine too busy to open two */

/* One launch of a kernel named k<i> (so the tree says which were kept),
 * with when it was launched, whether the gate let it through, and whether
 * its time was in a window the core had noted before it was recorded. */
typedef struct time_launch {
    uint64_t when;
    int seen, noted_before;
} time_launch;

static void launch_at(int i, time_launch *l)
{
    char name[16];
    snprintf(name, sizeof name, "k%d", i);
    pthread_mutex_lock(&gate_mu);
    l->when = kscope_now_ns();
    l->seen = gate_state;
    pthread_mutex_unlock(&gate_mu);
    l->noted_before = kscope__sampling_in_window(l->when);
    if (!l->seen)
        return;
    kscope__gpu_record r = {.kind = KSCOPE__GPU_KERNEL, .name = name};
    r.launch_ns = l->when;
    r.launch_end_ns = l->when + 10;
    r.start_ns = l->when + 100;
    r.end_ns = l->when + 1100;
    kscope__record_gpu(kscope__current_ctx(), &r);
}

/* The session's time in its intervals since `since`, the part of it in
 * the windows, and how many windows it meets, as the fraction is defined
 * (sampling.c): what the tree must say, computed from the same edges. */
static void share_of_windows(const kscope__session *s, const win_list *w, double *total,
                             double *inside, int *met)
{
    *total = *inside = 0;
    *met = 0;
    for (size_t i = 0; i < s->niv; i++) {
        uint64_t a = s->iv[i].start_ns > s->since_ns ? s->iv[i].start_ns : s->since_ns;
        uint64_t b = s->iv[i].end_ns;
        assert_true(b != UINT64_MAX); /* deactivated: every interval closed */
        if (b <= a)
            continue;
        *total += (double)(b - a);
        for (int k = 0; k < w->n; k++) {
            uint64_t o = w->open[k] > a ? w->open[k] : a;
            uint64_t c = w->close[k] < b ? w->close[k] : b;
            if (c > o) {
                *inside += (double)(c - o);
                (*met)++;
            }
        }
    }
}

/* time:on=20ms,every=60ms: what the core decides, checked against the
 * edges it recorded, never against how long anything took (a loaded
 * machine moves the edges, not the rules): a kernel is kept only if the
 * gate let its launch through and its time lies in a noted window; one
 * that got through into a window noted before it was recorded is kept; the
 * fraction and the window count are the windows' share of the session's
 * time, to the nanosecond. */
static void test_time_windows(void **state)
{
    (void)state;
    static time_launch l[MAX_LAUNCHES];
    int s = start_sampled("gated", "time:on=20ms,every=60ms", NULL);
    assert_true(s >= 0);
    win_list w = {.n = 0};
    /* launches until two windows were noted and one took a launch: what
     * the schedule does, however slowly this machine lets it */
    int n = 0, let_in = 0;
    for (; n < MAX_LAUNCHES; n++) {
        if (n >= TIME_LAUNCHES && let_in > 0) {
            w.n = 0;
            kscope__sampling_windows(0, UINT64_MAX, note_window, &w);
            if (w.n >= 2)
                break;
        }
        launch_at(n, &l[n]);
        let_in += l[n].seen && l[n].noted_before;
        usleep(600);
    }
    assert_int_equal(kscope_deactivate(s, 0), 0); /* the session's time ends here */
    kscope__ptree *t = session_read_ok(s);
    w.n = 0;
    kscope__sampling_windows(0, UINT64_MAX, note_window, &w);
    assert_true(w.n >= 2 && let_in >= 1);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        kscope__pnode *k = NULL;
        for (uint32_t c = 0; c < t->root->nchildren && !k; c++)
            if (strcmp(t->root->children[c]->name, name) == 0)
                k = t->root->children[c];
        int recorded = k != NULL;
        kept += recorded;
        if (recorded && !(l[i].seen && in_windows(&w, l[i].when)))
            fail_msg("launch %d kept, though %s", i,
                     l[i].seen ? "outside every window" : "the gate was shut");
        if (!recorded && l[i].seen && l[i].noted_before)
            fail_msg("launch %d got through into a noted window, yet was not kept", i);
        if (recorded) {
            assert_close(metric(k, "count"), 1);
            assert_estimates(t, k, metric(t->root, "sampled_fraction"));
        }
    }
    assert_true(kept >= let_in);
    /* windows never overlap, and each closed one closes after it opened */
    for (int i = 0; i < w.n; i++)
        if (w.close[i] <= w.open[i] || (i + 1 < w.n && w.close[i] > w.open[i + 1]))
            fail_msg("window %d: [%llu, %llu) then %llu", i, (unsigned long long)w.open[i],
                     (unsigned long long)w.close[i],
                     i + 1 < w.n ? (unsigned long long)w.open[i + 1] : 0ull);
    double total, inside;
    int met;
    share_of_windows(kscope__session_get(s), &w, &total, &inside, &met);
    assert_true(total > 0);
    double f = metric(t->root, "sampled_fraction");
    if (fabs(f - inside / total) > 1e-9)
        fail_msg("sampled_fraction %.12f, the windows' share %.12f", f, inside / total);
    assert_close(metric(t->root, "sample_windows"), met);
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(gate_state, 1);
    unlink(NAME ".hatchet");
}

/* A sampled trace shows the windows as a counter track. */
static void test_trace_shows_windows(void **state)
{
    (void)state;
    int s = start_sampled("gated", "step:on=1,every=2", "trace");
    assert_true(s >= 0);
    launch(0, NULL);
    kscope_step();
    launch(0, NULL);
    kscope_step();
    launch(0, NULL);
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(kscope_data(s, "chrome_trace", &buf, &len), 0);
    int counters = 0, kernels = 0;
    for (const char *p = buf; (p = strstr(p, "\"name\":\"gpu_sampled\"")) != NULL; p++)
        counters++;
    for (const char *p = buf; (p = strstr(p, "\"name\":\"k\"")) != NULL; p++)
        kernels++;
    kscope_free(buf);
    assert_int_equal(counters, 4); /* 0 at the start; 1, 0, 1 at the switches */
    assert_int_equal(kernels, 2);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".chrome_trace");
    unlink(NAME ".json");
}

/* A test that failed half-way leaves no session for the next one. */
static int finalize_all(void **state)
{
    (void)state;
    kscope_finalize(KSCOPE_ALL, NULL);
    refuse = 0;
    return 0;
}

int main(void)
{
    if (kscope__backend_register(&gated) != 0 || kscope__backend_register(&plain) != 0)
        return 1;
    unsetenv("KSCOPE_SAMPLE");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_specs_are_checked, finalize_all),
        cmocka_unit_test_teardown(test_step_windows, finalize_all),
        cmocka_unit_test_teardown(test_no_switch_while_capturing, finalize_all),
        cmocka_unit_test_teardown(test_window_work_after_close, finalize_all),
        cmocka_unit_test_teardown(test_full_session_keeps_the_gate_open, finalize_all),
        cmocka_unit_test_teardown(test_one_schedule_per_process, finalize_all),
        cmocka_unit_test_teardown(test_backend_without_gate, finalize_all),
        cmocka_unit_test_teardown(test_periodic_parts, finalize_all),
        cmocka_unit_test_teardown(test_time_windows, finalize_all),
        cmocka_unit_test_teardown(test_trace_shows_windows, finalize_all),
    };
    return cmocka_run_group_tests_name("sample", tests, NULL, NULL);
}
