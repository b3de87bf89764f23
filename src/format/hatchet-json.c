/*
 * hatchet-json.c - write a profile tree as .hatchet: a JSON array of the
 * ROOT node and the device-info object, the shape proton-viewer and LLNL
 * Hatchet's literal reader load.
 *
 * ROOT's layout (its placeholders and its "kscope" member) is decided by
 * hatchet-root.c; the walk is iterative, so depth is bounded only by memory.
 */
#include "format/format.h"
#include "format/hatchet-root.h"
#include "format/jsonw.h"
#include "kscope.h"
#include "profile/ptree.h"

#include <stdio.h>
#include <stdlib.h>

static void write_metric(kscope__jsonw *w, const kscope__pmetric *m)
{
    kscope__jw_key(w, m->key);
    switch (m->type) {
    case KSCOPE__V_INT:
        kscope__jw_int(w, m->v.i);
        break;
    case KSCOPE__V_DOUBLE:
        kscope__jw_double(w, m->v.d);
        break;
    case KSCOPE__V_STRING:
        kscope__jw_str(w, m->v.s);
        break;
    case KSCOPE__V_INTVEC:
    case KSCOPE__V_DOUBLEVEC:
        kscope__jw_open(w, '[');
        for (uint32_t i = 0; i < m->n; i++) {
            if (m->type == KSCOPE__V_INTVEC)
                kscope__jw_int(w, m->v.iv[i]);
            else
                kscope__jw_double(w, m->v.dv[i]);
        }
        kscope__jw_close(w, ']');
        break;
    }
}

/* ROOT's metrics: its numbers and the placeholders, then its aside member. */
static void write_root_metrics(kscope__jsonw *w, const kscope__hroot *r)
{
    kscope__jw_open(w, '{');
    for (uint32_t i = 0; i < r->nown; i++)
        write_metric(w, r->own[i]);
    for (uint32_t i = 0; i < r->nzeros; i++) {
        kscope__jw_key(w, r->zeros[i]);
        if (r->zero_double[i])
            kscope__jw_double(w, 0.0);
        else
            kscope__jw_int(w, 0);
    }
    kscope__jw_close(w, '}');
    if (!kscope__hroot_has_aside(r))
        return;
    kscope__jw_key(w, KSCOPE__HROOT_KEY);
    kscope__jw_open(w, '{');
    if (r->list_inclusive) {
        kscope__jw_key(w, KSCOPE__HROOT_INCLUSIVE);
        kscope__jw_open(w, '[');
        for (uint32_t i = 0; i < r->ninclusive; i++)
            kscope__jw_str(w, r->inclusive[i]);
        kscope__jw_close(w, ']');
    }
    if (r->naside > 0) {
        kscope__jw_key(w, KSCOPE__HROOT_METRICS);
        kscope__jw_open(w, '{');
        for (uint32_t i = 0; i < r->naside; i++)
            write_metric(w, r->aside[i]);
        kscope__jw_close(w, '}');
    }
    kscope__jw_close(w, '}');
}

static void write_node_head(kscope__jsonw *w, const kscope__hroot *r, const kscope__ptree *t,
                            const kscope__pnode *n)
{
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "frame");
    kscope__jw_open(w, '{');
    kscope__jw_key(w, "name");
    kscope__jw_str(w, n->name);
    kscope__jw_key(w, "type");
    kscope__jw_str(w, n->type ? n->type : "function");
    kscope__jw_close(w, '}');
    kscope__jw_key(w, "metrics");
    if (n == t->root) {
        write_root_metrics(w, r);
    } else {
        kscope__jw_open(w, '{');
        for (uint32_t i = 0; i < n->nmetrics; i++)
            write_metric(w, &n->metrics[i]);
        kscope__jw_close(w, '}');
    }
    kscope__jw_key(w, "children");
    kscope__jw_open(w, '[');
}

static void write_devices(kscope__jsonw *w, const kscope__ptree *t)
{
    kscope__jw_open(w, '{');
    /* Group devices by type: {"<type>": {"0": {...}, "1": {...}}}. */
    for (uint32_t i = 0; i < t->ndevices; i++) {
        if (!kscope__ptree_device_first_of_type(t, i))
            continue;
        const char *type = t->devices[i].type;
        kscope__jw_key(w, type);
        kscope__jw_open(w, '{');
        for (uint32_t j = i; j < t->ndevices; j++) {
            const kscope__pdevice *d = &t->devices[j];
            if (d->type != type)
                continue;
            char id[16];
            snprintf(id, sizeof id, "%u", d->id);
            kscope__jw_key(w, id);
            kscope__jw_open(w, '{');
            kscope__jw_key(w, "arch");
            kscope__jw_str(w, d->arch ? d->arch : "");
            kscope__jw_key(w, "bus_width");
            kscope__jw_int(w, d->bus_width);
            kscope__jw_key(w, "clock_rate");
            kscope__jw_int(w, d->clock_rate);
            kscope__jw_key(w, "memory_clock_rate");
            kscope__jw_int(w, d->memory_clock_rate);
            kscope__jw_key(w, "num_sms");
            kscope__jw_int(w, d->num_sms);
            kscope__jw_close(w, '}');
        }
        kscope__jw_close(w, '}');
    }
    kscope__jw_close(w, '}');
}

typedef struct json_walk {
    kscope__jsonw *w;
    const kscope__ptree *t;
    const kscope__hroot *r;
} json_walk;

static void enter_node(const kscope__pnode *n, void *arg)
{
    json_walk *jw = arg;
    write_node_head(jw->w, jw->r, jw->t, n);
}

static void leave_node(const kscope__pnode *n, void *arg)
{
    (void)n;
    json_walk *jw = arg;
    kscope__jw_close(jw->w, ']');
    kscope__jw_close(jw->w, '}');
}

int kscope__hatchet_write_json(const kscope__ptree *t, char **out, size_t *len)
{
    kscope__hroot r;
    if (kscope__hroot_plan(t, &r) != 0) {
        kscope__hroot_free(&r);
        return KSCOPE_ENOMEM;
    }
    kscope__jsonw w;
    kscope__jw_init(&w);
    json_walk jw = {&w, t, &r};
    kscope__jw_open(&w, '[');
    int rc = kscope__ptree_walk(t, enter_node, leave_node, &jw);
    kscope__hroot_free(&r);
    if (rc != 0) {
        kscope__jw_free(&w);
        return KSCOPE_ENOMEM;
    }
    write_devices(&w, t);
    kscope__jw_close(&w, ']');
    kscope__jw_raw(&w, "\n", 1);
    return kscope__jw_finish(&w, out, len);
}
