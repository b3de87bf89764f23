/*
 * devices.c - the reading toolkit's table of GPU architectures: peak
 * dense throughput per device type and architecture, as proton-viewer
 * derives it (fixed figures, or figures scaled by the device's SM count
 * and clock where the file carries them).
 */
#include "gpu/devices/devices.h"

#include <string.h>

const char *kscope__device_default_type(void)
{
    return "CUDA";
}

/* 16-bit tensor throughput of an H100 PCIe (114 SMs at 1755 MHz), the
 * reference that Hopper parts scale from. */
#define HOPPER_REF_SMS      114.0
#define HOPPER_REF_KHZ      1755e3
#define HOPPER_REF_TFLOP16  1513.0
#define BLACKWELL_FLOPS_CLK 16384.0 /* 8-bit operations per SM per clock */

static double nvidia_peak(const char *arch, int64_t num_sms, int64_t clock_khz, double bytes)
{
    if (strcmp(arch, "80") == 0)
        return 624e12 / bytes;
    if (strcmp(arch, "89") == 0)
        return 330.3e12 / bytes;
    if (strcmp(arch, "90") == 0)
        return ((double)num_sms / HOPPER_REF_SMS * (double)clock_khz / HOPPER_REF_KHZ *
                HOPPER_REF_TFLOP16) *
               1e12 / bytes;
    if (strcmp(arch, "100") == 0)
        return ((double)num_sms * BLACKWELL_FLOPS_CLK * ((double)clock_khz / 1e3) * 1e6) / bytes;
    return 0;
}

static double amd_peak(const char *arch, double bytes)
{
    if (strcmp(arch, "gfx90a") == 0)
        return 383e12 / bytes;
    if (strcmp(arch, "gfx941") == 0 || strcmp(arch, "gfx942") == 0)
        return 2614.9e12 / bytes;
    return 0;
}

double kscope__device_peak_flops(const char *type, const char *arch, int64_t num_sms,
                                 int64_t clock_khz, int width)
{
    double bytes = width / 8.0;
    const char *a = arch ? arch : "";
    if (strcmp(type, "CUDA") == 0)
        return nvidia_peak(a, num_sms, clock_khz, bytes);
    if (strcmp(type, "HIP") == 0)
        return amd_peak(a, bytes);
    return 0;
}
