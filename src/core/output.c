/*
 * output.c - a session's files (profiles, parts, the run's facts) written
 * through format/file-out.c, whole or streamed as a writer makes them: a
 * reader sees the old file or the new one, never half of one; a link is
 * written through, a device in place.
 */
#include "core.h"
#include "format/file-out.h"

#include <stdlib.h>

#define ERRLEN (4096 + 256)

struct kscope__outfile {
    kscope__out out;
};

int kscope__output_file(const char *path, const char *buf, size_t len)
{
    char err[ERRLEN];
    int rc = kscope__out_file(path, buf, len, err, sizeof err);
    return rc < 0 ? kscope__fail(rc, "%s", err) : 0;
}

int kscope__output_open(const char *path, kscope__outfile **out)
{
    kscope__outfile *o = malloc(sizeof *o);
    if (!o)
        return kscope__fail(KSCOPE_ENOMEM, "%s: out of memory", path);
    char err[ERRLEN];
    int rc = kscope__out_open(&o->out, path, err, sizeof err);
    if (rc < 0) {
        free(o);
        return kscope__fail(rc, "%s", err);
    }
    *out = o;
    return 0;
}

int kscope__output_write(void *outfile, const void *buf, size_t len)
{
    kscope__outfile *o = outfile;
    kscope__out_write(&o->out, buf, len);
    char err[ERRLEN];
    int rc = kscope__out_error(&o->out, err, sizeof err);
    return rc < 0 ? kscope__fail(rc, "%s", err) : 0;
}

int kscope__output_close(kscope__outfile *o, int commit)
{
    int rc = 0;
    if (commit) {
        char err[ERRLEN];
        rc = kscope__out_commit(&o->out, err, sizeof err);
        if (rc < 0)
            rc = kscope__fail(rc, "%s", err);
    } else {
        kscope__out_abort(&o->out);
    }
    free(o);
    return rc;
}
