/*
 * decode.c - CUPTI activity records to kscope__gpu_record, and copies of
 * launch metadata.
 *
 * Plain functions with no CUPTI calls, so tests feed them synthetic
 * records. Only the fields kscope keeps are read; they sit at offsets that
 * every recent record version shares.
 */
#include "gpu/cupti/cupti-internal.h"

#include <stdlib.h>
#include <string.h>

const char *kscope__gpu_copy_name(uint8_t copy_kind)
{
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
        return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
        return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
        return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
        return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
        return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
        return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return "Memcpy PtoP";
    default:
        return "Memcpy";
    }
}

/* The fields that every record decoded here has under the same names:
 * when it ran, where, and what launched it. A macro, as each record type
 * is its own struct. */
#define DECODE_COMMON(r, out)                                                                      \
    do {                                                                                           \
        (out)->start_ns = (r)->start;                                                              \
        (out)->end_ns = (r)->end;                                                                  \
        (out)->device = (r)->deviceId;                                                             \
        (out)->stream = (r)->streamId;                                                             \
        (out)->correlation = (r)->correlationId;                                                   \
        (out)->graph_node = (r)->graphNodeId;                                                      \
    } while (0)

static void decode_kernel(const CUpti_ActivityKernel10 *k, kscope__gpu_record *out)
{
    out->kind = KSCOPE__GPU_KERNEL;
    out->name = k->name;
    DECODE_COMMON(k, out);
    out->src_device = out->dst_device = k->deviceId;
    out->grid_id = (uint64_t)k->gridId;
    out->context_id = k->contextId;
}

static void decode_memcpy(const CUpti_ActivityMemcpy6 *m, kscope__gpu_record *out)
{
    out->kind = KSCOPE__GPU_MEMCPY;
    out->name = kscope__gpu_copy_name(m->copyKind);
    DECODE_COMMON(m, out);
    out->src_device = out->dst_device = m->deviceId;
    out->bytes = m->bytes;
    out->context_id = m->contextId;
}

static void decode_peer(const CUpti_ActivityMemcpyPtoP4 *m, kscope__gpu_record *out)
{
    out->kind = KSCOPE__GPU_MEMCPY;
    out->name = kscope__gpu_copy_name(m->copyKind);
    DECODE_COMMON(m, out);
    out->src_device = m->srcDeviceId;
    out->dst_device = m->dstDeviceId;
    out->bytes = m->bytes;
}

static void decode_memset(const CUpti_ActivityMemset4 *m, kscope__gpu_record *out)
{
    out->kind = KSCOPE__GPU_MEMSET;
    out->name = "Memset";
    DECODE_COMMON(m, out);
    out->src_device = out->dst_device = m->deviceId;
    out->bytes = m->bytes;
}

int kscope__gpu_decode(const CUpti_Activity *rec, kscope__gpu_record *out)
{
    memset(out, 0, sizeof *out);
    switch (rec->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        decode_kernel((const CUpti_ActivityKernel10 *)rec, out);
        return 1;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        decode_memcpy((const CUpti_ActivityMemcpy6 *)rec, out);
        return 1;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        decode_peer((const CUpti_ActivityMemcpyPtoP4 *)rec, out);
        return 1;
    case CUPTI_ACTIVITY_KIND_MEMSET:
        decode_memset((const CUpti_ActivityMemset4 *)rec, out);
        return 1;
    default:
        return 0;
    }
}

/* Bytes needed for a copy of `m` laid out after the header. */
static size_t meta_size(const kscope_launch_meta *m)
{
    size_t n = sizeof(kscope__gpu_meta) + m->n_custom * (sizeof(char *) + sizeof(double));
    if (m->name)
        n += strlen(m->name) + 1;
    for (size_t i = 0; i < m->n_custom; i++)
        n += strlen(m->custom_names[i]) + 1;
    return n;
}

int kscope__gpu_meta_copy(const kscope_launch_meta *m, kscope__gpu_meta **out)
{
    *out = NULL;
    int rc = kscope__launch_meta_check(m);
    if (rc < 0)
        return rc;
    kscope__gpu_meta *g = malloc(meta_size(m));
    if (!g)
        return kscope__fail(KSCOPE_ENOMEM, "launch metadata: out of memory");
    g->correlation = 0;
    g->meta = *m;
    /* Layout after the header: names[], values[], then the strings. */
    const char **names = (const char **)(g + 1);
    double *values = (double *)(names + m->n_custom);
    char *text = (char *)(values + m->n_custom);
    for (size_t i = 0; i < m->n_custom; i++) {
        size_t len = strlen(m->custom_names[i]) + 1;
        memcpy(text, m->custom_names[i], len);
        names[i] = text;
        values[i] = m->custom_values[i];
        text += len;
    }
    g->meta.custom_names = m->n_custom ? names : NULL;
    g->meta.custom_values = m->n_custom ? values : NULL;
    if (m->name)
        g->meta.name = memcpy(text, m->name, strlen(m->name) + 1);
    *out = g;
    return 0;
}
