/*
 * test-diag-gpu.c - GPU metrics without a GPU: NVML missing or failing
 * (one clear error, CPU sampling goes on), and a stand-in NVML
 * (test/fake-nvml.c) whose fixed answers check decoding, absent fields,
 * throttle reasons, per-process memory and the recorder's GPU tracks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "diag/diag.h"
#include "support/counters.h"
#include "support/diag-util.h"
#include "kscope.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char fake_path[4096];

/* Use the stand-in NVML, in a given mode ("" for the normal one). */
static void use_fake(const char *mode)
{
    setenv("KSCOPE_NVML_LIBRARY", fake_path, 1);
    setenv("FAKE_NVML_MODE", mode, 1);
}

static void nvml_missing(void **state)
{
    (void)state;
    setenv("KSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    assert_int_equal(kscope_gpu_init(), KSCOPE_ENOGPU);
    assert_non_null(strstr(kscope_last_error(), "cannot load NVML"));
    assert_non_null(strstr(kscope_last_error(), "/nonexistent/libnvidia-ml.so.1"));
    assert_int_equal(kscope_gpu_count(), KSCOPE_ESTATE);
    kscope_gpu_stats g;
    assert_int_equal(kscope_gpu_get_stats(0, &g), KSCOPE_ESTATE);
    char name[32];
    assert_int_equal(kscope_gpu_name(0, name, sizeof name), KSCOPE_ESTATE);
    kscope_gpu_shutdown(); /* harmless without init */
}

/* Without NVML the recorder still samples the CPU. */
static void recorder_without_nvml(void **state)
{
    (void)state;
    setenv("KSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    pid_t self = getpid();
    kscope_recorder_opts o = {.interval_ms = 20, .pids = &self, .npids = 1};
    kscope_recorder *r = NULL;
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    assert_int_equal(kscope_recorder_gpus(r), 0);
    /* It keeps sampling: 8 samples come in 160 ms on an idle machine; a
     * loaded one may take longer, so wait for them (up to 10 s). */
    td_wait_samples(r, 8, 20);
    kscope_recorder_stop(r);
    assert_true(kscope_recorder_count(r) >= 8);
    kscope_sample s;
    assert_int_equal(kscope_recorder_read(r, 0, &s), 0);
    assert_int_equal(s.ngpu, 0);
    assert_int_equal(s.alive, 1);
    kscope_recorder_free(r);
}

static void nvml_init_fails(void **state)
{
    (void)state;
    use_fake("fail-init");
    assert_int_equal(kscope_gpu_init(), KSCOPE_ENOGPU);
    assert_non_null(strstr(kscope_last_error(), "Driver Not Loaded"));
}

static void decodes_every_field(void **state)
{
    (void)state;
    use_fake("");
    assert_int_equal(kscope_gpu_init(), 2);
    assert_int_equal(kscope_gpu_count(), 2);
    char name[64];
    assert_int_equal(kscope_gpu_name(0, name, sizeof name), 10);
    assert_string_equal(name, "Fake GPU 0");
    kscope_gpu_stats g;
    assert_int_equal(kscope_gpu_get_stats(0, &g), 0);
    assert_int_equal(g.device, 0);
    assert_int_equal(g.has, (1u << 11) - 1); /* every KSCOPE_GPU_HAS_* bit */
    assert_int_equal(g.gpu_usage_percent, 97);
    assert_int_equal(g.memory_activity_percent, 41);
    assert_true(g.total_bytes == 80ull << 30);
    assert_true(g.reserved_bytes == 512ull << 20);
    assert_true(g.used_bytes == 10ull << 30);
    assert_true(g.free_bytes == g.total_bytes - g.reserved_bytes - g.used_bytes);
    assert_int_equal(g.core_mhz, 1755);
    assert_int_equal(g.core_max_mhz, 1980);
    assert_int_equal(g.mem_mhz, 2619);
    assert_int_equal(g.mem_max_mhz, 2619);
    assert_int_equal(g.power_mw, 412345);
    assert_int_equal(g.temperature_c, 61);
    assert_true(g.throttle_reasons == (KSCOPE_THROTTLE_SW_POWER_CAP | KSCOPE_THROTTLE_HW_THERMAL));
    assert_true(g.throttle_reasons & KSCOPE_THROTTLE_HARDWARE);
    kscope_gpu_shutdown();
}

/* Maximum clocks are read once per device when NVML starts (each query
 * takes over a millisecond on an H200), never again per sample. */
static void max_clocks_read_once(void **state)
{
    (void)state;
    use_fake("");
    assert_int_equal(kscope_gpu_init(), 2);
    void *lib = dlopen(fake_path, RTLD_NOW | RTLD_NOLOAD);
    assert_non_null(lib);
    int (*calls)(void) = (int (*)(void))dlsym(lib, "fake_nvml_max_clock_calls");
    assert_non_null(calls);
    int at_start = calls();
    assert_int_equal(at_start % 4, 0); /* SM and memory, for 2 devices */
    kscope_gpu_stats g;
    for (int i = 0; i < 10; i++) {
        assert_int_equal(kscope_gpu_get_stats(0, &g), 0);
        assert_int_equal(g.core_max_mhz, 1980);
        assert_int_equal(g.mem_max_mhz, 2619);
        assert_true(g.has & KSCOPE_GPU_HAS_CORE_MAX);
        assert_int_equal(kscope_gpu_get_stats(1, &g), 0);
        assert_false(g.has & (KSCOPE_GPU_HAS_CORE_MAX | KSCOPE_GPU_HAS_MEM_MAX));
    }
    assert_int_equal(calls(), at_start);
    dlclose(lib);
    kscope_gpu_shutdown();
}

/* Unsupported metrics are absent fields, not errors. */
static void unsupported_fields_are_absent(void **state)
{
    (void)state;
    use_fake("");
    assert_int_equal(kscope_gpu_init(), 2);
    kscope_gpu_stats g;
    assert_int_equal(kscope_gpu_get_stats(1, &g), 0);
    assert_int_equal(g.has,
                     KSCOPE_GPU_HAS_MEMORY | KSCOPE_GPU_HAS_CORE_CLOCK | KSCOPE_GPU_HAS_MEM_CLOCK);
    assert_true(g.used_bytes == 2ull << 30); /* from the v1 query */
    assert_true(g.total_bytes == 16ull << 30);
    assert_int_equal(g.core_mhz, 1754);
    assert_int_equal(g.power_mw, 0);
    assert_int_equal(kscope_gpu_get_stats(2, &g), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "no GPU 2"));
    assert_int_equal(kscope_gpu_get_stats(0, NULL), KSCOPE_EINVAL);
    kscope_gpu_shutdown();
}

static void process_memory(void **state)
{
    (void)state;
    use_fake("");
    assert_int_equal(kscope_gpu_init(), 2);
    uint64_t bytes = 1;
    assert_int_equal(kscope_gpu_process_memory(0, getpid(), &bytes), 0);
    assert_true(bytes == 128ull << 20); /* two contexts, added */
    assert_int_equal(kscope_gpu_process_memory(0, 999999, &bytes), 0);
    assert_true(bytes == 0);
    assert_int_equal(kscope_gpu_process_memory(1, getpid(), &bytes), 0);
    assert_true(bytes == 0);
    assert_int_equal(kscope_gpu_process_memory(0, 1, &bytes), KSCOPE_ENOTSUP);
    assert_non_null(strstr(kscope_last_error(), "process 1"));
    assert_int_equal(kscope_gpu_process_memory(0, 0, &bytes), KSCOPE_EINVAL);
    assert_int_equal(kscope_gpu_process_memory(5, 1, &bytes), KSCOPE_EINVAL);
    kscope_gpu_shutdown();
}

static int costs_seen;

static void count_cost(const char *call, double us, void *arg)
{
    (void)arg;
    assert_non_null(strstr(call, "nvmlDevice"));
    assert_true(us >= 0);
    costs_seen++;
}

static void call_costs(void **state)
{
    (void)state;
    use_fake("");
    assert_int_equal(kscope_gpu_init(), 2);
    costs_seen = 0;
    assert_int_equal(kscope__gpu_call_costs(0, 3, count_cost, NULL), 0);
    assert_true(costs_seen >= 6); /* every query the stand-in answers */
    assert_int_equal(kscope__gpu_call_costs(9, 3, count_cost, NULL), KSCOPE_EINVAL);
    assert_int_equal(kscope__gpu_call_costs(0, 0, count_cost, NULL), KSCOPE_EINVAL);
    kscope_gpu_shutdown();
}

static void init_is_reference_counted(void **state)
{
    (void)state;
    use_fake("");
    assert_int_equal(kscope_gpu_init(), 2);
    assert_int_equal(kscope_gpu_init(), 2);
    kscope_gpu_shutdown();
    assert_int_equal(kscope_gpu_count(), 2);
    kscope_gpu_shutdown();
    assert_int_equal(kscope_gpu_count(), KSCOPE_ESTATE);
}

static void throttle_names(void **state)
{
    (void)state;
    const char *expect[] = {"gpu_idle",
                            "applications_clocks_setting",
                            "sw_power_cap",
                            "hw_slowdown",
                            "sync_boost",
                            "sw_thermal_slowdown",
                            "hw_thermal_slowdown",
                            "hw_power_brake_slowdown",
                            "display_clock_setting"};
    for (int i = 0; i < 9; i++)
        assert_string_equal(kscope_gpu_throttle_name(1ull << i), expect[i]);
    assert_null(kscope_gpu_throttle_name(1ull << 9));
    assert_null(kscope_gpu_throttle_name(0x3));
    char buf[256];
    assert_int_equal(kscope_gpu_throttle_format(0, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    int n = kscope_gpu_throttle_format(
        KSCOPE_THROTTLE_GPU_IDLE | KSCOPE_THROTTLE_HW_SLOWDOWN | (1ull << 40), buf, sizeof buf);
    assert_string_equal(buf, "gpu_idle,hw_slowdown");
    assert_int_equal(n, (int)strlen(buf));
    char small[5];
    assert_int_equal(kscope_gpu_throttle_format(0x1FF, small, sizeof small),
                     kscope_gpu_throttle_format(0x1FF, NULL, 0));
    assert_string_equal(small, "gpu_");
    /* Hardware reasons: everything but idle and the two settings. */
    assert_true(KSCOPE_THROTTLE_HARDWARE ==
                (KSCOPE_THROTTLE_SW_POWER_CAP | KSCOPE_THROTTLE_HW_SLOWDOWN |
                 KSCOPE_THROTTLE_SYNC_BOOST | KSCOPE_THROTTLE_SW_THERMAL |
                 KSCOPE_THROTTLE_HW_THERMAL | KSCOPE_THROTTLE_HW_POWER_BRAKE));
}

/* The recorder samples both GPUs; a trace gets one track per reported
 * metric, a tree gets mean and max. */
static void recorder_gpu_tracks(void **state)
{
    (void)state;
    use_fake("");
    kscope_recorder_opts o = {.interval_ms = 10};
    kscope_recorder *r = NULL;
    uint64_t t0 = kscope_now_ns();
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    assert_int_equal(kscope_recorder_gpus(r), 2);
    td_sleep_ms(100);
    kscope_recorder_stop(r);
    uint64_t t1 = kscope_now_ns();
    kscope_sample s;
    assert_int_equal(kscope_recorder_read(r, 0, &s), 0);
    assert_int_equal(s.ngpu, 2);
    assert_int_equal(s.nproc, 0);
    assert_int_equal(s.gpu[0].gpu_usage_percent, 97);
    assert_int_equal(s.gpu[1].device, 1);

    /* 5 series on nv0, 2 on nv1, no CPU */
    static const char *const present[] = {
        "\"name\":\"nv0 gpu_usage_percent\",\"ph\":\"C\"", "\"name\":\"nv0 power_w\"",
        "\"name\":\"nv0 temperature_c\"", "\"name\":\"nv1 used_bytes\"", NULL};
    static const char *const absent[] = {"\"name\":\"nv1 power_w\"", "cpu_percent", NULL};
    tc_check_tracks(r, t0, t1, 7, present, absent);

    static const td_expect summary[] = {
        {"nv0.gpu_usage_percent.mean", 97, 1e-9},
        {"nv0.power_w.max", 412.345, 1e-9},
        {"nv1.used_bytes.mean", (double)(2ull << 30), 1},
        {"nv1.core_mhz.max", 1754, 1e-9},
    };
    td_check_summary(t0, t1, kscope_recorder_count(r), 14, summary,
                     sizeof summary / sizeof *summary);
    kscope_recorder_free(r);
    assert_int_equal(kscope_gpu_count(), KSCOPE_ESTATE); /* the recorder let go */
}

/* Recorder samples carry the GPU memory of the processes followed. */
static void recorder_process_memory(void **state)
{
    (void)state;
    use_fake("");
    pid_t self = getpid();
    kscope_recorder_opts o = {.interval_ms = 10, .pids = &self, .npids = 1};
    kscope_recorder *r = NULL;
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    td_sleep_ms(50);
    kscope_recorder_stop(r);
    kscope_sample s;
    assert_int_equal(kscope_recorder_read(r, 0, &s), 0);
    assert_true(s.gpu[0].has & KSCOPE_GPU_HAS_PROCESS);
    assert_true(s.gpu[0].process_bytes == 128ull << 20);
    assert_true(s.gpu[1].has & KSCOPE_GPU_HAS_PROCESS);
    assert_true(s.gpu[1].process_bytes == 0);
    kscope_recorder_free(r);

    /* pid 1's memory is not available: absent, not zero. */
    int pids[2] = {self, 1};
    kscope_recorder_opts p = {.interval_ms = 10, .pids = pids, .npids = 2};
    assert_int_equal(kscope_recorder_start(&p, &r), 0);
    td_sleep_ms(30);
    kscope_recorder_stop(r);
    assert_int_equal(kscope_recorder_read(r, 0, &s), 0);
    assert_false(s.gpu[0].has & KSCOPE_GPU_HAS_PROCESS);
    assert_true(s.gpu[0].process_bytes == 0);
    kscope_recorder_free(r);

    /* Without processes to follow there is nothing to report. */
    kscope_recorder_opts q = {.interval_ms = 10};
    assert_int_equal(kscope_recorder_start(&q, &r), 0);
    td_sleep_ms(30);
    kscope_recorder_stop(r);
    assert_int_equal(kscope_recorder_read(r, 0, &s), 0);
    assert_false(s.gpu[0].has & KSCOPE_GPU_HAS_PROCESS);
    kscope_recorder_free(r);
}

/* A GPU that stops answering empties its record; sampling goes on. */
static void lost_gpu_keeps_sampling(void **state)
{
    (void)state;
    use_fake("lost");
    assert_int_equal(kscope_gpu_init(), 2);
    kscope_gpu_stats g;
    assert_int_equal(kscope_gpu_get_stats(0, &g), KSCOPE_ENOGPU);
    assert_non_null(strstr(kscope_last_error(), "GPU 0 stopped answering"));
    kscope_recorder_opts o = {.interval_ms = 10};
    kscope_recorder *r = NULL;
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    td_wait_samples(r, 5, 10); /* 5 samples: 50 ms idle, longer on a loaded machine */
    kscope_recorder_stop(r);
    assert_true(kscope_recorder_count(r) >= 5);
    kscope_sample s;
    kscope_recorder_read(r, kscope_recorder_count(r) - 1, &s);
    assert_int_equal(s.gpu[0].has, 0);
    assert_int_equal(s.gpu[1].has,
                     KSCOPE_GPU_HAS_MEMORY | KSCOPE_GPU_HAS_CORE_CLOCK | KSCOPE_GPU_HAS_MEM_CLOCK);
    kscope_recorder_free(r);
    kscope_gpu_shutdown();
}

int main(void)
{
    if (td_stand_in(fake_path, sizeof fake_path, "KSCOPE_FAKE_NVML", "libkscope_fake_nvml.so",
                    "test-diag-gpu") != 0)
        return 1;
    setenv("KSCOPE_QUIET", "1", 1); /* the recorder's one-line notices */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nvml_missing),
        cmocka_unit_test(recorder_without_nvml),
        cmocka_unit_test(nvml_init_fails),
        cmocka_unit_test(decodes_every_field),
        cmocka_unit_test(max_clocks_read_once),
        cmocka_unit_test(unsupported_fields_are_absent),
        cmocka_unit_test(process_memory),
        cmocka_unit_test(call_costs),
        cmocka_unit_test(init_is_reference_counted),
        cmocka_unit_test(throttle_names),
        cmocka_unit_test(recorder_gpu_tracks),
        cmocka_unit_test(recorder_process_memory),
        cmocka_unit_test(lost_gpu_keeps_sampling),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
