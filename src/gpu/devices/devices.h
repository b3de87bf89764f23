/*
 * devices.h - what the reading toolkit knows of the GPUs that profiles
 * name: the device type a file means when it names none, and each known
 * architecture's peak throughput, for the derived metrics (`util`,
 * `tflop/s` against peak) that proton-viewer computes the same way.
 */
#ifndef KSCOPE_DEVICES_H
#define KSCOPE_DEVICES_H

#include <stdint.h>

/* The device type of GPU work in a file that names none (Proton's traces
 * and trees of one vendor's GPUs). */
const char *kscope__device_default_type(void);

/* Peak operations per second at `width` bits (8, 16, 32, 64) of a device
 * of `type` and `arch` with num_sms multiprocessors at clock_khz; 0 when
 * the architecture is not known. */
double kscope__device_peak_flops(const char *type, const char *arch, int64_t num_sms,
                                 int64_t clock_khz, int width);

#endif
