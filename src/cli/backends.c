/*
 * backends.c - the registry's GPU backends as the command line shows and
 * checks them: the names -b takes, the --capture-range values, and the
 * words help texts take from the registry ({backends}, {default_backend},
 * {capture_range}, {device_type}, {range_sources}) and from the GPU
 * vendors' diagnostics libraries ({gpu_libraries}), and the variables that
 * make a program load libkscope, so no command names a vendor itself.
 */
#include "cli/cmd.h"
#include "diag/diag.h"
#include "format/format.h"
#include "kscope-internal.h"

#include <stdlib.h>
#include <string.h>

/* Append `word` to the list in buf: "a", "a, b", then " or " before the
 * last one is fixed up by or_list. */
static void list_add(char *buf, size_t size, const char *word)
{
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s%s", used ? ", " : "", word);
}

/* "a, b, c" -> "a, b or c". */
static void or_list(char *buf, size_t size)
{
    char *last = strrchr(buf, ',');
    if (!last)
        return;
    char tail[256];
    snprintf(tail, sizeof tail, " or%s", last + 1);
    *last = '\0';
    size_t used = strlen(buf);
    snprintf(buf + used, size - used, "%s", tail);
}

void kscope_cli_backend_list(char *buf, size_t size)
{
    const kscope__backend *b;
    buf[0] = '\0';
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        list_add(buf, size, b->name);
    list_add(buf, size, "none");
    or_list(buf, size);
}

void kscope_cli_capture_list(char *buf, size_t size)
{
    const kscope__backend *b;
    buf[0] = '\0';
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        if (b->capture_range)
            list_add(buf, size, b->capture_range);
    or_list(buf, size);
}

void kscope_cli_gpu_libraries(char *buf, size_t size)
{
    const kscope__gpu_vendor *v;
    buf[0] = '\0';
    for (size_t i = 0; (v = kscope__gpu_vendor_at(i)); i++)
        list_add(buf, size, v->label);
    or_list(buf, size);
}

void kscope_cli_range_sources(char *buf, size_t size)
{
    const kscope__range_source *src;
    buf[0] = '\0';
    for (size_t i = 0; (src = kscope__range_source_at(i)); i++)
        list_add(buf, size, src->name);
    or_list(buf, size);
}

void kscope_cli_set_inject_env(const char *lib)
{
    const kscope__backend *b;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        for (const char *const *v = b->inject_env; v && *v; v++)
            setenv(*v, lib, 1);
    const kscope__range_source *src;
    for (size_t i = 0; (src = kscope__range_source_at(i)); i++)
        for (const char *const *v = src->inject_env; v && *v; v++)
            setenv(*v, lib, 1);
}

int kscope_cli_is_backend(const char *name)
{
    return strcmp(name, "none") == 0 || kscope__backend_find(name) != NULL;
}

int kscope_cli_is_capture_range(const char *name)
{
    const kscope__backend *b;
    if (strcmp(name, "none") == 0)
        return 1;
    for (size_t i = 0; (b = kscope__backend_at(i)); i++)
        if (b->capture_range && strcmp(b->capture_range, name) == 0)
            return 1;
    return 0;
}

/* The registry's word for a help-text key, or NULL for an unknown key. */
static const char *help_word(const char *key, size_t len, char *buf, size_t size)
{
    const kscope__backend *first = kscope__backend_at(0);
    if (len == 8 && strncmp(key, "backends", len) == 0)
        kscope_cli_backend_list(buf, size);
    else if (len == 15 && strncmp(key, "default_backend", len) == 0)
        snprintf(buf, size, "%s", first ? first->name : "none");
    else if (len == 13 && strncmp(key, "capture_range", len) == 0)
        kscope_cli_capture_list(buf, size);
    else if (len == 11 && strncmp(key, "device_type", len) == 0)
        snprintf(buf, size, "%s", kscope__gpu_device_type());
    else if (len == 13 && strncmp(key, "gpu_libraries", len) == 0)
        kscope_cli_gpu_libraries(buf, size);
    else if (len == 13 && strncmp(key, "range_sources", len) == 0)
        kscope_cli_range_sources(buf, size);
    else /* the format table's words */
        return kscope__format_word(key, len, buf, size);
    return buf;
}

void kscope_cli_print_text(const char *text, FILE *f)
{
    char word[512];
    for (const char *p = text; *p;) {
        const char *open = strchr(p, '{');
        const char *close = open ? strchr(open, '}') : NULL;
        const char *w =
            close ? help_word(open + 1, (size_t)(close - open - 1), word, sizeof word) : NULL;
        if (!w) {
            size_t n = open ? (size_t)(open - p) + 1 : strlen(p);
            fwrite(p, 1, n, f);
            p += n;
            continue;
        }
        fwrite(p, 1, (size_t)(open - p), f);
        fputs(w, f);
        p = close + 1;
    }
}
