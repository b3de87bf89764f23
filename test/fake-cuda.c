/*
 * fake-cuda.c - stands in for the CUDA driver (libcuda.so.1, its soname)
 * and for CUPTI in one library, so the CUPTI backend runs on a machine
 * without a GPU (test-gpu-sample). It keeps what the backend switched on
 * (callbacks per call, activity kinds) and plays launches the way CUPTI
 * would: a callback at the call's begin and end when that call's callback
 * is on, and a kernel record when concurrent-kernel activity is on.
 * Records are delivered at cuptiActivityFlushAll. The fake_* functions
 * let the test drive it and read what happened (synchronizations,
 * flushes, callbacks).
 */
#include <cuda.h>
#include <cupti.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define CBIDS   4096
#define RECORDS 4096

static CUpti_CallbackFunc callback;
static void *callback_arg;
static unsigned char enabled[2][CBIDS]; /* [driver?][cbid] */
static unsigned kinds;                  /* bit per activity kind (< 32) */
static CUpti_BuffersCallbackRequestFunc buffer_request;
static CUpti_BuffersCallbackCompleteFunc buffer_complete;
static CUpti_TimestampCallbackFunc timestamp;
static uint8_t *buffer;
static size_t buffer_size, buffer_used;
static uint32_t next_corr = 1;
static int syncs, flushes, callbacks_made;

/* The calls the fake knows, as CUPTI names them. */
static const struct {
    int driver;
    uint32_t cbid;
    const char *name;
} calls[] = {
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, "cudaLaunchKernel_v7000"},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, "cudaMemcpy_v3020"},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, "cudaStreamBeginCapture_v10000"},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, "cudaStreamEndCapture_v10000"},
    {0, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, "cudaGetDevice_v3020"},
    {1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {1, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2"},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, "cuStreamBeginCapture_v2"},
    {1, CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, "cuStreamEndCapture"},
};

#define N_CALLS (sizeof calls / sizeof calls[0])

static int row(CUpti_CallbackDomain d)
{
    return d == CUPTI_CB_DOMAIN_DRIVER_API;
}

/* ------------------------------------------------------------- driver */

static void launch_call(int driver, uint32_t cbid);

/* As the driver does: load $CUDA_INJECTION64_PATH and call its
 * InitializeInjection, once. */
CUresult cuInit(unsigned flags)
{
    static int done;
    (void)flags;
    const char *inject = getenv("CUDA_INJECTION64_PATH");
    if (!done && inject && *inject) {
        done = 1;
        void *lib = dlopen(inject, RTLD_NOW);
        int (*init)(void) = lib ? (int (*)(void))dlsym(lib, "InitializeInjection") : NULL;
        if (init)
            init();
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    strncpy(name, "Stand-in GPU", (size_t)len);
    name[len - 1] = '\0';
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    *m = (CUmodule)image;
    return image ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    *f = (CUfunction)m;
    return strstr((const char *)m, name) ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params,
                        void **extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shmem;
    (void)s, (void)params, (void)extra;
    launch_call(1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    *v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 1;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = (CUcontext)&syncs; /* any non-NULL context */
    return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
    syncs++;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
    (void)d;
    *flags = 0;
    *active = 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    (void)d;
    *c = (CUcontext)&syncs;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d)
{
    (void)d;
    return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent_v2(CUcontext c)
{
    (void)c;
    return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent_v2(CUcontext *c)
{
    *c = NULL;
    return CUDA_SUCCESS;
}

/* -------------------------------------------------------------- CUPTI */

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *arg)
{
    if (callback)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    callback = fn;
    callback_arg = arg;
    *s = (CUpti_SubscriberHandle)&callback;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    (void)s;
    callback = NULL;
    memset(enabled, 0, sizeof enabled);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                CUpti_CallbackId cbid)
{
    (void)s;
    if (cbid >= CBIDS)
        return CUPTI_ERROR_INVALID_PARAMETER;
    enabled[row(d)][cbid] = on != 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
    for (size_t i = 0; i < N_CALLS; i++)
        if (calls[i].driver == row(d) && calls[i].cbid == cbid) {
            *name = calls[i].name;
            return CUPTI_SUCCESS;
        }
    return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiGetResultString(CUptiResult rc, const char **s)
{
    *s = rc == CUPTI_SUCCESS ? "success" : "fake CUPTI error";
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    if ((unsigned)k >= 32)
        return CUPTI_ERROR_NOT_SUPPORTED;
    kinds |= 1u << k;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    if ((unsigned)k >= 32)
        return CUPTI_ERROR_NOT_SUPPORTED;
    kinds &= ~(1u << k);
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                           CUpti_BuffersCallbackCompleteFunc done)
{
    buffer_request = req;
    buffer_complete = done;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
    timestamp = fn;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    uint8_t *next = *rec ? (uint8_t *)*rec + sizeof(CUpti_ActivityKernel10) : buf;
    if (next + sizeof(CUpti_ActivityKernel10) > buf + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t stream, size_t *n)
{
    (void)c;
    (void)stream;
    *n = 0;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    flushes++;
    if (buffer && buffer_used && buffer_complete) {
        uint8_t *b = buffer;
        size_t used = buffer_used;
        buffer = NULL;
        buffer_used = 0;
        buffer_complete(NULL, 0, b, buffer_size, used);
    }
    return CUPTI_SUCCESS;
}

/* ------------------------------------------------------ the test's side */

static void call_back(int driver, uint32_t cbid, CUpti_ApiCallbackSite site, uint32_t corr,
                      int *result)
{
    if (!callback || !enabled[driver][cbid])
        return;
    CUpti_CallbackData cb;
    memset(&cb, 0, sizeof cb);
    cb.callbackSite = site;
    cb.correlationId = corr;
    cb.functionReturnValue = result;
    callbacks_made++;
    callback(callback_arg, driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid,
             &cb);
}

static void add_kernel(uint32_t corr)
{
    if (!(kinds & (1u << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)))
        return;
    if (!buffer && buffer_request) {
        size_t max = 0;
        buffer_request(&buffer, &buffer_size, &max);
        buffer_used = 0;
    }
    if (!buffer || buffer_used + sizeof(CUpti_ActivityKernel10) > buffer_size)
        return;
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "empty_kernel";
    k.start = timestamp ? timestamp() : 0;
    k.end = k.start + 1000;
    k.correlationId = corr;
    k.streamId = 7;
    memcpy(buffer + buffer_used, &k, sizeof k);
    buffer_used += sizeof k;
}

/* A launch call of an empty kernel, as CUPTI sees it. */
static void launch_call(int driver, uint32_t cbid)
{
    uint32_t corr = next_corr++;
    int rc = 0;
    call_back(driver, cbid, CUPTI_API_ENTER, corr, &rc);
    add_kernel(corr);
    call_back(driver, cbid, CUPTI_API_EXIT, corr, &rc);
}

/* A cudaLaunchKernel of an empty kernel. */
void fake_launch(void)
{
    launch_call(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
}

/* cudaStreamBeginCapture (begin = 1) or cudaStreamEndCapture, returning rc. */
void fake_capture(int begin, int rc)
{
    uint32_t corr = next_corr++;
    uint32_t cbid = begin ? CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000
                          : CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000;
    call_back(0, cbid, CUPTI_API_ENTER, corr, &rc);
    call_back(0, cbid, CUPTI_API_EXIT, corr, &rc);
}

/* How many launch callbacks are on (the runtime's and the driver's). */
int fake_launch_callbacks(void)
{
    return enabled[0][CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000] +
           enabled[1][CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel] +
           enabled[0][CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020] +
           enabled[1][CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2];
}

/* Whether the stream-capture calls are followed. */
int fake_capture_callbacks(void)
{
    return enabled[0][CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000] &&
           enabled[0][CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000];
}

unsigned fake_kinds(void)
{
    return kinds;
}

int fake_syncs(void)
{
    return syncs;
}

int fake_flushes(void)
{
    return flushes;
}

int fake_callbacks_made(void)
{
    return callbacks_made;
}
