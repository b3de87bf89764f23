/*
 * recorder.c - the background recorder: a thread that samples the GPUs and
 * a set of processes at a fixed interval into a bounded ring.
 *
 * Ticks follow an absolute schedule (start + k * interval), so the sample
 * count matches interval x duration; a tick that falls behind is skipped,
 * not bunched. The ring keeps per-sample CPU figures and, beside them,
 * ngpu GPU records per sample, so a machine without GPUs pays only for the
 * CPU part. When the ring is full the oldest sample is dropped and counted.
 * Every recorder is listed in a registry until freed, so finalizing a
 * session can pull the samples of its time window (diag.h).
 */
#include "diag/diag.h"
#include "kscope-internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_INTERVAL_MS 100.0
#define DEFAULT_CAPACITY    65536
#define INITIAL_SLOTS       1024

/* One sample's CPU part: the bytes of its kscope_sample before the gpu
 * array (the GPU part lives in gpu_ring), so that the ring keeps whatever
 * fields the sample has. */
#define CPU_PART offsetof(kscope_sample, gpu)
typedef struct slot {
    unsigned char cpu[CPU_PART];
} slot;

struct kscope_recorder {
    uint64_t interval_ns;
    int ngpu;
    int gpu_ref; /* holds a kscope_gpu_init reference */
    size_t npids;
    int *pids, *alive_pids;
    kscope_cpu_reading *prev;
    unsigned char *gone;
    void (*on_sample)(const kscope_sample *, void *);
    void *arg;

    pthread_mutex_t lock; /* ring, stop flag */
    pthread_cond_t wake;
    pthread_t thread;
    int running, stop;

    slot *ring;
    kscope_gpu_stats *gpu_ring; /* ngpu per slot */
    size_t cap, max_cap, head, count;
    uint64_t dropped;

    kscope_recorder *next; /* registry */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static kscope_recorder *registry;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ ring */

/* Make room for one more sample: grow up to max_cap, then drop the oldest. */
static int ring_reserve(kscope_recorder *r)
{
    if (r->count < r->cap)
        return 0;
    if (r->cap < r->max_cap) {
        size_t cap = r->cap * 2 < r->max_cap ? r->cap * 2 : r->max_cap;
        slot *ring = malloc(cap * sizeof *ring);
        kscope_gpu_stats *gpu = r->ngpu ? malloc(cap * (size_t)r->ngpu * sizeof *gpu) : NULL;
        if (ring && (gpu || !r->ngpu)) {
            /* Unroll the ring so the oldest sample is at 0. */
            for (size_t i = 0; i < r->count; i++) {
                size_t from = (r->head + i) % r->cap;
                ring[i] = r->ring[from];
                if (r->ngpu)
                    memcpy(gpu + i * (size_t)r->ngpu, r->gpu_ring + from * (size_t)r->ngpu,
                           (size_t)r->ngpu * sizeof *gpu);
            }
            free(r->ring);
            free(r->gpu_ring);
            r->ring = ring;
            r->gpu_ring = gpu;
            r->cap = cap;
            r->head = 0;
            return 0;
        }
        free(ring);
        free(gpu);
        kscope__warn_once("recorder-grow", "recorder: out of memory, keeping %zu samples", r->cap);
        r->max_cap = r->cap;
    }
    r->head = (r->head + 1) % r->cap;
    r->count--;
    r->dropped++;
    return 0;
}

static void ring_push(kscope_recorder *r, const kscope_sample *s)
{
    ring_reserve(r);
    size_t at = (r->head + r->count) % r->cap;
    memcpy(r->ring[at].cpu, s, CPU_PART);
    if (r->ngpu)
        memcpy(r->gpu_ring + at * (size_t)r->ngpu, s->gpu, (size_t)r->ngpu * sizeof *s->gpu);
    r->count++;
}

/* The index-th oldest sample; the caller holds r->lock. */
static void ring_get(const kscope_recorder *r, size_t index, kscope_sample *out)
{
    size_t at = (r->head + index) % r->cap;
    memset(out, 0, sizeof *out);
    memcpy(out, r->ring[at].cpu, CPU_PART);
    out->ngpu = (uint32_t)r->ngpu;
    if (r->ngpu)
        memcpy(out->gpu, r->gpu_ring + at * (size_t)r->ngpu, (size_t)r->ngpu * sizeof *out->gpu);
}

/* -------------------------------------------------------------- sampling */

/* CPU of every followed process since the previous tick. */
static void sample_cpu(kscope_recorder *r, kscope_sample *s)
{
    s->nproc = (uint32_t)r->npids;
    for (size_t i = 0; i < r->npids; i++) {
        if (r->gone[i])
            continue;
        kscope_cpu_reading now;
        if (kscope_cpu_read(r->pids[i], &now) != 0 || now.start_ticks != r->prev[i].start_ticks) {
            r->gone[i] = 1;
            continue;
        }
        double dt = (double)(now.t_ns - r->prev[i].t_ns) / 1e9;
        if (dt > 0) {
            s->user_percent += 100.0 * (now.user_s - r->prev[i].user_s) / dt;
            s->system_percent += 100.0 * (now.system_s - r->prev[i].system_s) / dt;
        }
        s->rss_bytes += now.rss_bytes;
        s->threads += now.threads;
        s->alive++;
        r->prev[i] = now;
    }
    s->cpu_percent = s->user_percent + s->system_percent;
}

/* GPU memory of the followed processes that still run, on one device. */
static void sample_process_memory(kscope_recorder *r, kscope_gpu_stats *g)
{
    size_t n = 0;
    for (size_t i = 0; i < r->npids; i++)
        if (!r->gone[i])
            r->alive_pids[n++] = r->pids[i];
    if (n == 0 || !kscope__gpu_has_process_query())
        return;
    if (kscope__gpu_pids_memory(g->device, r->alive_pids, n, &g->process_bytes) == 0)
        g->has |= KSCOPE_GPU_HAS_PROCESS;
    else
        g->process_bytes = 0;
}

static void sample_gpus(kscope_recorder *r, kscope_sample *s)
{
    s->ngpu = (uint32_t)r->ngpu;
    for (int d = 0; d < r->ngpu; d++) {
        if (kscope_gpu_get_stats((uint32_t)d, &s->gpu[d]) != 0) {
            /* Keep sampling: this tick's record of the device is empty. */
            kscope__warn_once("recorder-gpu", "recorder: %s", kscope_last_error());
            memset(&s->gpu[d], 0, sizeof s->gpu[d]);
            s->gpu[d].device = (uint32_t)d;
            continue;
        }
        sample_process_memory(r, &s->gpu[d]);
    }
}

static void take_sample(kscope_recorder *r)
{
    kscope_sample s;
    memset(&s, 0, offsetof(kscope_sample, gpu));
    sample_gpus(r, &s);
    sample_cpu(r, &s);
    s.t_ns = kscope_now_ns();
    pthread_mutex_lock(&r->lock);
    ring_push(r, &s);
    pthread_mutex_unlock(&r->lock);
    if (r->on_sample)
        r->on_sample(&s, r->arg);
}

static void *recorder_main(void *arg)
{
    kscope_recorder *r = arg;
    uint64_t next = monotonic_ns() + r->interval_ns;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        struct timespec until = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        int rc = pthread_cond_timedwait(&r->wake, &r->lock, &until);
        if (r->stop)
            break;
        if (rc != ETIMEDOUT)
            continue; /* spurious wake-up */
        pthread_mutex_unlock(&r->lock);
        take_sample(r);
        uint64_t now = monotonic_ns();
        next += r->interval_ns;
        if (next <= now) /* fell behind: skip the missed ticks */
            next = now + r->interval_ns - (now - next) % r->interval_ns;
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    take_sample(r); /* the state at stop */
    return NULL;
}

/* ------------------------------------------------------------------ API */

/* Copy the pids and take their first readings. */
static int follow_pids(kscope_recorder *r, const int *pids, size_t n)
{
    r->npids = n;
    if (n == 0)
        return 0;
    r->pids = malloc(n * sizeof *r->pids);
    r->alive_pids = malloc(n * sizeof *r->alive_pids);
    r->prev = calloc(n, sizeof *r->prev);
    r->gone = calloc(n, 1);
    if (!r->pids || !r->alive_pids || !r->prev || !r->gone)
        return kscope__fail(KSCOPE_ENOMEM, "out of memory starting the recorder");
    for (size_t i = 0; i < n; i++) {
        r->pids[i] = pids[i];
        int err = kscope_cpu_read(pids[i], &r->prev[i]);
        if (err < 0)
            return err;
    }
    return 0;
}

/* GPUs, when asked for and NVML loads; otherwise none, said once. */
static void attach_gpus(kscope_recorder *r)
{
    int n = kscope_gpu_init();
    if (n < 0) {
        kscope__warn_once("recorder-nogpu", "%s; sampling CPU only", kscope_last_error());
        return;
    }
    r->gpu_ref = 1;
    if (n > KSCOPE_SAMPLE_GPUS) {
        kscope__warn_once("recorder-gpus", "recorder: sampling the first %d of %d GPUs",
                          KSCOPE_SAMPLE_GPUS, n);
        n = KSCOPE_SAMPLE_GPUS;
    }
    r->ngpu = n;
}

static void recorder_release(kscope_recorder *r)
{
    if (r->gpu_ref)
        kscope_gpu_shutdown();
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->wake);
    free(r->pids);
    free(r->alive_pids);
    free(r->prev);
    free(r->gone);
    free(r->ring);
    free(r->gpu_ring);
    free(r);
}

static int init_sync(kscope_recorder *r)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&r->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (rc == 0 && pthread_mutex_init(&r->lock, NULL) != 0) {
        pthread_cond_destroy(&r->wake);
        rc = -1;
    }
    return rc;
}

int kscope_recorder_start(const kscope_recorder_opts *opts, kscope_recorder **out)
{
    kscope_recorder_opts o = {0};
    if (opts)
        o = *opts;
    if (!out)
        return kscope__fail(KSCOPE_EINVAL, "kscope_recorder_start: no output");
    *out = NULL;
    if (o.interval_ms == 0)
        o.interval_ms = DEFAULT_INTERVAL_MS;
    if (!(o.interval_ms >= 1.0) || o.interval_ms > 3.6e6)
        return kscope__fail(KSCOPE_EINVAL,
                            "recorder interval %g ms refused (from 1 ms to one hour)",
                            o.interval_ms);
    if (o.npids && !o.pids)
        return kscope__fail(KSCOPE_EINVAL, "recorder: npids is %zu but pids is NULL", o.npids);
    kscope_recorder *r = calloc(1, sizeof *r);
    if (!r || init_sync(r) != 0) {
        free(r);
        return kscope__fail(KSCOPE_ENOMEM, "out of memory starting the recorder");
    }
    r->interval_ns = (uint64_t)(o.interval_ms * 1e6);
    r->on_sample = o.on_sample;
    r->arg = o.arg;
    r->max_cap = o.capacity ? o.capacity : DEFAULT_CAPACITY;
    int err = follow_pids(r, o.pids, o.npids);
    if (err == 0 && !o.no_gpu)
        attach_gpus(r);
    if (err == 0) {
        r->cap = r->max_cap < INITIAL_SLOTS ? r->max_cap : INITIAL_SLOTS;
        r->ring = malloc(r->cap * sizeof *r->ring);
        r->gpu_ring = r->ngpu ? malloc(r->cap * (size_t)r->ngpu * sizeof *r->gpu_ring) : NULL;
        if (!r->ring || (r->ngpu && !r->gpu_ring))
            err = kscope__fail(KSCOPE_ENOMEM, "out of memory starting the recorder");
    }
    if (err == 0 && pthread_create(&r->thread, NULL, recorder_main, r) != 0)
        err = kscope__fail(KSCOPE_ENOMEM, "recorder: cannot start its thread");
    if (err < 0) {
        recorder_release(r);
        return err;
    }
    r->running = 1;
    kscope__set_sampler(&kscope__diag_sampler);
    pthread_mutex_lock(&registry_lock);
    r->next = registry;
    registry = r;
    pthread_mutex_unlock(&registry_lock);
    *out = r;
    return 0;
}

int kscope_recorder_stop(kscope_recorder *r)
{
    if (!r)
        return kscope__fail(KSCOPE_EINVAL, "kscope_recorder_stop: no recorder");
    pthread_mutex_lock(&r->lock);
    int was_running = r->running && !r->stop;
    r->stop = 1;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
    if (!was_running)
        return kscope__fail(KSCOPE_ESTATE, "recorder already stopped");
    pthread_join(r->thread, NULL);
    return 0;
}

/* r's samples held and samples dropped, read together under its lock
 * (0 and 0 without a recorder). */
static void ring_counts(kscope_recorder *r, size_t *count, uint64_t *dropped)
{
    *count = 0;
    *dropped = 0;
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    *count = r->count;
    *dropped = r->dropped;
    pthread_mutex_unlock(&r->lock);
}

size_t kscope_recorder_count(kscope_recorder *r)
{
    size_t count;
    uint64_t dropped;
    ring_counts(r, &count, &dropped);
    return count;
}

int kscope_recorder_read(kscope_recorder *r, size_t index, kscope_sample *out)
{
    if (!r || !out)
        return kscope__fail(KSCOPE_EINVAL, "kscope_recorder_read: no recorder or output");
    pthread_mutex_lock(&r->lock);
    size_t n = r->count;
    if (index < n)
        ring_get(r, index, out);
    pthread_mutex_unlock(&r->lock);
    if (index >= n)
        return kscope__fail(KSCOPE_EINVAL, "recorder sample %zu out of range (it holds %zu)", index,
                            n);
    return 0;
}

uint64_t kscope_recorder_dropped(kscope_recorder *r)
{
    size_t count;
    uint64_t dropped;
    ring_counts(r, &count, &dropped);
    return dropped;
}

int kscope_recorder_gpus(kscope_recorder *r)
{
    return r ? r->ngpu : 0;
}

void kscope_recorder_free(kscope_recorder *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    int running = r->running && !r->stop;
    pthread_mutex_unlock(&r->lock);
    if (running)
        kscope_recorder_stop(r);
    pthread_mutex_lock(&registry_lock);
    for (kscope_recorder **p = &registry; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    recorder_release(r);
}

size_t kscope__recorder_each(uint64_t t0_ns, uint64_t t1_ns,
                             void (*fn)(const kscope_sample *s, void *arg), void *arg)
{
    size_t visited = 0;
    kscope_sample s;
    pthread_mutex_lock(&registry_lock);
    for (kscope_recorder *r = registry; r; r = r->next) {
        pthread_mutex_lock(&r->lock);
        for (size_t i = 0; i < r->count; i++) {
            uint64_t t_ns; /* the window first: a whole sample is a kilobyte to copy */
            memcpy(&t_ns, r->ring[(r->head + i) % r->cap].cpu + offsetof(kscope_sample, t_ns),
                   sizeof t_ns);
            if (t_ns < t0_ns || t_ns > t1_ns)
                continue;
            ring_get(r, i, &s);
            fn(&s, arg);
            visited++;
        }
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_unlock(&registry_lock);
    return visited;
}
