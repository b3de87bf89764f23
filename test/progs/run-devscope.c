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
#include "pretend-gpu.h"
#include "../support/device-emu.h"

uint64_t fake_cuda_next_grid(void);

int main(void)
{
    static const char image[] = "ELF kscope_device_buffer\0" KSCOPE_DEVICE_MARK "phase";
    struct {
        size_t size;
        const char *bytes;
    } im = {sizeof image, image};
    CUmodule m;
    CUfunction f;
    CUdeviceptr sym;
    size_t size;
    if (!pretend_gpu_context(NULL) || cuModuleLoadData(&m, &im) ||
        cuModuleGetFunction(&f, m, "scoped") ||
        cuModuleGetGlobal(&sym, &size, m, "kscope_device_buffer"))
        return 1;
    tu_emu.cta_leader = 1; /* warp w on SM w, alone in CTA w, lane 0 */
    for (int i = 0; i < 3; i++) {
        tu_emu.grid = fake_cuda_next_grid();
        if (cuLaunchKernel(f, 20, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL))
            return 1;
        kscope_device_buffer = *(kscope_device_ctl **)(uintptr_t)sym;
        for (uint32_t warp = 0; warp < 4; warp++) {
            tu_emu.sm = tu_emu.warp_index = tu_emu.cta_index = warp;
            tu_emu.clock = 1000;
            kscope_device_t s = KSCOPE_DEVICE_ENTER("phase");
            tu_emu.clock = 1000 + 100 * (warp + 1);
            kscope_device_exit(s);
        }
    }
    printf("attached %d\n", kscope_device_buffer != NULL);
    return 0;
}
