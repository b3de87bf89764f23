/*
 * rocm-smi.c - AMD GPUs' metrics through ROCm SMI (librocm_smi64), loaded
 * with dlopen at run time: the "amd" vendor of src/diag/gpu.c's list, with
 * MAX's names for AMD GPUs (amd0, amd1, ...) and MAX's readings: busy
 * percent as gpu_usage_percent, memory busy percent as
 * memory_activity_percent, VRAM total and used (free is their difference;
 * no reserved figure), the system clock as the core clock and the memory
 * clock, each with the highest level it supports as its maximum (none
 * while the GPU sleeps); besides, like NVIDIA's, power and temperature.
 * ROCm SMI has no throttle reasons: that field stays absent.
 *
 * Nothing of ROCm SMI is needed at build time: the entry points and
 * structures used are declared here from its documented ABI; where its
 * header is installed (librocm-smi-dev), the declarations are checked
 * against it at compile time. rsmi_frequencies_t gained a leading field
 * and a 33rd level in ROCm SMI 6: the library's version says which layout
 * it fills, and a level count or index out of range leaves the clock
 * absent rather than wrong.
 *
 * Without a library named by KSCOPE_ROCM_SMI_LIBRARY, the library is
 * loaded only where the amdgpu driver is (/sys/module/amdgpu): elsewhere
 * rsmi_init fails after writing to the process's stderr.
 */
#include "diag/diag.h"
#include "kscope-internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------- ROCm SMI's ABI (subset) */

typedef unsigned amd_ret; /* rsmi_status_t */

#define AMD_SUCCESS       0u
#define AMD_NOT_SUPPORTED 2u
#define AMD_NOT_FOUND     10u
#define AMD_MEM_VRAM      0u /* rsmi_memory_type_t */
#define AMD_CLK_SYS       0u /* rsmi_clk_type_t */
#define AMD_CLK_MEM       4u
#define AMD_TEMP_EDGE     0u /* rsmi_temperature_type_t */
#define AMD_TEMP_JUNCTION 1u
#define AMD_TEMP_CURRENT  0u /* rsmi_temperature_metric_t */

/* rsmi_frequencies_t before ROCm SMI 6 ... */
typedef struct {
    uint32_t num_supported, current;
    uint64_t frequency[32];
} amd_freqs_v5;

/* ... and from 6 on. */
typedef struct {
    _Bool has_deep_sleep;
    uint32_t num_supported, current;
    uint64_t frequency[33];
} amd_freqs_v6;

typedef struct {
    uint32_t process_id, pasid;
    uint64_t vram_usage, sdma_usage;
    uint32_t cu_occupancy;
} amd_process;

typedef struct {
    uint32_t major, minor, patch;
    const char *build;
} amd_version;

#if defined(__has_include)
#if __has_include(<rocm_smi/rocm_smi.h>)
/* The header is here: check what is declared above against it. */
#include <rocm_smi/rocm_smi.h>
#define SAME_LAYOUT(ours, theirs, field)                                                           \
    _Static_assert(offsetof(ours, field) == offsetof(theirs, field), #ours "." #field)
_Static_assert(sizeof(amd_freqs_v5) == sizeof(rsmi_frequencies_t) ||
                   sizeof(amd_freqs_v6) == sizeof(rsmi_frequencies_t),
               "rsmi_frequencies_t");
_Static_assert(sizeof(amd_process) == sizeof(rsmi_process_info_t), "rsmi_process_info_t");
SAME_LAYOUT(amd_process, rsmi_process_info_t, vram_usage);
SAME_LAYOUT(amd_version, rsmi_version_t, major);
SAME_LAYOUT(amd_version, rsmi_version_t, build);
_Static_assert(RSMI_STATUS_SUCCESS == AMD_SUCCESS && RSMI_STATUS_NOT_FOUND == AMD_NOT_FOUND &&
                   RSMI_STATUS_NOT_SUPPORTED == AMD_NOT_SUPPORTED,
               "rsmi_status_t");
_Static_assert(RSMI_MEM_TYPE_VRAM == AMD_MEM_VRAM && RSMI_CLK_TYPE_SYS == AMD_CLK_SYS &&
                   RSMI_CLK_TYPE_MEM == AMD_CLK_MEM && RSMI_TEMP_TYPE_EDGE == AMD_TEMP_EDGE &&
                   RSMI_TEMP_TYPE_JUNCTION == AMD_TEMP_JUNCTION &&
                   RSMI_TEMP_CURRENT == AMD_TEMP_CURRENT,
               "rsmi enums");
#define SAME_TYPE(fn, type) _Static_assert(__builtin_types_compatible_p(__typeof__(fn), type), #fn)
SAME_TYPE(rsmi_init, amd_ret(uint64_t));
SAME_TYPE(rsmi_num_monitor_devices, amd_ret(uint32_t *));
SAME_TYPE(rsmi_dev_name_get, amd_ret(uint32_t, char *, size_t));
SAME_TYPE(rsmi_dev_busy_percent_get, amd_ret(uint32_t, uint32_t *));
SAME_TYPE(rsmi_dev_memory_total_get, amd_ret(uint32_t, unsigned, uint64_t *));
SAME_TYPE(rsmi_dev_power_ave_get, amd_ret(uint32_t, uint32_t, uint64_t *));
SAME_TYPE(rsmi_dev_temp_metric_get, amd_ret(uint32_t, uint32_t, unsigned, int64_t *));
SAME_TYPE(rsmi_compute_process_gpus_get, amd_ret(uint32_t, uint32_t *, uint32_t *));
SAME_TYPE(rsmi_status_string, amd_ret(amd_ret, const char **));
#endif
#endif

/* The entry points, resolved by name; the optional ones may stay NULL. */
static struct {
    void *lib;
    uint32_t count;
    int v6; /* the library fills rsmi_frequencies_t's ROCm SMI 6 layout */
    amd_ret (*init)(uint64_t);
    amd_ret (*shut_down)(void);
    amd_ret (*num_devices)(uint32_t *);
    amd_ret (*status_string)(amd_ret, const char **);
    amd_ret (*version)(amd_version *);
    amd_ret (*name)(uint32_t, char *, size_t);
    amd_ret (*busy)(uint32_t, uint32_t *);
    amd_ret (*memory_busy)(uint32_t, uint32_t *);
    amd_ret (*memory_total)(uint32_t, unsigned, uint64_t *);
    amd_ret (*memory_usage)(uint32_t, unsigned, uint64_t *);
    amd_ret (*clock)(uint32_t, unsigned, void *);
    amd_ret (*power)(uint32_t, uint64_t *, unsigned *);
    amd_ret (*power_ave)(uint32_t, uint32_t, uint64_t *);
    amd_ret (*temperature)(uint32_t, uint32_t, unsigned, int64_t *);
    amd_ret (*proc_by_device)(uint32_t, uint32_t, amd_process *);
    amd_ret (*proc_gpus)(uint32_t, uint32_t *, uint32_t *);
    amd_ret (*proc_by_pid)(uint32_t, amd_process *);
} am;

static const char *rsmi_error(amd_ret r)
{
    const char *s = NULL;
    if (am.status_string && am.status_string(r, &s) == AMD_SUCCESS && s)
        return s;
    return "unknown ROCm SMI error";
}

/* Resolve every entry point; returns the name of a missing required one. */
static const char *rsmi_resolve(void *lib)
{
#define REQUIRE(field, sym)                                                                        \
    if (!(*(void **)&am.field = dlsym(lib, sym)))                                                  \
        return sym;
#define OPTIONAL(field, sym) *(void **)&am.field = dlsym(lib, sym);
    REQUIRE(init, "rsmi_init")
    REQUIRE(shut_down, "rsmi_shut_down")
    REQUIRE(num_devices, "rsmi_num_monitor_devices")
    OPTIONAL(status_string, "rsmi_status_string")
    OPTIONAL(version, "rsmi_version_get")
    OPTIONAL(name, "rsmi_dev_name_get")
    OPTIONAL(busy, "rsmi_dev_busy_percent_get")
    OPTIONAL(memory_busy, "rsmi_dev_memory_busy_percent_get")
    OPTIONAL(memory_total, "rsmi_dev_memory_total_get")
    OPTIONAL(memory_usage, "rsmi_dev_memory_usage_get")
    OPTIONAL(clock, "rsmi_dev_gpu_clk_freq_get")
    /* The newer call first: it also answers where only the current power
     * is measured (MI300); ROCm SMI 5 has only the average. */
    OPTIONAL(power, "rsmi_dev_power_get")
    OPTIONAL(power_ave, "rsmi_dev_power_ave_get")
    OPTIONAL(temperature, "rsmi_dev_temp_metric_get")
    OPTIONAL(proc_by_device, "rsmi_compute_process_info_by_device_get")
    OPTIONAL(proc_gpus, "rsmi_compute_process_gpus_get")
    OPTIONAL(proc_by_pid, "rsmi_compute_process_info_by_pid_get")
#undef REQUIRE
#undef OPTIONAL
    return NULL;
}

static void rsmi_unload(void)
{
    void *lib = am.lib;
    memset(&am, 0, sizeof am);
    if (lib)
        dlclose(lib);
}

/* The library named by KSCOPE_ROCM_SMI_LIBRARY, else NULL (the usual names
 * are tried). */
static const char *named_library(void)
{
    const char *path = getenv("KSCOPE_ROCM_SMI_LIBRARY");
    return path && *path ? path : NULL;
}

static void *rsmi_open(char *tried, size_t size)
{
    static const char *const names[] = {"librocm_smi64.so",   "/opt/rocm/lib/librocm_smi64.so",
                                        "librocm_smi64.so.7", "librocm_smi64.so.6",
                                        "librocm_smi64.so.5", "librocm_smi64.so.1"};
    const char *named = named_library();
    size_t n = named ? 1 : sizeof names / sizeof names[0];
    tried[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *path = named ? named : names[i];
        void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (lib)
            return lib;
        size_t used = strlen(tried);
        snprintf(tried + used, size - used, "%s%s", used ? ", " : "", named ? dlerror() : path);
    }
    return NULL;
}

static int rsmi_found(void)
{
    char tried[1024];
    void *lib = rsmi_open(tried, sizeof tried);
    if (lib)
        dlclose(lib);
    return lib != NULL;
}

/* Open the library, start ROCm SMI and count the GPUs: their number, or
 * KSCOPE_ENOGPU with a message. */
static int rsmi_load(void)
{
    if (!named_library() && access("/sys/module/amdgpu", F_OK) != 0)
        return kscope__fail(KSCOPE_ENOGPU,
                            "ROCm SMI not loaded: no AMD GPU driver (amdgpu is not loaded)");
    char tried[1024];
    am.lib = rsmi_open(tried, sizeof tried);
    if (!am.lib)
        return kscope__fail(KSCOPE_ENOGPU, "cannot load ROCm SMI: %s", tried);
    const char *missing = rsmi_resolve(am.lib);
    if (missing) {
        rsmi_unload();
        return kscope__fail(KSCOPE_ENOGPU, "ROCm SMI library lacks %s", missing);
    }
    amd_ret r = am.init(0);
    if (r != AMD_SUCCESS) {
        int err = kscope__fail(KSCOPE_ENOGPU, "ROCm SMI failed to start: %s", rsmi_error(r));
        rsmi_unload();
        return err;
    }
    uint32_t count = 0;
    if ((r = am.num_devices(&count)) != AMD_SUCCESS) {
        int err = kscope__fail(KSCOPE_ENOGPU, "ROCm SMI cannot count GPUs: %s", rsmi_error(r));
        am.shut_down();
        rsmi_unload();
        return err;
    }
    amd_version v = {0};
    am.v6 = am.version && am.version(&v) == AMD_SUCCESS && v.major >= 6;
    am.count = count > KSCOPE__VENDOR_GPUS ? KSCOPE__VENDOR_GPUS : count;
    return (int)am.count;
}

static void rsmi_stop(void)
{
    am.shut_down();
    rsmi_unload();
}

static int rsmi_name(uint32_t dev, char *buf, size_t size)
{
    char name[128] = "";
    if (!am.name || am.name(dev, name, sizeof name) != AMD_SUCCESS || !name[0])
        return -1;
    name[sizeof name - 1] = '\0';
    return snprintf(buf, size, "%s", name);
}

/* A clock domain's current and highest level in MHz; 0 when the library
 * does not say, says something out of range, or the GPU sleeps. */
static int read_clock(uint32_t dev, unsigned type, uint32_t *mhz, uint32_t *max_mhz)
{
    union {
        amd_freqs_v5 v5;
        amd_freqs_v6 v6;
    } f;
    memset(&f, 0, sizeof f);
    if (!am.clock || am.clock(dev, type, &f) != AMD_SUCCESS)
        return 0;
    uint32_t n = am.v6 ? f.v6.num_supported : f.v5.num_supported;
    uint32_t cur = am.v6 ? f.v6.current : f.v5.current;
    const uint64_t *hz = am.v6 ? f.v6.frequency : f.v5.frequency;
    uint32_t levels = am.v6 ? 33 : 32;
    if (n == 0 || n > levels || cur >= n || (am.v6 && f.v6.has_deep_sleep && cur == 0))
        return 0;
    *mhz = (uint32_t)(hz[cur] / 1000000u);
    *max_mhz = (uint32_t)(hz[n - 1] / 1000000u);
    return 1;
}

static int rsmi_stats(uint32_t dev, kscope_gpu_stats *out)
{
    uint32_t pct;
    if (am.busy && am.busy(dev, &pct) == AMD_SUCCESS) {
        out->gpu_usage_percent = pct;
        out->has |= KSCOPE_GPU_HAS_UTIL;
    }
    if (am.memory_busy && am.memory_busy(dev, &pct) == AMD_SUCCESS) {
        out->memory_activity_percent = pct;
        out->has |= KSCOPE_GPU_HAS_MEM_ACTIVITY;
    }
    uint64_t total, used;
    if (am.memory_total && am.memory_usage &&
        am.memory_total(dev, AMD_MEM_VRAM, &total) == AMD_SUCCESS &&
        am.memory_usage(dev, AMD_MEM_VRAM, &used) == AMD_SUCCESS) {
        out->total_bytes = total;
        out->used_bytes = used;
        out->free_bytes = total > used ? total - used : 0;
        out->has |= KSCOPE_GPU_HAS_MEMORY;
    }
    if (read_clock(dev, AMD_CLK_SYS, &out->core_mhz, &out->core_max_mhz))
        out->has |= KSCOPE_GPU_HAS_CORE_CLOCK | KSCOPE_GPU_HAS_CORE_MAX;
    if (read_clock(dev, AMD_CLK_MEM, &out->mem_mhz, &out->mem_max_mhz))
        out->has |= KSCOPE_GPU_HAS_MEM_CLOCK | KSCOPE_GPU_HAS_MEM_MAX;
    uint64_t uw = 0;
    unsigned kind;
    if ((am.power && am.power(dev, &uw, &kind) == AMD_SUCCESS) ||
        (am.power_ave && am.power_ave(dev, 0, &uw) == AMD_SUCCESS)) {
        out->power_mw = (uint32_t)(uw / 1000u);
        out->has |= KSCOPE_GPU_HAS_POWER;
    }
    int64_t milli_c;
    if (am.temperature &&
        (am.temperature(dev, AMD_TEMP_EDGE, AMD_TEMP_CURRENT, &milli_c) == AMD_SUCCESS ||
         am.temperature(dev, AMD_TEMP_JUNCTION, AMD_TEMP_CURRENT, &milli_c) == AMD_SUCCESS) &&
        milli_c >= 0) {
        out->temperature_c = (uint32_t)(milli_c / 1000);
        out->has |= KSCOPE_GPU_HAS_TEMPERATURE;
    }
    return 0;
}

static int rsmi_has_process_query(void)
{
    return am.proc_by_device || (am.proc_gpus && am.proc_by_pid);
}

/* GPU memory of process `pid` on `dev` into *bytes; 0 or KSCOPE_ENOTSUP. */
static int process_memory(uint32_t dev, int pid, uint64_t *bytes)
{
    amd_process info[2]; /* room for fields a later library may add */
    memset(info, 0, sizeof info);
    *bytes = 0;
    if (am.proc_by_device) {
        amd_ret r = am.proc_by_device((uint32_t)pid, dev, info);
        if (r == AMD_SUCCESS)
            *bytes = info[0].vram_usage;
        else if (r != AMD_NOT_FOUND)
            return kscope__fail(KSCOPE_ENOTSUP, "AMD GPU %u: cannot read process %d's memory: %s",
                                dev, pid, rsmi_error(r));
        return 0;
    }
    uint32_t gpus[KSCOPE__VENDOR_GPUS], n = KSCOPE__VENDOR_GPUS, on_dev = 0;
    amd_ret r = am.proc_gpus((uint32_t)pid, gpus, &n);
    if (r == AMD_NOT_FOUND)
        return 0;
    if (r != AMD_SUCCESS)
        return kscope__fail(KSCOPE_ENOTSUP, "AMD GPU %u: cannot list process %d's GPUs: %s", dev,
                            pid, rsmi_error(r));
    for (uint32_t i = 0; i < n && i < KSCOPE__VENDOR_GPUS; i++)
        on_dev |= gpus[i] == dev;
    if (!on_dev)
        return 0;
    if (n > 1)
        return kscope__fail(KSCOPE_ENOTSUP,
                            "process %d uses %u AMD GPUs: this ROCm SMI gives its memory only "
                            "in total",
                            pid, n);
    if ((r = am.proc_by_pid((uint32_t)pid, info)) != AMD_SUCCESS)
        return kscope__fail(KSCOPE_ENOTSUP, "AMD GPU %u: cannot read process %d's memory: %s", dev,
                            pid, rsmi_error(r));
    *bytes = info[0].vram_usage;
    return 0;
}

static int rsmi_pids_memory(uint32_t dev, const int *pids, size_t n, uint64_t *bytes)
{
    if (!rsmi_has_process_query())
        return kscope__fail(KSCOPE_ENOTSUP, "ROCm SMI has no per-process memory query");
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b;
        int err = process_memory(dev, pids[i], &b);
        if (err < 0)
            return err;
        total += b;
    }
    *bytes = total;
    return 0;
}

/* The queries rsmi_stats makes, as rsmi_call_costs times them. */
enum { Q_BUSY, Q_MEMBUSY, Q_MEMTOTAL, Q_MEMUSED, Q_CLOCK, Q_POWER, Q_POWERAVE, Q_TEMP, Q_NCALLS };

/* Query c of the list above, once, on device dev (its answer dropped). */
static void rsmi_call(uint32_t dev, int c)
{
    uint32_t pct;
    uint64_t v;
    int64_t t;
    unsigned kind;
    uint32_t mhz, max;
    switch (c) {
    case Q_BUSY:
        am.busy(dev, &pct);
        break;
    case Q_MEMBUSY:
        am.memory_busy(dev, &pct);
        break;
    case Q_MEMTOTAL:
        am.memory_total(dev, AMD_MEM_VRAM, &v);
        break;
    case Q_MEMUSED:
        am.memory_usage(dev, AMD_MEM_VRAM, &v);
        break;
    case Q_CLOCK:
        read_clock(dev, AMD_CLK_SYS, &mhz, &max);
        break;
    case Q_POWER:
        am.power(dev, &v, &kind);
        break;
    case Q_POWERAVE:
        am.power_ave(dev, 0, &v);
        break;
    case Q_TEMP:
        am.temperature(dev, AMD_TEMP_EDGE, AMD_TEMP_CURRENT, &t);
        break;
    }
}

static int rsmi_call_costs(uint32_t dev, int reps,
                           void (*emit)(const char *call, double us, void *arg), void *arg)
{
    static const char *const names[Q_NCALLS] = {
        "rsmi_dev_busy_percent_get", "rsmi_dev_memory_busy_percent_get",
        "rsmi_dev_memory_total_get", "rsmi_dev_memory_usage_get",
        "rsmi_dev_gpu_clk_freq_get", "rsmi_dev_power_get",
        "rsmi_dev_power_ave_get",    "rsmi_dev_temp_metric_get"};
    int have[Q_NCALLS] = {!!am.busy,  !!am.memory_busy, !!am.memory_total, !!am.memory_usage,
                          !!am.clock, !!am.power,       !!am.power_ave,    !!am.temperature};
    return kscope__gpu_time_calls(dev, reps, Q_NCALLS, names, have, rsmi_call, emit, arg);
}

const kscope__gpu_vendor kscope__rocm_smi_gpus = {
    .id = "amd",
    .label = "ROCm SMI",
    .found = rsmi_found,
    .load = rsmi_load,
    .unload = rsmi_stop,
    .name = rsmi_name,
    .stats = rsmi_stats,
    .has_process_query = rsmi_has_process_query,
    .pids_memory = rsmi_pids_memory,
    .call_costs = rsmi_call_costs,
};
