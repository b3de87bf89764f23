/*
 * run-capture-dl.c - opens a plugin with RTLD_LOCAL (as Python opens
 * extension modules) and lets it call cudaProfilerStart/Stop.
 * Usage: run-capture-dl PLUGIN.so
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    int (*run)(void) = h ? (int (*)(void))dlsym(h, "plugin_run") : NULL;
    if (!run) {
        fprintf(stderr, "cannot load plugin: %s\n", dlerror());
        return 2;
    }
    printf("plugin %d\n", run());
    return 0;
}
