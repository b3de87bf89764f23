/*
 * device-emu.h - the emulated GPU registers behind kscope/device.h's
 * KSCOPE_DEVICE_EMULATE hooks, for the programs that run a kernel's body
 * on the host (test-gpu-devscope.c, progs/run-devscope.c): set tu_emu's
 * fields, then run the body. It defines the hooks, so one file of a
 * program includes it, after kscope/device.h.
 */
#ifndef KSCOPE_TEST_DEVICE_EMU_H
#define KSCOPE_TEST_DEVICE_EMU_H

#include <stdint.h>

static struct {
    uint64_t grid, clock;
    uint64_t clock64_scale; /* clock64 reads clock times this (0: as clock) */
    uint32_t sm, warpid, lane, leader, warp_index, cta_index;
    int cta_leader;
} tu_emu;

/* The hooks: each but the clock reads its register. */
#define TU_EMU_HOOK(type, hook, reg)                                                               \
    type kscope_emu_##hook(void)                                                                   \
    {                                                                                              \
        return tu_emu.reg;                                                                         \
    }
TU_EMU_HOOK(uint64_t, gridid, grid)
TU_EMU_HOOK(uint32_t, smid, sm)
TU_EMU_HOOK(uint32_t, warpid, warpid)
TU_EMU_HOOK(uint32_t, lane, lane)
TU_EMU_HOOK(uint32_t, leader, leader)
TU_EMU_HOOK(uint32_t, warp_index, warp_index)
TU_EMU_HOOK(uint32_t, cta_index, cta_index)
TU_EMU_HOOK(int, cta_leader, cta_leader)
#undef TU_EMU_HOOK

uint64_t kscope_emu_clock(int clock64)
{
    return clock64 && tu_emu.clock64_scale ? tu_emu.clock * tu_emu.clock64_scale : tu_emu.clock;
}

#endif
