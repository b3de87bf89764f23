/*
 * html.c - the HTML page: the embedded template (page/report.html) with
 * its stylesheet, script and the profiles' data put in at its markers.
 *
 * Data goes in <script type="application/json"> elements and is read by
 * the page with JSON.parse; escaping <, > and & keeps a name like
 * "</script><script>..." from ending the element, and escaping U+2028 and
 * U+2029 keeps the text valid everywhere JSON is. Beside a tree profile,
 * the launchers' file of the run's facts (PROFILE.meta.json) is read for
 * the header; a profile with PC samples gets its kernels' hottest source
 * lines (read/lines.c). page/lines.js, which draws them, goes before the
 * page's script.
 */
#include "report/report.h"
#include "format/run-facts.h"
#include "read/read.h"
#include "kscope.h"

#include <yajl/yajl_tree.h>

#include <stdlib.h>
#include <string.h>

#define FACTS_MAX        65536 /* bytes of a run's facts file read */
#define LINES_PER_KERNEL 100   /* source lines shown per kernel */

/* The template's parts, generated from page/ at build time. */
extern const char kscope__page_html[], kscope__page_css[], kscope__page_js[],
    kscope__page_lines_js[];

kscope__report_limits kscope__report_default_limits(void)
{
    return (kscope__report_limits){200000, 1e-4, 250000};
}

void kscope__report_flush(kscope__report_out *o)
{
    const char *s = o->w.out.buf;
    size_t n = o->w.out.failed ? 0 : o->w.out.len, run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *esc = NULL;
        size_t skip = 1;
        if (s[i] == '<')
            esc = "\\u003c";
        else if (s[i] == '>')
            esc = "\\u003e";
        else if (s[i] == '&')
            esc = "\\u0026";
        else if ((unsigned char)s[i] == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
                 ((unsigned char)s[i + 2] & 0xfe) == 0xa8) {
            esc = (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
            skip = 3;
        }
        if (!esc)
            continue;
        fwrite(s + run, 1, i - run, o->f);
        fputs(esc, o->f);
        run = i + skip;
        i += skip - 1;
    }
    fwrite(s + run, 1, n - run, o->f);
    kscope__jw_clear(&o->w);
}

/* Write the template from *at up to the marker (or its end); *at moves
 * past the marker. Returns whether the marker was found. */
static int copy_until(FILE *f, const char **at, const char *marker)
{
    const char *m = strstr(*at, marker);
    size_t n = m ? (size_t)(m - *at) : strlen(*at);
    fwrite(*at, 1, n, f);
    *at += n + (m ? strlen(marker) : 0);
    return m != NULL;
}

/* The last part of a path, shown in the page as the profile's name. */
static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The run's facts beside a tree profile (PROFILE.meta.json, written by
 * the launchers) as "run": {key: text}; scalars only, at most 64 of them.
 * A file that is there but unreadable becomes "run_error", which the page
 * shows among its notes, and a line in warn: the report is still made. */
static void write_run_facts(kscope__jsonw *w, const char *path, char *warn, size_t warnlen)
{
    char facts[4096 + 16];
    snprintf(facts, sizeof facts, "%s%s", path, KSCOPE__FACTS_EXT);
    char msg[256] = "";
    FILE *f = kscope__open_side_file(facts, msg, sizeof msg);
    if (!f && !msg[0])
        return; /* none: a profile from anywhere else */
    char *text = f ? malloc(FACTS_MAX + 1) : NULL;
    size_t n = text ? fread(text, 1, FACTS_MAX + 1, f) : 0;
    int bad = f && ferror(f);
    if (f)
        fclose(f);
    yajl_val doc = NULL;
    if (msg[0])
        ; /* not a regular file, or cannot be opened: said below */
    else if (!text || bad || n > FACTS_MAX)
        snprintf(msg, sizeof msg, "%s",
                 !text ? "out of memory"
                 : bad ? "cannot read it"
                       : "larger than 64 KiB");
    else {
        text[n] = 0;
        doc = yajl_tree_parse(text, msg, sizeof msg);
        if (doc && !YAJL_IS_OBJECT(doc))
            snprintf(msg, sizeof msg, "not a JSON object");
        else if (!doc && !msg[0])
            snprintf(msg, sizeof msg, "not JSON");
    }
    free(text);
    if (doc && YAJL_IS_OBJECT(doc)) {
        kscope__jw_key(w, "run");
        kscope__jw_open(w, '{');
        for (size_t i = 0; i < doc->u.object.len && i < 64; i++) {
            yajl_val v = doc->u.object.values[i];
            if (!YAJL_IS_STRING(v) && !YAJL_IS_NUMBER(v))
                continue;
            kscope__jw_member_str(w, doc->u.object.keys[i],
                                  YAJL_IS_STRING(v) ? v->u.string : v->u.number.r);
        }
        kscope__jw_close(w, '}');
    } else {
        char line[sizeof facts + sizeof msg + 64];
        msg[strcspn(msg, "\n")] = 0;
        snprintf(line, sizeof line, "%s: the run's facts are left out: %s", KSCOPE__PATH(facts),
                 msg);
        kscope__jw_member_str(w, "run_error", line);
        if (warnlen && !warn[0]) /* the first one */
            snprintf(warn, warnlen, "%s", line);
    }
    yajl_tree_free(doc);
}

/* A trace's timeline into the profile's element (o) and its args into
 * args, kept in memory until that element is closed. */
static int write_trace(kscope__report_out *o, kscope__report_out *args, char **abuf, size_t *alen,
                       const char *path, kscope__timeline *tl, const kscope__report_limits *lim,
                       char *err, size_t errlen)
{
    args->f = open_memstream(abuf, alen);
    if (!args->f) {
        snprintf(err, errlen, "%s: out of memory", KSCOPE__PATH(path));
        return KSCOPE_ENOMEM;
    }
    kscope__jw_key(&o->w, "trace");
    int rc = kscope__report_timeline(o, args, tl, lim, err, errlen);
    if (fclose(args->f) != 0 && rc == 0) {
        snprintf(err, errlen, "out of memory");
        rc = KSCOPE_ENOMEM;
    }
    args->f = NULL;
    if (rc != 0) {
        char what[KSCOPE__READ_ERRLEN];
        snprintf(what, sizeof what, "%s", err);
        snprintf(err, errlen, "%s: %s", KSCOPE__PATH(path), what);
    }
    return rc;
}

/* One profile's data element: {"name", "run"?, "tree", "trace"?}, and for
 * a trace a second one, ID-args, with its events' args. */
static int write_profile(kscope__report_out *o, const char *path, const char *id,
                         const kscope__report_limits *lim, char *err, size_t errlen, char *warn,
                         size_t warnlen)
{
    char *abuf = NULL;
    size_t alen = 0;
    kscope__ptree *t = NULL;
    const kscope__format *fmt = NULL;
    /* the readers refuse what is no profile from its first bytes, and
     * stream the rest; a trace's events make its tree and its timeline as
     * they are read */
    kscope__timeline *tl = kscope__timeline_new();
    kscope__tev_sink sink = kscope__timeline_sink(tl);
    int rc = tl ? kscope__read_profile_events(path, &t, &sink, &fmt, err, errlen) : KSCOPE_ENOMEM;
    if (!tl)
        snprintf(err, errlen, "%s: out of memory", KSCOPE__PATH(path));
    int is_trace = rc == 0 && fmt->kind == KSCOPE__KIND_TRACE;
    if (rc != 0) {
        kscope__ptree_free(t);
        kscope__timeline_free(tl);
        return rc;
    }
    fprintf(o->f, "<script type=\"application/json\" id=\"%s\">", id);
    o->w.need_comma = 0; /* a new document */
    kscope__jw_open(&o->w, '{');
    kscope__jw_member_str(&o->w, "name", base_name(path));
    write_run_facts(&o->w, path, warn, warnlen);
    kscope__jw_key(&o->w, "tree");
    rc = kscope__report_tree(o, t, lim);
    if (rc == 0) /* `kscope top`'s table and the GPU split */
        rc = kscope__top_json(&o->w, "top", t) < 0 ? KSCOPE_ENOMEM : 0;
    if (rc == 0) /* a profile with PC samples: its kernels' hottest lines */
        rc = kscope__lines_json(&o->w, "lines", t, LINES_PER_KERNEL) < 0 ? KSCOPE_ENOMEM : 0;
    kscope__report_out args = {.f = NULL};
    kscope__jw_init(&args.w);
    if (rc == 0 && is_trace)
        rc = write_trace(o, &args, &abuf, &alen, path, tl, lim, err, errlen);
    else if (rc != 0)
        snprintf(err, errlen, "%s: out of memory", KSCOPE__PATH(path));
    kscope__jw_free(&args.w);
    kscope__jw_close(&o->w, '}');
    kscope__report_flush(o);
    fputs("</script>\n", o->f);
    if (abuf && rc == 0) {
        fprintf(o->f, "<script type=\"application/json\" id=\"%s-args\">", id);
        fwrite(abuf, 1, alen, o->f);
        fputs("</script>\n", o->f);
    }
    free(abuf);
    kscope__ptree_free(t);
    kscope__timeline_free(tl);
    return rc;
}

static int write_page(kscope__report_out *o, const char *a, const char *b,
                      const kscope__report_limits *lim, char *err, size_t errlen, char *warn,
                      size_t warnlen)
{
    const char *at = kscope__page_html;
    copy_until(o->f, &at, "<!--KSCOPE:CSS-->");
    fputs(kscope__page_css, o->f);
    copy_until(o->f, &at, "<!--KSCOPE:DATA-->");
    int rc = write_profile(o, a, "kscope-a", lim, err, errlen, warn, warnlen);
    if (rc == 0 && b)
        rc = write_profile(o, b, "kscope-b", lim, err, errlen, warn, warnlen);
    if (rc != 0)
        return rc;
    copy_until(o->f, &at, "<!--KSCOPE:JS-->");
    fputs(kscope__page_lines_js, o->f);
    fputs(kscope__page_js, o->f);
    copy_until(o->f, &at, "<!--KSCOPE:END-->");
    return 0;
}

int kscope__report_page(FILE *f, const char *a, const char *b, const kscope__report_limits *lim,
                        char *err, size_t errlen, char *warn, size_t warnlen)
{
    if (warnlen)
        warn[0] = 0;
    kscope__report_limits def = kscope__report_default_limits();
    kscope__report_out o = {.f = f};
    kscope__jw_init(&o.w);
    int rc = write_page(&o, a, b, lim ? lim : &def, err, errlen, warn, warnlen);
    kscope__jw_free(&o.w);
    return rc;
}
