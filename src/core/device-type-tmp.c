#include "kscope-internal.h"
const char *kscope__gpu_device_type(void)
{
    return "CUDA";
}
