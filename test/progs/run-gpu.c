/*
 * run-gpu.c - a CUDA program for `kscope run` on the pretend GPU
 * (test/progs/fake-gpu-*.c): it links the stand-in libcuda.so.1, calls
 * cuInit (where the driver injects libkscope), then launches kernels and
 * copies under kscope scopes. Usage: run-gpu [MODE], where MODE adds:
 *   range    the static runtime's profiler start/stop around "inside"
 *   api      cuProfilerStart/Stop (exported, interposed) around "inside"
 *   fork     a child forked without exec that records a scope
 *   drop     CUPTI drops the next 2 records
 *   parts    kscope_deactivate(session, 1) after each of two steps (the
 *            first reactivated)
 *   bare     only three launches of "plain_kernel" and a copy: no kscope
 *            call, no scope
 *   term     as bare, then raise(SIGTERM): the process ends by it
 *   loop     as bare, then "ready" and launches until killed
 */
#include "kscope.h"

#include <cuda.h>
#include <cudaProfiler.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pretend-gpu.h"

void fake_cuda_static_profiler(int start);

static void launch(const char *kernel, unsigned us)
{
    CUfunction f;
    if (cuModuleGetFunction(&f, NULL, kernel) != CUDA_SUCCESS ||
        cuLaunchKernel(f, us, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS)
        fprintf(stderr, "launch of %s failed\n", kernel);
}

static void step(const char *name)
{
    kscope_enter(name);
    launch("add_kernel", 2);
    launch("mul_kernel", 3);
    char host[64];
    cuMemcpyHtoD_v2(0x1000, host, sizeof host);
    kscope_exit(name);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!pretend_gpu_context(NULL)) {
        fprintf(stderr, "no pretend GPU\n");
        return 3;
    }
    if (strcmp(mode, "bare") == 0 || strcmp(mode, "term") == 0 || strcmp(mode, "loop") == 0) {
        for (int i = 0; i < 3; i++)
            launch("plain_kernel", 1);
        char host[64];
        cuMemcpyHtoD_v2(0x1000, host, sizeof host);
        if (strcmp(mode, "term") == 0) {
            raise(SIGTERM);
            printf("after the raise\n");
            fflush(stdout);
        }
        if (strcmp(mode, "loop") == 0) {
            printf("ready\n");
            fflush(stdout);
            for (;;)
                launch("loop_kernel", 1);
        }
        printf("gpu program done\n");
        return 0;
    }
    int sid = kscope_start(NULL);
    if (strcmp(mode, "drop") == 0) {
        void (*set)(const char *, long) =
            (void (*)(const char *, long))(uintptr_t)dlsym(RTLD_DEFAULT, "fake_cupti_set");
        if (set)
            set("drop", 2);
    }
    if (strcmp(mode, "range") == 0 || strcmp(mode, "api") == 0) {
        launch("before_range", 1);
        if (strcmp(mode, "range") == 0)
            fake_cuda_static_profiler(1);
        else
            cuProfilerStart();
        kscope_enter("inside");
        launch("in_range", 1);
        kscope_exit("inside");
        if (strcmp(mode, "range") == 0)
            fake_cuda_static_profiler(0);
        else
            cuProfilerStop();
        launch("after_range", 1);
    }
    step("step1");
    if (strcmp(mode, "parts") == 0) { /* part 0 written; the next one records */
        kscope_deactivate(sid, 1);
        kscope_activate(sid);
    }
    if (strcmp(mode, "fork") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            kscope_enter("child_work");
            kscope_exit("child_work");
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 4;
    }
    step("step2");
    if (strcmp(mode, "parts") == 0)
        kscope_deactivate(sid, 1);
    kscope_finalize(sid, NULL);
    printf("gpu program done\n");
    return 0;
}
