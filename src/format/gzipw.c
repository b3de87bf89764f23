/*
 * gzipw.c - a Chrome trace gzip-compressed on its way to a sink (the
 * .chrome_trace.gz format: Perfetto UI and chrome://tracing open it as is).
 *
 * The recorder links no third-party library, so zlib is looked up with
 * dlopen ("libz.so.1", or $KSCOPE_LIBZ) the first time a compressed file
 * is written, as the GPU vendors' libraries are: a process that writes
 * none never loads it. Its z_stream is declared here from zlib's documented layout;
 * deflateInit2_ checks the size we pass against its own, so a zlib whose
 * layout differs refuses instead of being misused.
 */
#include "format/format.h"
#include "kscope.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* zlib's z_stream (zlib.h), field for field. */
typedef struct zstream {
    const unsigned char *next_in;
    unsigned avail_in;
    unsigned long total_in;
    unsigned char *next_out;
    unsigned avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *(*zalloc)(void *, unsigned, unsigned);
    void (*zfree)(void *, void *);
    void *opaque;
    int data_type;
    unsigned long adler, reserved;
} zstream;

enum { Z_NO_FLUSH = 0, Z_FINISH = 4, Z_OK = 0, Z_STREAM_END = 1, Z_DEFLATED = 8 };

/* Compression level: JSON shrinks about 10x at 3, several times faster
 * than zlib's default 6 for a few percent more bytes. */
#define LEVEL 3
/* windowBits 15, plus 16: a gzip header and trailer instead of zlib's. */
#define GZIP_WINDOW (15 + 16)

static struct {
    int (*init)(zstream *, int, int, int, int, int, const char *, int);
    int (*deflate)(zstream *, int);
    int (*end)(zstream *);
    const char *(*version)(void);
} z;
static int z_loaded; /* 1 loaded, -1 missing */
static pthread_once_t z_once = PTHREAD_ONCE_INIT;

static void z_load(void)
{
    const char *name = getenv("KSCOPE_LIBZ");
    void *h = dlopen(name && *name ? name : "libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h) {
        *(void **)&z.init = dlsym(h, "deflateInit2_");
        *(void **)&z.deflate = dlsym(h, "deflate");
        *(void **)&z.end = dlsym(h, "deflateEnd");
        *(void **)&z.version = dlsym(h, "zlibVersion");
    }
    z_loaded = h && z.init && z.deflate && z.end && z.version ? 1 : -1;
}

int kscope__gzip_available(void)
{
    pthread_once(&z_once, z_load);
    return z_loaded > 0;
}

typedef struct gz {
    zstream s;
    const kscope__sink *down;
    int rc;
    unsigned char out[64 * 1024];
} gz;

/* Run deflate over what is in s with `flush`, handing full outputs down. */
static int pump(gz *g, int flush)
{
    for (;;) {
        g->s.next_out = g->out;
        g->s.avail_out = sizeof g->out;
        int zr = z.deflate(&g->s, flush);
        size_t made = sizeof g->out - g->s.avail_out;
        if (made && (g->rc = g->down->write(g->down->arg, g->out, made)) != 0)
            return g->rc;
        if (zr == Z_STREAM_END)
            return 0;
        if (zr != Z_OK)
            return g->rc = KSCOPE_EIO;
        if (flush == Z_NO_FLUSH && g->s.avail_in == 0 && g->s.avail_out != 0)
            return 0;
    }
}

static int gz_write(void *arg, const void *buf, size_t len)
{
    gz *g = arg;
    while (len > 0 && g->rc == 0) {
        unsigned n = len > (1u << 30) ? 1u << 30 : (unsigned)len;
        g->s.next_in = buf;
        g->s.avail_in = n;
        pump(g, Z_NO_FLUSH);
        buf = (const char *)buf + n;
        len -= n;
    }
    return g->rc;
}

int kscope__chrome_trace_gz_to(kscope__tev_source source, void *source_arg, const kscope__sink *out)
{
    pthread_once(&z_once, z_load);
    if (z_loaded < 0)
        return KSCOPE_ENOTSUP; /* the caller names the missing library */
    gz *g = calloc(1, sizeof *g);
    if (!g)
        return KSCOPE_ENOMEM;
    g->down = out;
    if (z.init(&g->s, LEVEL, Z_DEFLATED, GZIP_WINDOW, 8, 0, z.version(), (int)sizeof g->s) !=
        Z_OK) {
        free(g);
        return KSCOPE_ENOTSUP;
    }
    kscope__sink in = {gz_write, g};
    int rc = kscope__chrome_trace_to(source, source_arg, &in);
    if (rc == 0 && g->rc == 0) {
        g->s.next_in = NULL;
        g->s.avail_in = 0;
        rc = pump(g, Z_FINISH);
    }
    z.end(&g->s);
    rc = rc ? rc : g->rc;
    free(g);
    return rc;
}
