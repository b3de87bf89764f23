/*
 * example.c - the bundled example: a small "training loop" annotated with
 * nested scopes, metrics, a state and a mark. Run it under kscope (or on
 * its own: it starts a session itself) and view the tree:
 *
 *     ./example && kscope view example.hatchet
 *
 * With a GPU build and a GPU, kernels launched inside the scopes would land
 * under them; here the host work is plain C.
 */
#include <kscope.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double busy_work(int n)
{
    double acc = 0;
    for (int i = 1; i <= n; i++)
        acc += sqrt((double)i) / (double)i;
    return acc;
}

static double load_batch(int step)
{
    KSCOPE_CPU_TIMED_SCOPE("load_batch");
    return busy_work(20000 + 1000 * step);
}

static double forward(int layers)
{
    KSCOPE_SCOPE("forward");
    double acc = 0;
    for (int l = 0; l < layers; l++) {
        KSCOPE_SCOPE("layer");
        acc += busy_work(30000);
    }
    kscope_metric_double("flops32", 2.0 * 30000 * layers);
    return acc;
}

int main(int argc, char **argv)
{
    /* example [NAME [tree|trace [FORMAT]]] */
    kscope_session_opts opts = {.name = argc > 1 ? argv[1] : "example",
                                .data = argc > 2 ? argv[2] : "tree"};
    const char *format = argc > 3 ? argv[3] : NULL;
    int session = kscope_start(&opts);
    if (session < 0) {
        fprintf(stderr, "example: %s\n", kscope_last_error());
        return 1;
    }
    double sink = 0;
    kscope_enter("train");
    for (int step = 0; step < 4; step++) {
        KSCOPE_SCOPE("step");
        kscope_metric_int("tokens", 4096);
        kscope_metric_int("step_idx (pty)", step);
        sink += load_batch(step);
        kscope_state_enter("compute");
        sink += forward(3);
        kscope_state_exit();
        kscope_mark("step_done");
    }
    kscope_exit("train");
    int rc = kscope_finalize(session, format);
    if (rc < 0) {
        fprintf(stderr, "example: %s\n", kscope_last_error());
        return 1;
    }
    printf("example: done (checksum %.3f)\n", sink);
    return 0;
}
