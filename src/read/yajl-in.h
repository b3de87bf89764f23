/*
 * yajl-in.h - yajl's streaming parser fed a file in chunks, as both JSON
 * readers drive it (.hatchet: hatchet-json-read.c; Chrome trace:
 * chrome-trace-read.c): the one place that counts the bytes fed, refuses
 * input where no value ends within KSCOPE__READ_MAX_TOKEN bytes, and turns
 * the reader's own refusal or yajl's verdict into the one line of err.
 * yajl's callbacks reach the reader's handlers of parse events
 * (kscope__hevents, read.h: the ones the .hatchet builder takes from
 * MessagePack too).
 */
#ifndef KSCOPE_YAJL_IN_H
#define KSCOPE_YAJL_IN_H

#include "read/read.h"

#include <yajl/yajl_parse.h>

typedef struct kscope__yajl_in {
    yajl_handle y;
    const kscope__hevents *ev;     /* the reader's handlers (0 to stop: KSCOPE__YAJL_STOP) */
    void *ctx;                     /* what they are called with */
    const char *truncated;         /* the line when the JSON ends before the document */
    const char *trailing;          /* the line when more follows the document */
    size_t fed;                    /* bytes given so far */
    size_t events, mark, quiet;    /* parse events so far: kscope__read_too_quiet */
    char err[KSCOPE__READ_ERRLEN]; /* the reader's first refusal (KSCOPE__YAJL_STOP) */
    int errcode;
} kscope__yajl_in;

/* A refusal from a yajl callback, the first one winning (kscope__read_stop):
 * returns 0, which stops the parse; feed and finish then report it. */
#define KSCOPE__YAJL_STOP(in, code, ...)                                                           \
    kscope__read_stop((in)->err, sizeof(in)->err, &(in)->errcode, (code), __VA_ARGS__)

/* A parser handing its events to ev's handlers with ctx, with the
 * reader's words for yajl's two ends of its own: 0, or KSCOPE_ENOMEM with
 * in->y NULL. yajl keeps in's address: in stays where it is until
 * kscope__yajl_in_free. */
int kscope__yajl_in_init(kscope__yajl_in *in, const kscope__hevents *ev, void *ctx,
                         const char *truncated, const char *trailing);
void kscope__yajl_in_free(kscope__yajl_in *in);

/* Feed the next len bytes: 0, or a negative code with its line in err
 * (every later call says the same). */
int kscope__yajl_in_feed(kscope__yajl_in *in, const char *buf, size_t len, char *err,
                         size_t errlen);

/* The end of the input: 0 when a whole JSON document was read and nothing
 * refused; the reader's checks on the whole document come after. */
int kscope__yajl_in_finish(kscope__yajl_in *in, char *err, size_t errlen);

#endif
