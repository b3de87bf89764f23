// run-paths.cu - a CUDA program for `kscope run` on a real GPU, one mode
// per path that the pretend GPU alone covered before (run-paths.sh):
//   detailed  scopes "outer" > "inner" with 4 kernels each under
//             KSCOPE_PROFILING=detailed (scopes also emitted as NVTX)
//   off       the same under KSCOPE_PROFILING=off
//   parts     three steps of 3 kernels, kscope_advance_phase after each
//             (run with -m periodic_flushing: one part per step)
//   fork      2 kernels, a child forked without exec that records a host
//             scope and exits, then 3 kernels in the parent
//   many      200000 launches in 20 steps, as fast as the host can go
// Each kernel is "mark_kernel"; prints "run-paths MODE done".
#include <cstdio>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include "kscope.h"

__global__ void mark_kernel(int *x)
{
    if (x)
        atomicAdd(x, 1);
}

static int *counter;

static void launch(int n)
{
    for (int i = 0; i < n; i++)
        mark_kernel<<<1, 32>>>(counter);
}

static int sync_ok(void)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess)
        fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "detailed";
    if (cudaMalloc(&counter, sizeof(int)) != cudaSuccess)
        return 1;
    int session = kscope_start(NULL); // the launcher's session under kscope run
    if (!strcmp(mode, "detailed") || !strcmp(mode, "off")) {
        kscope_enter("outer");
        launch(4);
        kscope_enter("inner");
        launch(4);
        kscope_exit("inner");
        kscope_exit("outer");
    } else if (!strcmp(mode, "parts")) {
        char name[16];
        for (int s = 0; s < 3; s++) {
            snprintf(name, sizeof name, "step%d", s);
            kscope_enter(name);
            launch(3);
            kscope_exit(name);
            sync_ok();
            if (kscope_advance_phase(session) < 0)
                fprintf(stderr, "advance: %s\n", kscope_last_error());
        }
    } else if (!strcmp(mode, "fork")) {
        kscope_enter("before_fork");
        launch(2);
        kscope_exit("before_fork");
        sync_ok();
        pid_t pid = fork();
        if (pid == 0) { // no CUDA in the child: a host scope only
            kscope_enter("child_work");
            usleep(1000);
            kscope_exit("child_work");
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        kscope_enter("after_fork");
        launch(3);
        kscope_exit("after_fork");
    } else if (!strcmp(mode, "many")) {
        for (int s = 0; s < 20; s++) {
            kscope_enter("burst");
            launch(10000);
            kscope_exit("burst");
        }
    }
    if (!sync_ok())
        return 1;
    kscope_finalize(session, NULL);
    printf("run-paths %s done\n", mode);
    return 0;
}
