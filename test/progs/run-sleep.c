/*
 * run-sleep.c - records a scope, says "ready" on stdout, then waits to be
 * killed, for the `kscope run` signal tests. Usage: run-sleep SECONDS
 */
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? atoi(argv[1]) : 30;
    kscope_enter("before-signal");
    kscope_exit("before-signal");
    kscope_enter("waiting");
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < seconds * 10; i++)
        usleep(100000);
    kscope_exit("waiting");
    return 0;
}
