/*
 * fake-gpu-cupti.c - a stand-in libcupti for a pretend GPU, with
 * fake-gpu-driver.c (the stand-in libcuda.so.1): CUPTI's entry points as
 * kscope's backend uses them, so that the backend's subscription,
 * callbacks, activity buffers, flush and fork paths run where no GPU is.
 * Built with the CUDA headers, whose types and ids it follows.
 *
 * As CUPTI does:
 *  - one subscriber per process (a second gets
 *    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); callbacks enabled
 *    per (domain, id) or per domain, called at the begin and end of each
 *    driver and runtime call of the pretend driver, and for its resource
 *    events (a context created or being destroyed);
 *  - records of enabled activity kinds are packed one after another into
 *    buffers the client hands out (its request callback); a full buffer
 *    goes back (its completion callback) on CUPTI's own thread, and
 *    cuptiActivityFlushAll returns once every buffer, the one being filled
 *    too, went back;
 *  - a record that finds no buffer (the request gave NULL) is dropped and
 *    counted for cuptiActivityGetNumDroppedRecords, which resets the count;
 *  - in a child forked without exec CUPTI's thread is gone: buffers go
 *    back on the flushing thread there.
 *
 * For tests: FAKE_CUPTI_FAIL=<entry point name> makes that entry point
 * fail (CUPTI_ERROR_UNKNOWN); FAKE_CUPTI_RC=<n> is what cuptiSubscribe
 * returns (39: another subscriber holds CUPTI). The fake_cupti_*
 * functions below are the pretend driver's way in and the tests' counters.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API       __attribute__((visibility("default")))
#define MAX_QUEUE 64
#define MAX_ID    1024

typedef struct buffer {
    uint8_t *data;
    size_t size, valid, records;
} buffer;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static CUpti_CallbackFunc sub_fn;
static void *sub_arg;
static int subscribed;
static uint8_t cb_on[CUPTI_CB_DOMAIN_SIZE][MAX_ID];
static uint8_t kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static CUpti_BuffersCallbackRequestFunc want_buffer;
static CUpti_BuffersCallbackCompleteFunc done_buffer;
/* Read by any thread that copies (the driver stand-in stamps its copies),
 * set by the thread starting capture: atomic, as CUPTI's own. */
static CUpti_TimestampCallbackFunc clock_fn;
static buffer cur;              /* being filled */
static buffer queue[MAX_QUEUE]; /* full, waiting for CUPTI's thread */
static int nqueue, in_flight;   /* in_flight: being handed back */
static int worker_on;
static pthread_t worker;
static size_t dropped, drop_next, per_buffer;
static struct {
    long requested, completed, flushes, records, delivered, distinct, callbacks;
    long calls_in_completed; /* driver calls made inside buffer-completed callbacks */
} counts;
static __thread int tl_completing; /* in a buffer-completed callback */
static uint8_t *seen[256];         /* buffers handed out so far (the first 256) */

static int failing(const char *entry)
{
    const char *f = getenv("FAKE_CUPTI_FAIL");
    return f && strcmp(f, entry) == 0;
}

/* ------------------------------------------------------------ callbacks */

/* The pretend driver's calls and resource events: the subscriber's
 * callback when enabled for (domain, id). */
API void fake_cupti_callback(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    pthread_mutex_lock(&mu);
    counts.calls_in_completed += tl_completing && d == CUPTI_CB_DOMAIN_DRIVER_API;
    CUpti_CallbackFunc fn =
        subscribed && d < CUPTI_CB_DOMAIN_SIZE && id < MAX_ID && cb_on[d][id] ? sub_fn : NULL;
    void *arg = sub_arg;
    counts.callbacks += fn != NULL;
    pthread_mutex_unlock(&mu);
    if (fn)
        fn(arg, d, id, data);
}

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *arg)
{
    const char *rc = getenv("FAKE_CUPTI_RC");
    if (rc && atoi(rc))
        return (CUptiResult)atoi(rc);
    if (failing("cuptiSubscribe"))
        return CUPTI_ERROR_UNKNOWN;
    if (!s)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&mu);
    CUptiResult r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    if (!subscribed) {
        subscribed = 1;
        sub_fn = fn;
        sub_arg = arg;
        memset(cb_on, 0, sizeof cb_on);
        *s = (CUpti_SubscriberHandle)&sub_fn;
        r = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

static int is_subscriber(CUpti_SubscriberHandle s)
{
    return subscribed && s == (CUpti_SubscriberHandle)&sub_fn;
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    pthread_mutex_lock(&mu);
    CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
    if (is_subscriber(s)) {
        subscribed = 0;
        sub_fn = NULL;
        memset(cb_on, 0, sizeof cb_on);
        r = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

API CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                    CUpti_CallbackId id)
{
    if (failing("cuptiEnableCallback"))
        return CUPTI_ERROR_UNKNOWN;
    pthread_mutex_lock(&mu);
    CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
    if (is_subscriber(s) && d > CUPTI_CB_DOMAIN_INVALID && d < CUPTI_CB_DOMAIN_SIZE &&
        id < MAX_ID) {
        cb_on[d][id] = on != 0;
        r = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

API CUptiResult cuptiEnableDomain(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
    pthread_mutex_lock(&mu);
    CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
    if (is_subscriber(s) && d > CUPTI_CB_DOMAIN_INVALID && d < CUPTI_CB_DOMAIN_SIZE) {
        memset(cb_on[d], on != 0, sizeof cb_on[d]);
        r = CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return r;
}

/* The names of the calls the pretend driver makes (CUPTI's spelling). */
static const struct {
    CUpti_CallbackDomain d;
    uint32_t id;
    const char *name;
} names[] = {
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuInit, "cuInit"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer, "cuMemcpyPeer"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2, "cuMemsetD8_v2"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, "cuProfilerStart"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, "cuProfilerStop"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
     "cudaLaunchKernel_v7000"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, "cudaMemset_v3020"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
     "cudaStreamBeginCapture_v10000"},
    {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
     "cudaStreamEndCapture_v10000"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
     "cuStreamBeginCapture_v2"},
    {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, "cuStreamEndCapture"},
};

API CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t id, const char **name)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].d == d && names[i].id == id) {
            *name = names[i].name;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

/* Streams of the pretend GPU are their own ids (NULL: 7). */
API CUptiResult cuptiGetStreamId(CUcontext c, CUstream s, uint32_t *id)
{
    (void)c;
    *id = s ? (uint32_t)(uintptr_t)s : 7;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    switch (r) {
    case CUPTI_SUCCESS:
        *s = "CUPTI_SUCCESS";
        return CUPTI_SUCCESS;
    case CUPTI_ERROR_INVALID_PARAMETER:
        *s = "CUPTI_ERROR_INVALID_PARAMETER";
        return CUPTI_SUCCESS;
    case CUPTI_ERROR_UNKNOWN:
        *s = "CUPTI_ERROR_UNKNOWN";
        return CUPTI_SUCCESS;
    default:
        *s = NULL;
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
}

/* ------------------------------------------------------------- activity */

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The time records carry: the client's clock when it gave one. */
API uint64_t fake_cupti_now(void)
{
    CUpti_TimestampCallbackFunc fn = __atomic_load_n(&clock_fn, __ATOMIC_ACQUIRE);
    return fn ? fn() : monotonic_ns();
}

API CUptiResult cuptiGetTimestamp(uint64_t *t)
{
    if (!t)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *t = fake_cupti_now();
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    if (failing("cuptiActivityRegisterTimestampCallback"))
        return CUPTI_ERROR_UNKNOWN;
    __atomic_store_n(&clock_fn, fn, __ATOMIC_RELEASE);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                               CUpti_BuffersCallbackCompleteFunc done)
{
    if (failing("cuptiActivityRegisterCallbacks"))
        return CUPTI_ERROR_UNKNOWN;
    if (!req || !done)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&mu);
    want_buffer = req;
    done_buffer = done;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind k, int on)
{
    if (k <= CUPTI_ACTIVITY_KIND_INVALID || k >= CUPTI_ACTIVITY_KIND_COUNT)
        return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&mu);
    kind_on[k] = (uint8_t)on;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    /* FAKE_CUPTI_FAIL=cuptiActivityEnable fails on the second kind, so the
     * client has one to take back. */
    static int calls;
    if (failing("cuptiActivityEnable") && ++calls % 2 == 0)
        return CUPTI_ERROR_UNKNOWN;
    return set_kind(k, 1);
}

API CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    return set_kind(k, 0);
}

/* Bytes of a record of kind k as the pretend driver writes it. */
static size_t record_size(CUpti_ActivityKind k)
{
    switch (k) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
        return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
        return sizeof(CUpti_ActivityMemset4);
    default:
        return 0;
    }
}

static size_t aligned(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    if (!buf || !rec)
        return CUPTI_ERROR_INVALID_PARAMETER;
    uint8_t *next = *rec ? (uint8_t *)*rec + aligned(record_size((*rec)->kind)) : buf;
    if ((size_t)(next - buf) >= valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t stream, size_t *n)
{
    (void)c;
    (void)stream;
    if (!n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&mu);
    *n = dropped;
    dropped = 0;
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

/* Hand one buffer back (mu not held: the client takes its own locks). */
static void hand_back(buffer b, CUpti_BuffersCallbackCompleteFunc done)
{
    tl_completing = 1; /* real CUPTI may hold its lock here: a CUDA call could deadlock */
    done(NULL, 0, b.data, b.size, b.valid);
    tl_completing = 0;
    pthread_mutex_lock(&mu);
    counts.completed++;
    counts.delivered += (long)b.records;
    pthread_mutex_unlock(&mu);
}

/* CUPTI's thread: hands full buffers back as they come. */
static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!nqueue)
            pthread_cond_wait(&cv, &mu);
        buffer b = queue[0];
        memmove(queue, queue + 1, (size_t)--nqueue * sizeof *queue);
        in_flight++;
        CUpti_BuffersCallbackCompleteFunc done = done_buffer;
        pthread_mutex_unlock(&mu);
        hand_back(b, done);
        pthread_mutex_lock(&mu);
        in_flight--;
        pthread_cond_broadcast(&cv);
    }
    return NULL;
}

/* Queue the buffer being filled for CUPTI's thread (mu held). Without the
 * thread (a forked child) the caller hands it back itself. */
static int queue_current(void)
{
    if (!cur.data)
        return 0;
    while (nqueue == MAX_QUEUE)
        pthread_cond_wait(&cv, &mu);
    queue[nqueue++] = cur;
    memset(&cur, 0, sizeof cur);
    if (!worker_on && pthread_create(&worker, NULL, worker_main, NULL) == 0)
        worker_on = 1;
    pthread_cond_broadcast(&cv);
    return 1;
}

/* Count buffers by address: a client that reuses them shows few. */
static void note_buffer(uint8_t *b)
{
    long n = counts.distinct < 256 ? counts.distinct : 256;
    for (long i = 0; i < n; i++)
        if (seen[i] == b)
            return;
    if (b && counts.distinct < 256)
        seen[counts.distinct] = b;
    counts.distinct += b != NULL;
}

/* A record of the pretend GPU's work: into the current buffer if its kind
 * is enabled (mu held while the client's request callback runs: it only
 * hands out memory). */
API void fake_cupti_record(const void *rec)
{
    const CUpti_Activity *r = rec;
    size_t size = aligned(record_size(r->kind));
    pthread_mutex_lock(&mu);
    if (!size || !kind_on[r->kind] || !want_buffer) {
        pthread_mutex_unlock(&mu);
        return;
    }
    counts.records++;
    if (cur.data && (cur.valid + size > cur.size || (per_buffer && cur.records >= per_buffer)))
        queue_current();
    if (!cur.data && !drop_next) {
        size_t max = 0;
        want_buffer(&cur.data, &cur.size, &max);
        counts.requested++;
        note_buffer(cur.data);
        if (!cur.data || cur.size < size)
            memset(&cur, 0, sizeof cur);
    }
    if (!cur.data || drop_next) {
        drop_next -= drop_next > 0;
        dropped++;
    } else {
        memcpy(cur.data + cur.valid, rec, record_size(r->kind));
        cur.valid += size;
        cur.records++;
    }
    pthread_mutex_unlock(&mu);
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    pthread_mutex_lock(&mu);
    counts.flushes++;
    queue_current();
    if (worker_on) {
        while (nqueue || in_flight)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        return CUPTI_SUCCESS;
    }
    /* no thread (a forked child): hand back here */
    while (nqueue) {
        buffer b = queue[0];
        memmove(queue, queue + 1, (size_t)--nqueue * sizeof *queue);
        CUpti_BuffersCallbackCompleteFunc done = done_buffer;
        pthread_mutex_unlock(&mu);
        hand_back(b, done);
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    return CUPTI_SUCCESS;
}

/* ---------------------------------------------------------------- tests */

/* Test controls: "drop" N drops the next N records (as when no buffer
 * comes); "per_buffer" N hands a buffer back after N records (0: full). */
API void fake_cupti_set(const char *what, long v)
{
    pthread_mutex_lock(&mu);
    if (strcmp(what, "drop") == 0)
        drop_next = (size_t)v;
    else if (strcmp(what, "per_buffer") == 0)
        per_buffer = (size_t)v;
    pthread_mutex_unlock(&mu);
}

/* The counter of `counts` named WHAT, -1 for other names (mu held). */
static long plain_count(const char *what)
{
    static const struct {
        const char *name;
        const long *v;
    } named[] = {
        {"callbacks", &counts.callbacks}, {"requested", &counts.requested},
        {"completed", &counts.completed}, {"flushes", &counts.flushes},
        {"records", &counts.records},     {"delivered", &counts.delivered},
        {"distinct", &counts.distinct},   {"calls_in_completed", &counts.calls_in_completed},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strcmp(what, named[i].name) == 0)
            return *named[i].v;
    return -1;
}

/* Counters and state for tests: "subscribed", "kind <n>" (1: enabled),
 * "kinds" (how many kinds are enabled), "callback <domain> <id>" (1:
 * enabled), "callbacks" (made to the subscriber so far), "timestamp" (1: a
 * clock was registered), "requested", "completed", "flushes", "records"
 * (of enabled kinds), "delivered" (in buffers handed back), "distinct"
 * (buffers by address), "calls_in_completed" (driver calls made inside a
 * buffer-completed callback); -1 for other names. */
API long fake_cupti_count(const char *what)
{
    int a = 0, b = 0;
    long v = -1;
    pthread_mutex_lock(&mu);
    if (strcmp(what, "subscribed") == 0)
        v = subscribed;
    else if (sscanf(what, "kind %d", &a) == 1 && a > 0 && a < CUPTI_ACTIVITY_KIND_COUNT)
        v = kind_on[a];
    else if (sscanf(what, "callback %d %d", &a, &b) == 2 && a > 0 && a < CUPTI_CB_DOMAIN_SIZE &&
             b >= 0 && b < MAX_ID)
        v = subscribed && cb_on[a][b];
    else if (strcmp(what, "kinds") == 0)
        for (v = 0, a = 0; a < CUPTI_ACTIVITY_KIND_COUNT; a++)
            v += kind_on[a];
    else if (strcmp(what, "timestamp") == 0)
        v = __atomic_load_n(&clock_fn, __ATOMIC_ACQUIRE) != NULL;
    else
        v = plain_count(what);
    pthread_mutex_unlock(&mu);
    return v;
}

/* In a child forked without exec CUPTI's thread is gone, and a lock held
 * by another thread at the fork stays held: start over. */
static void after_fork_child(void)
{
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&cv, NULL);
    worker_on = 0;
    nqueue = in_flight = 0;
}

__attribute__((constructor)) static void fake_cupti_init(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}
