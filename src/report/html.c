/*
 * html.c - the HTML page: the embedded template (page/report.html) with
 * its stylesheet, script and the profiles' data put in at its markers.
 *
 * Data goes in <script type="application/json"> elements and is read by
 * the page with JSON.parse; escaping <, > and & keeps a name like
 * "</script><script>..." from ending the element, and escaping U+2028 and
 * U+2029 keeps the text valid everywhere JSON is.
 */
#include "report/report.h"
#include "read/read.h"
#include "kscope.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The template's parts, generated from page/ at build time. */
extern const char kscope__page_html[], kscope__page_css[], kscope__page_js[];

kscope__report_limits kscope__report_default_limits(void)
{
    return (kscope__report_limits){200000, 1e-4, 250000};
}

void kscope__report_flush(kscope__report_out *o)
{
    const char *s = o->w.buf;
    size_t n = o->w.failed ? 0 : o->w.len, run = 0;
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

/* One profile's data element: {"name", "tree", "trace"?}. */
static int write_profile(kscope__report_out *o, const char *path, const char *id,
                         const kscope__report_limits *lim, char *err, size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = kscope__read_whole_file(path, &buf, &len, err, errlen);
    if (rc != 0)
        return rc;
    kscope__ptree *t = NULL;
    rc = kscope__read_profile(path, &t, err, errlen);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    fprintf(o->f, "<script type=\"application/json\" id=\"%s\">", id);
    o->w.need_comma = 0; /* a new document */
    kscope__jw_open(&o->w, '{');
    kscope__jw_key(&o->w, "name");
    kscope__jw_str(&o->w, base_name(path));
    kscope__jw_key(&o->w, "tree");
    rc = kscope__report_tree(o, t, lim);
    kscope__format_id fmt = kscope__format_sniff(buf, len < 4096 ? len : 4096);
    if (rc == 0 && kscope__format_get(fmt) && kscope__format_get(fmt)->kind == KSCOPE__KIND_TRACE) {
        kscope__jw_key(&o->w, "trace");
        rc = kscope__report_trace(o, buf, len, lim, err, errlen);
        if (rc != 0) {
            char what[KSCOPE__READ_ERRLEN];
            snprintf(what, sizeof what, "%s", err);
            snprintf(err, errlen, "%s: %s", path, what);
        }
    } else if (rc != 0) {
        snprintf(err, errlen, "%s: out of memory", path);
    }
    kscope__jw_close(&o->w, '}');
    kscope__report_flush(o);
    fputs("</script>\n", o->f);
    kscope__ptree_free(t);
    free(buf);
    return rc;
}

static int write_page(kscope__report_out *o, const char *a, const char *b,
                      const kscope__report_limits *lim, char *err, size_t errlen)
{
    const char *at = kscope__page_html;
    copy_until(o->f, &at, "<!--KSCOPE:CSS-->");
    fputs(kscope__page_css, o->f);
    copy_until(o->f, &at, "<!--KSCOPE:DATA-->");
    int rc = write_profile(o, a, "kscope-a", lim, err, errlen);
    if (rc == 0 && b)
        rc = write_profile(o, b, "kscope-b", lim, err, errlen);
    if (rc != 0)
        return rc;
    copy_until(o->f, &at, "<!--KSCOPE:JS-->");
    fputs(kscope__page_js, o->f);
    copy_until(o->f, &at, "<!--KSCOPE:END-->");
    return 0;
}

int kscope__report_html(const char *out_path, const char *a, const char *b,
                        const kscope__report_limits *lim, char *err, size_t errlen)
{
    kscope__report_limits def = kscope__report_default_limits();
    kscope__report_out o = {fopen(out_path, "w"), {0}};
    if (!o.f) {
        snprintf(err, errlen, "%s: cannot write: %s", out_path, strerror(errno));
        return KSCOPE_EIO;
    }
    kscope__jw_init(&o.w);
    int rc = write_page(&o, a, b, lim ? lim : &def, err, errlen);
    kscope__jw_free(&o.w);
    if (fclose(o.f) != 0 && rc == 0) {
        snprintf(err, errlen, "%s: cannot write: %s", out_path, strerror(errno));
        rc = KSCOPE_EIO;
    }
    if (rc != 0)
        remove(out_path);
    return rc;
}
