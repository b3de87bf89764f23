/*
 * multi-peer.cu - copies between two GPUs under scopes, recorded by a tree
 * session (peer_tree.hatchet) and then a trace session
 * (peer_trace.chrome_trace) in the folder given as argv[1];
 * multi-peer.py checks them.
 *
 * The workload (peer access enabled both ways where the devices allow):
 *   scope "peer01": cudaMemcpyPeer device 0 -> 1, 4 MiB, 3x
 *   scope "peer10": cudaMemcpyPeerAsync device 1 -> 0 on a device-1
 *                   stream, 1 MiB, 2x
 *   scope "uva01":  cudaMemcpy(cudaMemcpyDefault) device 0 -> 1, 2 MiB, 1x
 *   scope "local0": cudaMemcpy device 0 -> device 0, 1 MiB, 1x (not a peer
 *                   copy: no peer fields expected)
 * facts.json: whether each device can access the other, and the sizes.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kscope.h"

#include "gpu-check.h"

#define MIB ((size_t)1 << 20)
enum { PEER01_N = 3, PEER10_N = 2, UVA01_N = 1, LOCAL0_N = 1 };
static const size_t PEER01_BYTES = 4 * MIB, PEER10_BYTES = MIB, UVA01_BYTES = 2 * MIB,
                    LOCAL0_BYTES = MIB;

static const char *outdir;
static char *buf[2]; /* 8 MiB on each device */
static cudaStream_t stream1;

static void workload(void)
{
    KS(kscope_enter("peer01"));
    CK(cudaSetDevice(0));
    for (int i = 0; i < PEER01_N; i++)
        CK(cudaMemcpyPeer(buf[1], 1, buf[0], 0, PEER01_BYTES));
    KS(kscope_exit("peer01"));

    KS(kscope_enter("peer10"));
    CK(cudaSetDevice(1));
    for (int i = 0; i < PEER10_N; i++)
        CK(cudaMemcpyPeerAsync(buf[0], 0, buf[1], 1, PEER10_BYTES, stream1));
    CK(cudaStreamSynchronize(stream1));
    KS(kscope_exit("peer10"));

    KS(kscope_enter("uva01"));
    CK(cudaSetDevice(0));
    for (int i = 0; i < UVA01_N; i++)
        CK(cudaMemcpy(buf[1], buf[0], UVA01_BYTES, cudaMemcpyDefault));
    KS(kscope_exit("uva01"));

    KS(kscope_enter("local0"));
    for (int i = 0; i < LOCAL0_N; i++)
        CK(cudaMemcpy(buf[0] + 4 * MIB, buf[0], LOCAL0_BYTES, cudaMemcpyDeviceToDevice));
    KS(kscope_exit("local0"));

    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaDeviceSynchronize());
    }
}

/* Enable access from device `from` to `to` when the hardware allows. */
static int enable_peer(int from, int to)
{
    int can = 0;
    CK(cudaDeviceCanAccessPeer(&can, from, to));
    if (can) {
        CK(cudaSetDevice(from));
        cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
        if (e == cudaErrorPeerAccessAlreadyEnabled)
            (void)cudaGetLastError();
        else
            CK(e);
    }
    return can;
}

int main(int argc, char **argv)
{
    outdir = two_gpu_outdir("multi-peer", argc, argv);
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaMalloc(&buf[d], 8 * MIB));
        CK(cudaMemset(buf[d], d + 1, 8 * MIB));
        CK(cudaDeviceSynchronize());
    }
    CK(cudaSetDevice(1));
    CK(cudaStreamCreateWithFlags(&stream1, cudaStreamNonBlocking));
    int can01 = enable_peer(0, 1), can10 = enable_peer(1, 0);

    char path[1024];
    snprintf(path, sizeof path, "%s/facts.json", outdir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    fprintf(f,
            "{\"peer_access\": {\"0->1\": %d, \"1->0\": %d},\n"
            "\"copies\": {\"peer01\": [%d, %zu], \"peer10\": [%d, %zu], \"uva01\": [%d, %zu], "
            "\"local0\": [%d, %zu]}}\n",
            can01, can10, PEER01_N, PEER01_BYTES, PEER10_N, PEER10_BYTES, UVA01_N, UVA01_BYTES,
            LOCAL0_N, LOCAL0_BYTES);
    fclose(f);
    printf("multi-peer: peer access 0->1 %s, 1->0 %s\n", can01 ? "yes" : "no",
           can10 ? "yes" : "no");

    tree_then_trace(outdir, "peer", workload);

    CK(cudaStreamDestroy(stream1));
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaFree(buf[d]));
    }
    printf("multi-peer: all runs done\n");
    return 0;
}
