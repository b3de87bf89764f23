/*
 * nvml.c - NVIDIA GPUs' metrics through NVML, loaded with dlopen at run
 * time: the "nv" vendor of src/diag/gpu.c's list.
 *
 * Nothing of NVML is needed at build time: the few types and entry points
 * used are declared here from NVML's documented ABI. A metric a device does
 * not support leaves its bit out of kscope_gpu_stats.has; only a lost GPU
 * is an error, so a recorder never stops over one field.
 */
#include "diag/diag.h"
#include "kscope-internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ NVML's ABI (subset) */

typedef int nvml_ret;
typedef struct nvml_device_st *nvml_device;

#define NVML_SUCCESS                 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_NOT_SUPPORTED     3
#define NVML_ERROR_GPU_IS_LOST       15
#define NVML_CLOCK_SM                1
#define NVML_CLOCK_MEM               2
#define NVML_TEMPERATURE_GPU         0
#define NVML_DEVICE_NAME_BUFFER      96
#define NVML_VALUE_NOT_AVAILABLE     (~0ull)

typedef struct {
    unsigned int gpu, memory;
} nvml_utilization;

typedef struct {
    unsigned long long total, free, used;
} nvml_memory_v1;

typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} nvml_memory_v2;

/* nvmlMemory_v2: the struct's size with the version in the top byte. */
#define NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(nvml_memory_v2) | (2u << 24)))

/* nvmlProcessInfo_t as taken by nvmlDeviceGetComputeRunningProcesses_v3. */
typedef struct {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
} nvml_process_info;

/* The entry points, resolved by name; the optional ones may stay NULL. */
static struct {
    void *lib;
    unsigned int count;
    nvml_device handles[KSCOPE__VENDOR_GPUS];
    /* Maximum clocks never change, and NVML takes over a millisecond to
     * answer each query on an H200: read once when NVML starts.
     * max_ret holds NVML's answer (NVML_SUCCESS or why not). */
    unsigned int max_mhz[KSCOPE__VENDOR_GPUS][2];
    nvml_ret max_ret[KSCOPE__VENDOR_GPUS][2];
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*get_count)(unsigned int *);
    nvml_ret (*get_handle)(unsigned int, nvml_device *);
    nvml_ret (*get_name)(nvml_device, char *, unsigned int);
    nvml_ret (*get_utilization)(nvml_device, nvml_utilization *);
    nvml_ret (*get_memory)(nvml_device, nvml_memory_v1 *);
    nvml_ret (*get_memory_v2)(nvml_device, nvml_memory_v2 *);
    nvml_ret (*get_clock)(nvml_device, int, unsigned int *);
    nvml_ret (*get_max_clock)(nvml_device, int, unsigned int *);
    nvml_ret (*get_power)(nvml_device, unsigned int *);
    nvml_ret (*get_temperature)(nvml_device, int, unsigned int *);
    nvml_ret (*get_throttle)(nvml_device, unsigned long long *);
    nvml_ret (*get_processes)(nvml_device, unsigned int *, nvml_process_info *);
} nv;

static const char *nvml_error(nvml_ret r)
{
    return nv.error_string ? nv.error_string(r) : "unknown NVML error";
}

/* Resolve every entry point; returns the name of a missing required one. */
static const char *nvml_resolve(void *lib)
{
#define REQUIRE(field, sym)                                                                        \
    if (!(*(void **)&nv.field = dlsym(lib, sym)))                                                  \
        return sym;
#define OPTIONAL(field, sym) *(void **)&nv.field = dlsym(lib, sym);
    REQUIRE(init, "nvmlInit_v2")
    REQUIRE(shutdown, "nvmlShutdown")
    REQUIRE(get_count, "nvmlDeviceGetCount_v2")
    REQUIRE(get_handle, "nvmlDeviceGetHandleByIndex_v2")
    OPTIONAL(error_string, "nvmlErrorString")
    OPTIONAL(get_name, "nvmlDeviceGetName")
    OPTIONAL(get_utilization, "nvmlDeviceGetUtilizationRates")
    OPTIONAL(get_memory, "nvmlDeviceGetMemoryInfo")
    OPTIONAL(get_memory_v2, "nvmlDeviceGetMemoryInfo_v2")
    OPTIONAL(get_clock, "nvmlDeviceGetClockInfo")
    OPTIONAL(get_max_clock, "nvmlDeviceGetMaxClockInfo")
    OPTIONAL(get_power, "nvmlDeviceGetPowerUsage")
    OPTIONAL(get_temperature, "nvmlDeviceGetTemperature")
    /* The newer name first; drivers before 535 only have the older one. */
    OPTIONAL(get_throttle, "nvmlDeviceGetCurrentClocksEventReasons")
    if (!nv.get_throttle)
        OPTIONAL(get_throttle, "nvmlDeviceGetCurrentClocksThrottleReasons")
    OPTIONAL(get_processes, "nvmlDeviceGetComputeRunningProcesses_v3")
#undef REQUIRE
#undef OPTIONAL
    return NULL;
}

static void nvml_unload(void)
{
    void *lib = nv.lib;
    memset(&nv, 0, sizeof nv);
    if (lib)
        dlclose(lib);
}

/* Cache a device's maximum SM and memory clocks (see nv.max_mhz). */
static void read_max_clocks(unsigned int i)
{
    static const int kinds[2] = {NVML_CLOCK_SM, NVML_CLOCK_MEM};
    for (int k = 0; k < 2; k++) {
        nv.max_mhz[i][k] = 0;
        nv.max_ret[i][k] = nv.get_max_clock
                               ? nv.get_max_clock(nv.handles[i], kinds[k], &nv.max_mhz[i][k])
                               : NVML_ERROR_NOT_SUPPORTED;
    }
}

/* The library NVML is loaded from: $KSCOPE_NVML_LIBRARY, else the driver's. */
static const char *nvml_path(void)
{
    const char *path = getenv("KSCOPE_NVML_LIBRARY");
    return path && *path ? path : "libnvidia-ml.so.1";
}

static int nvml_found(void)
{
    void *lib = dlopen(nvml_path(), RTLD_NOW | RTLD_LOCAL);
    if (lib)
        dlclose(lib);
    return lib != NULL;
}

/* Open the library, initialise NVML and take every device's handle: the
 * number of GPUs, or KSCOPE_ENOGPU with a message. */
static int nvml_load(void)
{
    const char *path = nvml_path();
    nv.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib)
        return kscope__fail(KSCOPE_ENOGPU, "cannot load NVML: %s", dlerror());
    const char *missing = nvml_resolve(nv.lib);
    if (missing) {
        nvml_unload();
        return kscope__fail(KSCOPE_ENOGPU, "%s lacks %s (driver too old)", path, missing);
    }
    nvml_ret r = nv.init();
    if (r != NVML_SUCCESS) {
        int err = kscope__fail(KSCOPE_ENOGPU, "NVML failed to start: %s", nvml_error(r));
        nvml_unload();
        return err;
    }
    unsigned int count = 0;
    if ((r = nv.get_count(&count)) != NVML_SUCCESS) {
        int err = kscope__fail(KSCOPE_ENOGPU, "NVML cannot count GPUs: %s", nvml_error(r));
        nv.shutdown();
        nvml_unload();
        return err;
    }
    if (count > sizeof nv.handles / sizeof nv.handles[0])
        count = sizeof nv.handles / sizeof nv.handles[0];
    for (unsigned int i = 0; i < count; i++) {
        if ((r = nv.get_handle(i, &nv.handles[i])) != NVML_SUCCESS) {
            int err = kscope__fail(KSCOPE_ENOGPU, "NVML cannot open GPU %u: %s", i, nvml_error(r));
            nv.shutdown();
            nvml_unload();
            return err;
        }
    }
    nv.count = count;
    for (unsigned int i = 0; i < count; i++)
        read_max_clocks(i);
    return (int)count;
}

static void nvml_stop(void)
{
    nv.shutdown();
    nvml_unload();
}

static int nvml_name(uint32_t device, char *buf, size_t size)
{
    char name[NVML_DEVICE_NAME_BUFFER] = "";
    if (!nv.get_name || nv.get_name(nv.handles[device], name, sizeof name) != NVML_SUCCESS)
        return -1;
    name[sizeof name - 1] = '\0';
    return snprintf(buf, size, "%s", name);
}

/* Memory: the v2 call also gives `reserved`; the v1 call is the fallback. */
static nvml_ret read_memory(nvml_device h, kscope_gpu_stats *out)
{
    nvml_ret r = -1;
    if (nv.get_memory_v2) {
        nvml_memory_v2 m = {.version = NVML_MEMORY_V2_VERSION};
        if ((r = nv.get_memory_v2(h, &m)) == NVML_SUCCESS) {
            out->total_bytes = m.total;
            out->free_bytes = m.free;
            out->used_bytes = m.used;
            out->reserved_bytes = m.reserved;
            out->has |= KSCOPE_GPU_HAS_MEMORY | KSCOPE_GPU_HAS_RESERVED;
            return r;
        }
    }
    if (nv.get_memory) {
        nvml_memory_v1 m;
        if ((r = nv.get_memory(h, &m)) == NVML_SUCCESS) {
            out->total_bytes = m.total;
            out->free_bytes = m.free;
            out->used_bytes = m.used;
            out->has |= KSCOPE_GPU_HAS_MEMORY;
        }
    }
    return r;
}

/* Read one unsigned metric; set `bit` in has when the device answered.
 * Returns 1 when the GPU is lost (then sampling it is pointless). */
static int read_uint(nvml_ret r, uint32_t *has, uint32_t bit)
{
    if (r == NVML_SUCCESS)
        *has |= bit;
    return r == NVML_ERROR_GPU_IS_LOST;
}

/* The queries nvml_stats makes, as nvml_call_costs times them. */
enum {
    Q_UTIL,
    Q_MEM2,
    Q_MEM1,
    Q_CLOCK,
    Q_MAXCLOCK,
    Q_POWER,
    Q_TEMP,
    Q_THROTTLE,
    Q_PROCS,
    Q_NCALLS
};

/* Query c of the list above, once, on device dev (its answer dropped). */
static void nvml_call(uint32_t dev, int c)
{
    nvml_device h = nv.handles[dev];
    nvml_utilization u;
    nvml_memory_v2 m2 = {.version = NVML_MEMORY_V2_VERSION};
    nvml_memory_v1 m1;
    unsigned v;
    unsigned long long reasons;
    switch (c) {
    case Q_UTIL:
        nv.get_utilization(h, &u);
        break;
    case Q_MEM2:
        nv.get_memory_v2(h, &m2);
        break;
    case Q_MEM1:
        nv.get_memory(h, &m1);
        break;
    case Q_CLOCK:
        nv.get_clock(h, NVML_CLOCK_SM, &v);
        break;
    case Q_MAXCLOCK:
        nv.get_max_clock(h, NVML_CLOCK_SM, &v);
        break;
    case Q_POWER:
        nv.get_power(h, &v);
        break;
    case Q_TEMP:
        nv.get_temperature(h, NVML_TEMPERATURE_GPU, &v);
        break;
    case Q_THROTTLE:
        nv.get_throttle(h, &reasons);
        break;
    case Q_PROCS: {
        nvml_process_info info[256];
        unsigned int count = sizeof info / sizeof info[0];
        nv.get_processes(h, &count, info);
        break;
    }
    }
}

static int nvml_call_costs(uint32_t device, int reps,
                           void (*emit)(const char *call, double us, void *arg), void *arg)
{
    static const char *const names[Q_NCALLS] = {"nvmlDeviceGetUtilizationRates",
                                                "nvmlDeviceGetMemoryInfo_v2",
                                                "nvmlDeviceGetMemoryInfo",
                                                "nvmlDeviceGetClockInfo",
                                                "nvmlDeviceGetMaxClockInfo (once, at start)",
                                                "nvmlDeviceGetPowerUsage",
                                                "nvmlDeviceGetTemperature",
                                                "nvmlDeviceGetCurrentClocksEventReasons",
                                                "nvmlDeviceGetComputeRunningProcesses_v3"};
    int have[Q_NCALLS] = {!!nv.get_utilization, !!nv.get_memory_v2, !!nv.get_memory,
                          !!nv.get_clock,       !!nv.get_max_clock, !!nv.get_power,
                          !!nv.get_temperature, !!nv.get_throttle,  !!nv.get_processes};
    return kscope__gpu_time_calls(device, reps, Q_NCALLS, names, have, nvml_call, emit, arg);
}

static int nvml_stats(uint32_t device, kscope_gpu_stats *out)
{
    nvml_device h = nv.handles[device];
    int lost = 0;
    if (nv.get_utilization) {
        nvml_utilization u;
        nvml_ret r = nv.get_utilization(h, &u);
        lost |= read_uint(r, &out->has, KSCOPE_GPU_HAS_UTIL | KSCOPE_GPU_HAS_MEM_ACTIVITY);
        out->gpu_usage_percent = r == NVML_SUCCESS ? u.gpu : 0;
        out->memory_activity_percent = r == NVML_SUCCESS ? u.memory : 0;
    }
    lost |= read_memory(h, out) == NVML_ERROR_GPU_IS_LOST;
    if (nv.get_clock) {
        lost |= read_uint(nv.get_clock(h, NVML_CLOCK_SM, &out->core_mhz), &out->has,
                          KSCOPE_GPU_HAS_CORE_CLOCK);
        lost |= read_uint(nv.get_clock(h, NVML_CLOCK_MEM, &out->mem_mhz), &out->has,
                          KSCOPE_GPU_HAS_MEM_CLOCK);
    }
    out->core_max_mhz = nv.max_mhz[device][0];
    out->mem_max_mhz = nv.max_mhz[device][1];
    read_uint(nv.max_ret[device][0], &out->has, KSCOPE_GPU_HAS_CORE_MAX);
    read_uint(nv.max_ret[device][1], &out->has, KSCOPE_GPU_HAS_MEM_MAX);
    if (nv.get_power)
        lost |= read_uint(nv.get_power(h, &out->power_mw), &out->has, KSCOPE_GPU_HAS_POWER);
    if (nv.get_temperature)
        lost |= read_uint(nv.get_temperature(h, NVML_TEMPERATURE_GPU, &out->temperature_c),
                          &out->has, KSCOPE_GPU_HAS_TEMPERATURE);
    if (nv.get_throttle) {
        unsigned long long reasons = 0;
        lost |= read_uint(nv.get_throttle(h, &reasons), &out->has, KSCOPE_GPU_HAS_THROTTLE);
        out->throttle_reasons = reasons;
    }
    if (lost)
        return kscope__fail(KSCOPE_ENOGPU, "GPU %u stopped answering (NVML: GPU is lost)", device);
    return 0;
}

static int has_pid(const int *pids, size_t n, unsigned int pid)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned int)pids[i] == pid)
            return 1;
    return 0;
}

static int nvml_has_process_query(void)
{
    return nv.get_processes != NULL;
}

static int nvml_pids_memory(uint32_t device, const int *pids, size_t n, uint64_t *bytes)
{
    nvml_device h = nv.handles[device];
    if (!nv.get_processes)
        return kscope__fail(KSCOPE_ENOTSUP, "NVML has no per-process memory query");
    nvml_process_info info[256];
    unsigned int count = sizeof info / sizeof info[0];
    nvml_ret r = nv.get_processes(h, &count, info);
    if (r == NVML_ERROR_INSUFFICIENT_SIZE)
        return kscope__fail(KSCOPE_ENOTSUP, "GPU %u runs more than 256 processes", device);
    if (r != NVML_SUCCESS)
        return kscope__fail(KSCOPE_ENOTSUP, "GPU %u: cannot list its processes: %s", device,
                            nvml_error(r));
    uint64_t total = 0;
    for (unsigned int i = 0; i < count; i++) {
        if (!has_pid(pids, n, info[i].pid))
            continue;
        if (info[i].used_gpu_memory == NVML_VALUE_NOT_AVAILABLE)
            return kscope__fail(KSCOPE_ENOTSUP,
                                "GPU %u does not report process %u's memory (not permitted)",
                                device, info[i].pid);
        total += info[i].used_gpu_memory;
    }
    *bytes = total;
    return 0;
}

const kscope__gpu_vendor kscope__nvml_gpus = {
    .id = "nv",
    .label = "NVML",
    .found = nvml_found,
    .load = nvml_load,
    .unload = nvml_stop,
    .name = nvml_name,
    .stats = nvml_stats,
    .has_process_query = nvml_has_process_query,
    .pids_memory = nvml_pids_memory,
    .call_costs = nvml_call_costs,
};
