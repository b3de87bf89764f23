/*
 * hatchet-msgpack.c - write a profile tree as .hatchet_msgpack: the same
 * shape as .hatchet, encoded with our MessagePack encoder (msgpackw.h);
 * ROOT's layout comes from hatchet-root.c, as for JSON.
 */
#include "format/format.h"
#include "format/hatchet-root.h"
#include "format/msgpackw.h"
#include "kscope.h"
#include "profile/ptree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pack_metric(kscope__mpw *pk, const kscope__pmetric *m)
{
    kscope__mp_str(pk, m->key);
    switch (m->type) {
    case KSCOPE__V_INT:
        kscope__mp_int(pk, m->v.i);
        break;
    case KSCOPE__V_DOUBLE:
        kscope__mp_double(pk, m->v.d);
        break;
    case KSCOPE__V_STRING:
        kscope__mp_str(pk, m->v.s);
        break;
    case KSCOPE__V_INTVEC:
        kscope__mp_array(pk, m->n);
        for (uint32_t i = 0; i < m->n; i++)
            kscope__mp_int(pk, m->v.iv[i]);
        break;
    case KSCOPE__V_DOUBLEVEC:
        kscope__mp_array(pk, m->n);
        for (uint32_t i = 0; i < m->n; i++)
            kscope__mp_double(pk, m->v.dv[i]);
        break;
    }
}

/* ROOT's metrics, its aside member (before "children": the children's
 * values follow the array header as the walk goes on). */
static void pack_root_metrics(kscope__mpw *pk, const kscope__hroot *r)
{
    kscope__mp_map(pk, r->nown + r->nzeros);
    for (uint32_t i = 0; i < r->nown; i++)
        pack_metric(pk, r->own[i]);
    for (uint32_t i = 0; i < r->nzeros; i++) {
        kscope__mp_str(pk, r->zeros[i]);
        if (r->zero_double[i])
            kscope__mp_double(pk, 0.0);
        else
            kscope__mp_int(pk, 0);
    }
    if (!kscope__hroot_has_aside(r))
        return;
    kscope__mp_str(pk, KSCOPE__HROOT_KEY);
    kscope__mp_map(pk, (uint32_t)(r->list_inclusive != 0) + (uint32_t)(r->naside > 0));
    if (r->list_inclusive) {
        kscope__mp_str(pk, KSCOPE__HROOT_INCLUSIVE);
        kscope__mp_array(pk, r->ninclusive);
        for (uint32_t i = 0; i < r->ninclusive; i++)
            kscope__mp_str(pk, r->inclusive[i]);
    }
    if (r->naside > 0) {
        kscope__mp_str(pk, KSCOPE__HROOT_METRICS);
        kscope__mp_map(pk, r->naside);
        for (uint32_t i = 0; i < r->naside; i++)
            pack_metric(pk, r->aside[i]);
    }
}

static void pack_node_head(kscope__mpw *pk, const kscope__hroot *r, const kscope__ptree *t,
                           const kscope__pnode *n)
{
    int root = n == t->root;
    kscope__mp_map(pk, 3 + (uint32_t)(root && kscope__hroot_has_aside(r)));
    kscope__mp_str(pk, "frame");
    kscope__mp_map(pk, 2);
    kscope__mp_str(pk, "name");
    kscope__mp_str(pk, n->name);
    kscope__mp_str(pk, "type");
    kscope__mp_str(pk, n->type ? n->type : "function");
    kscope__mp_str(pk, "metrics");
    if (root) {
        pack_root_metrics(pk, r);
    } else {
        kscope__mp_map(pk, n->nmetrics);
        for (uint32_t i = 0; i < n->nmetrics; i++)
            pack_metric(pk, &n->metrics[i]);
    }
    kscope__mp_str(pk, "children");
    kscope__mp_array(pk, n->nchildren);
}

static void pack_devices(kscope__mpw *pk, const kscope__ptree *t)
{
    uint32_t ntypes = 0;
    for (uint32_t i = 0; i < t->ndevices; i++)
        ntypes += (uint32_t)kscope__ptree_device_first_of_type(t, i);
    kscope__mp_map(pk, ntypes);
    for (uint32_t i = 0; i < t->ndevices; i++) {
        if (!kscope__ptree_device_first_of_type(t, i))
            continue;
        const char *type = t->devices[i].type;
        kscope__mp_str(pk, type);
        kscope__mp_map(pk, kscope__ptree_devices_of_type(t, type));
        for (uint32_t j = i; j < t->ndevices; j++) {
            const kscope__pdevice *d = &t->devices[j];
            if (d->type != type)
                continue;
            char id[16];
            snprintf(id, sizeof id, "%u", d->id);
            kscope__mp_str(pk, id);
            kscope__mp_map(pk, 5);
            kscope__mp_str(pk, "arch");
            kscope__mp_str(pk, d->arch ? d->arch : "");
            kscope__mp_str(pk, "bus_width");
            kscope__mp_int(pk, d->bus_width);
            kscope__mp_str(pk, "clock_rate");
            kscope__mp_int(pk, d->clock_rate);
            kscope__mp_str(pk, "memory_clock_rate");
            kscope__mp_int(pk, d->memory_clock_rate);
            kscope__mp_str(pk, "num_sms");
            kscope__mp_int(pk, d->num_sms);
        }
    }
}

typedef struct pack_walk {
    kscope__mpw *pk;
    const kscope__ptree *t;
    const kscope__hroot *r;
} pack_walk;

static void enter_node(const kscope__pnode *n, void *arg)
{
    pack_walk *pw = arg;
    pack_node_head(pw->pk, pw->r, pw->t, n);
}

int kscope__hatchet_write_msgpack(const kscope__ptree *t, char **out, size_t *len)
{
    kscope__hroot r;
    if (kscope__hroot_plan(t, &r) != 0) {
        kscope__hroot_free(&r);
        return KSCOPE_ENOMEM;
    }
    kscope__mpw w;
    kscope__mp_init(&w);
    pack_walk pw = {&w, t, &r};
    kscope__mp_array(&w, 2);
    /* Map and array sizes are written up front: nothing to close. */
    if (kscope__ptree_walk(t, enter_node, NULL, &pw) != 0)
        w.failed = 1;
    kscope__hroot_free(&r);
    pack_devices(&w, t);
    return kscope__mp_finish(&w, out, len);
}
