/*
 * proc-status.h - a field of /proc/self/status, for the tests and the
 * memory benchmark that measure the process's own size (test-memory.c,
 * bench/memory/memory_bench.c).
 */
#ifndef KSCOPE_PROC_STATUS_H
#define KSCOPE_PROC_STATUS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A field of /proc/self/status in kB ("VmRSS:", "VmHWM:"); -1 if it cannot
 * be read. */
static inline long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0)
            kb = atol(line + n);
    if (f)
        fclose(f);
    return kb;
}

#endif
