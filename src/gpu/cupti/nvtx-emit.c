/*
 * nvtx-emit.c - host scopes as NVTX ranges, for the `detailed` level: a
 * range sink of the registry (gpu/backend.h), built with the CUPTI backend
 * (it needs the toolkit's NVTX header).
 *
 * The core calls it on scope enter/exit when profiling is detailed, so
 * Nsight Systems shows kscope's scopes with their colours. NVTX v3 is
 * header-only: with no tool attached a push costs a few nanoseconds.
 *
 * When kscope is itself the NVTX tool (kscope run's injection), a range
 * pushed here comes back as an annotation; the per-thread guard keeps that
 * from emitting again, so the two never recurse.
 */
#include "gpu/cupti/cupti-internal.h"

#include <nvtx3/nvToolsExt.h>

static __thread int emitting;

/* Push a range named `name` in colour 0xRRGGBB (0: the tool's default). */
static void nvtx_push(const char *name, uint32_t color)
{
    if (emitting)
        return;
    nvtxEventAttributes_t attr = {0};
    attr.version = NVTX_VERSION;
    attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attr.message.ascii = name ? name : "";
    if (color) {
        attr.colorType = NVTX_COLOR_ARGB;
        attr.color = 0xFF000000u | color;
    }
    emitting = 1;
    nvtxRangePushEx(&attr);
    emitting = 0;
}

/* Pop the innermost range pushed on this thread. */
static void nvtx_pop(void)
{
    if (emitting)
        return;
    emitting = 1;
    nvtxRangePop();
    emitting = 0;
}

const kscope__range_sink kscope__nvtx_sink = {
    .name = "NVTX",
    .push = nvtx_push,
    .pop = nvtx_pop,
};
