/*
 * cmd-version.c - `kscope version`: the library version and what it was
 * built with.
 */
#include "cli/cmd.h"
#include "kscope-internal.h"

#include <stdio.h>

const char cmd_version_summary[] = "print the kscope version and build features";
const char cmd_version_help[] = "usage: kscope version\n"
                                "\n"
                                "Print kscope's version and the GPU backend it was built with.\n";

int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const kscope__backend *b = kscope__backend_default(); /* the registry's first built one */
    printf("kscope %s (gpu backend: %s)\n", kscope_version(), b ? b->name : "none");
    return KSCOPE_EXIT_OK;
}
