/*
 * gpu.c - the GPU half of the public diagnostics API (kscope_gpu_*) over
 * the GPU vendors' libraries listed below, one line each.
 *
 * kscope_gpu_init loads every vendor's library (each file
 * src/diag/<vendor>.c says how) and numbers their GPUs one after the
 * other in the list's order; a vendor whose library is missing is left
 * out, and only when none loads is that an error. Each GPU is named after
 * MAX's convention by its vendor's prefix and its index there ("nv0",
 * "amd1": kscope_gpu_id), in every output that names GPUs. Why a GPU's
 * clock is capped is said in MAX's vocabulary, whatever the vendor.
 */
#include "diag/diag.h"
#include "kscope-internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- vendors */
/* The vendors, in the order their GPUs are numbered: one line each. */
// clang-format off
#define GPU_VENDORS(X) \
    X(kscope__nvml_gpus)     /* diag/nvml.c: NVIDIA GPUs */ \
    X(kscope__rocm_smi_gpus) /* diag/rocm-smi.c: AMD GPUs */
// clang-format on
/* -------------------------------------------------------- end of vendors */

#define DECLARE(v) extern const kscope__gpu_vendor v;
GPU_VENDORS(DECLARE)
#undef DECLARE

#define ENTRY(v) &v,
static const kscope__gpu_vendor *const vendors[] = {GPU_VENDORS(ENTRY)};
#undef ENTRY

#define N_VENDORS (sizeof vendors / sizeof vendors[0])
#define MAX_GPUS  (N_VENDORS * KSCOPE__VENDOR_GPUS)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int refs;                 /* kscope_gpu_init references held */
static uint32_t total;           /* GPUs of the loaded vendors */
static int loaded[N_VENDORS];    /* the vendor's library is loaded */
static char why[N_VENDORS][320]; /* why it did not load, at the last try */
/* Each GPU's vendor and index there, as the last kscope_gpu_init that
 * found GPUs numbered them: kept after shutdown, so samples taken before
 * can still be named. */
static struct {
    uint8_t vendor;
    uint8_t index;
} layout[MAX_GPUS];
static uint32_t layout_n;

const kscope__gpu_vendor *kscope__gpu_vendor_at(size_t i)
{
    return i < N_VENDORS ? vendors[i] : NULL;
}

const char *kscope__gpu_vendor_error(size_t i)
{
    return i < N_VENDORS ? why[i] : "";
}

/* Load every vendor's library; 0, or KSCOPE_ENOGPU naming why none loaded. */
static int load_all(void)
{
    int any = 0;
    total = 0;
    for (size_t v = 0; v < N_VENDORS; v++) {
        int n = vendors[v]->load();
        if (n < 0) {
            snprintf(why[v], sizeof why[v], "%s", kscope_last_error());
            continue;
        }
        why[v][0] = '\0';
        loaded[v] = any = 1;
        if (n > KSCOPE__VENDOR_GPUS)
            n = KSCOPE__VENDOR_GPUS;
        for (int i = 0; i < n; i++, total++) {
            layout[total].vendor = (uint8_t)v;
            layout[total].index = (uint8_t)i;
        }
    }
    if (any) {
        if (total)
            layout_n = total;
        return 0;
    }
    char all[N_VENDORS * 330] = "";
    for (size_t v = 0, used = 0; v < N_VENDORS; v++)
        used += (size_t)snprintf(all + used, sizeof all - used, "%s%s", used ? "; " : "", why[v]);
    return kscope__fail(KSCOPE_ENOGPU, "no GPU metrics: %s", all);
}

static void unload_all(void)
{
    for (size_t v = 0; v < N_VENDORS; v++)
        if (loaded[v]) {
            vendors[v]->unload();
            loaded[v] = 0;
        }
    total = 0;
}

int kscope_gpu_init(void)
{
    pthread_mutex_lock(&lock);
    int err = refs > 0 ? 0 : load_all();
    if (err == 0)
        refs++;
    int count = (int)total;
    pthread_mutex_unlock(&lock);
    return err < 0 ? err : count;
}

void kscope_gpu_shutdown(void)
{
    pthread_mutex_lock(&lock);
    if (refs > 0 && --refs == 0)
        unload_all();
    pthread_mutex_unlock(&lock);
}

int kscope_gpu_count(void)
{
    pthread_mutex_lock(&lock);
    int count = refs > 0 ? (int)total : -1;
    pthread_mutex_unlock(&lock);
    if (count < 0)
        return kscope__fail(KSCOPE_ESTATE, "GPU metrics not started (call kscope_gpu_init)");
    return count;
}

/* The vendor of GPU `device` and its index there; NULL with the error set.
 * Valid while the caller holds a reference from kscope_gpu_init. */
static const kscope__gpu_vendor *device_vendor(uint32_t device, uint32_t *index, int *err)
{
    if (refs <= 0) {
        *err = kscope__fail(KSCOPE_ESTATE, "GPU metrics not started (call kscope_gpu_init)");
        return NULL;
    }
    if (device >= total) {
        *err = kscope__fail(KSCOPE_EINVAL, "no GPU %u (found %u)", device, total);
        return NULL;
    }
    *index = layout[device].index;
    return vendors[layout[device].vendor];
}

int kscope_gpu_id(uint32_t device, char *buf, size_t size)
{
    if (!buf || size == 0)
        return kscope__fail(KSCOPE_EINVAL, "kscope_gpu_id: no buffer");
    pthread_mutex_lock(&lock);
    int known = device < layout_n;
    const char *prefix = known ? vendors[layout[device].vendor]->id : "";
    unsigned index = known ? layout[device].index : 0;
    pthread_mutex_unlock(&lock);
    if (!known)
        return kscope__fail(KSCOPE_EINVAL, "no GPU %u", device);
    return snprintf(buf, size, "%s%u", prefix, index);
}

int kscope_gpu_name(uint32_t device, char *buf, size_t size)
{
    int err = 0;
    uint32_t i;
    const kscope__gpu_vendor *v = device_vendor(device, &i, &err);
    if (!v)
        return err;
    if (!buf || size == 0)
        return kscope__fail(KSCOPE_EINVAL, "kscope_gpu_name: no buffer");
    char name[128] = "";
    if (v->name(i, name, sizeof name) < 0)
        snprintf(name, sizeof name, "GPU %u", device);
    return snprintf(buf, size, "%s", name);
}

int kscope_gpu_get_stats(uint32_t device, kscope_gpu_stats *out)
{
    if (!out)
        return kscope__fail(KSCOPE_EINVAL, "kscope_gpu_get_stats: no output");
    int err = 0;
    uint32_t i;
    const kscope__gpu_vendor *v = device_vendor(device, &i, &err);
    if (!v)
        return err;
    memset(out, 0, sizeof *out);
    out->device = device;
    return v->stats(i, out);
}

int kscope__gpu_call_costs(uint32_t device, int reps,
                           void (*emit)(const char *call, double us, void *arg), void *arg)
{
    int err = 0;
    uint32_t i;
    const kscope__gpu_vendor *v = device_vendor(device, &i, &err);
    if (!v)
        return err;
    if (reps < 1)
        return kscope__fail(KSCOPE_EINVAL, "kscope__gpu_call_costs: reps %d < 1", reps);
    return v->call_costs(i, reps, emit, arg);
}

static double clock_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int kscope__gpu_time_calls(uint32_t dev, int reps, int n, const char *const *names, const int *have,
                           void (*call)(uint32_t dev, int c),
                           void (*emit)(const char *call, double us, void *arg), void *arg)
{
    for (int c = 0; c < n; c++) {
        if (!have[c])
            continue;
        double t0 = clock_us();
        for (int i = 0; i < reps; i++)
            call(dev, c);
        emit(names[c], (clock_us() - t0) / reps, arg);
    }
    return 0;
}

int kscope__gpu_has_process_query(void)
{
    if (refs <= 0)
        return 0;
    for (size_t v = 0; v < N_VENDORS; v++)
        if (loaded[v] && vendors[v]->has_process_query())
            return 1;
    return 0;
}

int kscope__gpu_pids_memory(uint32_t device, const int *pids, size_t n, uint64_t *bytes)
{
    int err = 0;
    uint32_t i;
    const kscope__gpu_vendor *v = device_vendor(device, &i, &err);
    if (!v)
        return err;
    return v->pids_memory(i, pids, n, bytes);
}

int kscope_gpu_process_memory(uint32_t device, int pid, uint64_t *bytes)
{
    if (!bytes || pid <= 0)
        return kscope__fail(KSCOPE_EINVAL, "kscope_gpu_process_memory: bad pid %d or no output",
                            pid);
    return kscope__gpu_pids_memory(device, &pid, 1, bytes);
}

/* ------------------------------------------------------ throttle reasons */

/* MAX's vocabulary, in bit order (KSCOPE_THROTTLE_*). */
static const char *const throttle_names[] = {
    "gpu_idle",
    "applications_clocks_setting",
    "sw_power_cap",
    "hw_slowdown",
    "sync_boost",
    "sw_thermal_slowdown",
    "hw_thermal_slowdown",
    "hw_power_brake_slowdown",
    "display_clock_setting",
};

#define THROTTLE_COUNT (sizeof throttle_names / sizeof throttle_names[0])

const char *kscope_gpu_throttle_name(uint64_t reason)
{
    for (size_t i = 0; i < THROTTLE_COUNT; i++)
        if (reason == (1ull << i))
            return throttle_names[i];
    return NULL;
}

int kscope_gpu_throttle_format(uint64_t reasons, char *buf, size_t size)
{
    size_t len = 0;
    if (buf && size)
        buf[0] = '\0';
    for (size_t i = 0; i < THROTTLE_COUNT; i++) {
        if (!(reasons & (1ull << i)))
            continue;
        int n = snprintf(buf && len < size ? buf + len : NULL, buf && len < size ? size - len : 0,
                         "%s%s", len ? "," : "", throttle_names[i]);
        len += (size_t)n;
    }
    return (int)len;
}
