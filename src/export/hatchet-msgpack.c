/*
 * hatchet-msgpack.c - write a profile tree as .hatchet_msgpack: the same
 * shape as .hatchet, encoded with msgpack-c.
 */
#include "kscope.h"
#include "profile/ptree.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pack_str(msgpack_packer *pk, const char *s)
{
    size_t n = strlen(s);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static void pack_metric(msgpack_packer *pk, const kscope__pmetric *m)
{
    pack_str(pk, m->key);
    switch (m->type) {
    case KSCOPE__V_INT:
        msgpack_pack_int64(pk, m->v.i);
        break;
    case KSCOPE__V_DOUBLE:
        msgpack_pack_double(pk, m->v.d);
        break;
    case KSCOPE__V_STRING:
        pack_str(pk, m->v.s);
        break;
    case KSCOPE__V_INTVEC:
        msgpack_pack_array(pk, m->n);
        for (uint32_t i = 0; i < m->n; i++)
            msgpack_pack_int64(pk, m->v.iv[i]);
        break;
    case KSCOPE__V_DOUBLEVEC:
        msgpack_pack_array(pk, m->n);
        for (uint32_t i = 0; i < m->n; i++)
            msgpack_pack_double(pk, m->v.dv[i]);
        break;
    }
}

static void pack_node_head(msgpack_packer *pk, const kscope__ptree *t, const kscope__pnode *n)
{
    uint32_t extra = 0;
    if (n == t->root)
        for (uint32_t i = 0; i < t->ninclusive; i++)
            extra += kscope__pnode_metric(n, t->inclusive[i]) == NULL;
    msgpack_pack_map(pk, 3);
    pack_str(pk, "frame");
    msgpack_pack_map(pk, 2);
    pack_str(pk, "name");
    pack_str(pk, n->name);
    pack_str(pk, "type");
    pack_str(pk, n->type ? n->type : "function");
    pack_str(pk, "metrics");
    msgpack_pack_map(pk, n->nmetrics + extra);
    for (uint32_t i = 0; i < n->nmetrics; i++)
        pack_metric(pk, &n->metrics[i]);
    if (n == t->root) {
        for (uint32_t i = 0; i < t->ninclusive; i++) {
            if (kscope__pnode_metric(n, t->inclusive[i]))
                continue;
            pack_str(pk, t->inclusive[i]);
            msgpack_pack_int64(pk, 0);
        }
    }
    pack_str(pk, "children");
    msgpack_pack_array(pk, n->nchildren);
}

static void pack_devices(msgpack_packer *pk, const kscope__ptree *t)
{
    uint32_t ntypes = 0;
    for (uint32_t i = 0; i < t->ndevices; i++)
        ntypes += (uint32_t)kscope__ptree_device_first_of_type(t, i);
    msgpack_pack_map(pk, ntypes);
    for (uint32_t i = 0; i < t->ndevices; i++) {
        if (!kscope__ptree_device_first_of_type(t, i))
            continue;
        const char *type = t->devices[i].type;
        pack_str(pk, type);
        msgpack_pack_map(pk, kscope__ptree_devices_of_type(t, type));
        for (uint32_t j = i; j < t->ndevices; j++) {
            const kscope__pdevice *d = &t->devices[j];
            if (d->type != type)
                continue;
            char id[16];
            snprintf(id, sizeof id, "%u", d->id);
            pack_str(pk, id);
            msgpack_pack_map(pk, 5);
            pack_str(pk, "arch");
            pack_str(pk, d->arch ? d->arch : "");
            pack_str(pk, "bus_width");
            msgpack_pack_int64(pk, d->bus_width);
            pack_str(pk, "clock_rate");
            msgpack_pack_int64(pk, d->clock_rate);
            pack_str(pk, "memory_clock_rate");
            msgpack_pack_int64(pk, d->memory_clock_rate);
            pack_str(pk, "num_sms");
            msgpack_pack_int64(pk, d->num_sms);
        }
    }
}

typedef struct pack_walk {
    msgpack_packer *pk;
    const kscope__ptree *t;
} pack_walk;

static void enter_node(const kscope__pnode *n, void *arg)
{
    pack_walk *pw = arg;
    pack_node_head(pw->pk, pw->t, n);
}

int kscope__hatchet_write_msgpack(const kscope__ptree *t, char **out, size_t *len)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    pack_walk pw = {&pk, t};
    msgpack_pack_array(&pk, 2);
    /* Map and array sizes are written up front: nothing to close. */
    if (kscope__ptree_walk(t, enter_node, NULL, &pw) != 0) {
        msgpack_sbuffer_destroy(&sb);
        return KSCOPE_ENOMEM;
    }
    pack_devices(&pk, t);
    if (!sb.data) {
        msgpack_sbuffer_destroy(&sb);
        return KSCOPE_ENOMEM;
    }
    *len = sb.size;
    *out = msgpack_sbuffer_release(&sb);
    return 0;
}
