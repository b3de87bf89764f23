/*
 * file-out.h - writing an output file whole, for every writer of kscope:
 * sessions' profiles and run facts, `convert`, `merge -o`, `report --html`.
 *
 * What the user named decides how it is written:
 *  - a regular file, or a name not there yet: into a temporary file beside
 *    it, flushed to disk and renamed over it, so a reader sees the old
 *    file or the new one, never half of one, and a failed write (bad
 *    input, a full disk, a kill) leaves the old file as it was;
 *  - a symbolic link: the same, for the file it names (the link stays);
 *  - anything else (a device such as /dev/null, a FIFO): written in place,
 *    opened and never replaced or removed.
 *
 * Temporary files are named "<target>.kscope-tmp.<pid>.<random>" (so a
 * user who finds one knows what it is), created with O_EXCL|O_NOFOLLOW
 * (a planted file or link at that name is never followed or reused), and
 * locked (flock) by their writer until renamed. One whose lock is free was
 * left by a writer that died mid-write: the next write of the same output
 * removes it.
 */
#ifndef KSCOPE_FILE_OUT_H
#define KSCOPE_FILE_OUT_H

#include <stddef.h>
#include <stdio.h>

/* What a temporary file's name holds after the target's name. */
#define KSCOPE__TMP_TAG ".kscope-tmp."

typedef struct kscope__out {
    const char *path; /* as named by the caller, for messages */
    char *target;     /* the file replaced (a symbolic link resolved) */
    char *tmp;        /* the temporary file, NULL when written in place */
    int fd;
    FILE *f; /* kscope__out_stream's */
    int err; /* the first errno of a write */
} kscope__out;

/* Open path for a whole new content. 0, or a negative KSCOPE_E* code with
 * "PATH: why" in err (nothing is created then). */
int kscope__out_open(kscope__out *o, const char *path, char *err, size_t errlen);

/* Append len bytes (a failure is kept for kscope__out_commit). */
void kscope__out_write(kscope__out *o, const void *buf, size_t len);

/* A stdio stream on the output, for writers that print; closed by commit
 * or abort. NULL (out of memory) is reported by commit. */
FILE *kscope__out_stream(kscope__out *o);

/* Finish: flush to disk and put the new file in place. 0, or a negative
 * KSCOPE_E* code (KSCOPE_ENOSPC for a full disk) with "PATH: why" in err;
 * on failure the temporary file is removed and the old output is kept. */
int kscope__out_commit(kscope__out *o, char *err, size_t errlen);

/* Give up: the temporary file is removed, the old output kept. */
void kscope__out_abort(kscope__out *o);

/* Open, write buf whole and commit. */
int kscope__out_file(const char *path, const void *buf, size_t len, char *err, size_t errlen);

/* Remove the temporary files of target that no writer holds any more;
 * returns how many. kscope__out_open calls it. */
int kscope__out_clean_stale(const char *target);

#endif
