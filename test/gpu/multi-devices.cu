/*
 * multi-devices.cu - one process, kernels on two GPUs under different
 * scopes, recorded through the C API. Outputs land in the folder given as
 * argv[1]; multi-devices.py checks them.
 *
 * The workload (the same in every run):
 *   scope "dev0": device 0, work_kernel 30x on stream A0 and 20x on B0
 *   scope "dev1": device 1, work_kernel 40x on stream A1 and 10x on B1
 *   scope "both": mix_kernel 25x on each device, alternating, on A0 / A1
 * Runs:
 *   separate_tree / separate_trace: a tree session, then a trace session
 *   together_tree / together_trace: both sessions at once, one workload
 * facts.json: each device's attributes (for the device-info check) and the
 * launch counts above.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kscope.h"

#include "gpu-check.h"

enum { A0_LAUNCHES = 30, B0_LAUNCHES = 20, A1_LAUNCHES = 40, B1_LAUNCHES = 10, MIX_LAUNCHES = 25 };

__global__ void work_kernel(int *p)
{
    p[0] += 1;
}
__global__ void mix_kernel(int *p)
{
    p[1] += 1;
}

static const char *outdir;
static int *buf[2];
static cudaStream_t stream_a[2], stream_b[2];

static void on_device(int d, const char *scope, int na, int nb)
{
    KS(kscope_enter(scope));
    CK(cudaSetDevice(d));
    for (int i = 0; i < na; i++)
        work_kernel<<<1, 1, 0, stream_a[d]>>>(buf[d]);
    for (int i = 0; i < nb; i++)
        work_kernel<<<1, 1, 0, stream_b[d]>>>(buf[d]);
    CK(cudaGetLastError());
    KS(kscope_exit(scope));
}

static void workload(void)
{
    on_device(0, "dev0", A0_LAUNCHES, B0_LAUNCHES);
    on_device(1, "dev1", A1_LAUNCHES, B1_LAUNCHES);
    KS(kscope_enter("both"));
    for (int i = 0; i < MIX_LAUNCHES; i++) {
        for (int d = 0; d < 2; d++) {
            CK(cudaSetDevice(d));
            mix_kernel<<<1, 1, 0, stream_a[d]>>>(buf[d]);
        }
    }
    CK(cudaGetLastError());
    KS(kscope_exit("both"));
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaDeviceSynchronize());
    }
}

static void write_facts(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/facts.json", outdir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "{\"devices\": {");
    for (int d = 0; d < 2; d++) {
        int major, minor, sms, clock, mclock, bus;
        CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
        CK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d));
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
        CK(cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, d));
        CK(cudaDeviceGetAttribute(&mclock, cudaDevAttrMemoryClockRate, d));
        CK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, d));
        fprintf(f,
                "%s\"%d\": {\"arch\": \"%d%d\", \"num_sms\": %d, \"clock_rate\": %d, "
                "\"memory_clock_rate\": %d, \"bus_width\": %d}",
                d ? ", " : "", d, major, minor, sms, clock, mclock, bus);
    }
    fprintf(f, "},\n\"launches\": {\"a0\": %d, \"b0\": %d, \"a1\": %d, \"b1\": %d, \"mix\": %d}}\n",
            A0_LAUNCHES, B0_LAUNCHES, A1_LAUNCHES, B1_LAUNCHES, MIX_LAUNCHES);
    fclose(f);
}

int main(int argc, char **argv)
{
    outdir = two_gpu_outdir("multi-devices", argc, argv);
    /* Contexts, streams, buffers and modules before any session: none of
     * this warm-up is recorded. */
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaMalloc(&buf[d], 64 * sizeof(int)));
        CK(cudaMemset(buf[d], 0, 64 * sizeof(int)));
        CK(cudaStreamCreateWithFlags(&stream_a[d], cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&stream_b[d], cudaStreamNonBlocking));
        work_kernel<<<1, 1, 0, stream_a[d]>>>(buf[d]);
        mix_kernel<<<1, 1, 0, stream_a[d]>>>(buf[d]);
        CK(cudaDeviceSynchronize());
    }
    write_facts();

    tree_then_trace(outdir, "separate", workload);

    int tree = start_in(outdir, "together_tree", "tree", NULL);
    int trace = start_in(outdir, "together_trace", "trace", NULL);
    workload();
    KS(kscope_finalize(tree, "hatchet"));
    KS(kscope_finalize(trace, "chrome_trace"));

    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaStreamDestroy(stream_a[d]));
        CK(cudaStreamDestroy(stream_b[d]));
        CK(cudaFree(buf[d]));
    }
    printf("multi-devices: all runs done\n");
    return 0;
}
