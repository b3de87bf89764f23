/*
 * trace-args.c - two parts of reading a trace for the page: each event's
 * args kept as compact JSON (shown when the pointer rests on its slice),
 * and "B"/"E" (begin/end) events paired into slices, as Perfetto and
 * chrome://tracing draw them.
 *
 * An event's args come as the reader wrote them again (their JSON, with
 * where its numbers are) and are kept in two parts (trace-data.h's
 * args_ref): a template with '#' for each number, stored once however many
 * events share it, and the numbers' texts, kept as they were written. A
 * million kernels that differ only in their correlation ids cost one
 * template and a few bytes each. An event's args longer than ARGS_MAX are
 * replaced by a note saying so.
 */
#include "report/trace-data.h"
#include "kscope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARGS_MAX 4096

/* The index of text in the template table; -2 (not -1, "no args") when
 * out of memory. */
static int32_t intern_args(tparse *p, const char *text)
{
    int32_t k = kscope__report_intern(&p->argtab, text);
    return k < 0 ? -2 : k;
}

/* Append n bytes to the numbers' pool: their offset, or -1. */
static int64_t pool_add(tparse *p, const char *s, size_t n)
{
    if (n == 0)
        return (int64_t)p->npool;
    if (p->npool + n > p->cappool) {
        size_t cap = p->cappool ? p->cappool : 1 << 16;
        while (cap < p->npool + n)
            cap *= 2;
        char *grown = realloc(p->pool, cap);
        if (!grown)
            return -1;
        p->pool = grown;
        p->cappool = cap;
    }
    memcpy(p->pool + p->npool, s, n);
    p->npool += n;
    return (int64_t)(p->npool - n);
}

/* A template and its numbers into *out; 0 or -1. */
static int keep(tparse *p, const char *tmpl, const char *nums, size_t n, args_ref *out)
{
    int64_t off = pool_add(p, nums, n);
    out->tmpl = off < 0 ? -2 : intern_args(p, tmpl);
    out->off = off < 0 ? 0 : (size_t)off;
    out->len = (uint32_t)n;
    return out->tmpl == -2 ? -1 : 0;
}

/* The args JSON with each number as '#' into p->argw, the numbers
 * comma-separated into p->argnum. */
static void split_numbers(tparse *p, const kscope__tev_read *r)
{
    const char *json = r->args_json.text;
    size_t at = 0;
    kscope__jw_clear(&p->argw);
    kscope__jw_clear(&p->argnum);
    for (size_t i = 0; i + 1 < r->nnumbers; i += 2) {
        size_t off = r->numbers[i], len = r->numbers[i + 1];
        kscope__jw_raw(&p->argw, json + at, off - at);
        kscope__jw_raw(&p->argw, "#", 1);
        if (i)
            kscope__jw_raw(&p->argnum, ",", 1);
        kscope__jw_raw(&p->argnum, json + off, len);
        at = off + len;
    }
    kscope__jw_raw(&p->argw, json + at, r->args_json.len - at);
    kscope__jw_raw(&p->argw, "", 1); /* the terminating NUL */
}

int kscope__report_args_take(tparse *p, const kscope__tev_read *r, args_ref *out)
{
    *out = (args_ref){-1, 0, 0};
    if (r->args_json.type != KSCOPE__TEV_OBJECT || !r->args_json.text)
        return 0;
    /* the template and the numbers together: the JSON with a '#' for each
     * number, and a comma between numbers */
    size_t n = r->nnumbers / 2;
    if (r->args_json.len + n + (n ? n - 1 : 0) > ARGS_MAX) {
        char note[96];
        snprintf(note, sizeof note, "{\"(args)\":\"longer than %d bytes: not shown\"}", ARGS_MAX);
        return keep(p, note, "", 0, out);
    }
    if (strcmp(r->args_json.text, "{}") == 0)
        return 0;
    split_numbers(p, r);
    if (p->argw.out.failed || p->argnum.out.failed)
        return -1;
    return keep(p, p->argw.out.buf, p->argnum.out.buf ? p->argnum.out.buf : "", p->argnum.out.len,
                out);
}

/* ------------------------------------------------------------ B/E pairs */

static int by_track_time(const void *a, const void *b)
{
    const be_event *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The last time anything happens in the trace (where unended slices stop). */
static int64_t last_time(const tparse *p)
{
    int64_t t = INT64_MIN;
    for (size_t i = 0; i < p->nslices; i++)
        t = p->slices[i].ts + p->slices[i].dur > t ? p->slices[i].ts + p->slices[i].dur : t;
    for (size_t i = 0; i < p->nmarks; i++)
        t = p->marks[i].ts > t ? p->marks[i].ts : t;
    for (size_t i = 0; i < p->nsamples; i++)
        t = p->samples[i].ts > t ? p->samples[i].ts : t;
    for (size_t i = 0; i < p->nbe; i++)
        t = p->be[i].ts > t ? p->be[i].ts : t;
    return t;
}

/* The args of a "B" with those of its "E" (the E's win where both have a
 * key, as JSON.parse keeps the last); 0 or -1. */
static int merge_args(tparse *p, const args_ref *b, const args_ref *e, args_ref *out)
{
    if (b->tmpl < 0 || e->tmpl < 0) {
        *out = b->tmpl < 0 ? *e : *b;
        return 0;
    }
    const char *x = p->argtab.str[b->tmpl], *y = p->argtab.str[e->tmpl];
    size_t nx = strlen(x), ny = strlen(y);
    char *both = malloc(nx + ny + 1), *nums = malloc((size_t)b->len + e->len + 2);
    int rc = -1;
    if (both && nums) {
        memcpy(both, x, nx - 1); /* without its '}' */
        both[nx - 1] = ',';
        memcpy(both + nx, y + 1, ny); /* without its '{', with the NUL */
        size_t n = 0;
        if (b->len)
            memcpy(nums, p->pool + b->off, b->len);
        n += b->len;
        if (b->len && e->len)
            nums[n++] = ',';
        if (e->len)
            memcpy(nums + n, p->pool + e->off, e->len);
        n += e->len;
        rc = keep(p, both, nums, n, out);
    }
    free(both), free(nums);
    return rc;
}

static int add_slice(tparse *p, const be_event *b, int64_t end, const args_ref *args)
{
    if (!GROW(p->slices, p->nslices, p->capslices))
        return 0;
    p->slices[p->nslices++] = (slice){b->ts, end - b->ts, b->track, b->name, *args};
    return 1;
}

/* Close what is still open on a track at the trace's end. */
static int close_open(tparse *p, const size_t *open, size_t *depth, int64_t end)
{
    for (; *depth > 0; --*depth, p->unended++)
        if (!add_slice(p, &p->be[open[*depth - 1]], end, &p->be[open[*depth - 1]].args))
            return 0;
    return 1;
}

int kscope__report_pair_be(tparse *p)
{
    if (!p->nbe)
        return 0;
    qsort(p->be, p->nbe, sizeof *p->be, by_track_time);
    int64_t end = last_time(p);
    size_t *open = malloc(p->nbe * sizeof *open), depth = 0;
    int ok = open != NULL;
    for (size_t i = 0; ok && i < p->nbe; i++) {
        const be_event *e = &p->be[i];
        if (i > 0 && e->track != p->be[i - 1].track)
            ok = close_open(p, open, &depth, end);
        if (e->begin) {
            open[depth++] = i;
        } else if (depth) { /* an "E" with nothing open is left out */
            const be_event *b = &p->be[open[--depth]];
            args_ref args;
            ok = merge_args(p, &b->args, &e->args, &args) == 0 && add_slice(p, b, e->ts, &args);
        }
    }
    ok = ok && close_open(p, open, &depth, end);
    free(open);
    return ok ? 0 : KSCOPE_ENOMEM;
}
