/*
 * nvtx-inproc.c - a program that starts its own kscope session and turns
 * NVTX ranges into scopes with kscope_nvtx_ranges (no kscope run):
 *   nvtx-inproc on     ranges on before NVTX's first call: "outer" and
 *                      "inner" become scopes, under the program's scope
 *   nvtx-inproc off    ranges off: the ranges are ignored, the scope stays
 *   nvtx-inproc mixed  on, one range; off, one range; on again, one range
 * Writes nvtx-inproc.hatchet; prints what kscope_nvtx_ranges returned and
 * the error text, one line.
 */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <string.h>

#include "kscope.h"

static void ranges(const char *outer, const char *inner)
{
    nvtxRangePushA(outer);
    nvtxRangePushA(inner);
    nvtxMarkA("mark");
    nvtxRangePop();
    nvtxRangePop();
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "on";
    kscope_session_opts o = {.name = "nvtx-inproc"};
    int s = kscope_start(&o);
    if (s < 0) {
        fprintf(stderr, "kscope_start: %s\n", kscope_last_error());
        return 1;
    }
    int on = strcmp(how, "off") != 0;
    int rc = kscope_nvtx_ranges(on);
    printf("kscope_nvtx_ranges: %d%s%s\n", rc, rc ? " " : "", rc ? kscope_last_error() : "");
    kscope_enter("program");
    ranges("outer", "inner");
    if (strcmp(how, "mixed") == 0) {
        kscope_nvtx_ranges(0);
        ranges("hidden", "hidden-inner");
        nvtxRangeEnd(nvtxRangeStartA("hidden-start"));
        kscope_nvtx_ranges(1);
        ranges("again", "again-inner");
    }
    kscope_exit("program");
    return kscope_finalize(s, NULL) == 0 ? 0 : 1;
}
