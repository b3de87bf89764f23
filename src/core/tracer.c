/*
 * tracer.c - the MAX-style span stack (push/pop/next/cleanup/mark) and the
 * named colours.
 */
#include "core.h"

#include <string.h>

void kscope_tracer_init(kscope_tracer *t)
{
    if (t)
        memset(t, 0, sizeof *t);
}

/* When profiling is off (or no session), the span is a placeholder: it
 * keeps push/pop balanced without recording anything. */
int kscope_tracer_push(kscope_tracer *t, const char *name, uint32_t color)
{
    if (!t)
        return kscope__fail(KSCOPE_EINVAL, "tracer is NULL");
    if (t->depth >= KSCOPE_TRACER_MAX)
        return kscope__fail(KSCOPE_EDEPTH, "tracer holds %d spans already", KSCOPE_TRACER_MAX);
    int rc = kscope_enter_ex(name, color, 0);
    if (rc < 0)
        return rc;
    t->real[t->depth++] = rc == 0;
    return 0;
}

int kscope_tracer_pop(kscope_tracer *t)
{
    if (!t)
        return kscope__fail(KSCOPE_EINVAL, "tracer is NULL");
    if (t->depth == 0)
        return kscope__fail(KSCOPE_EEMPTY, "tracer pop on an empty stack");
    int real = t->real[--t->depth];
    if (!real)
        return 0;
    int rc = kscope_exit(NULL);
    return rc < 0 ? rc : 0;
}

int kscope_tracer_next(kscope_tracer *t, const char *name, uint32_t color)
{
    int rc = kscope_tracer_pop(t);
    return rc ? rc : kscope_tracer_push(t, name, color);
}

int kscope_tracer_cleanup(kscope_tracer *t)
{
    if (!t)
        return kscope__fail(KSCOPE_EINVAL, "tracer is NULL");
    int rc = 0;
    while (t->depth > 0) {
        int r = kscope_tracer_pop(t);
        rc = rc ? rc : r;
    }
    return rc;
}

int kscope_tracer_mark(kscope_tracer *t, const char *name)
{
    if (!t)
        return kscope__fail(KSCOPE_EINVAL, "tracer is NULL");
    if (t->depth == 0)
        return kscope__fail(KSCOPE_EEMPTY, "tracer mark '%s' with no span pushed",
                            name ? name : "");
    int rc = kscope_mark(name);
    return rc < 0 ? rc : 0;
}

uint32_t kscope_color(const char *name)
{
    static const struct {
        const char *name;
        uint32_t rgb;
    } colors[] = {
        {"modular_purple", 0xB5BAF5}, {"blue", 0x0000FF}, {"green", 0x008000}, {"orange", 0xFFA500},
        {"purple", 0x800080},         {"red", 0xFF0000},  {"white", 0xFFFFFF}, {"yellow", 0xFFFF00},
    };
    for (size_t i = 0; name && i < sizeof colors / sizeof colors[0]; i++)
        if (strcmp(colors[i].name, name) == 0)
            return colors[i].rgb;
    return 0xB5BAF5;
}
