/*
 * diag-export.c - the recorder's samples as sessions take them (the
 * kscope__sampler of kscope-internal.h): one value per series and sample
 * for a trace's counter tracks, mean/max figures for a tree's ROOT.
 *
 * Both go over the same short list of series (GPU util, memory used, SM
 * clock, power, temperature per GPU; process CPU % and RSS), so a trace and
 * a tree of one run show the same metrics under the same names.
 */
#include "diag/diag.h"
#include "kscope-internal.h"

#include <stdio.h>
#include <string.h>

/* The series, in output order. A GPU series exists per device. */
typedef enum {
    SERIES_GPU_UTIL,
    SERIES_GPU_USED,
    SERIES_GPU_CORE_MHZ,
    SERIES_GPU_POWER,
    SERIES_GPU_TEMP,
    SERIES_GPU_COUNT,
    SERIES_CPU_PERCENT = 0,
    SERIES_CPU_RSS,
    SERIES_CPU_COUNT,
} series_id;

static const char *const gpu_series[SERIES_GPU_COUNT] = {"gpu_usage_percent", "used_bytes",
                                                         "core_mhz", "power_w", "temperature_c"};
static const char *const cpu_series[SERIES_CPU_COUNT] = {"cpu_percent", "rss_bytes"};

/* One GPU series' value in a sample; 0 when the device did not report it. */
static int gpu_value(const kscope_gpu_stats *g, int series, double *v)
{
    switch (series) {
    case SERIES_GPU_UTIL:
        *v = g->gpu_usage_percent;
        return (g->has & KSCOPE_GPU_HAS_UTIL) != 0;
    case SERIES_GPU_USED:
        *v = (double)g->used_bytes;
        return (g->has & KSCOPE_GPU_HAS_MEMORY) != 0;
    case SERIES_GPU_CORE_MHZ:
        *v = g->core_mhz;
        return (g->has & KSCOPE_GPU_HAS_CORE_CLOCK) != 0;
    case SERIES_GPU_POWER:
        *v = g->power_mw / 1000.0;
        return (g->has & KSCOPE_GPU_HAS_POWER) != 0;
    default:
        *v = g->temperature_c;
        return (g->has & KSCOPE_GPU_HAS_TEMPERATURE) != 0;
    }
}

static double cpu_value(const kscope_sample *s, int series)
{
    return series == SERIES_CPU_PERCENT ? s->cpu_percent : (double)s->rss_bytes;
}

/* The GPU's name in series names ("nv0"; kscope_gpu_id). */
static const char *gpu_id(uint32_t device, char *buf, size_t size)
{
    if (kscope_gpu_id(device, buf, size) < 0)
        snprintf(buf, size, "gpu%u", device);
    return buf;
}

/* -------------------------------------------------------------- counters */

typedef struct counter_ctx {
    kscope__sample_fn fn;
    void *arg;
    size_t values;
} counter_ctx;

static void counter_sample(const kscope_sample *s, void *arg)
{
    counter_ctx *c = arg;
    char id[32];
    for (uint32_t d = 0; d < s->ngpu && d < KSCOPE_SAMPLE_GPUS; d++) {
        for (int k = 0; k < SERIES_GPU_COUNT; k++) {
            double v;
            char series[64];
            if (!gpu_value(&s->gpu[d], k, &v))
                continue;
            snprintf(series, sizeof series, "%s %s", gpu_id(s->gpu[d].device, id, sizeof id),
                     gpu_series[k]);
            c->fn(series, s->t_ns, v, c->arg);
            c->values++;
        }
    }
    if (s->nproc > 0)
        for (int k = 0; k < SERIES_CPU_COUNT; k++) {
            c->fn(cpu_series[k], s->t_ns, cpu_value(s, k), c->arg);
            c->values++;
        }
}

size_t kscope__diag_counters(uint64_t t0_ns, uint64_t t1_ns, kscope__sample_fn fn, void *arg)
{
    counter_ctx c = {fn, arg, 0};
    kscope__recorder_each(t0_ns, t1_ns, counter_sample, &c);
    return c.values;
}

/* --------------------------------------------------------------- summary */

typedef struct acc {
    double sum, max;
    size_t n;
} acc;

typedef struct summary_ctx {
    acc gpu[KSCOPE_SAMPLE_GPUS][SERIES_GPU_COUNT];
    uint32_t gpu_id[KSCOPE_SAMPLE_GPUS];
    acc cpu[SERIES_CPU_COUNT];
} summary_ctx;

static void acc_add(acc *a, double v)
{
    if (a->n == 0 || v > a->max)
        a->max = v;
    a->sum += v;
    a->n++;
}

static void summary_sample(const kscope_sample *s, void *arg)
{
    summary_ctx *c = arg;
    for (uint32_t d = 0; d < s->ngpu && d < KSCOPE_SAMPLE_GPUS; d++) {
        c->gpu_id[d] = s->gpu[d].device;
        for (int k = 0; k < SERIES_GPU_COUNT; k++) {
            double v;
            if (gpu_value(&s->gpu[d], k, &v))
                acc_add(&c->gpu[d][k], v);
        }
    }
    if (s->nproc > 0)
        for (int k = 0; k < SERIES_CPU_COUNT; k++)
            acc_add(&c->cpu[k], cpu_value(s, k));
}

static void emit_acc(const acc *a, const char *prefix, const char *name,
                     void (*emit)(const char *, double, void *), void *arg)
{
    if (a->n == 0)
        return;
    char full[96];
    snprintf(full, sizeof full, "%s%s.mean", prefix, name);
    emit(full, a->sum / (double)a->n, arg);
    snprintf(full, sizeof full, "%s%s.max", prefix, name);
    emit(full, a->max, arg);
}

size_t kscope__diag_summary(uint64_t t0_ns, uint64_t t1_ns,
                            void (*emit)(const char *name, double value, void *arg), void *arg)
{
    summary_ctx c;
    memset(&c, 0, sizeof c);
    size_t n = kscope__recorder_each(t0_ns, t1_ns, summary_sample, &c);
    for (int d = 0; d < KSCOPE_SAMPLE_GPUS; d++) {
        char id[32], prefix[40];
        snprintf(prefix, sizeof prefix, "%s.", gpu_id(c.gpu_id[d], id, sizeof id));
        for (int k = 0; k < SERIES_GPU_COUNT; k++)
            emit_acc(&c.gpu[d][k], prefix, gpu_series[k], emit, arg);
    }
    for (int k = 0; k < SERIES_CPU_COUNT; k++)
        emit_acc(&c.cpu[k], "", cpu_series[k], emit, arg);
    return n;
}

const kscope__sampler kscope__diag_sampler = {kscope__diag_counters, kscope__diag_summary};
