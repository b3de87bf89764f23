/*
 * run-summary.h - what `kscope run` prints when the command ends: the
 * errors its processes reported, and a summary of each profile written.
 */
#ifndef KSCOPE_RUN_SUMMARY_H
#define KSCOPE_RUN_SUMMARY_H

#include <stdio.h>

/* Read the run's manifest and print to out: each error reported by a
 * process ("kscope run: ..."), then for each profile written the top
 * `top` kernels (none when top is 0), GPU busy time against wall time,
 * dropped records, and the path with the command that views it. Returns
 * the number of errors reported (a manifest that cannot be read counts as
 * one). */
int kscope__run_report(const char *manifest, long top, FILE *out);

#endif
