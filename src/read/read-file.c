/*
 * read-file.c - opening a profile: checks that the path is a readable,
 * non-empty regular file (opened without blocking and judged on the
 * descriptor), detects the format from the first bytes and streams the
 * content through the right reader in chunks, so a file is never held
 * whole and what is no profile is refused in bounded memory. A
 * gzip-compressed file (its first two bytes tell, whatever its name) is
 * inflated as it is read, with zlib. Every failure becomes "PATH: what is
 * wrong", the path escaped as names are.
 */
#define _GNU_SOURCE /* memmem */
#include "read/read.h"
#include "format/file-out.h"
#include "format/run-facts.h"
#include "kscope.h"

#include <yajl/yajl_parse.h>

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

/* An open profile: a plain file, or a gzip stream inflated as it is read. */
typedef struct input {
    FILE *f;
    gzFile gz;
} input;

/* Switch in to inflating when f, a regular file, starts with gzip's magic
 * bytes; *size is then unknown (-1). 0, or an error with err set. */
static int input_open(FILE *f, const char *path, off_t *size, input *in, char *err, size_t errlen)
{
    unsigned char magic[2];
    in->f = f;
    in->gz = NULL;
    if (*size < 0) /* a pipe or a device: read as it comes */
        return 0;
    size_t got = fread(magic, 1, 2, f);
    rewind(f);
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        int fd = dup(fileno(f));
        in->gz = fd >= 0 && lseek(fd, 0, SEEK_SET) == 0 ? gzdopen(fd, "rb") : NULL;
        if (!in->gz) {
            if (fd >= 0)
                close(fd);
            snprintf(err, errlen, "%s: cannot read gzip input: %s", KSCOPE__PATH(path),
                     strerror(errno));
            return KSCOPE_EIO;
        }
        gzbuffer(in->gz, CHUNK);
        *size = -1;
    }
    return 0;
}

/* open_checked and input_open: 0 with in ready, or an error with err set. */
static int input_checked(const char *path, off_t *size, input *in, char *err, size_t errlen)
{
    int rc = 0;
    FILE *f = open_checked(path, size, err, errlen, &rc);
    if (!f)
        return rc;
    if ((rc = input_open(f, path, size, in, err, errlen)) != 0)
        fclose(f);
    return rc;
}

static size_t input_read(input *in, void *buf, size_t n)
{
    if (!in->gz)
        return fread(buf, 1, n, in->f);
    int got = gzread(in->gz, buf, (unsigned)(n > (1u << 30) ? 1u << 30 : n));
    return got > 0 ? (size_t)got : 0;
}

/* A read error of in (0: none), its message into msg. */
static int input_error(input *in, char *msg, size_t size)
{
    if (!in->gz) {
        if (!ferror(in->f))
            return 0;
        snprintf(msg, size, "read error: %s", strerror(errno));
        return KSCOPE_EIO;
    }
    int zerr;
    const char *m = gzerror(in->gz, &zerr);
    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return 0;
    snprintf(msg, size, "gzip data is corrupt: %s", m && *m ? m : "read error");
    return zerr == Z_ERRNO ? KSCOPE_EIO : KSCOPE_EPARSE;
}

static void input_close(input *in)
{
    if (in->gz)
        gzclose(in->gz);
    fclose(in->f);
}

/* JSON checked as it is read: yajl's parser with callbacks that only
 * count the values it finishes (see kscope__read_too_quiet). */
typedef struct json_check {
    yajl_handle y;
    size_t events, mark, quiet;
} json_check;

static int jc_value(void *ctx)
{
    ((json_check *)ctx)->events++;
    return 1;
}
static int jc_bool(void *ctx, int b)
{
    (void)b;
    return jc_value(ctx);
}
static int jc_text(void *ctx, const unsigned char *s, size_t l)
{
    (void)s, (void)l;
    return jc_value(ctx);
}
static int jc_number(void *ctx, const char *s, size_t l)
{
    (void)s, (void)l;
    return jc_value(ctx);
}
static const yajl_callbacks jc_callbacks = {
    .yajl_null = jc_value,
    .yajl_boolean = jc_bool,
    .yajl_number = jc_number,
    .yajl_string = jc_text,
    .yajl_start_map = jc_value,
    .yajl_map_key = jc_text,
    .yajl_end_map = jc_value,
    .yajl_start_array = jc_value,
    .yajl_end_array = jc_value,
};

/* Check the next n bytes of JSON at byte `at` of path. */
static int json_check_feed(json_check *jc, const char *path, const char *b, size_t n, size_t at,
                           char *err, size_t errlen)
{
    if (yajl_parse(jc->y, (const unsigned char *)b, n) != yajl_status_ok) {
        unsigned char *m = yajl_get_error(jc->y, 0, NULL, 0);
        const char *t = m ? (const char *)m : "parse error";
        snprintf(err, errlen, "%s: not valid JSON: %.*s", KSCOPE__PATH(path),
                 (int)strcspn(t, "\r\n"), t);
        if (m)
            yajl_free_error(jc->y, m);
        return KSCOPE_EPARSE;
    }
    if (kscope__read_too_quiet(jc->events, &jc->mark, &jc->quiet, n)) {
        snprintf(err, errlen, "%s: no JSON value ends within %d MiB (at byte %zu)",
                 KSCOPE__PATH(path), KSCOPE__READ_MAX_TOKEN >> 20, at + n);
        return KSCOPE_EPARSE;
    }
    return 0;
}

/* Read the rest of in (after *len bytes already in *buf, cap allocated),
 * at most max, checking JSON as it comes when jc is given. */
static int slurp(input *in, const char *path, char **buf, size_t *len, size_t cap, size_t max,
                 json_check *jc, char *err, size_t errlen)
{
    if (jc && json_check_feed(jc, path, *buf, *len, 0, err, errlen) < 0)
        return KSCOPE_EPARSE;
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
        /* a chunk at a time, so bad JSON stops the reading early */
        size_t want = cap - *len < CHUNK ? cap - *len : CHUNK;
        size_t got = input_read(in, *buf + *len, want);
        if (jc && got && json_check_feed(jc, path, *buf + *len, got, *len, err, errlen) < 0)
            return KSCOPE_EPARSE;
        *len += got;
        if (got == 0) {
            char msg[256];
            int rc = input_error(in, msg, sizeof msg);
            if (rc) {
                snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), msg);
                return rc;
            }
            if (jc && yajl_complete_parse(jc->y) != yajl_status_ok) {
                snprintf(err, errlen, "%s: truncated: the JSON ends early", KSCOPE__PATH(path));
                return KSCOPE_EPARSE;
            }
            (*buf)[*len] = '\0';
            return 0;
        }
    }
}

#define HEAD 4096

/* Read the first bytes of f into head and tell its format from them, so a
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
        snprintf(err, errlen,
                 "%s: not a profile: expected .hatchet JSON ('['), a Chrome trace ('{') or "
                 ".hatchet_msgpack (an array), found byte 0x%02x",
                 KSCOPE__PATH(path), (unsigned char)head[i]);
        return KSCOPE_EPARSE;
    }
    return 0;
}

/* The rest of f after its first n bytes (in head), into a new buffer
 * that grows as it is read (a size claimed is no promise of content). */
static int read_rest(input *in, const char *path, off_t size, const char *head, size_t n,
                     char **buf, size_t *len, json_check *jc, char *err, size_t errlen)
{
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
    int rc = slurp(in, path, buf, len, cap, size >= 0 ? SIZE_MAX : UNSIZED_MAX, jc, err, errlen);
    if (rc < 0) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

int kscope__read_whole_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    int rc = 0;
    off_t size;
    *buf = NULL;
    *len = 0;
    input in;
    if ((rc = input_checked(path, &size, &in, err, errlen)) != 0)
        return rc;
    char head[HEAD];
    size_t n;
    kscope__format_id id;
    rc = read_head(&in, path, head, &n, &id, err, errlen);
    json_check jc = {0};
    if (rc == 0 && id != KSCOPE__FORMAT_HATCHET_MSGPACK &&
        !(jc.y = yajl_alloc(&jc_callbacks, NULL, &jc))) {
        snprintf(err, errlen, "%s: out of memory", KSCOPE__PATH(path));
        rc = KSCOPE_ENOMEM;
    }
    if (rc == 0)
        rc = read_rest(&in, path, size, head, n, buf, len, jc.y ? &jc : NULL, err, errlen);
    if (jc.y)
        yajl_free(jc.y);
    input_close(&in);
    return rc;
}

int kscope__sniff_file(const char *path, kscope__format_id *id, char *err, size_t errlen)
{
    off_t size;
    input in;
    int rc = input_checked(path, &size, &in, err, errlen);
    if (rc != 0)
        return rc;
    char head[HEAD];
    size_t n;
    rc = read_head(&in, path, head, &n, id, err, errlen);
    input_close(&in);
    return rc;
}

/* The reader column of format.h's table. */
static void *hjson_new(void)
{
    return kscope__hjson_new();
}
static int hjson_feed(void *p, const char *b, size_t l, char *e, size_t el)
{
    return kscope__hjson_feed(p, b, l, e, el);
}
static int hjson_finish(void *p, kscope__ptree **o, char *e, size_t el)
{
    return kscope__hjson_finish(p, o, e, el);
}
static void hjson_free(void *p)
{
    kscope__hjson_free(p);
}
static void *tjson_new(void)
{
    return kscope__tjson_new();
}
static int tjson_feed(void *p, const char *b, size_t l, char *e, size_t el)
{
    return kscope__tjson_feed(p, b, l, e, el);
}
static int tjson_finish(void *p, kscope__ptree **o, char *e, size_t el)
{
    return kscope__tjson_finish(p, o, e, el);
}
static void tjson_free(void *p)
{
    kscope__tjson_free(p);
}

const kscope__reader kscope__hatchet_json_reader = {kscope__read_hatchet_json, hjson_new,
                                                    hjson_feed, hjson_finish, hjson_free};
static void *hmp_new(void)
{
    return kscope__hmp_new();
}
static int hmp_feed(void *p, const char *b, size_t l, char *e, size_t el)
{
    return kscope__hmp_feed(p, b, l, e, el);
}
static int hmp_finish(void *p, kscope__ptree **o, char *e, size_t el)
{
    return kscope__hmp_finish(p, o, e, el);
}
static void hmp_free(void *p)
{
    kscope__hmp_free(p);
}

const kscope__reader kscope__hatchet_msgpack_reader = {kscope__read_hatchet_msgpack, hmp_new,
                                                       hmp_feed, hmp_finish, hmp_free};
const kscope__reader kscope__chrome_trace_reader = {kscope__read_chrome_trace, tjson_new,
                                                    tjson_feed, tjson_finish, tjson_free};

static const kscope__reader *const readers[KSCOPE__FORMAT_COUNT] = {
#define KSCOPE__READER_ROW(id, name, kind, exts, tree_w, trace_w, reader)                          \
    [KSCOPE__FORMAT_##id] = &reader,
    KSCOPE__FORMATS(KSCOPE__READER_ROW)
#undef KSCOPE__READER_ROW
};

/* Stream a file through a chunked parser (the first bytes are in `first`),
 * so a large file is never held whole. */
static int read_stream(input *in, const char *path, const char *first, size_t nfirst,
                       const kscope__reader *r, kscope__ptree **out, char *err, size_t errlen)
{
    char msg[KSCOPE__READ_ERRLEN];
    void *p = r->stream_new();
    if (!p) {
        snprintf(err, errlen, "%s: out of memory", KSCOPE__PATH(path));
        return KSCOPE_ENOMEM;
    }
    int rc = r->feed(p, first, nfirst, msg, sizeof msg);
    char *chunk = rc == 0 ? malloc(CHUNK) : NULL;
    if (rc == 0 && !chunk) {
        rc = KSCOPE_ENOMEM;
        snprintf(msg, sizeof msg, "out of memory");
    }
    while (rc == 0) {
        size_t got = input_read(in, chunk, CHUNK);
        if (got == 0) {
            rc = input_error(in, msg, sizeof msg);
            break;
        }
        rc = r->feed(p, chunk, got, msg, sizeof msg);
    }
    free(chunk);
    if (rc == 0)
        rc = r->finish(p, out, msg, sizeof msg);
    r->stream_free(p);
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), msg);
    return rc;
}

/* A JSON array is a .hatchet ([node, device info]) or a trace in the bare
 * array form ([event, ...]): the first key tells. */
static int array_is_trace(const char *head, size_t n)
{
    static const char *const trace_keys[] = {"\"ph\"", "\"ts\"", "\"pid\""};
    static const char *const tree_keys[] = {"\"frame\"", "\"children\"", "\"metrics\""};
    const char *first_trace = NULL, *first_tree = NULL;
    for (int k = 0; k < 3; k++) {
        const char *a = memmem(head, n, trace_keys[k], strlen(trace_keys[k]));
        const char *b = memmem(head, n, tree_keys[k], strlen(tree_keys[k]));
        if (a && (!first_trace || a < first_trace))
            first_trace = a;
        if (b && (!first_tree || b < first_tree))
            first_tree = b;
    }
    return first_trace && (!first_tree || first_trace < first_tree);
}

kscope__format_id kscope__format_sniff(const char *head, size_t n)
{
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
        i++;
    if (i == n) /* white space as far as we looked: let the JSON parser judge */
        return KSCOPE__FORMAT_HATCHET;
    unsigned char c = (unsigned char)head[i];
    if (c == '{' || (c == '[' && array_is_trace(head, n)))
        return KSCOPE__FORMAT_CHROME_TRACE;
    if (c == '[')
        return KSCOPE__FORMAT_HATCHET;
    if ((c >= 0x90 && c <= 0x9f) || c == 0xdc || c == 0xdd) /* a MessagePack array */
        return KSCOPE__FORMAT_HATCHET_MSGPACK;
    return KSCOPE__FORMAT_UNKNOWN;
}

int kscope__read_profile(const char *path, kscope__ptree **out, char *err, size_t errlen)
{
    int rc = 0;
    off_t size;
    *out = NULL;
    input in;
    if ((rc = input_checked(path, &size, &in, err, errlen)) != 0)
        return rc;
    char head[HEAD];
    size_t n;
    kscope__format_id id;
    rc = read_head(&in, path, head, &n, &id, err, errlen);
    if (rc < 0) {
        input_close(&in);
        return rc;
    }
    const kscope__reader *r = readers[id];
    if (r->stream_new) {
        rc = read_stream(&in, path, head, n, r, out, err, errlen);
        input_close(&in);
        return rc;
    }
    char *buf;
    size_t len;
    rc = read_rest(&in, path, size, head, n, &buf, &len, NULL, err, errlen);
    input_close(&in);
    if (rc < 0)
        return rc;
    char msg[KSCOPE__READ_ERRLEN];
    rc = r->parse(buf, len, out, msg, sizeof msg);
    free(buf);
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), msg);
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
