/*
 * test-diag-amd.c - AMD GPUs' metrics without an AMD GPU: the stand-in
 * ROCm SMI (test/fake-rocm-smi.c, as ROCm SMI 6 and as Debian's 5) checks
 * every call kscope makes; here every value kscope reports is checked: the
 * stats, names and ids (amd0 after NVIDIA's nv0, nv1), absent fields, both
 * layouts of the clock levels, deep sleep, per-process memory, the
 * recorder's samples, a trace's counter tracks and a tree's summary.
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

static char rsmi6[4096], rsmi5[4096], nvml[4096];

/* Only the stand-in ROCm SMI at `path` (mode "" normal), no NVML. */
static void use_amd(const char *path, const char *mode)
{
    setenv("KSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
    setenv("KSCOPE_ROCM_SMI_LIBRARY", path, 1);
    setenv("FAKE_RSMI_MODE", mode, 1);
}

/* The stats of device i, kscope's GPU diagnostics started on the stand-in
 * at `path` (in that mode) alone: both of its GPUs found, i read. */
static kscope_gpu_stats amd_stats(const char *path, const char *mode, int i)
{
    use_amd(path, mode);
    assert_int_equal(kscope_gpu_init(), 2);
    kscope_gpu_stats g;
    assert_int_equal(kscope_gpu_get_stats(i, &g), 0);
    return g;
}

/* The stand-ins, held open by the test so that what they counted outlives
 * kscope's dlclose. */
static void *held[2];

static void *stand_in(const char *path)
{
    return held[path == rsmi5];
}

/* The stand-in's own count of calls it refused as malformed. */
static int bad_calls(const char *path, const char **why)
{
    int (*bad)(void) = (int (*)(void))dlsym(stand_in(path), "fake_rsmi_bad_calls");
    const char *(*last)(void) = (const char *(*)(void))dlsym(stand_in(path), "fake_rsmi_last_bad");
    assert_non_null(bad);
    *why = last();
    return bad();
}

/* Whether the stand-in at `path` is started now (rsmi_init, no shut down). */
static int started(const char *path)
{
    int (*on)(void) = (int (*)(void))dlsym(stand_in(path), "fake_rsmi_started");
    assert_non_null(on);
    return on();
}

static void assert_well_called(const char *path)
{
    const char *why = "";
    int n = bad_calls(path, &why);
    if (n)
        fail_msg("%d malformed ROCm SMI calls, the last: %s", n, why);
}

static void id_is(uint32_t device, const char *want)
{
    char id[32];
    assert_int_equal(kscope_gpu_id(device, id, sizeof id), (int)strlen(want));
    assert_string_equal(id, want);
}

/* Device 0 as ROCm SMI 6 reports it: every field MAX has for AMD, power
 * and temperature (the junction sensor: the edge one is not there). */
static void amd_device_0(void **state)
{
    (void)state;
    use_amd(rsmi6, "");
    assert_int_equal(kscope_gpu_init(), 2);
    id_is(0, "amd0");
    id_is(1, "amd1");
    char name[64];
    assert_int_equal(kscope_gpu_name(0, name, sizeof name), 14);
    assert_string_equal(name, "Fake AMD GPU 0");
    kscope_gpu_stats g;
    assert_int_equal(kscope_gpu_get_stats(0, &g), 0);
    assert_int_equal(g.device, 0);
    assert_int_equal(
        g.has, KSCOPE_GPU_HAS_UTIL | KSCOPE_GPU_HAS_MEM_ACTIVITY | KSCOPE_GPU_HAS_MEMORY |
                   KSCOPE_GPU_HAS_CORE_CLOCK | KSCOPE_GPU_HAS_CORE_MAX | KSCOPE_GPU_HAS_MEM_CLOCK |
                   KSCOPE_GPU_HAS_MEM_MAX | KSCOPE_GPU_HAS_POWER | KSCOPE_GPU_HAS_TEMPERATURE);
    assert_int_equal(g.gpu_usage_percent, 88);
    assert_int_equal(g.memory_activity_percent, 23);
    assert_true(g.total_bytes == 192ull << 30);
    assert_true(g.used_bytes == 40ull << 30);
    assert_true(g.free_bytes == 152ull << 30);
    assert_true(g.reserved_bytes == 0);
    assert_int_equal(g.core_mhz, 1200);
    assert_int_equal(g.core_max_mhz, 2100);
    assert_int_equal(g.mem_mhz, 1300);
    assert_int_equal(g.mem_max_mhz, 1300);
    assert_int_equal(g.power_mw, 550500);
    assert_int_equal(g.temperature_c, 67);
    assert_true(g.throttle_reasons == 0);
    kscope_gpu_shutdown();
    assert_false(started(rsmi6)); /* rsmi_shut_down once the last reference went */
    assert_well_called(rsmi6);
}

/* Device 1 answers busy percent and memory only: the rest is absent. */
static void amd_absent_fields(void **state)
{
    (void)state;
    kscope_gpu_stats g = amd_stats(rsmi6, "", 1);
    assert_int_equal(g.has, KSCOPE_GPU_HAS_UTIL | KSCOPE_GPU_HAS_MEMORY);
    assert_int_equal(g.gpu_usage_percent, 5);
    assert_true(g.total_bytes == 64ull << 30 && g.used_bytes == 1ull << 30);
    assert_int_equal(g.core_mhz, 0);
    assert_int_equal(g.power_mw, 0);
    assert_int_equal(kscope_gpu_get_stats(2, &g), KSCOPE_EINVAL);
    kscope_gpu_shutdown();
    assert_well_called(rsmi6);
}

/* Debian's ROCm SMI 5: the older clock layout, the average power. */
static void amd_rocm_smi_5(void **state)
{
    (void)state;
    kscope_gpu_stats g = amd_stats(rsmi5, "", 0);
    assert_int_equal(g.core_mhz, 1200);
    assert_int_equal(g.core_max_mhz, 2100);
    assert_int_equal(g.mem_mhz, 1300);
    assert_int_equal(g.mem_max_mhz, 1300);
    assert_int_equal(g.power_mw, 301250);
    assert_true(g.has & KSCOPE_GPU_HAS_POWER);
    kscope_gpu_shutdown();
    assert_well_called(rsmi5);
}

/* A GPU in deep sleep has no clock figures (level 0 would look throttled). */
static void amd_deep_sleep(void **state)
{
    (void)state;
    kscope_gpu_stats g = amd_stats(rsmi6, "sleep", 0);
    assert_false(g.has & (KSCOPE_GPU_HAS_CORE_CLOCK | KSCOPE_GPU_HAS_CORE_MAX |
                          KSCOPE_GPU_HAS_MEM_CLOCK | KSCOPE_GPU_HAS_MEM_MAX));
    assert_int_equal(g.gpu_usage_percent, 88);
    kscope_gpu_shutdown();
}

/* ROCm SMI failing to start, no NVML either: one error naming both. */
static void amd_init_fails(void **state)
{
    (void)state;
    use_amd(rsmi6, "fail-init");
    assert_int_equal(kscope_gpu_init(), KSCOPE_ENOGPU);
    const char *e = kscope_last_error();
    assert_non_null(strstr(e, "no GPU metrics: cannot load NVML"));
    assert_non_null(strstr(e, "; ROCm SMI failed to start: fake: no amdgpu here"));
    assert_null(strchr(e, '\n'));
    setenv("KSCOPE_ROCM_SMI_LIBRARY", "/nonexistent/librocm_smi64.so", 1);
    assert_int_equal(kscope_gpu_init(), KSCOPE_ENOGPU);
    assert_non_null(strstr(kscope_last_error(), "cannot load ROCm SMI: /nonexistent/"));
    /* No library named and no amdgpu driver: ROCm SMI is not even loaded
     * (its rsmi_init would write to the program's stderr). */
    unsetenv("KSCOPE_ROCM_SMI_LIBRARY");
    if (access("/sys/module/amdgpu", F_OK) != 0) {
        assert_int_equal(kscope_gpu_init(), KSCOPE_ENOGPU);
        assert_non_null(strstr(kscope_last_error(), "no AMD GPU driver (amdgpu is not loaded)"));
    }
}

/* NVIDIA's GPUs first, then AMD's: nv0 nv1 amd0 amd1, each with its own
 * vendor's figures; ids stay known after shutdown. */
static void both_vendors(void **state)
{
    (void)state;
    use_amd(rsmi6, "");
    setenv("KSCOPE_NVML_LIBRARY", nvml, 1);
    setenv("FAKE_NVML_MODE", "", 1);
    assert_int_equal(kscope_gpu_init(), 4);
    id_is(0, "nv0");
    id_is(1, "nv1");
    id_is(2, "amd0");
    id_is(3, "amd1");
    char name[64];
    kscope_gpu_name(2, name, sizeof name);
    assert_string_equal(name, "Fake AMD GPU 0");
    kscope_gpu_name(1, name, sizeof name);
    assert_string_equal(name, "Fake GPU 1");
    kscope_gpu_stats g;
    assert_int_equal(kscope_gpu_get_stats(2, &g), 0);
    assert_int_equal(g.device, 2);
    assert_int_equal(g.gpu_usage_percent, 88);
    assert_int_equal(kscope_gpu_get_stats(0, &g), 0);
    assert_int_equal(g.gpu_usage_percent, 97); /* NVML's stand-in */
    kscope_gpu_shutdown();
    id_is(3, "amd1");
    char id[8];
    assert_int_equal(kscope_gpu_id(4, id, sizeof id), KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "no GPU 4"));
    assert_well_called(rsmi6);
}

/* A process's memory: per device (ROCm SMI 6), or from its GPU list and
 * its total (5: only when it uses one GPU). */
static void amd_process_memory(void **state)
{
    (void)state;
    const char *libs[2] = {rsmi6, rsmi5};
    for (int k = 0; k < 2; k++) {
        use_amd(libs[k], "");
        assert_int_equal(kscope_gpu_init(), 2);
        uint64_t bytes = 1;
        assert_int_equal(kscope_gpu_process_memory(0, getpid(), &bytes), 0);
        assert_true(bytes == 3ull << 30);
        assert_int_equal(kscope_gpu_process_memory(1, getpid(), &bytes), 0);
        assert_true(bytes == 0);
        assert_int_equal(kscope_gpu_process_memory(0, 999999, &bytes), 0);
        assert_true(bytes == 0);
        assert_int_equal(kscope_gpu_process_memory(0, 1, &bytes), KSCOPE_ENOTSUP);
        assert_non_null(strstr(kscope_last_error(), "process 1"));
        assert_non_null(strstr(kscope_last_error(), "fake: permission"));
        kscope_gpu_shutdown();
        assert_well_called(libs[k]);
    }
}

static int costs_seen;

static void count_cost(const char *call, double us, void *arg)
{
    (void)arg;
    assert_true(strncmp(call, "rsmi_dev_", 9) == 0);
    assert_true(us >= 0);
    costs_seen++;
}

static void amd_call_costs(void **state)
{
    (void)state;
    use_amd(rsmi6, "");
    assert_int_equal(kscope_gpu_init(), 2);
    costs_seen = 0;
    assert_int_equal(kscope__gpu_call_costs(0, 2, count_cost, NULL), 0);
    assert_int_equal(costs_seen, 8); /* every query a sample makes */
    kscope_gpu_shutdown();
    assert_well_called(rsmi6);
}

/* The recorder samples the AMD GPUs and the process's memory on them; a
 * trace gets a counter track per reported metric, a tree mean and max. */
static void amd_recorder_tracks(void **state)
{
    (void)state;
    use_amd(rsmi6, "");
    pid_t self = getpid();
    kscope_recorder_opts o = {.interval_ms = 10, .pids = &self, .npids = 1};
    kscope_recorder *r = NULL;
    uint64_t t0 = kscope_now_ns();
    assert_int_equal(kscope_recorder_start(&o, &r), 0);
    assert_int_equal(kscope_recorder_gpus(r), 2);
    td_wait_samples(r, 3, 10);
    kscope_recorder_stop(r);
    uint64_t t1 = kscope_now_ns();
    kscope_sample s;
    assert_int_equal(kscope_recorder_read(r, 0, &s), 0);
    assert_int_equal(s.ngpu, 2);
    assert_int_equal(s.gpu[0].gpu_usage_percent, 88);
    assert_int_equal(s.gpu[0].power_mw, 550500);
    assert_true(s.gpu[0].has & KSCOPE_GPU_HAS_PROCESS);
    assert_true(s.gpu[0].process_bytes == 3ull << 30);
    assert_true(s.gpu[1].has & KSCOPE_GPU_HAS_PROCESS);
    assert_true(s.gpu[1].process_bytes == 0);

    /* 5 series on amd0, 2 on amd1 (util, used), 2 of the process */
    static const char *const present[] = {"\"name\":\"amd0 gpu_usage_percent\",\"ph\":\"C\"",
                                          "\"name\":\"amd0 power_w\"",
                                          "\"name\":\"amd0 temperature_c\"",
                                          "\"name\":\"amd0 core_mhz\"",
                                          "\"name\":\"amd1 used_bytes\"",
                                          NULL};
    static const char *const absent[] = {"\"name\":\"amd1 power_w\"", "nv0", NULL};
    tc_check_tracks(r, t0, t1, 9, present, absent);

    static const td_expect summary[] = {
        {"amd0.gpu_usage_percent.mean", 88, 1e-9},
        {"amd0.power_w.max", 550.5, 1e-9},
        {"amd0.temperature_c.mean", 67, 1e-9},
        {"amd0.core_mhz.max", 1200, 1e-9},
        {"amd1.used_bytes.mean", (double)(1ull << 30), 1},
        {"amd1.gpu_usage_percent.max", 5, 1e-9},
    };
    td_check_summary(t0, t1, kscope_recorder_count(r), 18, summary,
                     sizeof summary / sizeof *summary);
    kscope_recorder_free(r);
    assert_int_equal(kscope_gpu_count(), KSCOPE_ESTATE);
    assert_false(started(rsmi6));
    assert_well_called(rsmi6);
}

int main(void)
{
    if (td_stand_in(rsmi6, sizeof rsmi6, "KSCOPE_FAKE_ROCM_SMI", "libkscope_fake_rocm_smi.so",
                    "test-diag-amd") != 0 ||
        td_stand_in(rsmi5, sizeof rsmi5, "KSCOPE_FAKE_ROCM_SMI5", "libkscope_fake_rocm_smi5.so",
                    "test-diag-amd") != 0 ||
        td_stand_in(nvml, sizeof nvml, "KSCOPE_FAKE_NVML", "libkscope_fake_nvml.so",
                    "test-diag-amd") != 0)
        return 1;
    held[0] = dlopen(rsmi6, RTLD_NOW | RTLD_LOCAL);
    held[1] = dlopen(rsmi5, RTLD_NOW | RTLD_LOCAL);
    setenv("KSCOPE_QUIET", "1", 1); /* the recorder's one-line notices */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(amd_device_0),        cmocka_unit_test(amd_absent_fields),
        cmocka_unit_test(amd_rocm_smi_5),      cmocka_unit_test(amd_deep_sleep),
        cmocka_unit_test(amd_init_fails),      cmocka_unit_test(both_vendors),
        cmocka_unit_test(amd_process_memory),  cmocka_unit_test(amd_call_costs),
        cmocka_unit_test(amd_recorder_tracks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
