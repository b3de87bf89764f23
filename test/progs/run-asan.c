/*
 * run-asan.c - a program built with -fsanitize=address, for
 * test/cli-run-asan.sh: AddressSanitizer refuses to start unless its
 * runtime is the first library loaded, which `kscope run` must arrange.
 * It allocates, prints, starts a shell that says whether the sanitizer
 * runtime is in its LD_PRELOAD, and exits 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *p = malloc(16);
    strcpy(p, "asan works");
    printf("%s\n", p);
    fflush(stdout);
    free(p);
    int rc = system("case \"$LD_PRELOAD\" in *libasan*) echo 'child: libasan preloaded';; "
                    "*) echo 'child: no libasan preloaded';; esac");
    return rc == 0 ? 3 : 4;
}
