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

uint64_t kscope_emu_gridid(void)
{
    return tu_emu.grid;
}
uint64_t kscope_emu_clock(int clock64)
{
    return clock64 && tu_emu.clock64_scale ? tu_emu.clock * tu_emu.clock64_scale : tu_emu.clock;
}
uint32_t kscope_emu_smid(void)
{
    return tu_emu.sm;
}
uint32_t kscope_emu_warpid(void)
{
    return tu_emu.warpid;
}
uint32_t kscope_emu_lane(void)
{
    return tu_emu.lane;
}
uint32_t kscope_emu_leader(void)
{
    return tu_emu.leader;
}
uint32_t kscope_emu_warp_index(void)
{
    return tu_emu.warp_index;
}
uint32_t kscope_emu_cta_index(void)
{
    return tu_emu.cta_index;
}
int kscope_emu_cta_leader(void)
{
    return tu_emu.cta_leader;
}

#endif
