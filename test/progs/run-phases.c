/*
 * run-phases.c - a host-only program that ends a phase after each of
 * four steps (kscope_advance_phase), the last phase left empty: under
 * `kscope run -m periodic_flushing` each phase is a part file. With an
 * argument, it says "ready" after the first part and waits to be killed.
 * Usage: run-phases [wait]
 */
#include "kscope.h"

#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    (void)argv;
    kscope_session_opts o = {.name = "program-own-name"};
    int sid = kscope_start(&o);
    char name[16];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "step%d", i);
        kscope_enter(name);
        kscope_exit(name);
        if (kscope_advance_phase(sid) < 0)
            fprintf(stderr, "advance: %s\n", kscope_last_error());
        if (argc > 1 && i == 0) {
            puts("ready");
            fflush(stdout);
            for (int s = 0; s < 300; s++)
                usleep(100000);
        }
    }
    kscope_finalize(sid, NULL);
    puts("phases done");
    return 0;
}
