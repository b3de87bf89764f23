/*
 * diag-export.c - the recorder's samples in a session's outputs: counter
 * tracks for a Chrome trace, mean/max figures for a tree's ROOT.
 *
 * Both go over the same short list of series (GPU util, memory used, SM
 * clock, power, temperature per GPU; process CPU % and RSS), so a trace and
 * a tree of one run show the same metrics under the same names.
 */
#include "diag/diag.h"
#include "kscope-internal.h"

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

/* ---------------------------------------------------------- chrome trace */

typedef struct chrome_ctx {
    FILE *f;
    uint64_t base_ns;
    int pid;
    int *first;
    int events;
    int failed;
} chrome_ctx;

static void counter_event(chrome_ctx *c, const char *prefix, const char *name, double ts_us,
                          double value)
{
    const char *sep = *c->first ? "" : ",\n";
    *c->first = 0;
    if (fprintf(c->f,
                "%s{\"name\":\"%s%s\",\"ph\":\"C\",\"ts\":%.3f,\"pid\":%d,"
                "\"args\":{\"value\":%.17g}}",
                sep, prefix, name, ts_us, c->pid, value) < 0)
        c->failed = 1;
    c->events++;
}

static void chrome_sample(const kscope_sample *s, void *arg)
{
    chrome_ctx *c = arg;
    double ts = ((double)s->t_ns - (double)c->base_ns) / 1000.0;
    for (uint32_t d = 0; d < s->ngpu && d < KSCOPE_SAMPLE_GPUS; d++) {
        char prefix[16];
        snprintf(prefix, sizeof prefix, "nv%u ", s->gpu[d].device);
        for (int k = 0; k < SERIES_GPU_COUNT; k++) {
            double v;
            if (gpu_value(&s->gpu[d], k, &v))
                counter_event(c, prefix, gpu_series[k], ts, v);
        }
    }
    if (s->nproc > 0)
        for (int k = 0; k < SERIES_CPU_COUNT; k++)
            counter_event(c, "", cpu_series[k], ts, cpu_value(s, k));
}

int kscope__diag_chrome_counters(FILE *f, uint64_t t0_ns, uint64_t t1_ns, uint64_t base_ns, int pid,
                                 int *first)
{
    int start_first = 1;
    chrome_ctx c = {f, base_ns, pid, first ? first : &start_first, 0, 0};
    kscope__recorder_each(t0_ns, t1_ns, chrome_sample, &c);
    if (c.failed || ferror(f))
        return kscope__fail(KSCOPE_EIO, "cannot write the trace's counter events");
    return c.events;
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
        char prefix[16];
        snprintf(prefix, sizeof prefix, "nv%u.", c.gpu_id[d]);
        for (int k = 0; k < SERIES_GPU_COUNT; k++)
            emit_acc(&c.gpu[d][k], prefix, gpu_series[k], emit, arg);
    }
    for (int k = 0; k < SERIES_CPU_COUNT; k++)
        emit_acc(&c.cpu[k], "", cpu_series[k], emit, arg);
    return n;
}
