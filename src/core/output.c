/*
 * output.c - a session's files (profiles, parts, the run's facts) written
 * whole through format/file-out.c: a reader sees the old file or the new
 * one, never half of one; a link is written through, a device in place.
 */
#include "core.h"
#include "format/file-out.h"

int kscope__output_file(const char *path, const char *buf, size_t len)
{
    char err[4096 + 256];
    int rc = kscope__out_file(path, buf, len, err, sizeof err);
    return rc < 0 ? kscope__fail(rc, "%s", err) : 0;
}
