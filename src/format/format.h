/*
 * format.h - the one table of file formats kscope writes and reads.
 *
 * Every part that needs to know a format looks it up here: sessions (which
 * extension, which writer), the launcher, `kscope convert`, the readers'
 * dispatch and the Python package. Nothing else compares format names.
 *
 * KSCOPE__FORMATS(X) lists, per format:
 *   X(ID, name, kind, extensions, tree writer, trace writer, reader)
 * The recorder expands all but the last column (format.c); the reading
 * toolkit expands the reader column (read/read-file.c), so the recorder
 * never refers to a reader. The first extension is the one written; the
 * others are also recognised when reading.
 */
#ifndef KSCOPE_FORMAT_H
#define KSCOPE_FORMAT_H

#include "format/events.h"

#include <stddef.h>
#include <stdint.h>

struct kscope__ptree;
struct kscope__reader;

/* The rows' writers (format/): into a malloc'd buffer, 0 or a negative
 * KSCOPE_E*; a tree format's take a tree, a trace format's the events of
 * a timeline (format/events.h). */
int kscope__hatchet_write_json(const struct kscope__ptree *t, char **out, size_t *len);
int kscope__hatchet_write_msgpack(const struct kscope__ptree *t, char **out, size_t *len);
int kscope__chrome_trace_write(kscope__tev_source source, void *source_arg, char **out,
                               size_t *len);

/* The rows' readers (read/, the reading toolkit's; read/read.h says what
 * a kscope__reader is). */
extern const struct kscope__reader kscope__hatchet_json_reader, kscope__hatchet_msgpack_reader,
    kscope__chrome_trace_reader;

#define KSCOPE__FORMATS(X)                                                                         \
    X(HATCHET, "hatchet", KSCOPE__KIND_TREE, ".hatchet", kscope__hatchet_write_json, NULL,         \
      kscope__hatchet_json_reader)                                                                 \
    X(HATCHET_MSGPACK, "hatchet_msgpack", KSCOPE__KIND_TREE, ".hatchet_msgpack .msgpack",          \
      kscope__hatchet_write_msgpack, NULL, kscope__hatchet_msgpack_reader)                         \
    X(CHROME_TRACE, "chrome_trace", KSCOPE__KIND_TRACE, ".chrome_trace .json .trace", NULL,        \
      kscope__chrome_trace_write, kscope__chrome_trace_reader)

typedef enum {
    KSCOPE__FORMAT_UNKNOWN = 0,
#define KSCOPE__FORMAT_ENUM(id, name, kind, exts, tree_w, trace_w, reader) KSCOPE__FORMAT_##id,
    KSCOPE__FORMATS(KSCOPE__FORMAT_ENUM)
#undef KSCOPE__FORMAT_ENUM
        KSCOPE__FORMAT_COUNT
} kscope__format_id;

/* What a format holds: a calling-context tree or a timeline. */
typedef enum { KSCOPE__KIND_TREE = 1, KSCOPE__KIND_TRACE = 2 } kscope__format_kind;

typedef struct kscope__format {
    kscope__format_id id;
    const char *name;         /* "hatchet": what options and APIs take */
    kscope__format_kind kind; /* tree or trace */
    const char *exts;         /* ".hatchet_msgpack .msgpack": written, then also read */
    /* Write into a malloc'd buffer, 0 or a negative KSCOPE_E*: a profile
     * tree (tree formats), or the events of a timeline (trace formats,
     * format/events.h). The other one is NULL. */
    int (*write_tree)(const struct kscope__ptree *t, char **out, size_t *len);
    int (*write_trace)(kscope__tev_source source, void *source_arg, char **out, size_t *len);
} kscope__format;

/* The format with this id (NULL for KSCOPE__FORMAT_UNKNOWN or out of range). */
const kscope__format *kscope__format_get(kscope__format_id id);

/* The format named `name` ("hatchet", ...), NULL when none is. */
const kscope__format *kscope__format_by_name(const char *name);

/* The format whose extensions end `path`, NULL when none does. */
const kscope__format *kscope__format_by_path(const char *path);

/* The default format of a tree (KSCOPE__KIND_TREE) or a trace. */
const kscope__format *kscope__format_default(kscope__format_kind kind);

/* The first extension of f, with its dot, into buf (".hatchet"). */
const char *kscope__format_ext(const kscope__format *f, char *buf, size_t size);

/* The names of every format of `kind` (0: all), joined by `sep`, into buf:
 * for messages and help texts ("hatchet, hatchet_msgpack"). */
const char *kscope__format_names(kscope__format_kind kind, const char *sep, char *buf, size_t size);

/* The formats of `kind` (0: all) as a list for people ("a", "a or b",
 * "a, b or c") into buf: their names, their first extensions, or every
 * extension they are read by. */
typedef enum { KSCOPE__ITEM_NAME, KSCOPE__ITEM_EXT, KSCOPE__ITEM_EXTS } kscope__format_item;
const char *kscope__format_list(kscope__format_kind kind, kscope__format_item item, char *buf,
                                size_t size);

/* The words help texts take from the table, by key: {formats},
 * {tree_formats}, {trace_formats} (names), {exts} (each format's first
 * extension), {tree_exts}, {trace_exts} (every extension of a kind), and
 * {tree_ext}, {trace_ext} (the default format's extension) into buf;
 * NULL for a key that is none of these. */
const char *kscope__format_word(const char *key, size_t len, char *buf, size_t size);

#endif /* KSCOPE_FORMAT_H */
