/*
 * gate.c - the CUPTI backend's gate for sampled sessions: GPU capture off
 * between the windows, back on in them, never while the program captures
 * a CUDA graph, and never with a synchronization.
 *
 * Shut is what a launch costs with no profiler: the callbacks of the
 * launch, copy and set calls are disabled and so are the activity kinds
 * (cupti.c's kscope__cupti_switch; enabling and disabling them neither
 * synchronizes nor touches a stream). Quiet, between a window's close and
 * shut, only the callbacks are off: the kernels the window launched that
 * the GPU has not run yet still get their records (the activity kinds,
 * turned off, would lose them). Only the stream-capture calls keep
 * a callback, which a program makes a handful of times: they count the
 * captures in progress. While one is, the gate does not move and says
 * KSCOPE_EBUSY (the core tries again later); a capture that begins waits
 * for a switch under way to finish, so none happens during a capture.
 */
#include "gpu/cupti/cupti-internal.h"

#include <cuda.h>
#include <string.h>

#define GATE_CBIDS 4096

enum { CAP_NONE = 0, CAP_BEGIN = 1, CAP_END = 2 };

static uint8_t capture_class[2][GATE_CBIDS]; /* [driver?][cbid] */
static _Atomic int captures;                 /* stream captures in progress */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
/* Capture calls this thread is inside (a runtime call may make a driver
 * call of the same kind), and the kind of the outermost. */
static __thread int tl_depth, tl_kind;

/* The stream-capture calls of CUDA 12 and 13, followed also where CUPTI
 * cannot name its callbacks; later ones are found by name. */
static const struct {
    int driver;
    CUpti_CallbackId cbid;
    int kind;
} known[] = {
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, CAP_BEGIN},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_ptsz_v10000, CAP_BEGIN},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030, CAP_BEGIN},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030, CAP_BEGIN},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, CAP_END},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000, CAP_END},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture, CAP_BEGIN},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz, CAP_BEGIN},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, CAP_BEGIN},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz, CAP_BEGIN},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, CAP_BEGIN},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz, CAP_BEGIN},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, CAP_END},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz, CAP_END},
};

static int capture_kind(const char *name)
{
    if (strstr(name, "StreamBeginCapture"))
        return CAP_BEGIN;
    if (strstr(name, "StreamEndCapture"))
        return CAP_END;
    return CAP_NONE;
}

/* CUPTI's name of a call, NULL when it has none. */
static const char *call_name(CUptiResult (*name)(CUpti_CallbackDomain, uint32_t, const char **),
                             CUpti_CallbackDomain d, CUpti_CallbackId id)
{
    const char *n = NULL;
    return name && name(d, id, &n) == CUPTI_SUCCESS ? n : NULL;
}

void kscope__cupti_gate_start(CUpti_SubscriberHandle subscriber,
                              CUptiResult (*enable)(uint32_t, CUpti_SubscriberHandle,
                                                    CUpti_CallbackDomain, CUpti_CallbackId),
                              CUptiResult (*name)(CUpti_CallbackDomain, uint32_t, const char **))
{
    static const CUpti_CallbackDomain domains[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
                                                    CUPTI_CB_DOMAIN_DRIVER_API};
    atomic_store(&captures, 0);
    memset(capture_class, 0, sizeof capture_class);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        capture_class[known[i].driver][known[i].cbid] = (uint8_t)known[i].kind;
    for (int d = 0; d < 2; d++) {
        for (CUpti_CallbackId id = 1; id < GATE_CBIDS; id++) {
            const char *n = capture_class[d][id] ? NULL : call_name(name, domains[d], id);
            if (n)
                capture_class[d][id] = (uint8_t)capture_kind(n);
            if (capture_class[d][id] && enable(1, subscriber, domains[d], id) != CUPTI_SUCCESS)
                capture_class[d][id] = CAP_NONE;
        }
    }
}

static void capture_ended(void)
{
    int v = atomic_load(&captures);
    while (v > 0 && !atomic_compare_exchange_weak(&captures, &v, v - 1))
        ;
}

void kscope__cupti_gate_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const CUpti_CallbackData *cb)
{
    int kind = cbid < GATE_CBIDS ? capture_class[domain == CUPTI_CB_DOMAIN_DRIVER_API][cbid] : 0;
    if (!kind)
        return;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (tl_depth++ > 0)
            return;
        tl_kind = kind;
        if (kind == CAP_BEGIN) { /* not while a switch is under way */
            pthread_mutex_lock(&gate_lock);
            atomic_fetch_add(&captures, 1);
            pthread_mutex_unlock(&gate_lock);
        }
        return;
    }
    if (tl_depth == 0 || --tl_depth > 0)
        return;
    /* The runtime's and the driver's codes agree: 0 success, 901 a capture
     * invalidated (which ends it too). */
    int rc = cb->functionReturnValue ? *(const int *)cb->functionReturnValue : 0;
    int ended = tl_kind == CAP_BEGIN ? rc != 0 /* it never began */
                                     : (rc == 0 || rc == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    if (ended)
        capture_ended();
}

int kscope__cupti_gate(int state)
{
    pthread_mutex_lock(&gate_lock);
    int rc = atomic_load(&captures) > 0 ? KSCOPE_EBUSY : kscope__cupti_switch(state);
    pthread_mutex_unlock(&gate_lock);
    return rc;
}
