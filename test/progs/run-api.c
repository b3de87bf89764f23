/*
 * run-api.c - each recording call of the public API once, for `kscope run`
 * with the program linked to libkscope.so and to libkscope.a: both must
 * write the same profile and print the same lines (results and error
 * messages), since a static copy hands its calls to the preloaded library.
 * Usage: run-api [trace]
 */
#include "kscope.h"

#include <stdio.h>
#include <string.h>

static void work(int i)
{
    KSCOPE_SCOPE("work");
    kscope_metric_int("items", i);
    kscope_metric_double("loss", 0.5 * i);
}

int main(int argc, char **argv)
{
    kscope_session_opts o = {.name = "program-own-name"};
    if (argc > 1 && strcmp(argv[1], "trace") == 0)
        o.data = "trace";
    int sid = kscope_start(&o);
    printf("start %s, profiling %d\n", sid >= 0 ? "ok" : kscope_last_error(), kscope_profiling());
    kscope_enter_ex("outer", 0x00FF00, KSCOPE_CPU_TIMED);
    printf("depth %d\n", kscope_depth());
    for (int i = 0; i < 3; i++)
        work(i);
    int64_t iv[2] = {1, 2};
    double dv[2] = {0.25, 0.75};
    printf("vectors %d %d\n", kscope_metric_int_vec("counts", iv, 2),
           kscope_metric_double_vec("shares", dv, 2));
    kscope_state_enter("idle");
    kscope_mark("checkpoint");
    kscope_state_exit();
    kscope_tracer tr;
    kscope_tracer_init(&tr);
    kscope_tracer_push(&tr, "span", kscope_color("blue"));
    kscope_tracer_next(&tr, "span2", 0);
    kscope_tracer_mark(&tr, "span-mark");
    kscope_tracer_cleanup(&tr);
    /* errors: the message is the program's to read */
    int rc = kscope_exit("not-open");
    printf("mismatch %s: %s\n", kscope_err_name(rc), kscope_last_error());
    rc = kscope_metric_int("calls", 1);
    printf("reserved %s: %s\n", kscope_err_name(rc), kscope_last_error());
    kscope_launch_meta bad = {.n_custom = 1};
    rc = kscope_launch_metadata(&bad);
    printf("meta %s: %s\n", kscope_err_name(rc), kscope_last_error());
    kscope_exit("outer");
    printf("depth %d\n", kscope_depth());
    /* pause: this scope is not recorded */
    kscope_deactivate(sid, 0);
    kscope_enter("paused");
    kscope_exit("paused");
    kscope_activate(sid);
    char *data = NULL;
    size_t len = 0;
    rc = kscope_data(sid, NULL, &data, &len);
    printf("data %d %s, dropped %lld\n", rc, data && len > 0 ? "written" : "empty",
           (long long)kscope_dropped(sid));
    kscope_free(data);
    char path[256];
    rc = kscope_output_path(sid, NULL, path, sizeof path);
    printf("path %s\n", rc >= 0 ? "ok" : kscope_last_error());
    printf("step %d, dropped samples %lld\n", kscope_step(),
           (long long)kscope_dropped_samples(sid));
    printf("finalize %d\n", kscope_finalize(sid, NULL));
    return 0;
}
