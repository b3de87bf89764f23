/*
 * fake-cudart.c - stands in for libcudart's profiler API in the capture
 * range test (no CUDA needed): says when the real function is reached.
 */
#include <stdio.h>

int cudaProfilerStart(void)
{
    printf("real cudaProfilerStart\n");
    return 0;
}

int cudaProfilerStop(void)
{
    printf("real cudaProfilerStop\n");
    return 0;
}
