/*
 * fake-nvml.c - a stand-in libnvidia-ml for the diagnostics tests, loaded
 * through KSCOPE_NVML_LIBRARY on machines without a GPU.
 *
 * Two devices: "Fake GPU 0" answers every query with fixed values; "Fake
 * GPU 1" reports only the v1 memory query and current clocks, so the tests
 * see absent fields. FAKE_NVML_MODE=fail-init makes nvmlInit_v2 fail as it
 * does when the driver is not loaded; FAKE_NVML_MODE=lost makes device 0
 * report "GPU is lost" on its utilization query. FAKE_NVML_PID adds a
 * process to device 0's list. fake_nvml_max_clock_calls() counts the
 * maximum-clock queries (slow on real GPUs, so kscope caches them).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

enum { OK = 0, NOT_SUPPORTED = 3, INSUFFICIENT_SIZE = 7, DRIVER_NOT_LOADED = 9, GPU_LOST = 15 };

typedef struct fake_device {
    int index;
} fake_device;

static fake_device devices[2] = {{0}, {1}};

typedef struct {
    unsigned int gpu, memory;
} utilization;
typedef struct {
    unsigned long long total, free, used;
} memory_v1;
typedef struct {
    unsigned int version;
    unsigned long long total, reserved, free, used;
} memory_v2;
typedef struct {
    unsigned int pid;
    unsigned long long used;
    unsigned int gi, ci;
} process_info;

static int mode_is(const char *m)
{
    const char *v = getenv("FAKE_NVML_MODE");
    return v && strcmp(v, m) == 0;
}

API int nvmlInit_v2(void)
{
    return mode_is("fail-init") ? DRIVER_NOT_LOADED : OK;
}

API int nvmlShutdown(void)
{
    return OK;
}

API const char *nvmlErrorString(int r)
{
    return r == DRIVER_NOT_LOADED ? "Driver Not Loaded" : r == GPU_LOST ? "GPU is lost" : "Error";
}

API int nvmlDeviceGetCount_v2(unsigned int *n)
{
    *n = 2;
    return OK;
}

API int nvmlDeviceGetHandleByIndex_v2(unsigned int i, fake_device **h)
{
    if (i >= 2)
        return 2;
    *h = &devices[i];
    return OK;
}

API int nvmlDeviceGetName(fake_device *h, char *buf, unsigned int len)
{
    const char *name = h->index == 0 ? "Fake GPU 0" : "Fake GPU 1";
    if (len < strlen(name) + 1)
        return INSUFFICIENT_SIZE;
    strcpy(buf, name);
    return OK;
}

API int nvmlDeviceGetUtilizationRates(fake_device *h, utilization *u)
{
    if (h->index == 0 && mode_is("lost"))
        return GPU_LOST;
    if (h->index != 0)
        return NOT_SUPPORTED;
    u->gpu = 97;
    u->memory = 41;
    return OK;
}

API int nvmlDeviceGetMemoryInfo_v2(fake_device *h, memory_v2 *m)
{
    /* A version other than nvmlMemory_v2 is refused, as NVML does. */
    if (h->index != 0 || m->version != (unsigned int)(sizeof *m | (2u << 24)))
        return NOT_SUPPORTED;
    m->total = 80ull << 30;
    m->reserved = 512ull << 20;
    m->used = 10ull << 30;
    m->free = m->total - m->reserved - m->used;
    return OK;
}

API int nvmlDeviceGetMemoryInfo(fake_device *h, memory_v1 *m)
{
    m->total = 16ull << 30;
    m->used = (unsigned long long)(h->index + 1) << 30;
    m->free = m->total - m->used;
    return OK;
}

API int nvmlDeviceGetClockInfo(fake_device *h, int type, unsigned int *mhz)
{
    *mhz = type == 1 ? 1755u - (unsigned)h->index : 2619u;
    return OK;
}

/* How often the maximum clocks were asked for: kscope reads them once. */
static int max_clock_calls;

API int fake_nvml_max_clock_calls(void)
{
    return max_clock_calls;
}

API int nvmlDeviceGetMaxClockInfo(fake_device *h, int type, unsigned int *mhz)
{
    max_clock_calls++;
    if (h->index != 0)
        return NOT_SUPPORTED;
    *mhz = type == 1 ? 1980u : 2619u;
    return OK;
}

API int nvmlDeviceGetPowerUsage(fake_device *h, unsigned int *mw)
{
    if (h->index != 0)
        return NOT_SUPPORTED;
    *mw = 412345;
    return OK;
}

API int nvmlDeviceGetTemperature(fake_device *h, int sensor, unsigned int *c)
{
    if (h->index != 0 || sensor != 0)
        return NOT_SUPPORTED;
    *c = 61;
    return OK;
}

/* Only the newer name exists here, as in drivers from 535 on. */
API int nvmlDeviceGetCurrentClocksEventReasons(fake_device *h, unsigned long long *r)
{
    if (h->index != 0)
        return NOT_SUPPORTED;
    *r = 0x4 | 0x40; /* sw_power_cap, hw_thermal_slowdown */
    return OK;
}

/* Device 0 runs the calling process (two contexts), pid 1 (whose memory
 * is not available) and, when FAKE_NVML_PID is set, that pid (64 MiB). */
API int nvmlDeviceGetComputeRunningProcesses_v3(fake_device *h, unsigned int *n, process_info *p)
{
    if (h->index != 0) {
        *n = 0;
        return OK;
    }
    const char *other = getenv("FAKE_NVML_PID");
    unsigned int want = other ? 4 : 3;
    if (*n < want) {
        *n = want;
        return INSUFFICIENT_SIZE;
    }
    p[0] = (process_info){(unsigned)getpid(), 100ull << 20, 0, 0};
    p[1] = (process_info){1, ~0ull, 0, 0};
    p[2] = (process_info){(unsigned)getpid(), 28ull << 20, 0, 0};
    if (other)
        p[3] = (process_info){(unsigned)atoi(other), 64ull << 20, 0, 0};
    *n = want;
    return OK;
}
