/*
 * run-phases.c - a host-only program that ends a phase after each of
 * four steps (kscope_advance_phase), the last phase left empty: under
 * `kscope run -m periodic_flushing` each phase is a part file.
 */
#include "kscope.h"

#include <stdio.h>

int main(void)
{
    kscope_session_opts o = {.name = "program-own-name"};
    int sid = kscope_start(&o);
    char name[16];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "step%d", i);
        kscope_enter(name);
        kscope_exit(name);
        if (kscope_advance_phase(sid) < 0)
            fprintf(stderr, "advance: %s\n", kscope_last_error());
    }
    kscope_finalize(sid, NULL);
    puts("phases done");
    return 0;
}
