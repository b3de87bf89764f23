/*
 * test-diag.c - CPU metrics, port lookup and the background recorder, on
 * real processes (no GPU needed): a busy child above 50% CPU and an idle
 * one below 5%, a listening socket found by port with its descendants,
 * sample counts that follow interval x duration, and the counter tracks
 * and summaries a session gets from the recorder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "diag/diag.h"
#include "support/counters.h"
#include "support/diag-util.h"
#include "kscope.h"

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

static double now_s(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A child that spins until it used `spin_ms` of CPU (forever when < 0),
 * after `idle_ms`; CPU time, so a loaded machine delays it but never
 * shortens what it uses. With `done_fd` >= 0 it then writes one byte there
 * and sleeps until killed, else it exits. */
static pid_t spawn_ex(int idle_ms, int spin_ms, int done_fd)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (idle_ms > 0)
            td_sleep_ms(idle_ms);
        volatile unsigned long x = 0;
        double t0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
        for (;;) {
            for (int i = 0; i < 100000; i++)
                x += (unsigned long)i;
            if (spin_ms >= 0 && (now_s(CLOCK_PROCESS_CPUTIME_ID) - t0) * 1e3 >= spin_ms)
                break;
        }
        if (done_fd < 0)
            _exit(0);
        if (write(done_fd, "d", 1) != 1)
            _exit(1);
        for (;;)
            pause();
    }
    return pid;
}

static pid_t spawn(int idle_ms, int spin_ms)
{
    return spawn_ex(idle_ms, spin_ms, -1);
}

/* Wait (without a time limit: CTest's stops a hung test) until the
 * recorder holds `n` samples. */
static void wait_count(kscope_recorder *r, size_t n)
{
    while (kscope_recorder_count(r) < n)
        td_sleep_ms(5);
}

/* A child that sleeps until killed. */
static pid_t spawn_idle(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        for (;;)
            pause();
    }
    return pid;
}

static void reap(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* ------------------------------------------------------------------ CPU */

static void cpu_read_self(void **state)
{
    (void)state;
    kscope_cpu_reading r;
    assert_int_equal(kscope_cpu_read(getpid(), &r), 0);
    assert_int_equal(r.pid, getpid());
    assert_true(r.threads >= 1);
    assert_true(r.rss_bytes > 1024 * 1024);
    assert_true(r.user_s >= 0 && r.system_s >= 0);
    assert_true(r.start_ticks > 0);
}

static void cpu_bad_pid(void **state)
{
    (void)state;
    kscope_cpu_reading r;
    assert_int_equal(kscope_cpu_read(0, &r), KSCOPE_EINVAL);
    assert_int_equal(kscope_cpu_read(-4, &r), KSCOPE_EINVAL);
    /* Beyond pid_max: never a process. */
    assert_int_equal(kscope_cpu_read(0x3fffffff, &r), KSCOPE_ENOPROC);
    assert_non_null(strstr(kscope_last_error(), "1073741823"));
    kscope_cpu_proc procs[2] = {{.pid = getpid()}, {.pid = 0x3fffffff}};
    assert_int_equal(kscope_cpu_begin(procs, 2), KSCOPE_ENOPROC);
    assert_string_equal(kscope_strerror(KSCOPE_ENOPROC), "no such process");
    assert_string_equal(kscope_err_name(KSCOPE_ENOPROC), "KSCOPE_ENOPROC");
}

static void cpu_update_needs_begin(void **state)
{
    (void)state;
    kscope_cpu_proc p = {.pid = getpid()};
    assert_int_equal(kscope_cpu_update(&p, 1, NULL), KSCOPE_ESTATE);
}

/* CPU seconds a reaped child used, by its own account. */
static double kill_and_account(pid_t pid)
{
    struct rusage ru;
    kill(pid, SIGKILL);
    assert_int_equal(wait4(pid, NULL, 0, &ru), pid);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* A busy child is measured above 50% of a core and an idle one below 5%;
 * both agree with what the children used by their own account. */
static void cpu_busy_and_idle(void **state)
{
    (void)state;
    pid_t busy = spawn(0, -1), idle = spawn_idle();
    kscope_cpu_proc procs[2] = {{.pid = busy}, {.pid = idle}};
    double before = now_s(CLOCK_MONOTONIC);
    assert_int_equal(kscope_cpu_begin(procs, 2), 0);
    double begun = now_s(CLOCK_MONOTONIC);
    td_sleep_ms(1000);
    kscope_cpu_stats total;
    double updating = now_s(CLOCK_MONOTONIC);
    assert_int_equal(kscope_cpu_update(procs, 2, &total), 0);
    double after = now_s(CLOCK_MONOTONIC);
    double busy_own = kill_and_account(busy), idle_own = kill_and_account(idle);
    double busy_used = procs[0].user + procs[0].system;
    double busy_pct = procs[0].user_percent + procs[0].system_percent;
    double idle_pct = procs[1].user_percent + procs[1].system_percent;
    assert_true(fabs(busy_used - busy_own) <= 0.1 * busy_own + 0.03);
    assert_true(idle_own < 0.05 && idle_pct < 5.0);
    /* Above 50% whenever the machine gave the child that much. */
    if (busy_own / total.elapsed > 0.55)
        assert_true(busy_pct > 50.0);
    else
        print_message("note: machine loaded, the busy child got %.0f%% of a core\n",
                      100 * busy_own / total.elapsed);
    assert_true(busy_pct > idle_pct);
    assert_int_equal(procs[0].exited, 0);
    /* the window between the two readings, as this thread saw it */
    assert_true(total.elapsed >= updating - begun - 1e-3 && total.elapsed <= after - before + 1e-3);
    assert_true(fabs(total.user - (procs[0].user + procs[1].user)) < 1e-9);
    assert_true(fabs(total.user_percent - 100.0 * total.user / total.elapsed) < 1e-6);
    assert_int_equal(total.exited, 0);
    assert_int_equal(total.threads, 2);
    assert_true(total.rss_bytes > 0);
}

/* A process that ends mid-way is marked, keeps what it used until its last
 * reading, and is no error. */
static void cpu_exit_midway(void **state)
{
    (void)state;
    pid_t child = spawn(0, 400);
    kscope_cpu_proc procs[2] = {{.pid = child}, {.pid = getpid()}};
    assert_int_equal(kscope_cpu_begin(procs, 2), 0);
    /* until a reading shows CPU used: it takes 400 ms of CPU, seen in
     * 10 ms ticks, so a reading before its exit does */
    double used = 0;
    while (used == 0) {
        td_sleep_ms(10);
        assert_int_equal(kscope_cpu_update(procs, 2, NULL), 0);
        used = procs[0].user + procs[0].system;
    }
    waitpid(child, NULL, 0);
    kscope_cpu_stats total;
    assert_int_equal(kscope_cpu_update(procs, 2, &total), 0);
    assert_int_equal(procs[0].exited, 1);
    assert_int_equal(procs[1].exited, 0);
    assert_true(procs[0].user + procs[0].system >= used);
    assert_int_equal(procs[0].threads, 0);
    assert_int_equal(total.exited, 1);
}

/* ----------------------------------------------------------------- ports */

/* A listening TCP socket on loopback; its port into *port. */
static int listen_on(int family, int *port)
{
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof ss);
    if (family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    }
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
    }
    len = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &len);
    *port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                    : ((struct sockaddr_in6 *)&ss)->sin6_port);
    return fd;
}

static int contains(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

static void port_finds_listener_and_descendants(int family)
{
    int port = 0;
    int fd = listen_on(family, &port);
    if (fd < 0 && family == AF_INET6)
        skip(); /* no IPv6 on this machine */
    assert_true(fd >= 0);
    pid_t child = spawn_idle(); /* a descendant that does not hold the socket */
    int pids[64];
    int n = kscope_pids_for_port(port, pids, 64);
    assert_true(n >= 2);
    assert_true(contains(pids, n, getpid()));
    assert_true(contains(pids, n, child));
    for (int i = 1; i < n; i++)
        assert_true(pids[i - 1] < pids[i]);
    /* A smaller array still learns the full count. */
    int one;
    assert_int_equal(kscope_pids_for_port(port, &one, 1), n);
    assert_int_equal(one, pids[0]);
    reap(child);
    close(fd);
    /* Nobody listens any more. */
    assert_int_equal(kscope_pids_for_port(port, pids, 64), 0);
}

static void port_ipv4(void **state)
{
    (void)state;
    port_finds_listener_and_descendants(AF_INET);
}

static void port_ipv6(void **state)
{
    (void)state;
    port_finds_listener_and_descendants(AF_INET6);
}

static void port_bad(void **state)
{
    (void)state;
    int pids[4];
    assert_int_equal(kscope_pids_for_port(0, pids, 4), KSCOPE_EINVAL);
    assert_int_equal(kscope_pids_for_port(65536, pids, 4), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "65536"));
    assert_int_equal(kscope_pids_for_port(80, NULL, 4), KSCOPE_EINVAL);
}

/* -------------------------------------------------------------- recorder */

static void recorder_refuses_bad_options(void **state)
{
    (void)state;
    kscope_recorder *r = (kscope_recorder *)1;
    kscope_recorder_opts o = {.interval_ms = 0.5, .no_gpu = 1};
    assert_int_equal(kscope_recorder_start(&o, &r), KSCOPE_EINVAL);
    assert_null(r);
    assert_non_null(strstr(kscope_last_error(), "0.5 ms"));
    o.interval_ms = NAN;
    assert_int_equal(kscope_recorder_start(&o, &r), KSCOPE_EINVAL);
    o.interval_ms = -3;
    assert_int_equal(kscope_recorder_start(&o, &r), KSCOPE_EINVAL);
    int bad = 0x3fffffff;
    kscope_recorder_opts p = {.interval_ms = 10, .pids = &bad, .npids = 1, .no_gpu = 1};
    assert_int_equal(kscope_recorder_start(&p, &r), KSCOPE_ENOPROC);
    kscope_recorder_opts q = {.interval_ms = 10, .npids = 1, .no_gpu = 1};
    assert_int_equal(kscope_recorder_start(&q, &r), KSCOPE_EINVAL);
    assert_int_equal(kscope_recorder_start(&o, NULL), KSCOPE_EINVAL);
}

/* Run a recorder of `interval_ms` (0: the default) until it took `n`
 * samples: they are in order, and never more than the time it ran allows
 * (a tick each interval, and the sample at stop). How many it takes per
 * second on this machine is a benchmark's business
 * (bench/bench_sampling.sh). */
static void check_samples(double interval_ms, size_t n)
{
    pid_t self = getpid();
    kscope_recorder_opts o = {.interval_ms = interval_ms, .pids = &self, .npids = 1, .no_gpu = 1};
    kscope_recorder *r = NULL;
    double t0 = now_s(CLOCK_MONOTONIC);
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    wait_count(r, n);
    assert_int_equal(kscope_recorder_stop(r), 0);
    double ran_ms = (now_s(CLOCK_MONOTONIC) - t0) * 1e3;
    size_t got = kscope_recorder_count(r);
    assert_true(got >= n);
    double every = interval_ms > 0 ? interval_ms : 100;
    if ((double)got > ran_ms / every + 1)
        fail_msg("%g ms for %.0f ms: %zu samples, more than the interval allows", every, ran_ms,
                 got);
    kscope_sample prev, s;
    assert_int_equal(kscope_recorder_read(r, 0, &prev), 0);
    for (size_t i = 1; i < got; i++) {
        assert_int_equal(kscope_recorder_read(r, i, &s), 0);
        assert_true(s.t_ns > prev.t_ns);
        assert_int_equal(s.nproc, 1);
        assert_int_equal(s.alive, 1);
        assert_int_equal(s.ngpu, 0);
        prev = s;
    }
    assert_int_equal(kscope_recorder_dropped(r), 0);
    kscope_recorder_free(r);
}

static void recorder_samples_follow_interval(void **state)
{
    (void)state;
    check_samples(10, 10);
    check_samples(1, 20);
    check_samples(0, 3); /* the default: 100 ms */
}

static void recorder_ring_is_bounded(void **state)
{
    (void)state;
    kscope_recorder_opts o = {.interval_ms = 2, .no_gpu = 1, .capacity = 5};
    kscope_recorder *r = NULL;
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    /* 30 drops take 70 ms idle; a loaded machine gets there later. */
    while (kscope_recorder_dropped(r) <= 30)
        td_sleep_ms(10);
    assert_int_equal(kscope_recorder_stop(r), 0);
    assert_int_equal(kscope_recorder_count(r), 5);
    assert_true(kscope_recorder_dropped(r) > 30);
    kscope_sample s;
    assert_int_equal(kscope_recorder_read(r, 5, &s), KSCOPE_EINVAL);
    assert_int_equal(kscope_recorder_stop(r), KSCOPE_ESTATE);
    kscope_recorder_free(r);
    kscope_recorder_free(NULL);
}

static int calls;
static void count_calls(const kscope_sample *s, void *arg)
{
    (void)s;
    *(int *)arg += 1;
    calls++;
}

/* The callback sees every sample; the CPU the samples add up to is what
 * the child used by its own account (wait4); a child that exits leaves
 * `alive` at 0 and sampling goes on. */
static void recorder_cpu_and_exit(void **state)
{
    (void)state;
    int done[2];
    assert_int_equal(pipe(done), 0);
    pid_t child = spawn_ex(0, 600, done[1]);
    int seen = 0;
    kscope_recorder_opts o = {.interval_ms = 50,
                              .pids = &child,
                              .npids = 1,
                              .no_gpu = 1,
                              .on_sample = count_calls,
                              .arg = &seen};
    kscope_recorder *r = NULL;
    uint64_t t_start = kscope_now_ns();
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    /* the child spun its 600 ms of CPU and now sleeps: two samples later
     * the readings hold all it used */
    char c;
    assert_int_equal(read(done[0], &c, 1), 1);
    wait_count(r, kscope_recorder_count(r) + 2);
    struct rusage ru;
    kill(child, SIGKILL);
    assert_int_equal(wait4(child, NULL, 0, &ru), child);
    wait_count(r, kscope_recorder_count(r) + 1); /* one after the exit */
    kscope_recorder_stop(r);
    close(done[0]);
    close(done[1]);
    size_t n = kscope_recorder_count(r);
    assert_int_equal((size_t)seen, n);
    double own = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
                 ru.ru_stime.tv_usec / 1e6;
    double measured = 0; /* CPU seconds: percent x interval */
    uint64_t prev = t_start;
    kscope_sample s;
    for (size_t i = 0; i < n; i++) {
        kscope_recorder_read(r, i, &s);
        assert_true(fabs(s.cpu_percent - (s.user_percent + s.system_percent)) < 1e-9);
        measured += s.cpu_percent / 100.0 * (double)(s.t_ns - prev) / 1e9;
        prev = s.t_ns;
    }
    /* /proc counts in 10 ms ticks */
    assert_true(own >= 0.6);
    assert_true(fabs(measured - own) <= 0.1 * own + 0.03);
    assert_int_equal(s.nproc, 1);
    assert_int_equal(s.alive, 0);
    assert_int_equal(s.threads, 0);
    kscope_recorder_free(r);
}

/* --------------------------------------------- what a session gets from it */

static double window_sum, window_max;

static void sum_cpu(const kscope_sample *s, void *arg)
{
    (void)arg;
    window_sum += s->cpu_percent;
    if (s->cpu_percent > window_max)
        window_max = s->cpu_percent;
}

static void session_counters_and_summary(void **state)
{
    (void)state;
    pid_t busy = spawn(0, -1);
    kscope_recorder_opts o = {.interval_ms = 20, .pids = &busy, .npids = 1, .no_gpu = 1};
    kscope_recorder *r = NULL;
    uint64_t t0 = kscope_now_ns();
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    /* 12 samples take 240 ms idle; a loaded machine may take longer. */
    wait_count(r, 13);
    uint64_t t1 = kscope_now_ns();
    size_t at_t1 = kscope_recorder_count(r);
    /* samples after t1 stay out */
    wait_count(r, at_t1 + 2);
    kscope_recorder_stop(r);
    reap(busy);

    size_t total = kscope_recorder_count(r);
    size_t in_window = kscope__recorder_each(t0, t1, sum_cpu, NULL);
    assert_true(in_window >= 12 && in_window < total);

    /* Counter events, parsed back. */
    int events = 0;
    char *text = tc_counters_json(t0, t1, t0, 4242, &events);
    assert_non_null(text);
    assert_int_equal(events, (int)(2 * in_window));
    char err[256];
    yajl_val trace = yajl_tree_parse(text, err, sizeof err);
    assert_non_null(trace);
    const char *events_path[] = {"traceEvents", NULL};
    yajl_val doc = yajl_tree_get(trace, events_path, yajl_t_array);
    assert_non_null(doc);
    assert_int_equal(doc->u.array.len, (size_t)events);
    int cpu_events = 0;
    for (size_t i = 0; i < doc->u.array.len; i++) {
        yajl_val ev = doc->u.array.values[i];
        const char *ph[] = {"ph", NULL}, *name[] = {"name", NULL}, *ts[] = {"ts", NULL};
        const char *pid[] = {"pid", NULL}, *value[] = {"args", "value", NULL};
        assert_string_equal(YAJL_GET_STRING(yajl_tree_get(ev, ph, yajl_t_string)), "C");
        const char *n = YAJL_GET_STRING(yajl_tree_get(ev, name, yajl_t_string));
        assert_true(strcmp(n, "cpu_percent") == 0 || strcmp(n, "rss_bytes") == 0);
        cpu_events += strcmp(n, "cpu_percent") == 0;
        double t = YAJL_GET_DOUBLE(yajl_tree_get(ev, ts, yajl_t_number));
        assert_true(t >= 0 && t <= (t1 - t0) / 1000.0);
        assert_int_equal(YAJL_GET_INTEGER(yajl_tree_get(ev, pid, yajl_t_number)), 4242);
        assert_non_null(yajl_tree_get(ev, value, yajl_t_number));
    }
    assert_int_equal(cpu_events, (int)in_window);
    yajl_tree_free(trace);
    free(text);

    /* Mean and max for a tree's ROOT. */
    td_summary sum = {0};
    assert_int_equal(kscope__diag_summary(t0, t1, td_collect, &sum), in_window);
    assert_int_equal(sum.n, 4);
    const td_metric *mean = td_find(&sum, "cpu_percent.mean"),
                    *max = td_find(&sum, "cpu_percent.max");
    assert_non_null(mean);
    assert_non_null(max);
    assert_true(fabs(mean->value - window_sum / (double)in_window) < 1e-6);
    assert_true(fabs(max->value - window_max) < 1e-9);
    assert_true(max->value > 0);
    assert_true(td_find(&sum, "rss_bytes.mean")->value > 0);
    assert_non_null(td_find(&sum, "rss_bytes.max"));

    /* A freed recorder's samples are gone; an empty window emits nothing. */
    kscope_recorder_free(r);
    assert_int_equal(kscope__recorder_each(t0, t1, count_calls, &(int){0}), 0);
    sum = (td_summary){0};
    assert_int_equal(kscope__diag_summary(t0, t1, td_collect, &sum), 0);
    assert_int_equal(sum.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cpu_read_self),
        cmocka_unit_test(cpu_bad_pid),
        cmocka_unit_test(cpu_update_needs_begin),
        cmocka_unit_test(cpu_busy_and_idle),
        cmocka_unit_test(cpu_exit_midway),
        cmocka_unit_test(port_ipv4),
        cmocka_unit_test(port_ipv6),
        cmocka_unit_test(port_bad),
        cmocka_unit_test(recorder_refuses_bad_options),
        cmocka_unit_test(recorder_samples_follow_interval),
        cmocka_unit_test(recorder_ring_is_bounded),
        cmocka_unit_test(recorder_cpu_and_exit),
        cmocka_unit_test(session_counters_and_summary),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
