/*
 * cmd-version.c - `kscope version`: the library version and what it was
 * built with.
 */
#include "cli/cmd.h"
#include "kscope.h"

#include <stdio.h>

const char cmd_version_summary[] = "print the kscope version and build features";
const char cmd_version_help[] = "usage: kscope version\n"
                                "\n"
                                "Print kscope's version and whether the CUPTI backend was built.\n";

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
#ifdef KSCOPE_HAVE_CUDA
    const char *gpu = "cupti";
#else
    const char *gpu = "none";
#endif
    printf("kscope %s (gpu backend: %s)\n", kscope_version(), gpu);
    return KSCOPE_EXIT_OK;
}
