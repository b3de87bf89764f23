/*
 * test-gpu-cupti.c - the CUPTI backend as it runs in a process, on a
 * pretend GPU: test/progs/fake-gpu-driver.c (libcuda.so.1) and
 * fake-gpu-cupti.c (libcupti, named by KSCOPE_CUPTI_LIBRARY) stand in for
 * the driver and CUPTI, and the tests call the driver as a CUDA program
 * would. The backend itself is the one libkscope ships: it loads both,
 * subscribes, follows launch, copy and set calls, takes activity buffers,
 * flushes, stops, and refuses a second subscriber or a forked child.
 *
 * Cases that need a fresh process (what loading found is kept for the
 * process) run this program again: `test-gpu-cupti load <case>`.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <dlfcn.h>

#include "kscope-internal.h"
#include "support/testutil.h"
#include "support/session-tree.h"
#include "support/session-util.h"

/* The pretend GPU's controls (fake-gpu-*.c). */
long fake_cupti_count(const char *what);
void fake_cupti_set(const char *what, long v);
uint64_t fake_cupti_now(void);
long fake_cuda_count(const char *what);

static CUcontext primary;

static long count(const char *fmt, int a, int b)
{
    char what[64];
    snprintf(what, sizeof what, fmt, a, b);
    return fake_cupti_count(what);
}

static long kind_on(CUpti_ActivityKind k)
{
    return count("kind %d", (int)k, 0);
}

static long callback_on(CUpti_CallbackDomain d, int id)
{
    return count("callback %d %d", (int)d, id);
}

/* Whether the callbacks of the driver's and the runtime's launches and of
 * a copy are all on (1) or all off (0). */
static void assert_launches_followed(long on)
{
    assert_int_equal(
        callback_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), on);
    assert_int_equal(
        callback_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
        on);
    assert_int_equal(
        callback_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2), on);
}

static int start(const char *name, const char *data)
{
    int s = tu_start_opts((kscope_session_opts){.name = name, .data = data, .backend = "cupti"});
    assert_true(kscope__session_gpu_on(s));
    return s;
}

static int teardown(void **state)
{
    (void)state;
    while (kscope_depth() > 0)
        kscope_exit(NULL);
    kscope_finalize(KSCOPE_ALL, NULL);
    unsetenv("FAKE_CUPTI_FAIL");
    fake_cupti_set("per_buffer", 0);
    fake_cupti_set("drop", 0);
    cuCtxSetCurrent(primary);
    return 0;
}

static void launch(const char *kernel, unsigned us)
{
    CUfunction f;
    assert_int_equal(cuModuleGetFunction(&f, NULL, kernel), CUDA_SUCCESS);
    assert_int_equal(cuLaunchKernel(f, us, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
}

static yajl_val tree_of(int s, yajl_val *doc, char **text)
{
    *doc = tu_session_doc(s, text);
    return (*doc)->u.array.values[0];
}

/* ------------------------------------------------------------- lifecycle */

/* A session subscribes and enables the work kinds (never the serialising
 * KERNEL kind), kscope's clock, and the callbacks of launches, copies and
 * sets only, once a thread has annotated (runs first: nothing annotated
 * before it); the last session's end takes all of it back. */
static void test_subscribe_and_stop(void **state)
{
    (void)state;
    assert_int_equal(fake_cupti_count("subscribed"), 0);
    int s = start("t", NULL);
    assert_int_equal(fake_cupti_count("subscribed"), 1);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 1);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_MEMCPY), 1);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_MEMCPY2), 1);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_MEMSET), 1);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_KERNEL), 0);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_RUNTIME), 0);
    assert_int_equal(fake_cupti_count("timestamp"), 1);
    uint64_t t0 = kscope_now_ns(), t = fake_cupti_now(), t1 = kscope_now_ns();
    assert_true(t0 <= t && t <= t1); /* records are stamped on kscope's clock */
    /* Nothing annotated yet: every kernel goes to the root, so launches are
     * not followed (what a launch costs is CUPTI's activity alone); graph
     * launches and stream captures are. */
    assert_launches_followed(0);
    assert_int_equal(
        callback_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000),
        1);
    assert_int_equal(callback_on(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000),
                     1);
    launch("before_any_scope", 1);
    kscope_enter("first"); /* the process's first annotation: launches are followed */
    launch("in_first", 2);
    kscope_exit("first");
    yajl_val doc;
    char *text;
    yajl_val root = tree_of(s, &doc, &text);
    assert_non_null(tu_child(root, "before_any_scope"));
    assert_non_null(TU_PATH(root, "first", "in_first"));
    assert_null(tu_child(root, "in_first"));
    kscope_free(text);
    yajl_tree_free(doc);
    assert_launches_followed(1);
    assert_int_equal(
        callback_on(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020), 1);
    assert_int_equal(
        callback_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize), 0);
    /* the profiler API only under kscope run --capture-range */
    assert_int_equal(
        callback_on(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart), 0);
    /* a second session shares the subscription */
    int s2 = start("t2", "trace");
    assert_int_equal(kscope_finalize(s, NULL), 0);
    assert_int_equal(fake_cupti_count("subscribed"), 1);
    assert_int_equal(kscope_finalize(s2, NULL), 0);
    assert_int_equal(fake_cupti_count("subscribed"), 0);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_MEMSET), 0);
    unlink("t.hatchet");
    unlink("t2.chrome_trace");
    /* and a later session subscribes again */
    s = start("t", NULL);
    assert_int_equal(fake_cupti_count("subscribed"), 1);
}

/* ----------------------------------------------------------- attribution */

/* Kernels of the driver and the runtime land under the scope that
 * launched them, with their time on the GPU; names are demangled. */
static void test_kernels_under_scopes(void **state)
{
    (void)state;
    int s = start("k", NULL);
    kscope_enter("step");
    launch("add_kernel", 3);
    launch("add_kernel", 4);
    kscope_exit("step");
    kscope_enter("mm");
    dim3 grid = {5, 1, 1}, block = {32, 1, 1};
    assert_int_equal(cudaLaunchKernel("_Z4gemmPfS_i", grid, block, NULL, 0, NULL), cudaSuccess);
    kscope_exit("mm");
    launch("outside", 1);
    yajl_val doc;
    char *text;
    yajl_val root = tree_of(s, &doc, &text);
    yajl_val add = TU_PATH(root, "step", "add_kernel");
    assert_non_null(add);
    assert_int_equal(tu_metric_int(add, "time (ns)"), 7000);
    assert_int_equal(tu_metric_int(add, "count"), 2);
    assert_int_equal(tu_metric_int(add, "min_time (ns)"), 3000);
    assert_int_equal(tu_metric_int(add, "max_time (ns)"), 4000);
    assert_string_equal(YAJL_GET_STRING(tu_metric(add, "device_id")), "0");
    yajl_val mm = tu_child(root, "mm");
    assert_non_null(mm);
    assert_int_equal(tu_nchildren(mm), 1);
    yajl_val gemm = tu_child(mm, "gemm(float*, float*, int)");
    assert_non_null(gemm);
    assert_int_equal(tu_metric_int(gemm, "time (ns)"), 5000);
    assert_non_null(tu_child(root, "outside"));
    /* the device's figures, read from the driver */
    assert_non_null(strstr(text, "\"arch\":\"90\""));
    assert_non_null(strstr(text, "\"num_sms\":132"));
    assert_non_null(strstr(text, "\"clock_rate\":1980000"));
    kscope_free(text);
    yajl_tree_free(doc);
}

/* Copies and sets, driver and runtime: under their scope, by direction,
 * with their bytes; a peer copy names both devices. */
static void test_copies_and_sets(void **state)
{
    (void)state;
    CUdevice d1;
    CUcontext peer;
    assert_int_equal(cuDeviceGet(&d1, 1), CUDA_SUCCESS);
    assert_int_equal(cuDevicePrimaryCtxRetain(&peer, d1), CUDA_SUCCESS);
    int s = start("c", NULL);
    char host[16];
    kscope_enter("io");
    assert_int_equal(cuMemcpyHtoD_v2(0x1000, host, 4096), CUDA_SUCCESS);
    assert_int_equal(cudaMemcpy(host, (void *)0x1000, 100, cudaMemcpyDeviceToHost), cudaSuccess);
    assert_int_equal(cuMemsetD8_v2(0x1000, 0, 64), CUDA_SUCCESS);
    assert_int_equal(cudaMemset((void *)0x1000, 0, 32), cudaSuccess);
    assert_int_equal(cuMemcpyPeer(0x2000, peer, 0x1000, primary, 256), CUDA_SUCCESS);
    kscope_exit("io");
    yajl_val doc;
    yajl_val io = tu_child(tree_of(s, &doc, NULL), "io");
    assert_non_null(io);
    yajl_val htod = tu_child(io, "Memcpy HtoD"), dtoh = tu_child(io, "Memcpy DtoH");
    yajl_val set = tu_child(io, "Memset"), p2p = tu_child(io, "Memcpy PtoP 0->1");
    assert_non_null(htod);
    assert_non_null(dtoh);
    assert_non_null(set);
    assert_non_null(p2p);
    assert_int_equal(tu_metric_int(htod, "bytes"), 4096);
    assert_int_equal(tu_metric_int(dtoh, "bytes"), 100);
    assert_int_equal(tu_metric_int(set, "bytes"), 96);
    assert_int_equal(tu_metric_int(set, "count"), 2);
    assert_int_equal(tu_metric_int(p2p, "bytes"), 256);
    assert_string_equal(YAJL_GET_STRING(tu_metric(p2p, "src_device_id")), "0");
    assert_string_equal(YAJL_GET_STRING(tu_metric(p2p, "dst_device_id")), "1");
    yajl_tree_free(doc);
    cuDevicePrimaryCtxRelease_v2(d1);
}

/* Metadata given before a launch names its kernel and adds its metrics. */
static void test_launch_metadata(void **state)
{
    (void)state;
    int s = start("m", NULL);
    const char *names[] = {"tiles"};
    double values[] = {12};
    kscope_launch_meta m = {.name = "matmul<bf16>",
                            .flops16 = 2e9,
                            .n_custom = 1,
                            .custom_names = names,
                            .custom_values = values};
    kscope_enter("layer");
    assert_int_equal(kscope_launch_metadata(&m), 0);
    launch("raw_kernel_name", 2);
    launch("raw_kernel_name", 2); /* metadata is for one launch */
    kscope_exit("layer");
    yajl_val doc;
    yajl_val layer = tu_child(tree_of(s, &doc, NULL), "layer");
    yajl_val named = tu_child(layer, "matmul<bf16>");
    assert_non_null(named);
    assert_int_equal(tu_metric_int(named, "count"), 1);
    assert_true(YAJL_GET_DOUBLE(tu_metric(named, "flops16")) == 2e9);
    assert_true(YAJL_GET_DOUBLE(tu_metric(named, "tiles")) == 12);
    assert_int_equal(tu_metric_int(tu_child(layer, "raw_kernel_name"), "count"), 1);
    yajl_tree_free(doc);
}

/* ---------------------------------------------------------------- buffers */

/* Many buffers, handed back on CUPTI's thread: every record arrives, and
 * buffers go back to kscope's free list instead of piling up. */
static void test_many_buffers(void **state)
{
    (void)state;
    fake_cupti_set("per_buffer", 50);
    int s = start("b", NULL);
    long requested = fake_cupti_count("requested"), distinct = fake_cupti_count("distinct");
    kscope_enter("loop");
    for (int i = 0; i < 2000; i++)
        launch("tiny", 1);
    kscope_exit("loop");
    yajl_val doc;
    yajl_val k = TU_PATH(tree_of(s, &doc, NULL), "loop", "tiny");
    assert_int_equal(tu_metric_int(k, "count"), 2000);
    assert_int_equal(tu_metric_int(k, "time (ns)"), 2000 * 1000);
    yajl_tree_free(doc);
    assert_true(fake_cupti_count("requested") - requested >= 40);
    assert_true(fake_cupti_count("distinct") - distinct < 40); /* reused */
    assert_int_equal(fake_cupti_count("records"), fake_cupti_count("delivered"));
    assert_int_equal(kscope_dropped(s), 0);
}

/* Threads launch while CUPTI's thread hands buffers back: each thread's
 * kernels land under its own scope, none lost (tools/tsan.sh runs this
 * under ThreadSanitizer). */
static void *launcher_thread(void *arg)
{
    char scope[16];
    snprintf(scope, sizeof scope, "t%d", (int)(intptr_t)arg);
    cuCtxSetCurrent(primary);
    kscope_enter(scope);
    for (int i = 0; i < 500; i++)
        launch("threaded", 1);
    kscope_exit(scope);
    return NULL;
}

static void test_threads_launch(void **state)
{
    (void)state;
    fake_cupti_set("per_buffer", 50);
    int s = start("th", NULL);
    pthread_t th[4];
    for (intptr_t i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, launcher_thread, (void *)i), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    yajl_val doc;
    yajl_val root = tree_of(s, &doc, NULL);
    for (int i = 0; i < 4; i++) {
        char scope[16];
        snprintf(scope, sizeof scope, "t%d", i);
        assert_int_equal(tu_metric_int(TU_PATH(root, scope, "threaded"), "count"), 500);
    }
    yajl_tree_free(doc);
    assert_int_equal(kscope_dropped(s), 0);
}

/* Records CUPTI had to drop are counted, per session and in the profile. */
static void test_dropped_records(void **state)
{
    (void)state;
    int s = start("d", NULL);
    fake_cupti_set("drop", 5);
    for (int i = 0; i < 8; i++)
        launch("k", 1);
    yajl_val doc;
    yajl_val root = tree_of(s, &doc, NULL);
    assert_int_equal(tu_metric_int(tu_child(root, "k"), "count"), 3);
    assert_true(tu_metric_num(root, "dropped_records") == 5); /* a double at ROOT */
    assert_int_equal(kscope_dropped(s), 5);
    yajl_tree_free(doc);
}

/* A flush waits for the work of every context kscope can reach (the
 * thread's own and each active primary context) and for CUPTI. */
static void test_flush_synchronizes(void **state)
{
    (void)state;
    int s = start("f", NULL);
    CUcontext own;
    assert_int_equal(cuCtxCreate_v4(&own, NULL, 0, 0), CUDA_SUCCESS);
    launch("in_own_context", 1);
    long syncs = fake_cuda_count("sync"), flushes = fake_cupti_count("flushes");
    yajl_val doc;
    yajl_val root = tree_of(s, &doc, NULL);
    assert_non_null(tu_child(root, "in_own_context"));
    yajl_tree_free(doc);
    /* the thread's context, then the primary one (device 1's is released) */
    assert_int_equal(fake_cuda_count("sync") - syncs, 2);
    assert_true(fake_cupti_count("flushes") > flushes);
    assert_int_equal(cuCtxDestroy_v2(own), CUDA_SUCCESS);
    /* no context current: only the primary one */
    cuCtxSetCurrent(NULL);
    syncs = fake_cuda_count("sync");
    assert_int_equal(kscope_deactivate(s, 1), 0);
    assert_int_equal(fake_cuda_count("sync") - syncs, 1);
}

/* Work launched while a session is deactivated is not in it. */
static void test_deactivated_session(void **state)
{
    (void)state;
    int s = start("a", NULL);
    launch("before", 1);
    assert_int_equal(kscope_deactivate(s, 1), 0);
    launch("paused", 1);
    assert_int_equal(kscope_activate(s), 0);
    launch("after", 1);
    yajl_val doc;
    yajl_val root = tree_of(s, &doc, NULL);
    assert_non_null(tu_child(root, "before"));
    assert_null(tu_child(root, "paused"));
    assert_non_null(tu_child(root, "after"));
    yajl_tree_free(doc);
}

/* ------------------------------------------------------------- refusals */

/* Another subscriber holds CUPTI: start says so and takes nothing. */
static void test_second_subscriber(void **state)
{
    (void)state;
    CUpti_SubscriberHandle other;
    assert_int_equal(cuptiSubscribe(&other, NULL, NULL), CUPTI_SUCCESS);
    const kscope__backend *b = kscope__backend_find("cupti");
    assert_int_equal(b->start(), KSCOPE_EBUSY);
    assert_non_null(strstr(kscope_last_error(), "another CUPTI subscriber"));
    assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
    assert_int_equal(cuptiUnsubscribe(other), CUPTI_SUCCESS);
}

/* Each CUPTI call that can refuse: start fails naming it and CUPTI's
 * reason, and leaves CUPTI as it found it; a refused clock only warns. */
static void test_start_failures(void **state)
{
    (void)state;
    static const struct {
        const char *entry, *says;
    } cases[] = {
        {"cuptiSubscribe", "cuptiSubscribe failed: CUPTI_ERROR_UNKNOWN"},
        {"cuptiActivityRegisterCallbacks",
         "cuptiActivityRegisterCallbacks failed: CUPTI_ERROR_UNKNOWN"},
        {"cuptiActivityEnable", "failed: CUPTI_ERROR_UNKNOWN"},
        {"cuptiEnableCallback", "cannot enable CUPTI launch callbacks: CUPTI_ERROR_UNKNOWN"},
    };
    const kscope__backend *b = kscope__backend_find("cupti");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("FAKE_CUPTI_FAIL", cases[i].entry, 1);
        assert_int_equal(b->start(), KSCOPE_ENOCUPTI);
        assert_non_null(strstr(kscope_last_error(), cases[i].says));
        assert_int_equal(fake_cupti_count("subscribed"), 0);
        assert_int_equal(kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
    }
    setenv("FAKE_CUPTI_FAIL", "cuptiActivityRegisterTimestampCallback", 1);
    assert_int_equal(b->start(), 0);
    assert_int_equal(fake_cupti_count("subscribed"), 1);
    b->stop();
    unsetenv("FAKE_CUPTI_FAIL");
    assert_int_equal(b->start(), 0);
    b->stop();
    assert_int_equal(fake_cupti_count("subscribed"), 0);
}

/* A child forked without exec cannot use CUDA: its start says why; the
 * parent goes on capturing. */
static void test_fork_child(void **state)
{
    (void)state;
    int s = start("p", NULL);
    launch("before_fork", 1);
    pid_t pid = fork();
    if (pid == 0) {
        const kscope__backend *b = kscope__backend_find("cupti");
        int ok = b->start() == KSCOPE_ENOGPU &&
                 strstr(kscope_last_error(), "does not survive fork() without exec");
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    launch("after_fork", 1);
    yajl_val doc;
    yajl_val root = tree_of(s, &doc, NULL);
    assert_non_null(tu_child(root, "before_fork"));
    assert_non_null(tu_child(root, "after_fork"));
    yajl_tree_free(doc);
}

/* ------------------------------------------------------- fresh processes */

/* Run this program again for one loading case; its one line of output. */
static char *load_case(const char *name, const char *var, const char *value)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s=%s /proc/%d/exe load %s 2>/dev/null", var, value, (int)getpid(),
             name);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char line[1024];
    line[0] = '\0';
    if (!fgets(line, sizeof line, p))
        line[0] = '\0';
    pclose(p);
    return line;
}

static void test_loading(void **state)
{
    (void)state;
    char *r = load_case("nodev", "KSCOPE_GPU_DEVICE_GLOB", "/nonexistent-kscope/nvidia*");
    assert_non_null(strstr(r, "KSCOPE_ENOGPU: no NVIDIA GPU found"));
    r = load_case("nocupti", "KSCOPE_CUPTI_LIBRARY", "/nonexistent-kscope/libcupti.so");
    assert_non_null(strstr(r, "KSCOPE_ENOGPUTOOL: CUPTI library not found (tried "
                              "/nonexistent-kscope/libcupti.so); set KSCOPE_CUPTI_LIBRARY"));
    r = load_case("notcupti", "KSCOPE_CUPTI_LIBRARY", FAKE_GPU_DRIVER);
    assert_non_null(strstr(r, "KSCOPE_ENOGPUTOOL: CUPTI library lacks cupti"));
    assert_non_null(strstr(r, "(CUPTI from CUDA 12 or later is needed)"));
}

/* `load <case>`: start the backend once, print the error code and message. */
static int run_load_case(void)
{
    const kscope__backend *b = kscope__backend_find("cupti");
    int rc = b->start();
    printf("%s: %s\n", rc ? kscope_err_name(rc) : "ok", kscope_last_error());
    if (rc == 0)
        b->stop();
    return 0;
}

int main(int argc, char **argv)
{
    /* The pretend GPU: its CUPTI, and a file standing for its device node. */
    setenv("FAKE_CUDA_DEVICES", "2", 1);
    if (!getenv("KSCOPE_CUPTI_LIBRARY"))
        setenv("KSCOPE_CUPTI_LIBRARY", FAKE_GPU_CUPTI, 1);
    if (!getenv("KSCOPE_GPU_DEVICE_GLOB"))
        setenv("KSCOPE_GPU_DEVICE_GLOB", FAKE_GPU_DRIVER, 1);
    if (argc == 3 && strcmp(argv[1], "load") == 0)
        return run_load_case();
    CUdevice d;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&d, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&primary, d) != CUDA_SUCCESS)
        return 1;
    cuCtxSetCurrent(primary);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_subscribe_and_stop, teardown),
        cmocka_unit_test_teardown(test_kernels_under_scopes, teardown),
        cmocka_unit_test_teardown(test_copies_and_sets, teardown),
        cmocka_unit_test_teardown(test_launch_metadata, teardown),
        cmocka_unit_test_teardown(test_many_buffers, teardown),
        cmocka_unit_test_teardown(test_threads_launch, teardown),
        cmocka_unit_test_teardown(test_dropped_records, teardown),
        cmocka_unit_test_teardown(test_flush_synchronizes, teardown),
        cmocka_unit_test_teardown(test_deactivated_session, teardown),
        cmocka_unit_test_teardown(test_second_subscriber, teardown),
        cmocka_unit_test_teardown(test_start_failures, teardown),
        cmocka_unit_test_teardown(test_fork_child, teardown),
        cmocka_unit_test(test_loading),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
