/*
 * viewer-files.c - writes one profile of each kind the recorder makes, GPU
 * work included, without a GPU: kernels and copies go through the entry
 * point the CUPTI backend uses (kscope__record_gpu) with the context the
 * launching scope had, as test-attribution.c does. The Python tests open
 * every file in the real proton-viewer (python/tests/test_peer_viewer.py).
 *
 *     viewer-files DIR
 *
 * DIR/rich.{hatchet,hatchet_msgpack,chrome_trace}  one workload, three
 *     sessions: scopes, inc/exc/pty metrics (int, double, vectors), a
 *     cpu-timed scope, a state above kernels, launch metadata, a copy
 * DIR/cpu_only.hatchet    cpu-timed scopes, no GPU work
 * DIR/root.hatchet        metrics given with no scope open (ROOT's own)
 * DIR/torch.hatchet       the kernel of Proton's proton_run.hatchet fixture,
 *     named as kscope's recorder names it (demangled)
 * DIR/empty.hatchet       a session that recorded nothing
 * DIR/pcsampling.hatchet  PC samples on a kernel's source lines
 * DIR/periodic.part_N.hatchet  periodic flushing; the last part is empty
 */
#include "attrib/attrib.h"
#include "kscope-internal.h"

#include <stdio.h>
#include <stdlib.h>

/* proton_run.hatchet's kernel, as __cxa_demangle writes it. */
#define TORCH_KERNEL                                                                               \
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, " \
    "std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, "   \
    "2ul>)"

static const char *dir;

static int start(const char *name, const char *data, const char *mode)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    kscope_session_opts o = {.name = path, .data = data, .mode = mode, .backend = "none"};
    int s = kscope_start(&o);
    if (s < 0) {
        fprintf(stderr, "viewer-files: %s: %s\n", name, kscope_last_error());
        exit(1);
    }
    return s;
}

static void finalize(int s, const char *format)
{
    if (kscope_finalize(s, format) < 0) {
        fprintf(stderr, "viewer-files: %s\n", kscope_last_error());
        exit(1);
    }
}

/* A kernel (or copy) launched now from the innermost scope, `dur` ns long. */
static void launch(kscope__gpu_kind kind, const char *name, uint64_t dur,
                   const kscope_launch_meta *meta)
{
    kscope__gpu_record r = {.kind = kind, .name = name, .meta = meta};
    r.launch_ns = kscope_now_ns();
    r.launch_end_ns = r.launch_ns + 2000;
    r.start_ns = r.launch_ns + 5000;
    r.end_ns = r.start_ns + dur;
    r.launch_tid = 1;
    r.stream = 7;
    r.bytes = kind == KSCOPE__GPU_MEMCPY ? 4096 : 0;
    kscope__record_gpu(kscope__current_ctx(), &r);
}

static void busy(int n)
{
    volatile double acc = 0;
    for (int i = 1; i <= n; i++)
        acc += 1.0 / i;
}

static void rich_step(int step)
{
    static const char *tile_names[] = {"tiles"};
    static const double tiles[] = {8};
    kscope_launch_meta mm = {.name = "matmul_fp16",
                             .flops16 = 2e9,
                             .bytes = 3e6,
                             .n_custom = 1,
                             .custom_names = tile_names,
                             .custom_values = tiles};
    int64_t hist[3] = {1, step, 2 * step};
    double samples[2] = {0.5 * step, 1.5};
    double lat[2] = {3.0, 4.0 + step};
    kscope_enter("step");
    kscope_metric_int("tokens", 4096);
    kscope_metric_double("loss", 1.0 / (step + 1));
    kscope_metric_int("step_idx (pty)", step);
    kscope_metric_int("cpu_wait (ns)(exc)", 100 + step);
    kscope_metric_int_vec("hist", hist, 3);
    kscope_metric_double_vec("samples (pty)", samples, 2);
    kscope_metric_double_vec("lat (exc)", lat, 2);
    kscope_enter_ex("load", 0, KSCOPE_CPU_TIMED);
    busy(20000);
    launch(KSCOPE__GPU_MEMCPY, "Memcpy HtoD", 800, NULL);
    kscope_exit("load");
    kscope_state_enter("compute");
    kscope_enter("forward");
    launch(KSCOPE__GPU_KERNEL, "add_kernel", 12000 + 100 * (uint64_t)step, NULL);
    launch(KSCOPE__GPU_KERNEL, TORCH_KERNEL, 9000, NULL);
    kscope_enter("matmul");
    launch(KSCOPE__GPU_KERNEL, "nvjet_tst_256x128", 70000, &mm);
    kscope_exit("matmul");
    kscope_exit("forward");
    kscope_state_exit();
    kscope_mark("step_done");
    kscope_exit("step");
}

static void rich(void)
{
    int a = start("rich", "tree", NULL);
    int b = start("rich", "tree", NULL);
    int c = start("rich", "trace", NULL);
    kscope_enter("train");
    for (int step = 0; step < 3; step++)
        rich_step(step);
    kscope_exit("train");
    launch(KSCOPE__GPU_KERNEL, "outside_any_scope", 500, NULL);
    kscope__set_device_info(0, "90", 132, 1980000, 3201000, 6016);
    finalize(a, "hatchet");
    finalize(b, "hatchet_msgpack");
    finalize(c, NULL);
}

/* PC samples on a kernel's source lines, as a sampling backend delivers
 * them (kscope__record_pcs), in a pcsampling session. */
static void pcsampling(void)
{
    int s = start("pcsampling", "tree", "pcsampling");
    kscope_enter("step");
    uint64_t ctx = kscope__current_ctx();
    launch(KSCOPE__GPU_KERNEL, "chain", 40000, NULL);
    kscope_exit("step");
    uint32_t names[3] = {kscope__intern("num_samples"), kscope__intern("num_stalled_samples"),
                         kscope__intern("stalled_long_scoreboard")};
    static const char *const lines[] = {"k.cu:12@chain", "k.cu:20@chain"};
    for (int i = 0; i < 2; i++) {
        uint64_t values[3] = {90 - 80 * (uint64_t)i, 80 - 79 * (uint64_t)i, 80 - 79 * (uint64_t)i};
        kscope__pcs_record r = {ctx,
                                kscope__intern("chain"),
                                0,
                                kscope__intern(lines[i]),
                                kscope__pcs_sessions(),
                                3,
                                names,
                                values};
        kscope__record_pcs(&r);
    }
    finalize(s, NULL);
}

static void others(void)
{
    int s = start("cpu_only", "tree", NULL);
    kscope_enter_ex("outer", 0, KSCOPE_CPU_TIMED);
    busy(10000);
    kscope_enter_ex("inner", 0, KSCOPE_CPU_TIMED);
    busy(10000);
    kscope_exit("inner");
    kscope_exit("outer");
    finalize(s, NULL);

    s = start("root", "tree", NULL);
    int64_t bins[2] = {4, 5};
    kscope_metric_int_vec("bins", bins, 2); /* no scope open: ROOT's own */
    kscope_metric_int("tokens", 5);
    kscope_metric_double("util_mean (pty)", 0.0);
    kscope_enter("scope");
    kscope_metric_int("tokens", 7);
    kscope_metric_int_vec("bins", bins, 2);
    kscope_exit("scope");
    finalize(s, NULL);

    s = start("torch", "tree", NULL);
    for (int i = 0; i < 3; i++)
        launch(KSCOPE__GPU_KERNEL, TORCH_KERNEL, 17000, NULL);
    finalize(s, NULL);

    s = start("empty", "tree", NULL);
    finalize(s, NULL);

    pcsampling();

    s = start("periodic", "tree", "periodic_flushing");
    kscope_enter("phase0");
    launch(KSCOPE__GPU_KERNEL, "add_kernel", 1000, NULL);
    kscope_exit("phase0");
    kscope_deactivate(s, 1);
    kscope_activate(s);
    kscope_enter("phase1");
    kscope_exit("phase1");
    kscope_deactivate(s, 1);
    kscope_activate(s);
    finalize(s, NULL); /* nothing since the last flush: an empty part */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: viewer-files DIR\n");
        return 2;
    }
    dir = argv[1];
    rich();
    others();
    return 0;
}
