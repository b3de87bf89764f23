/*
 * capture-plugin.c - a library opened with RTLD_LOCAL that calls the
 * profiler API through its own libcudart, as a Python extension does.
 */
int cudaProfilerStart(void);
int cudaProfilerStop(void);

int plugin_run(void)
{
    return cudaProfilerStart() + cudaProfilerStop();
}
