/*
 * run-many.c - a program recording many scopes, for the trace memory
 * tests: N rounds (argv[1], default 100000) of an outer scope holding an
 * inner one.
 */
#include "kscope.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    for (long i = 0; i < n; i++) {
        kscope_enter("outer");
        kscope_enter("inner");
        kscope_exit("inner");
        kscope_exit("outer");
    }
    return 0;
}
