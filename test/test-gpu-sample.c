/*
 * test-gpu-sample.c - the CUPTI backend's gate on a machine without a GPU,
 * on the pretend GPU (test/progs/fake-gpu-driver.c and fake-gpu-cupti.c),
 * which keeps what the backend switched on and runs CUPTI's callbacks and
 * records around each launch. Between the windows of a sampled session
 * the launch callbacks and every activity kind are off (a launch calls
 * nothing of kscope's and leaves no record), in them they are on, and for
 * a step after one only the activity is on (quiet: the window's queued
 * kernels still deliver); a switch never synchronizes or flushes, never
 * happens while a stream captures a CUDA graph, and launch metadata given
 * while capture was off never reaches a later kernel.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "kscope-internal.h"
#include "read/read.h"
#include "support/readutil.h"
#include "support/session-util.h"

#define NAME "/tmp/kscope-test-gpu-sample"

/* The pretend GPU's controls (fake-gpu-*.c). */
long fake_cupti_count(const char *what);
long fake_cuda_count(const char *what);
void fake_cuda_set(const char *what, long v);

static long callback_on(CUpti_CallbackDomain d, int id)
{
    char what[64];
    snprintf(what, sizeof what, "callback %d %d", (int)d, id);
    return fake_cupti_count(what);
}

/* A cudaLaunchKernel of an empty kernel (1 us). */
static void fake_launch(void)
{
    dim3 grid = {1, 1, 1}, block = {1, 1, 1};
    assert_int_equal(cudaLaunchKernel("empty_kernel", grid, block, NULL, 0, NULL), cudaSuccess);
}

/* cudaStreamBeginCapture (begin = 1) or cudaStreamEndCapture, returning rc. */
static void fake_capture(int begin, int rc)
{
    cudaStream_t s = (cudaStream_t)(uintptr_t)100;
    cudaGraph_t g;
    fake_cuda_set("capture_rc", rc);
    cudaError_t r = begin ? cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)
                          : cudaStreamEndCapture(s, &g);
    fake_cuda_set("capture_rc", 0);
    assert_int_equal(r, rc);
}

/* How many launch callbacks are on (the runtime's and the driver's). */
static int fake_launch_callbacks(void)
{
    return (
        int)(callback_on(CUPTI_CB_DOMAIN_RUNTIME_API,
                         CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) +
             callback_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) +
             callback_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020) +
             callback_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2));
}

/* Whether the stream-capture calls are followed. */
static int fake_capture_callbacks(void)
{
    return callback_on(CUPTI_CB_DOMAIN_RUNTIME_API,
                       CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000) &&
           callback_on(CUPTI_CB_DOMAIN_RUNTIME_API,
                       CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000);
}

/* Synchronizations of a context or a stream. */
static long fake_syncs(void)
{
    return fake_cuda_count("sync") + fake_cuda_count("stream_sync");
}

static long fake_flushes(void)
{
    return fake_cupti_count("flushes");
}

static long fake_callbacks_made(void)
{
    return fake_cupti_count("callbacks");
}

static int start(const char *sample)
{
    int s =
        tu_start_opts((kscope_session_opts){.name = NAME, .backend = "cupti", .sample = sample});
    assert_int_equal(kscope__session_gpu_on(s), 1);
    return s;
}

enum { SHUT, OPEN, QUIET };

/* Open: launch callbacks (runtime and driver, launches and copies) and
 * the kernel kind; quiet: the kernel kind and no callback; shut: none of
 * them, and no activity kind at all. */
static void assert_capture(int state, int step)
{
    static const char *const names[] = {"shut", "open", "quiet"};
    int cbs = fake_launch_callbacks();
    long kinds = fake_cupti_count("kinds");
    char what[32];
    snprintf(what, sizeof what, "kind %d", (int)CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    long kernels = fake_cupti_count(what);
    int ok = state == OPEN    ? cbs == 4 && kernels == 1
             : state == QUIET ? cbs == 0 && kernels == 1
                              : cbs == 0 && kinds == 0;
    if (!ok)
        fail_msg("step %d: capture should be %s: %d launch callbacks, %ld kinds, kernel kind %ld",
                 step, names[state], cbs, kinds, kernels);
    assert_true(fake_capture_callbacks()); /* followed whatever the windows */
}

/* step:on=1,every=3: steps 0, 3 and 6 are captured, 1, 4 and 7 quiet. */
static void test_gate_switches_cupti_off_between_windows(void **state)
{
    (void)state;
    int s = start("step:on=1,every=3");
    assert_int_equal(kscope_enter("train"), 0);
    for (int step = 0; step < 9; step++) {
        long syncs = fake_syncs(), flushes = fake_flushes();
        if (step)
            assert_int_equal(kscope_step(), 0);
        assert_int_equal(fake_syncs(), syncs);     /* a switch never synchronizes */
        assert_int_equal(fake_flushes(), flushes); /* nor flushes */
        int on = step % 3 == 0;
        assert_capture(on ? OPEN : step % 3 == 1 ? QUIET : SHUT, step);
        long made = fake_callbacks_made();
        fake_launch();
        fake_launch();
        assert_int_equal(fake_callbacks_made() - made, on ? 4 : 0);
    }
    assert_int_equal(kscope_exit("train"), 0);
    kscope__ptree *t = session_read_ok(s);
    kscope__pnode *k = PATH(t, "train", "empty_kernel");
    assert_close(metric(k, "count"), 6);
    assert_close(metric(t->root, "steps"), 9);
    assert_close(metric(t->root, "sampled_steps"), 3);
    assert_close(metric(t->root, "sampled_fraction"), 1.0 / 3.0);
    assert_close(metric(k, "est_count"), 18);
    assert_close(metric(k, "est_time (ns)"), metric(k, "time (ns)") * 3);
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".hatchet");
}

/* While a stream captures a graph the gate does not move; a capture that
 * failed to begin does not hold it, an invalidated one ends. */
static void test_no_switch_during_graph_capture(void **state)
{
    (void)state;
    int s = start("step:on=1,every=2");
    assert_capture(OPEN, 0);
    fake_capture(1, 0); /* cudaStreamBeginCapture */
    kscope_step();      /* step 1 would quiet it */
    assert_capture(OPEN, 1);
    kscope_step(); /* step 2: on */
    kscope_step(); /* step 3: still capturing */
    assert_capture(OPEN, 3);
    fake_capture(0, 0); /* cudaStreamEndCapture */
    kscope_step();      /* 4: on */
    kscope_step();      /* 5: quiet now */
    assert_capture(QUIET, 5);
    fake_capture(1, 1); /* a begin that failed */
    kscope_step();      /* 6: on */
    assert_capture(OPEN, 6);
    fake_capture(1, 0);
    fake_capture(0, 901); /* invalidated: the capture is over */
    kscope_step();        /* 7: quiet */
    assert_capture(QUIET, 7);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".hatchet");
}

/* Launch metadata given while capture is off is not kept, nor is metadata
 * left from before the gate last opened: it never names a later kernel. */
static void test_stale_metadata_is_dropped(void **state)
{
    (void)state;
    int s = start("step:on=1,every=2");
    kscope_launch_meta named = {.name = "named"};
    assert_int_equal(kscope_launch_metadata(&named), 0);
    fake_launch(); /* step 0: "named" */
    kscope_launch_meta early = {.name = "stale_in_window"};
    assert_int_equal(kscope_launch_metadata(&early), 0); /* no launch follows in the window */
    kscope_step();                                       /* 1: off */
    kscope_launch_meta off = {.name = "stale_while_off"};
    assert_int_equal(kscope_launch_metadata(&off), 0);
    kscope_step(); /* 2: on */
    fake_launch(); /* must be empty_kernel */
    kscope__ptree *t = session_read_ok(s);
    assert_close(metric(PATH(t, "named"), "count"), 1);
    assert_close(metric(PATH(t, "empty_kernel"), "count"), 1);
    assert_int_equal(t->root->nchildren, 2);
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".hatchet");
}

/* A session that is not sampled gets every launch. */
static void test_full_session_captures_everything(void **state)
{
    (void)state;
    int s = start("off");
    for (int i = 0; i < 3; i++) {
        kscope_step();
        assert_capture(OPEN, i);
        fake_launch();
    }
    kscope__ptree *t = session_read_ok(s);
    assert_close(metric(PATH(t, "empty_kernel"), "count"), 3);
    assert_true(isnan(metric(t->root, "sampled_fraction")));
    kscope__ptree_free(t);
    assert_int_equal(kscope_finalize(s, NULL), 0);
    unlink(NAME ".hatchet");
}

int main(void)
{
    /* The pretend GPU: its CUPTI, and a file standing for its device node. */
    setenv("KSCOPE_CUPTI_LIBRARY", FAKE_GPU_CUPTI, 1);
    setenv("KSCOPE_GPU_DEVICE_GLOB", FAKE_GPU_DRIVER, 1);
    unsetenv("KSCOPE_SAMPLE");
    CUdevice d;
    CUcontext primary;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&primary, d) != CUDA_SUCCESS ||
        cuCtxSetCurrent(primary) != CUDA_SUCCESS)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_switches_cupti_off_between_windows),
        cmocka_unit_test(test_no_switch_during_graph_capture),
        cmocka_unit_test(test_stale_metadata_is_dropped),
        cmocka_unit_test(test_full_session_captures_everything),
    };
    return cmocka_run_group_tests_name("gpu-sample", tests, NULL, NULL);
}
