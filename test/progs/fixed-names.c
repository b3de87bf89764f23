/*
 * fixed-names.c - preloaded into a writer by cli-outputs.sh so that the
 * names of its temporary files can be known in advance: getpid() says
 * 4242, and the first getrandom() call returns zeros (later calls other
 * bytes). The test plants symbolic links at those names and checks that
 * the writer never follows them.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

pid_t getpid(void)
{
    return 4242;
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    static int calls;
    (void)flags;
    memset(buf, calls++ ? 7 * calls : 0, len);
    return (ssize_t)len;
}
