/*
 * run-report.c - drives the exit summary of `kscope run` on a manifest
 * written by hand, for cli-run-summary.sh. Usage: run-report MANIFEST TOP
 * Prints the summary on stdout, then "errors N".
 */
#include "cli/run-summary.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int errors = kscope__run_report(argv[1], atol(argv[2]), stdout);
    printf("errors %d\n", errors);
    return 0;
}
