/*
 * read-file.c - opening a profile: checks that the path is a readable,
 * non-empty regular file (opened without blocking and judged on the
 * descriptor), detects the format from the first bytes (each reader of
 * format.h's table says how sure it is) and streams the content through
 * that format's reader in chunks, so a file is never held whole and what
 * is no profile is refused in bounded memory: a tree format's reader
 * gives the tree, a trace format's its events, made into a tree
 * (trace-tree.c) and handed to whoever else asks (the HTML page's
 * timeline, merge). Every byte of a profile is read through one input
 * (input_read), so a decoding of the whole file sits in one place, in
 * front of every reader: a gzip-compressed file (its first two bytes
 * tell, whatever its name) is inflated there, with zlib. Every failure
 * becomes "PATH: what is wrong", the path escaped as names are.
 */
#include "read/read.h"
#include "format/file-out.h"
#include "format/run-facts.h"
#include "kscope.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CHUNK (256 * 1024)

/* Input without a size (a pipe, a device) is read up to this much. */
#define UNSIZED_MAX ((size_t)1 << 30)

/* The reader column of format.h's table. */
static const kscope__reader *const readers[KSCOPE__FORMAT_COUNT] = {
#define KSCOPE__READER_ROW(id, name, kind, exts, tree_w, trace_w, reader)                          \
    [KSCOPE__FORMAT_##id] = &reader,
    KSCOPE__FORMATS(KSCOPE__READER_ROW)
#undef KSCOPE__READER_ROW
};

const kscope__reader *kscope__reader_of(kscope__format_id id)
{
    return id > KSCOPE__FORMAT_UNKNOWN && id < KSCOPE__FORMAT_COUNT ? readers[id] : NULL;
}

/* A FIFO without a writer would block for ever and a device may never end:
 * such inputs are read only when KSCOPE_READ_SPECIAL=1 asks for it. */
static int special_files_allowed(void)
{
    const char *v = getenv("KSCOPE_READ_SPECIAL");
    return v && strcmp(v, "1") == 0;
}

static const char *kind_of(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "a special file";
}

/* Open path without blocking (a FIFO without a writer would block in
 * open itself), then judge what it is on the descriptor, so what is
 * checked is what is read. *st gets its status. */
static FILE *open_nonblocking(const char *path, struct stat *st, int *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        *err = errno;
        return NULL;
    }
    FILE *f = NULL;
    if (fstat(fd, st) != 0)
        *err = errno;
    else if ((f = fdopen(fd, "rb")) == NULL)
        *err = errno;
    if (!f)
        close(fd);
    return f;
}

/* Blocking reads again, for a special file the user asked to read. */
static void blocking(FILE *f)
{
    int fd = fileno(f), fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* Open path for reading after checking it is a non-empty regular file. */
static FILE *open_checked(const char *path, off_t *size, char *err, size_t errlen, int *rc)
{
    struct stat st;
    int e = 0;
    FILE *f = open_nonblocking(path, &st, &e);
    if (!f) {
        snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), strerror(e));
        *rc = e == EACCES ? KSCOPE_EACCES : e == EISDIR ? KSCOPE_EINVAL : KSCOPE_EIO;
        if (e == EISDIR)
            snprintf(err, errlen, "%s: is a directory, not a profile file", KSCOPE__PATH(path));
        return NULL;
    }
    char profile[4096];
    if (kscope__facts_profile_of(path, profile, sizeof profile)) {
        fclose(f);
        snprintf(err, errlen,
                 "%s: the run's facts beside the profile %s (command, host, start time), not a "
                 "profile: open %s",
                 KSCOPE__PATH(path), KSCOPE__PATH(profile), KSCOPE__PATH(profile));
        *rc = KSCOPE_EINVAL;
        return NULL;
    }
    const char *why = S_ISDIR(st.st_mode)                                ? "is a directory"
                      : !S_ISREG(st.st_mode) && !special_files_allowed() ? kind_of(st.st_mode)
                      : S_ISREG(st.st_mode) && st.st_size == 0           ? "empty file"
                                                                         : NULL;
    if (why) {
        fclose(f);
        if (S_ISDIR(st.st_mode))
            snprintf(err, errlen, "%s: is a directory, not a profile file", KSCOPE__PATH(path));
        else if (S_ISREG(st.st_mode))
            snprintf(err, errlen, "%s: empty file", KSCOPE__PATH(path));
        else
            snprintf(err, errlen,
                     "%s: is %s, not a regular file (set KSCOPE_READ_SPECIAL=1 to read it)",
                     KSCOPE__PATH(path), why);
        *rc = S_ISREG(st.st_mode) ? KSCOPE_EPARSE : KSCOPE_EINVAL;
        return NULL;
    }
    if (S_ISFIFO(st.st_mode)) { /* asked for: wait for its writer, as a plain open does */
        fclose(f);
        if (!(f = fopen(path, "rb"))) {
            snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), strerror(errno));
            *rc = KSCOPE_EIO;
            return NULL;
        }
    }
    blocking(f);
    *size = S_ISREG(st.st_mode) ? st.st_size : -1;
    return f;
}

/* An open profile's bytes, as its reader reads them. Every byte of a
 * profile comes through input_read, so a decoding of the whole file (an
 * inflation) sits here, in front of every reader, whatever its format. */
typedef struct input {
    FILE *f;
    gzFile gz;  /* a gzip file's inflation of f, NULL for a plain one */
    off_t size; /* what the file holds, -1 when unknown (a pipe, a device, gzip) */
} input;

/* Switch in to inflating when in's file, a regular one, starts with
 * gzip's magic bytes; its size is then unknown. 0, or an error with err
 * set. */
static int input_gzip(input *in, const char *path, char *err, size_t errlen)
{
    unsigned char magic[2];
    if (in->size < 0) /* a pipe or a device: read as it comes */
        return 0;
    size_t got = fread(magic, 1, 2, in->f);
    rewind(in->f);
    if (got < 2 || magic[0] != 0x1f || magic[1] != 0x8b)
        return 0;
    int fd = dup(fileno(in->f));
    in->gz = fd >= 0 && lseek(fd, 0, SEEK_SET) == 0 ? gzdopen(fd, "rb") : NULL;
    if (!in->gz) {
        if (fd >= 0)
            close(fd);
        snprintf(err, errlen, "%s: cannot read gzip input: %s", KSCOPE__PATH(path),
                 strerror(errno));
        return KSCOPE_EIO;
    }
    gzbuffer(in->gz, CHUNK);
    in->size = -1;
    return 0;
}

/* Open path as an input (open_checked's checks). 0, or an error with err
 * set. */
static int input_open(input *in, const char *path, char *err, size_t errlen)
{
    int rc = 0;
    in->gz = NULL;
    in->f = open_checked(path, &in->size, err, errlen, &rc);
    if (!in->f)
        return rc;
    if ((rc = input_gzip(in, path, err, errlen)) != 0)
        fclose(in->f);
    return rc;
}

/* Up to n bytes of in into buf; 0 at its end or on an error (input_error
 * tells which). */
static size_t input_read(input *in, void *buf, size_t n)
{
    if (!in->gz)
        return fread(buf, 1, n, in->f);
    int got = gzread(in->gz, buf, (unsigned)(n > (1u << 30) ? 1u << 30 : n));
    return got > 0 ? (size_t)got : 0;
}

/* A read error of in (0: none), its message into msg. */
static int input_error(input *in, char *msg, size_t msglen)
{
    if (!in->gz) {
        if (!ferror(in->f))
            return 0;
        snprintf(msg, msglen, "read error: %s", strerror(errno));
        return KSCOPE_EIO;
    }
    int zerr;
    const char *m = gzerror(in->gz, &zerr);
    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return 0;
    snprintf(msg, msglen, "gzip data is corrupt: %s", m && *m ? m : "read error");
    return zerr == Z_ERRNO ? KSCOPE_EIO : KSCOPE_EPARSE;
}

static void input_close(input *in)
{
    if (in->gz)
        gzclose(in->gz);
    fclose(in->f);
}

FILE *kscope__open_side_file(const char *path, char *msg, size_t msglen)
{
    struct stat st;
    int e = 0;
    msg[0] = 0;
    FILE *f = open_nonblocking(path, &st, &e);
    if (!f) {
        if (e != ENOENT && e != ENOTDIR)
            snprintf(msg, msglen, "%s", strerror(e));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(f);
        snprintf(msg, msglen, "%s, not a regular file",
                 S_ISDIR(st.st_mode) ? "a directory" : kind_of(st.st_mode));
        return NULL;
    }
    blocking(f);
    return f;
}

/* Read the rest of in (after *len bytes already in *buf, cap allocated),
 * at most max. */
static int slurp(input *in, const char *path, char **buf, size_t *len, size_t cap, size_t max,
                 char *err, size_t errlen)
{
    for (;;) {
        if (*len >= max) {
            snprintf(err, errlen, "%s: more than %zu MiB; not read further", KSCOPE__PATH(path),
                     UNSIZED_MAX >> 20);
            return KSCOPE_EINVAL;
        }
        if (*len == cap) {
            cap = cap ? cap * 2 : CHUNK;
            char *b = realloc(*buf, cap + 1);
            if (!b) {
                snprintf(err, errlen, "%s: out of memory", KSCOPE__PATH(path));
                return KSCOPE_ENOMEM;
            }
            *buf = b;
        }
        size_t want = cap - *len < CHUNK ? cap - *len : CHUNK;
        size_t got = input_read(in, *buf + *len, want);
        *len += got;
        if (got == 0) {
            char msg[256];
            int rc = input_error(in, msg, sizeof msg);
            if (rc) {
                snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), msg);
                return rc;
            }
            (*buf)[*len] = '\0';
            return 0;
        }
    }
}

#define HEAD 4096

/* Read the first bytes of in into head and tell its format from them, so a
 * file that is no profile (a disk image, zeros) is refused before the rest
 * is read. 0, or an error with err set. */
static int read_head(input *in, const char *path, char *head, size_t *n, kscope__format_id *id,
                     char *err, size_t errlen)
{
    *n = input_read(in, head, HEAD);
    char msg[256];
    int rc = *n < HEAD ? input_error(in, msg, sizeof msg) : 0;
    if (rc) {
        snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), msg);
        return rc;
    }
    if (*n == 0) {
        snprintf(err, errlen, "%s: empty file%s", KSCOPE__PATH(path),
                 in->gz ? " (once inflated)" : "");
        return KSCOPE_EPARSE;
    }
    size_t i = 0;
    while (i < *n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
        i++;
    if (i == *n && *n < HEAD) {
        snprintf(err, errlen, "%s: empty file (only white space)", KSCOPE__PATH(path));
        return KSCOPE_EPARSE;
    }
    *id = kscope__format_sniff(head, *n);
    if (*id == KSCOPE__FORMAT_UNKNOWN) {
        char looks[256] = "";
        for (int k = 1; k < KSCOPE__FORMAT_COUNT; k++) /* "a, b or c" */
            snprintf(looks + strlen(looks), sizeof looks - strlen(looks), "%s%s",
                     k == 1                         ? ""
                     : k + 1 < KSCOPE__FORMAT_COUNT ? ", "
                                                    : " or ",
                     readers[k]->looks);
        snprintf(err, errlen, "%s: not a profile: expected %s, found byte 0x%02x",
                 KSCOPE__PATH(path), looks, (unsigned char)head[i]);
        return KSCOPE_EPARSE;
    }
    return 0;
}

/* The rest of in after its first n bytes (in head), into a new buffer
 * that grows as it is read (a size claimed is no promise of content). */
static int read_rest(input *in, const char *path, const char *head, size_t n, char **buf,
                     size_t *len, char *err, size_t errlen)
{
    off_t size = in->size;
    size_t cap = size > 0 && (size_t)size + 1 < CHUNK ? (size_t)size + 1 : CHUNK;
    if (cap < n)
        cap = n;
    *buf = malloc(cap + 1);
    if (!*buf) {
        snprintf(err, errlen, "%s: out of memory", KSCOPE__PATH(path));
        return KSCOPE_ENOMEM;
    }
    memcpy(*buf, head, n);
    *len = n;
    int rc = slurp(in, path, buf, len, cap, size >= 0 ? SIZE_MAX : UNSIZED_MAX, err, errlen);
    if (rc < 0) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

/* Open path and read its first bytes, telling its format (*id); with buf,
 * the whole of it into a new buffer. */
static int read_start(const char *path, kscope__format_id *id, char **buf, size_t *len, char *err,
                      size_t errlen)
{
    input in;
    int rc = input_open(&in, path, err, errlen);
    if (rc != 0)
        return rc;
    char head[HEAD];
    size_t n;
    rc = read_head(&in, path, head, &n, id, err, errlen);
    if (rc == 0 && buf)
        rc = read_rest(&in, path, head, n, buf, len, err, errlen);
    input_close(&in);
    return rc;
}

int kscope__read_whole_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    kscope__format_id id;
    *buf = NULL;
    *len = 0;
    return read_start(path, &id, buf, len, err, errlen);
}

int kscope__sniff_file(const char *path, kscope__format_id *id, char *err, size_t errlen)
{
    return read_start(path, id, NULL, NULL, err, errlen);
}

/* Feed an input to a reader's parser p in chunks (the first bytes are in
 * `first`), so a large file is never held whole. msg says what is wrong. */
static int feed_file(input *in, const char *first, size_t nfirst, const kscope__reader *r, void *p,
                     char *msg, size_t msglen)
{
    int rc = r->feed(p, first, nfirst, msg, msglen);
    char *chunk = rc == 0 ? malloc(CHUNK) : NULL;
    if (rc == 0 && !chunk) {
        rc = KSCOPE_ENOMEM;
        snprintf(msg, msglen, "out of memory");
    }
    while (rc == 0) {
        size_t got = input_read(in, chunk, CHUNK);
        if (got == 0) {
            rc = input_error(in, msg, msglen);
            break;
        }
        rc = r->feed(p, chunk, got, msg, msglen);
    }
    free(chunk);
    return rc;
}

/* A trace's events to the tree's builder (when tree is given) and to
 * also (when given), in one reading; what stopped it says why. */
typedef struct fanout {
    kscope__trace_tree *tree;
    const kscope__tev_sink *also;
    const char *why;
} fanout;

static int fan_event(const kscope__tev *e, void *arg)
{
    fanout *o = arg;
    int rc = o->tree ? kscope__trace_tree_event(e, o->tree) : 0;
    if (rc != 0) {
        o->why = kscope__trace_tree_why(o->tree);
        return rc;
    }
    rc = o->also ? o->also->fn(e, o->also->arg) : 0;
    if (rc != 0)
        o->why = o->also->why(o->also->arg);
    return rc;
}

/* Read the trace in `in` (first bytes in head) through reader r: its tree
 * into *out when out is given, its events to also when given. */
static int read_trace(input *in, const char *head, size_t n, const kscope__reader *r,
                      kscope__ptree **out, const kscope__tev_sink *also, char *msg, size_t msglen)
{
    fanout o = {NULL, also, NULL};
    if (out && !(o.tree = kscope__trace_tree_new()))
        return kscope__read_fail(msg, msglen, KSCOPE_ENOMEM, "out of memory");
    unsigned keep = (out ? KSCOPE__TREAD_STACK : 0) | (also ? also->keep : 0);
    void *p = r->trace_new(fan_event, &o, keep);
    int rc = p ? feed_file(in, head, n, r, p, msg, msglen)
               : kscope__read_fail(msg, msglen, KSCOPE_ENOMEM, "out of memory");
    if (rc == 0)
        rc = r->trace_finish(p, msg, msglen);
    if (rc != 0 && o.why)
        snprintf(msg, msglen, "%s", o.why);
    if (rc == 0 && out)
        rc = kscope__trace_tree_finish(o.tree, out, msg, msglen);
    if (p)
        r->free(p);
    kscope__trace_tree_free(o.tree);
    return rc;
}

/* Read the tree in `in` (first bytes in head) through reader r. */
static int read_tree(input *in, const char *head, size_t n, const kscope__reader *r,
                     kscope__ptree **out, char *msg, size_t msglen)
{
    void *p = r->tree_new();
    if (!p)
        return kscope__read_fail(msg, msglen, KSCOPE_ENOMEM, "out of memory");
    int rc = feed_file(in, head, n, r, p, msg, msglen);
    if (rc == 0)
        rc = r->tree_finish(p, out, msg, msglen);
    r->free(p);
    return rc;
}

kscope__format_id kscope__format_sniff(const char *head, size_t n)
{
    /* the format whose reader is surest; the first row when two are alike */
    kscope__format_id best = KSCOPE__FORMAT_UNKNOWN;
    int sure = 0;
    for (int id = 1; id < KSCOPE__FORMAT_COUNT; id++) {
        int s = readers[id]->sniff(head, n);
        if (s > sure)
            best = (kscope__format_id)id, sure = s;
    }
    return best;
}

/* Open path, tell its format and read it: into a tree (out), its events
 * to also (traces only; tree formats are refused when out is NULL). */
static int read_file(const char *path, kscope__ptree **out, const kscope__tev_sink *also,
                     const kscope__format **fmt, char *err, size_t errlen)
{
    input in;
    if (out)
        *out = NULL;
    int rc = input_open(&in, path, err, errlen);
    if (rc != 0)
        return rc;
    char head[HEAD], msg[KSCOPE__READ_ERRLEN];
    size_t n;
    kscope__format_id id;
    rc = read_head(&in, path, head, &n, &id, err, errlen);
    const kscope__format *format = rc == 0 ? kscope__format_get(id) : NULL;
    if (fmt)
        *fmt = format;
    if (rc == 0 && format->kind == KSCOPE__KIND_TRACE)
        rc = read_trace(&in, head, n, readers[id], out, also, msg, sizeof msg);
    else if (rc == 0 && out)
        rc = read_tree(&in, head, n, readers[id], out, msg, sizeof msg);
    else if (rc == 0)
        rc = kscope__read_fail(msg, sizeof msg, KSCOPE_EFORMAT, "a %s profile holds no events",
                               format->name);
    input_close(&in);
    if (rc < 0 && format)
        snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), msg);
    return rc;
}

int kscope__read_profile(const char *path, kscope__ptree **out, char *err, size_t errlen)
{
    return read_file(path, out, NULL, NULL, err, errlen);
}

int kscope__read_profile_events(const char *path, kscope__ptree **out, const kscope__tev_sink *also,
                                const kscope__format **fmt, char *err, size_t errlen)
{
    return read_file(path, out, also, fmt, err, errlen);
}

int kscope__read_events(const char *path, const kscope__tev_sink *sink, char *err, size_t errlen)
{
    return read_file(path, NULL, sink, NULL, err, errlen);
}

int kscope__read_events_buffer(const kscope__reader *r, const char *buf, size_t len,
                               const kscope__tev_sink *sink, char *err, size_t errlen)
{
    void *p = r->trace_new(sink->fn, sink->arg, sink->keep);
    if (!p)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = r->feed(p, buf, len, err, errlen);
    if (rc == 0)
        rc = r->trace_finish(p, err, errlen);
    if (rc != 0 && !err[0])
        snprintf(err, errlen, "%s", sink->why(sink->arg));
    r->free(p);
    return rc;
}

int kscope__read_tree_buffer(const kscope__reader *r, const char *buf, size_t len, size_t piece,
                             kscope__ptree **out, char *err, size_t errlen)
{
    *out = NULL;
    void *p = r->tree_new();
    if (!p)
        return kscope__read_fail(err, errlen, KSCOPE_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t at = 0; rc == 0 && at < len; at += piece)
        rc = r->feed(p, buf + at, len - at < piece ? len - at : piece, err, errlen);
    if (rc == 0)
        rc = r->tree_finish(p, out, err, errlen);
    r->free(p);
    return rc;
}

/* The trace to write again: read, its events to the writer as they come. */
typedef struct trace_source {
    const char *path;
    char *err;
    size_t errlen;
} trace_source;

static const char *writer_why(void *arg)
{
    (void)arg;
    return "the writer stopped";
}

static int read_source(void *arg, kscope__tev_fn fn, void *fn_arg)
{
    trace_source *s = arg;
    kscope__tev_sink sink = {fn, fn_arg, writer_why, KSCOPE__TREAD_FIELDS};
    return kscope__read_events(s->path, &sink, s->err, s->errlen);
}

int kscope__encode_trace(const char *path, const kscope__format *f, char **out, size_t *len,
                         char *err, size_t errlen)
{
    trace_source s = {path, err, errlen};
    err[0] = 0;
    int rc = kscope__format_write_trace(f, read_source, &s, out, len);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "%s: cannot encode the trace: %s", KSCOPE__PATH(path),
                 kscope_strerror(rc));
    return rc;
}

int kscope__write_file(const char *path, const char *buf, size_t len, char *err, size_t errlen)
{
    int rc = kscope__out_file(path, buf, len, err, errlen);
    if (rc < 0)
        kscope__escape_in_place(err, errlen);
    return rc;
}

int kscope__write_profile(const char *path, const kscope__ptree *t, const kscope__format *f,
                          char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = kscope__format_write_tree(f, t, &buf, &len);
    if (rc < 0) {
        snprintf(err, errlen, "%s: cannot encode the profile: %s", path, kscope_strerror(rc));
        return rc;
    }
    rc = kscope__write_file(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

int kscope__read_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return code;
}
