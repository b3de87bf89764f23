/*
 * hatchet-doc.c - the .hatchet document, once for every encoding (see
 * hatchet-doc.h): nodes as {"frame": {name, type}, "metrics": {...},
 * "children": [...]}, ROOT's metrics and its "kscope" member as
 * hatchet-root.c plans them, then the device-info object grouped by
 * device type. The walk is iterative, so depth is bounded only by memory.
 */
#include "format/hatchet-doc.h"
#include "format/hatchet-root.h"
#include "kscope.h"

#include <stdio.h>

static void put_metric(const kscope__hdoc_enc *e, const kscope__pmetric *m)
{
    e->key(e->w, m->key);
    switch (m->type) {
    case KSCOPE__V_INT:
        e->i64(e->w, m->v.i);
        break;
    case KSCOPE__V_DOUBLE:
        e->f64(e->w, m->v.d);
        break;
    case KSCOPE__V_STRING:
        e->str(e->w, m->v.s);
        break;
    case KSCOPE__V_INTVEC:
    case KSCOPE__V_DOUBLEVEC:
        e->array(e->w, m->n);
        for (uint32_t i = 0; i < m->n; i++) {
            if (m->type == KSCOPE__V_INTVEC)
                e->i64(e->w, m->v.iv[i]);
            else
                e->f64(e->w, m->v.dv[i]);
        }
        e->end_array(e->w);
        break;
    }
}

/* ROOT's metrics (its numbers and the placeholders), then its aside
 * member, a key of the node beside "metrics". */
static void put_root_metrics(const kscope__hdoc_enc *e, const kscope__hroot *r)
{
    e->map(e->w, r->nown + r->nzeros);
    for (uint32_t i = 0; i < r->nown; i++)
        put_metric(e, r->own[i]);
    for (uint32_t i = 0; i < r->nzeros; i++) {
        e->key(e->w, r->zeros[i]);
        if (r->zero_double[i])
            e->f64(e->w, 0.0);
        else
            e->i64(e->w, 0);
    }
    e->end_map(e->w);
    if (!kscope__hroot_has_aside(r))
        return;
    e->key(e->w, KSCOPE__HROOT_KEY);
    e->map(e->w, (uint32_t)(r->list_inclusive != 0) + (uint32_t)(r->naside > 0));
    if (r->list_inclusive) {
        e->key(e->w, KSCOPE__HROOT_INCLUSIVE);
        e->array(e->w, r->ninclusive);
        for (uint32_t i = 0; i < r->ninclusive; i++)
            e->str(e->w, r->inclusive[i]);
        e->end_array(e->w);
    }
    if (r->naside > 0) {
        e->key(e->w, KSCOPE__HROOT_METRICS);
        e->map(e->w, r->naside);
        for (uint32_t i = 0; i < r->naside; i++)
            put_metric(e, r->aside[i]);
        e->end_map(e->w);
    }
    e->end_map(e->w);
}

typedef struct walk {
    const kscope__hdoc_enc *e;
    const kscope__ptree *t;
    const kscope__hroot *r;
} walk;

/* A node up to its children's array, opened. */
static void enter_node(const kscope__pnode *n, void *arg)
{
    const walk *k = arg;
    const kscope__hdoc_enc *e = k->e;
    int root = n == k->t->root;
    e->map(e->w, 3 + (uint32_t)(root && kscope__hroot_has_aside(k->r)));
    e->key(e->w, "frame");
    e->map(e->w, 2);
    e->key(e->w, "name");
    e->str(e->w, n->name);
    e->key(e->w, "type");
    e->str(e->w, kscope__pnode_type(n));
    e->end_map(e->w);
    e->key(e->w, "metrics");
    if (root) {
        put_root_metrics(e, k->r);
    } else {
        e->map(e->w, n->nmetrics);
        for (uint32_t i = 0; i < n->nmetrics; i++)
            put_metric(e, &n->metrics[i]);
        e->end_map(e->w);
    }
    e->key(e->w, "children");
    e->array(e->w, n->nchildren);
}

static void leave_node(const kscope__pnode *n, void *arg)
{
    (void)n;
    const walk *k = arg;
    k->e->end_array(k->e->w);
    k->e->end_map(k->e->w);
}

/* {"<type>": {"0": {...}, "1": {...}}, ...} */
static void put_devices(const kscope__hdoc_enc *e, const kscope__ptree *t)
{
    uint32_t ntypes = 0;
    for (uint32_t i = 0; i < t->ndevices; i++)
        ntypes += (uint32_t)kscope__ptree_device_first_of_type(t, i);
    e->map(e->w, ntypes);
    for (uint32_t i = 0; i < t->ndevices; i++) {
        if (!kscope__ptree_device_first_of_type(t, i))
            continue;
        const char *type = t->devices[i].type;
        e->key(e->w, type);
        e->map(e->w, kscope__ptree_devices_of_type(t, type));
        for (uint32_t j = i; j < t->ndevices; j++) {
            const kscope__pdevice *d = &t->devices[j];
            if (d->type != type)
                continue;
            char id[16];
            snprintf(id, sizeof id, "%u", d->id);
            e->key(e->w, id);
            e->map(e->w, 5);
            e->key(e->w, "arch");
            e->str(e->w, d->arch ? d->arch : "");
            e->key(e->w, "bus_width");
            e->i64(e->w, d->bus_width);
            e->key(e->w, "clock_rate");
            e->i64(e->w, d->clock_rate);
            e->key(e->w, "memory_clock_rate");
            e->i64(e->w, d->memory_clock_rate);
            e->key(e->w, "num_sms");
            e->i64(e->w, d->num_sms);
            e->end_map(e->w);
        }
        e->end_map(e->w);
    }
    e->end_map(e->w);
}

int kscope__hdoc_write(const kscope__ptree *t, const kscope__hdoc_enc *e)
{
    kscope__hroot r;
    if (kscope__hroot_plan(t, &r) != 0) {
        kscope__hroot_free(&r);
        return KSCOPE_ENOMEM;
    }
    walk k = {e, t, &r};
    e->array(e->w, 2);
    int rc = kscope__ptree_walk(t, enter_node, leave_node, &k);
    kscope__hroot_free(&r);
    if (rc != 0)
        return KSCOPE_ENOMEM;
    put_devices(e, t);
    e->end_array(e->w);
    return 0;
}
