/*
 * run-window.c - records scopes at set times after its start, for the
 * `kscope run --delay/--duration` test: each argument SECONDS:NAME waits
 * until SECONDS after the start, then enters and leaves a scope NAME.
 * Usage: run-window 0:before 2:inside 4:after
 */
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double start = now_s();
    for (int i = 1; i < argc; i++) {
        char *colon = strchr(argv[i], ':');
        if (!colon) {
            fprintf(stderr, "run-window: '%s' is not SECONDS:NAME\n", argv[i]);
            return 2;
        }
        double at = atof(argv[i]);
        while (now_s() - start < at) {
            struct timespec nap = {0, 10 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
        kscope_enter(colon + 1);
        kscope_exit(colon + 1);
    }
    return 0;
}
