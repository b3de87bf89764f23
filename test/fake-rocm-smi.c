/*
 * fake-rocm-smi.c - a stand-in librocm_smi64 for the AMD diagnostics
 * tests, loaded through KSCOPE_ROCM_SMI_LIBRARY on machines without an AMD
 * GPU. Built twice: as ROCm SMI 6 (rsmi_frequencies_t with has_deep_sleep
 * and 33 levels, rsmi_dev_power_get, the per-device process query) and,
 * with FAKE_RSMI_V5, as Debian's ROCm SMI 5 (32 levels, only the average
 * power, processes by pid; its version reads 1.0.0).
 *
 * Two devices: "Fake AMD GPU 0" answers every query with fixed values;
 * "Fake AMD GPU 1" answers only busy percent and memory, so the tests see
 * absent fields. FAKE_RSMI_MODE=fail-init makes rsmi_init fail as it does
 * without the driver; FAKE_RSMI_MODE=sleep puts device 0 in deep sleep
 * (ROCm SMI 6: current level 0 with has_deep_sleep). The calling process
 * uses 3 GiB on device 0; pid 1's processes cannot be read.
 *
 * Every call is checked: started (rsmi_init before, rsmi_shut_down not
 * yet), a device index in range, no NULL output, the memory type VRAM, a
 * clock type SYS or MEM, sensor 0, the current temperature of the edge or
 * junction sensor. A call that breaks one counts in fake_rsmi_bad_calls()
 * (fake_rsmi_last_bad() says which); fake_rsmi_calls(name) counts each
 * entry point's calls and fake_rsmi_started() says whether it is started.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

enum {
    OK = 0,
    INVALID_ARGS = 1,
    NOT_SUPPORTED = 2,
    PERMISSION = 4,
    INIT_ERROR = 8,
    NOT_FOUND = 10
};

#ifdef FAKE_RSMI_V5
#define LEVELS 32
typedef struct {
    uint32_t num_supported, current;
    uint64_t frequency[LEVELS];
} frequencies;
#else
#define LEVELS 33
typedef struct {
    _Bool has_deep_sleep;
    uint32_t num_supported, current;
    uint64_t frequency[LEVELS];
} frequencies;
#endif

typedef struct {
    uint32_t process_id, pasid;
    uint64_t vram_usage, sdma_usage;
    uint32_t cu_occupancy;
} process_info;

typedef struct {
    uint32_t major, minor, patch;
    const char *build;
} version;

static int started, bad;
static char last_bad[160];

/* Per entry point, how often it was called. */
static struct {
    const char *name;
    int n;
} counts[32];

static void count(const char *name)
{
    for (int i = 0; i < 32; i++) {
        if (!counts[i].name)
            counts[i].name = name;
        if (strcmp(counts[i].name, name) == 0) {
            counts[i].n++;
            return;
        }
    }
}

API int fake_rsmi_calls(const char *name)
{
    for (int i = 0; i < 32 && counts[i].name; i++)
        if (strcmp(counts[i].name, name) == 0)
            return counts[i].n;
    return 0;
}

API int fake_rsmi_bad_calls(void)
{
    return bad;
}

API const char *fake_rsmi_last_bad(void)
{
    return last_bad;
}

API int fake_rsmi_started(void)
{
    return started;
}

/* Count the call; 0 when it is well formed, else count it as bad. */
static int check(const char *name, int ok, const char *why)
{
    count(name);
    if (!started)
        ok = 0, why = "called while not started";
    if (!ok) {
        bad++;
        snprintf(last_bad, sizeof last_bad, "%s: %s", name, why);
    }
    return ok ? 0 : -1;
}

static int mode_is(const char *m)
{
    const char *v = getenv("FAKE_RSMI_MODE");
    return v && strcmp(v, m) == 0;
}

API int rsmi_init(uint64_t flags)
{
    count("rsmi_init");
    if (flags != 0 || started) {
        bad++;
        snprintf(last_bad, sizeof last_bad, "rsmi_init: flags %llu, started %d",
                 (unsigned long long)flags, started);
    }
    if (mode_is("fail-init"))
        return INIT_ERROR;
    started = 1;
    return OK;
}

API int rsmi_shut_down(void)
{
    if (check("rsmi_shut_down", 1, "") == 0)
        started = 0;
    return OK;
}

API int rsmi_status_string(int status, const char **s)
{
    count("rsmi_status_string");
    *s = status == INIT_ERROR   ? "fake: no amdgpu here"
         : status == PERMISSION ? "fake: permission"
                                : "fake: error";
    return OK;
}

API int rsmi_version_get(version *v)
{
    count("rsmi_version_get");
#ifdef FAKE_RSMI_V5
    *v = (version){1, 0, 0, "debian-5.2.3"}; /* what Debian's 5.2.3 says */
#else
    *v = (version){7, 0, 1, "fake"};
#endif
    return OK;
}

API int rsmi_num_monitor_devices(uint32_t *n)
{
    if (check("rsmi_num_monitor_devices", n != NULL, "NULL output"))
        return INVALID_ARGS;
    *n = 2;
    return OK;
}

#define DEVICE_CALL(name, dev, out)                                                                \
    if (check(name, (dev) < 2 && (out) != NULL, "bad device or NULL output"))                      \
    return INVALID_ARGS

API int rsmi_dev_name_get(uint32_t dev, char *name, size_t len)
{
    DEVICE_CALL("rsmi_dev_name_get", dev, name);
    snprintf(name, len, "Fake AMD GPU %u", dev);
    return OK;
}

API int rsmi_dev_busy_percent_get(uint32_t dev, uint32_t *pct)
{
    DEVICE_CALL("rsmi_dev_busy_percent_get", dev, pct);
    *pct = dev == 0 ? 88 : 5;
    return OK;
}

API int rsmi_dev_memory_busy_percent_get(uint32_t dev, uint32_t *pct)
{
    DEVICE_CALL("rsmi_dev_memory_busy_percent_get", dev, pct);
    if (dev != 0)
        return NOT_SUPPORTED;
    *pct = 23;
    return OK;
}

API int rsmi_dev_memory_total_get(uint32_t dev, int type, uint64_t *total)
{
    DEVICE_CALL("rsmi_dev_memory_total_get", dev, total);
    if (check("rsmi_dev_memory_total_get(type)", type == 0, "memory type is not VRAM"))
        return INVALID_ARGS;
    *total = dev == 0 ? 192ull << 30 : 64ull << 30;
    return OK;
}

API int rsmi_dev_memory_usage_get(uint32_t dev, int type, uint64_t *used)
{
    DEVICE_CALL("rsmi_dev_memory_usage_get", dev, used);
    if (check("rsmi_dev_memory_usage_get(type)", type == 0, "memory type is not VRAM"))
        return INVALID_ARGS;
    *used = dev == 0 ? 40ull << 30 : 1ull << 30;
    return OK;
}

/* Device 0's system clock: 500, 1200, 2100 MHz, at 1200; memory: 900,
 * 1300 MHz, at 1300. Device 1 does not say. */
API int rsmi_dev_gpu_clk_freq_get(uint32_t dev, int type, frequencies *f)
{
    DEVICE_CALL("rsmi_dev_gpu_clk_freq_get", dev, f);
    if (check("rsmi_dev_gpu_clk_freq_get(type)", type == 0 || type == 4, "clock type"))
        return INVALID_ARGS;
    if (dev != 0)
        return NOT_SUPPORTED;
    memset(f, 0, sizeof *f);
    if (type == 0) {
        f->num_supported = 3;
        f->current = 1;
        f->frequency[0] = 500000000ull;
        f->frequency[1] = 1200000000ull;
        f->frequency[2] = 2100000000ull;
    } else {
        f->num_supported = 2;
        f->current = 1;
        f->frequency[0] = 900000000ull;
        f->frequency[1] = 1300000000ull;
    }
#ifndef FAKE_RSMI_V5
    if (mode_is("sleep")) {
        f->has_deep_sleep = 1;
        f->current = 0;
    }
#endif
    return OK;
}

#ifndef FAKE_RSMI_V5
API int rsmi_dev_power_get(uint32_t dev, uint64_t *uw, int *type)
{
    DEVICE_CALL("rsmi_dev_power_get", dev, uw);
    if (check("rsmi_dev_power_get(type)", type != NULL, "NULL type"))
        return INVALID_ARGS;
    if (dev != 0)
        return NOT_SUPPORTED;
    *uw = 550500000ull; /* 550.5 W */
    *type = 1;          /* current power */
    return OK;
}
#endif

API int rsmi_dev_power_ave_get(uint32_t dev, uint32_t sensor, uint64_t *uw)
{
    DEVICE_CALL("rsmi_dev_power_ave_get", dev, uw);
    if (check("rsmi_dev_power_ave_get(sensor)", sensor == 0, "sensor"))
        return INVALID_ARGS;
    if (dev != 0)
        return NOT_SUPPORTED;
    *uw = 301250000ull; /* 301.25 W */
    return OK;
}

API int rsmi_dev_temp_metric_get(uint32_t dev, uint32_t sensor, int metric, int64_t *milli_c)
{
    DEVICE_CALL("rsmi_dev_temp_metric_get", dev, milli_c);
    if (check("rsmi_dev_temp_metric_get(args)", (sensor == 0 || sensor == 1) && metric == 0,
              "sensor or metric"))
        return INVALID_ARGS;
    if (dev != 0 || sensor != 1)
        return NOT_SUPPORTED; /* only the junction sensor, as on MI300 */
    *milli_c = 67500;
    return OK;
}

/* The calling process uses 3 GiB on device 0; pid 1 cannot be read. */
static int process_of(uint32_t pid, process_info *p)
{
    if (pid == 1)
        return PERMISSION;
    if (pid != (uint32_t)getpid())
        return NOT_FOUND;
    *p = (process_info){pid, 7, 3ull << 30, 0, 40};
    return OK;
}

#ifndef FAKE_RSMI_V5
API int rsmi_compute_process_info_by_device_get(uint32_t pid, uint32_t dev, process_info *p)
{
    DEVICE_CALL("rsmi_compute_process_info_by_device_get", dev, p);
    int r = process_of(pid, p);
    return r == OK && dev != 0 ? NOT_FOUND : r;
}
#endif

API int rsmi_compute_process_gpus_get(uint32_t pid, uint32_t *dv, uint32_t *n)
{
    if (check("rsmi_compute_process_gpus_get", dv && n && *n > 0, "NULL or empty list"))
        return INVALID_ARGS;
    process_info p;
    int r = process_of(pid, &p);
    if (r != OK)
        return r;
    dv[0] = 0;
    *n = 1;
    return OK;
}

API int rsmi_compute_process_info_by_pid_get(uint32_t pid, process_info *p)
{
    if (check("rsmi_compute_process_info_by_pid_get", p != NULL, "NULL output"))
        return INVALID_ARGS;
    return process_of(pid, p);
}
