/*
 * device-info.c - each device's facts for derived metrics (arch, SM count,
 * clocks, bus width), read through the driver once per device, the first
 * time a record of its work arrives.
 */
#include "gpu/cupti/cupti-internal.h"

#include <cuda.h>
#include <stdio.h>

static uint64_t devices_seen; /* bit d: device d's info was recorded (buffer thread) */

static int attr(CUresult (*attribute)(int *, CUdevice_attribute, CUdevice), CUdevice d,
                CUdevice_attribute a)
{
    int v = 0;
    return attribute(&v, a, d) == CUDA_SUCCESS ? v : 0;
}

void kscope__cupti_note_device(uint32_t ordinal, CUresult (*device_get)(CUdevice *, int),
                               CUresult (*attribute)(int *, CUdevice_attribute, CUdevice))
{
    if (ordinal >= 64 || (devices_seen >> ordinal & 1))
        return;
    devices_seen |= 1ull << ordinal;
    CUdevice d;
    if (!device_get || !attribute || device_get(&d, (int)ordinal) != CUDA_SUCCESS)
        return;
    char arch[16];
    snprintf(arch, sizeof arch, "%d%d",
             attr(attribute, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
             attr(attribute, d, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    kscope__set_device_info(ordinal, arch,
                            attr(attribute, d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                            attr(attribute, d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE),
                            attr(attribute, d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE),
                            attr(attribute, d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
}
