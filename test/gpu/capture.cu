/*
 * capture.cu - GPU capture scenarios, one kscope session each, written
 * into the folder given as argv[1]; check_capture.py reads the outputs.
 *
 *   empty:    20,000 empty kernels in one scope, then 100 more while the
 *             session is deactivated (must not be recorded)
 *   busy:     a ~2 ms kernel 10x, timed with CUDA events as well (behind a
 *             blocker kernel, so the events see no launch latency)
 *   streams:  kernels on two streams (trace)
 *   graph:    a 3-kernel graph captured and instantiated before the
 *             session, replayed 4x under a scope
 *   copies:   1 MiB HtoD once, 1 MiB DtoH twice, a memset
 *   state:    a kernel launched inside a state inside a scope
 *   meta:     launch metadata (name, flops16, custom metric) on a kernel
 *   flows:    a trace of scoped launches, for launch -> kernel order
 *
 * Exit status 0 when every CUDA and kscope call succeeded.
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kscope.h"

#include "gpu-check.h"

__global__ void empty_kernel() {}
__global__ void excluded_kernel() {}

__global__ void busy_kernel(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

__global__ void stream_a(int *p)
{
    p[0] += 1;
}
__global__ void stream_b(int *p)
{
    p[1] += 1;
}
__global__ void node_a(int *p)
{
    p[0] += 1;
}
__global__ void node_b(int *p)
{
    p[1] += 2;
}
__global__ void node_c(int *p)
{
    p[2] += 3;
}
__global__ void state_kernel(int *p)
{
    p[3] += 1;
}
__global__ void flow_kernel(int *p)
{
    p[4] += 1;
}

static const char *outdir;
static FILE *facts; /* measured values for the checker, one JSON object */

static void empty_scenario(void)
{
    int s = start_in(outdir, "empty", "tree", NULL);
    KS(kscope_enter("loop"));
    for (int i = 0; i < 20000; i++)
        empty_kernel<<<1, 1>>>();
    KS(kscope_exit("loop"));
    CK(cudaDeviceSynchronize());
    KS(kscope_deactivate(s, 1));
    KS(kscope_enter("paused"));
    for (int i = 0; i < 100; i++)
        excluded_kernel<<<1, 1>>>();
    KS(kscope_exit("paused"));
    CK(cudaDeviceSynchronize());
    KS(kscope_activate(s));
    KS(kscope_finalize(s, "hatchet"));
}

static void busy_scenario(void)
{
    long long cycles = 4000000; /* ~2 ms at the H200's clocks */
    busy_kernel<<<1, 1>>>(1000);
    CK(cudaDeviceSynchronize());
    int s = start_in(outdir, "busy", "tree", NULL);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    KS(kscope_enter("busy"));
    /* A ~5 ms blocker first, so the events bracket GPU work only: by the
     * time it ends, the launches below are queued behind it. */
    busy_kernel<<<1, 1>>>(10000000);
    CK(cudaEventRecord(a));
    for (int i = 0; i < 10; i++)
        busy_kernel<<<1, 1>>>(cycles);
    CK(cudaEventRecord(b));
    KS(kscope_exit("busy"));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    fprintf(facts, "\"busy_event_ns\": %.0f,\n", ms * 1e6);
    fprintf(facts, "\"busy_cycles\": %lld,\n", cycles);
    KS(kscope_finalize(s, "hatchet"));
}

static void streams_scenario(int *dev)
{
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    int s = start_in(outdir, "streams", "trace", NULL);
    KS(kscope_enter("streams"));
    for (int i = 0; i < 50; i++) {
        stream_a<<<1, 1, 0, s1>>>(dev);
        stream_b<<<1, 1, 0, s2>>>(dev);
    }
    KS(kscope_exit("streams"));
    CK(cudaDeviceSynchronize());
    KS(kscope_finalize(s, "chrome_trace"));
    /* the same work as a tree: both kernels, 50 each, under the scope */
    s = start_in(outdir, "streams_tree", "tree", NULL);
    KS(kscope_enter("streams"));
    for (int i = 0; i < 50; i++) {
        stream_a<<<1, 1, 0, s1>>>(dev);
        stream_b<<<1, 1, 0, s2>>>(dev);
    }
    KS(kscope_exit("streams"));
    CK(cudaDeviceSynchronize());
    KS(kscope_finalize(s, "hatchet"));
    CK(cudaStreamDestroy(s1));
    CK(cudaStreamDestroy(s2));
}

static void graph_scenario(int *dev)
{
    /* Built before any session exists. */
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    node_a<<<1, 1, 0, st>>>(dev);
    node_b<<<1, 1, 0, st>>>(dev);
    node_c<<<1, 1, 0, st>>>(dev);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&exec, g, 0));
    CK(cudaGraphLaunch(exec, st)); /* a replay before the session: not recorded */
    CK(cudaStreamSynchronize(st));

    int s = start_in(outdir, "graph", "tree", NULL);
    KS(kscope_enter("graph"));
    for (int i = 0; i < 4; i++)
        CK(cudaGraphLaunch(exec, st));
    KS(kscope_exit("graph"));
    CK(cudaStreamSynchronize(st));
    KS(kscope_finalize(s, "hatchet"));
    CK(cudaGraphExecDestroy(exec));
    CK(cudaGraphDestroy(g));
    CK(cudaStreamDestroy(st));
}

static void copies_scenario(void)
{
    size_t n = 1 << 20;
    char *host = (char *)malloc(n);
    char *dev = NULL;
    memset(host, 1, n);
    CK(cudaMalloc(&dev, n));
    int s = start_in(outdir, "copies", "tree", NULL);
    KS(kscope_enter("copies"));
    CK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(host, dev, n, cudaMemcpyDeviceToHost));
    CK(cudaMemset(dev, 0, 4096));
    KS(kscope_exit("copies"));
    CK(cudaDeviceSynchronize());
    KS(kscope_finalize(s, "hatchet"));
    CK(cudaFree(dev));
    free(host);
}

static void state_scenario(int *dev)
{
    int s = start_in(outdir, "state", "tree", NULL);
    KS(kscope_enter("step"));
    KS(kscope_state_enter("forward"));
    for (int i = 0; i < 3; i++)
        state_kernel<<<1, 1>>>(dev);
    KS(kscope_state_exit());
    KS(kscope_exit("step"));
    CK(cudaDeviceSynchronize());
    KS(kscope_finalize(s, "hatchet"));
}

static void meta_scenario(void)
{
    long long cycles = 4000000;
    int s = start_in(outdir, "meta", "tree", NULL);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    static const char *names[] = {"tokens"};
    static const double values[] = {4096.0};
    kscope_launch_meta m;
    memset(&m, 0, sizeof m);
    m.name = "gemm_meta";
    m.flops16 = 1.0e12;
    m.n_custom = 1;
    m.custom_names = names;
    m.custom_values = values;
    /* Looked up at run time so the other scenarios run whatever libkscope
     * offers; a libkscope without it fails the checks of this one. */
    int (*set_meta)(const kscope_launch_meta *) =
        (int (*)(const kscope_launch_meta *))dlsym(RTLD_DEFAULT, "kscope_launch_metadata");
    if (!set_meta)
        fprintf(stderr, "capture: libkscope has no kscope_launch_metadata\n");
    KS(kscope_enter("meta"));
    busy_kernel<<<1, 1>>>(10000000); /* blocker, as in busy_scenario */
    if (set_meta)
        KS(set_meta(&m));
    CK(cudaEventRecord(a));
    busy_kernel<<<1, 1>>>(cycles);
    CK(cudaEventRecord(b));
    busy_kernel<<<1, 1>>>(1000); /* the next launch carries no metadata */
    KS(kscope_exit("meta"));
    CK(cudaEventSynchronize(b));
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    fprintf(facts, "\"meta_event_ns\": %.0f,\n", ms * 1e6);
    KS(kscope_finalize(s, "hatchet"));
}

static void flows_scenario(int *dev)
{
    int s = start_in(outdir, "flows", "trace", NULL);
    for (int i = 0; i < 200; i++) {
        KS(kscope_enter("step"));
        flow_kernel<<<1, 1>>>(dev);
        KS(kscope_exit("step"));
    }
    CK(cudaDeviceSynchronize());
    KS(kscope_finalize(s, "chrome_trace"));
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capture OUTDIR\n");
        return 2;
    }
    outdir = argv[1];
    char path[1024];
    snprintf(path, sizeof path, "%s/facts.json", outdir);
    facts = fopen(path, "w");
    if (!facts) {
        perror(path);
        return 1;
    }
    fprintf(facts, "{\n");
    int *dev = NULL;
    CK(cudaMalloc(&dev, 64 * sizeof(int)));
    CK(cudaMemset(dev, 0, 64 * sizeof(int)));
    empty_scenario();
    busy_scenario();
    streams_scenario(dev);
    graph_scenario(dev);
    copies_scenario();
    state_scenario(dev);
    meta_scenario();
    flows_scenario(dev);
    fprintf(facts, "\"done\": 1\n}\n");
    fclose(facts);
    CK(cudaFree(dev));
    printf("capture: all scenarios ran\n");
    return 0;
}
