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

/* The i-th word of list `which`: NULL past its end, "" for an entry that
 * has none (a backend without a capture range). */
static const char *list_word(kscope_cli_list_kind which, size_t i)
{
    const kscope__backend *b;
    const kscope__gpu_vendor *v;
    const kscope__range_source *src;
    switch (which) {
    case KSCOPE_CLI_BACKENDS:
        return (b = kscope__backend_at(i)) ? b->name : NULL;
    case KSCOPE_CLI_CAPTURE_RANGES:
        if (!(b = kscope__backend_at(i)))
            return NULL;
        return b->capture_range ? b->capture_range : "";
    case KSCOPE_CLI_GPU_LIBRARIES:
        return (v = kscope__gpu_vendor_at(i)) ? v->label : NULL;
    case KSCOPE_CLI_RANGE_SOURCES:
        return (src = kscope__range_source_at(i)) ? src->name : NULL;
    }
    return NULL;
}

void kscope_cli_list(kscope_cli_list_kind which, char *buf, size_t size)
{
    const char *w;
    buf[0] = '\0';
    for (size_t i = 0; (w = list_word(which, i)); i++)
        if (*w)
            list_add(buf, size, w);
    if (which == KSCOPE_CLI_BACKENDS)
        list_add(buf, size, "none");
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

/* The help-text keys that stand for a list. */
static const struct {
    const char *key;
    kscope_cli_list_kind list;
} list_keys[] = {
    {"backends", KSCOPE_CLI_BACKENDS},
    {"capture_range", KSCOPE_CLI_CAPTURE_RANGES},
    {"gpu_libraries", KSCOPE_CLI_GPU_LIBRARIES},
    {"range_sources", KSCOPE_CLI_RANGE_SOURCES},
};

static int key_is(const char *key, size_t len, const char *word)
{
    return strlen(word) == len && strncmp(key, word, len) == 0;
}

/* The registry's word for a help-text key, or NULL for an unknown key. */
static const char *help_word(const char *key, size_t len, char *buf, size_t size)
{
    const kscope__backend *first = kscope__backend_at(0);
    for (size_t i = 0; i < sizeof list_keys / sizeof list_keys[0]; i++)
        if (key_is(key, len, list_keys[i].key)) {
            kscope_cli_list(list_keys[i].list, buf, size);
            return buf;
        }
    if (key_is(key, len, "default_backend"))
        snprintf(buf, size, "%s", first ? first->name : "none");
    else if (key_is(key, len, "device_type"))
        snprintf(buf, size, "%s", kscope__gpu_device_type());
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
