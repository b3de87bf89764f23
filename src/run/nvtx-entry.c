/*
 * nvtx-entry.c - libkscope.so's NVTX injection entry: kscope run points
 * NVTX_INJECTION64_PATH here. Each NVTX instance calls it at its first use;
 * the launcher session starts, then core/nvtx-ranges.c replaces NVTX's
 * no-ops with our callbacks. (It overrides the weak entry of nvtx-ranges.c,
 * which is what a library without the launcher, the Python extension, has.)
 */
#include "kscope-internal.h"
#include "run/run.h"

KSCOPE_EXTERN int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));
KSCOPE_EXTERN int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
    kscope__run_start();
    kscope__run_note_use();
    return kscope__nvtx_attach(get_export_table);
}
