/*
 * pcs-load.c - what PC sampling needs from the libraries the CUPTI
 * backend loads: CUPTI's PC Sampling calls (looked up when CUPTI loads,
 * optional: only asking for samples needs them), the driver's context
 * push and pop, and CUPTI's resource callbacks, turned on with the first
 * sampling session.
 */
#include "gpu/cupti/pcs.h"

#include <cuda.h>
#include <dlfcn.h>

static kscope__pcs_api api;
static const char *missing; /* the first PC sampling call this CUPTI lacks */
static CUptiResult (*result_string)(CUptiResult, const char **);

static const char *error_text(CUptiResult rc)
{
    const char *s = NULL;
    if (result_string && result_string(rc, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

#define PCS_SYM(field, name)                                                                       \
    do {                                                                                           \
        *(void **)&api.field = dlsym(lib, name);                                                   \
        if (!api.field && !missing)                                                                \
            missing = name;                                                                        \
    } while (0)

void kscope__pcs_load(void *lib)
{
    missing = NULL;
    PCS_SYM(enable, "cuptiPCSamplingEnable");
    PCS_SYM(disable, "cuptiPCSamplingDisable");
    PCS_SYM(num_stall_reasons, "cuptiPCSamplingGetNumStallReasons");
    PCS_SYM(stall_reasons, "cuptiPCSamplingGetStallReasons");
    PCS_SYM(set_config, "cuptiPCSamplingSetConfigurationAttribute");
    PCS_SYM(get_data, "cuptiPCSamplingGetData");
    PCS_SYM(sass_to_source, "cuptiGetSassToSourceCorrelation");
    PCS_SYM(cubin_crc, "cuptiGetCubinCrc");
    PCS_SYM(device_id, "cuptiGetDeviceId");
    PCS_SYM(version, "cuptiGetVersion");
    *(void **)&result_string = dlsym(lib, "cuptiGetResultString");
    api.error = error_text;
}

/* The driver's context push and pop (libcuda.so.1 is loaded by then:
 * the backend loaded it; no driver call is made here). */
static void load_driver_calls(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return;
    *(void **)&api.ctx_push = dlsym(lib, "cuCtxPushCurrent_v2");
    *(void **)&api.ctx_pop = dlsym(lib, "cuCtxPopCurrent_v2");
    if (!api.ctx_push || !api.ctx_pop)
        api.ctx_push = NULL, api.ctx_pop = NULL;
}

/* The starting thread's context, made before sampling started, is set up
 * now rather than at its first launch: set up inside a launch's callback,
 * sampling may begin after a kernel of a few microseconds has ended, and
 * the first kernel of a session would then have no sample. */
static void setup_current(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!lib)
        return;
    CUresult (*get_current)(CUcontext *);
    *(void **)&get_current = dlsym(lib, "cuCtxGetCurrent");
    CUcontext cur = NULL;
    if (get_current && get_current(&cur) == CUDA_SUCCESS && cur)
        kscope__pcs_context(cur);
}

int kscope__pcs_switch(int on, uint32_t interval, CUpti_SubscriberHandle subscriber,
                       kscope__pcs_enable_fn enable_callback)
{
    static const CUpti_CallbackId ids[] = {CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
                                           CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
                                           CUPTI_CBID_RESOURCE_MODULE_LOADED};
    if (!on) {
        kscope__pcs_stop(0);
        return 0;
    }
    if (!subscriber)
        return kscope__fail(KSCOPE_ESTATE, "PC sampling: the CUPTI backend is not capturing");
    if (missing)
        return kscope__fail(KSCOPE_ENOGPUTOOL, "PC sampling: this CUPTI lacks %s", missing);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        CUptiResult rc = enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, ids[i]);
        if (rc != CUPTI_SUCCESS)
            return kscope__fail(KSCOPE_ENOGPUTOOL,
                                "PC sampling: cannot enable CUPTI's resource callbacks: %s",
                                error_text(rc));
    }
    load_driver_calls();
    int rc = kscope__pcs_start(&api, interval);
    if (rc == 0)
        setup_current();
    return rc;
}
