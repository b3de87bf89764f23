/*
 * run-devscope.c - a CUDA program with device-side scopes, on the pretend
 * GPU (test/progs/fake-gpu-*.c), for cli-run-devscope.sh: it loads a
 * module that has kscope/device.h's symbol and names, launches its kernel
 * three times and runs the kernel's body on the host (the header's own
 * code, KSCOPE_DEVICE_EMULATE): 4 warps, each timing "phase" for 100, 200,
 * 300 and 400 ns.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KSCOPE_DEVICE_EMULATE
#include "kscope/device.h"

uint64_t fake_cuda_next_grid(void);

static uint64_t grid, clock_now;
static uint32_t warp;
uint64_t kscope_emu_gridid(void)
{
    return grid;
}
uint64_t kscope_emu_clock(int clock64)
{
    return clock64 ? clock_now : clock_now;
}
uint32_t kscope_emu_smid(void)
{
    return warp;
}
uint32_t kscope_emu_warpid(void)
{
    return 0;
}
uint32_t kscope_emu_lane(void)
{
    return 0;
}
uint32_t kscope_emu_leader(void)
{
    return 0;
}
uint32_t kscope_emu_warp_index(void)
{
    return warp;
}
uint32_t kscope_emu_cta_index(void)
{
    return warp;
}
int kscope_emu_cta_leader(void)
{
    return 1;
}

int main(void)
{
    static const char image[] = "ELF kscope_device_buffer\0" KSCOPE_DEVICE_MARK "phase";
    struct {
        size_t size;
        const char *bytes;
    } im = {sizeof image, image};
    CUdevice d;
    CUcontext c;
    CUmodule m;
    CUfunction f;
    CUdeviceptr sym;
    size_t size;
    if (cuInit(0) || cuDeviceGet(&d, 0) || cuDevicePrimaryCtxRetain(&c, d) || cuCtxSetCurrent(c) ||
        cuModuleLoadData(&m, &im) || cuModuleGetFunction(&f, m, "scoped") ||
        cuModuleGetGlobal(&sym, &size, m, "kscope_device_buffer"))
        return 1;
    for (int i = 0; i < 3; i++) {
        grid = fake_cuda_next_grid();
        if (cuLaunchKernel(f, 20, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL))
            return 1;
        kscope_device_buffer = *(kscope_device_ctl **)(uintptr_t)sym;
        for (warp = 0; warp < 4; warp++) {
            clock_now = 1000;
            kscope_device_t s = KSCOPE_DEVICE_ENTER("phase");
            clock_now = 1000 + 100 * (warp + 1);
            kscope_device_exit(s);
        }
    }
    printf("attached %d\n", kscope_device_buffer != NULL);
    return 0;
}
