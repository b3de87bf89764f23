/*
 * sink.c - the buffer both encoders write into (kscope__outbuf, sink.h):
 * how it grows, when it hands a chunk to its sink, how it ends.
 */
#include "format/sink.h"
#include "kscope.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

void kscope__outbuf_init(kscope__outbuf *b, const kscope__sink *sink)
{
    memset(b, 0, sizeof *b);
    b->sink = sink;
}

void kscope__outbuf_free(kscope__outbuf *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}

/* Hand what is buffered to the sink. */
static int flush(kscope__outbuf *b)
{
    int rc = b->len ? b->sink->write(b->sink->arg, b->buf, b->len) : 0;
    b->len = 0;
    if (rc) {
        b->failed = 1;
        b->rc = rc;
    }
    return rc == 0;
}

/* Room for n more bytes and the spare one: 1, or 0 once failed. */
static int reserve(kscope__outbuf *b, size_t n)
{
    if (b->failed)
        return 0;
    if (b->len + n + 1 <= b->cap)
        return 1;
    if (b->sink && b->len + n + 1 > KSCOPE__SINK_CHUNK && !flush(b))
        return 0;
    if (b->len + n + 1 <= b->cap)
        return 1;
    if (KSCOPE__ROOM(b->buf, b->cap, b->len + n + 1, 4096) != 0) {
        b->failed = 1;
        return 0;
    }
    return 1;
}

char *kscope__outbuf_add(kscope__outbuf *b, size_t n)
{
    if (!reserve(b, n))
        return NULL;
    char *at = b->buf + b->len;
    b->len += n;
    return at;
}

int kscope__outbuf_finish(kscope__outbuf *b, char **out, size_t *len)
{
    if (!reserve(b, 0)) {
        kscope__outbuf_free(b);
        return KSCOPE_ENOMEM;
    }
    b->buf[b->len] = 0;
    *out = b->buf;
    *len = b->len;
    memset(b, 0, sizeof *b);
    return 0;
}

int kscope__outbuf_end(kscope__outbuf *b)
{
    if (!b->failed)
        flush(b);
    int rc = b->rc ? b->rc : b->failed ? KSCOPE_ENOMEM : 0;
    kscope__outbuf_free(b);
    return rc;
}
