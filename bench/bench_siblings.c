/*
 * bench_siblings.c - many distinct children under one parent, and many
 * metrics on one node: finding a child or a metric must not depend on how
 * many there are.
 *
 * Prints, as "name value unit" lines: the seconds to enter 100k distinct
 * scopes under one parent from C (goal <= 0.1 s) and to enter them all
 * again; to write and read back their .hatchet; to set 200k metrics on one
 * profile-tree node and `kscope view` the .hatchet holding them; and `kscope
 * view` of a Chrome trace of 200k distinct slices on one thread (goal
 * <= 2 s).
 *
 * usage: bench_siblings [KSCOPE_BINARY] [WORK_DIR]
 *   KSCOPE_BINARY  defaults to ./kscope beside this program
 *   WORK_DIR       where the generated files go (default /tmp)
 * Exit status 1 when a goal is missed.
 */
#include "kscope.h"
#include "read/read.h"

#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCOPES  100000
#define METRICS 200000
#define SLICES  200000

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Enter and leave each name once under one parent scope. */
static double enter_all(char (*names)[24], int n)
{
    double t0 = now_s();
    kscope_enter("parent");
    for (int i = 0; i < n; i++) {
        kscope_enter(names[i]);
        kscope_exit(names[i]);
    }
    kscope_exit("parent");
    return now_s() - t0;
}

static int bench_scopes(const char *dir)
{
    static char names[SCOPES][24];
    for (int i = 0; i < SCOPES; i++)
        snprintf(names[i], sizeof names[i], "scope_%d", i);
    char base[1024], path[1100];
    snprintf(base, sizeof base, "%s/kscope-bench-siblings", dir);
    kscope_session_opts o = {.name = base, .data = "tree", .backend = "none"};
    int s = kscope_start(&o);
    if (s < 0) {
        fprintf(stderr, "bench_siblings: %s\n", kscope_last_error());
        return 2;
    }
    double first = enter_all(names, SCOPES);
    double again = enter_all(names, SCOPES);
    double t0 = now_s();
    int rc = kscope_finalize(s, NULL);
    double write = now_s() - t0;
    snprintf(path, sizeof path, "%s.hatchet", base);
    kscope__ptree *t = NULL;
    char err[KSCOPE__READ_ERRLEN];
    t0 = now_s();
    rc = rc ? rc : kscope__read_profile(path, &t, err, sizeof err);
    double read = now_s() - t0;
    kscope__ptree_free(t);
    remove(path);
    if (rc) {
        fprintf(stderr, "bench_siblings: %s\n", rc == KSCOPE_EIO ? kscope_last_error() : err);
        return 2;
    }
    printf("enter_100k_distinct_siblings %.4f s\n", first);
    printf("enter_100k_siblings_again %.4f s\n", again);
    printf("write_100k_siblings_hatchet %.4f s\n", write);
    printf("read_100k_siblings_hatchet %.4f s\n", read);
    return first <= 0.1 ? 0 : 1;
}

/* 200k metrics on one node, all rolling up (so ROOT lists them too): set
 * them, then `kscope view` the .hatchet they make. */
static int bench_metrics(const char *kscope, const char *dir)
{
    kscope__ptree *t = kscope__ptree_new();
    kscope__pnode *k = t ? kscope__pnode_add(t, t->root, kscope__ptree_intern_cstr(t, "k")) : NULL;
    char key[32];
    double t0 = now_s();
    for (int i = 0; k && i < METRICS; i++) {
        snprintf(key, sizeof key, "metric_%d", i);
        kscope__pnode_set_int(t, k, key, i + 1);
        kscope__ptree_add_inclusive(t, key);
    }
    printf("set_200k_metrics_on_one_node %.4f s\n", now_s() - t0);
    char *buf = NULL, path[1100], cmd[2400];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/kscope-bench-metrics.hatchet", dir);
    FILE *f = k && kscope__hatchet_write_json(t, &buf, &len) == 0 ? fopen(path, "w") : NULL;
    int ok = f && fwrite(buf, 1, len, f) == len;
    ok = f && fclose(f) == 0 && ok;
    free(buf);
    kscope__ptree_free(t);
    snprintf(cmd, sizeof cmd, "'%s' view -m metric_5 '%s' >/dev/null", kscope, path);
    t0 = now_s();
    if (!ok || system(cmd) != 0) {
        fprintf(stderr, "bench_siblings: viewing 200k metrics failed\n");
        remove(path);
        return 2;
    }
    printf("view_hatchet_200k_metrics_on_one_node %.4f s\n", now_s() - t0);
    remove(path);
    return 0;
}

/* A Chrome trace of SLICES distinct, back-to-back slices on one thread. */
static int write_trace(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("{\"traceEvents\": [\n", f);
    for (int i = 0; i < SLICES; i++)
        fprintf(f,
                "%s{\"ph\": \"X\", \"name\": \"slice_%d\", \"pid\": 1, \"tid\": 1, "
                "\"ts\": %d, \"dur\": 1}\n",
                i ? "," : "", i, i * 2);
    fputs("]}\n", f);
    return fclose(f);
}

static int bench_view(const char *kscope, const char *dir)
{
    char path[1100], cmd[2400];
    snprintf(path, sizeof path, "%s/kscope-bench-slices.json", dir);
    if (write_trace(path) != 0) {
        fprintf(stderr, "bench_siblings: cannot write %s\n", path);
        return 2;
    }
    snprintf(cmd, sizeof cmd, "'%s' view '%s' >/dev/null", kscope, path);
    double t0 = now_s();
    int rc = system(cmd);
    double took = now_s() - t0;
    remove(path);
    if (rc != 0) {
        fprintf(stderr, "bench_siblings: '%s' failed\n", cmd);
        return 2;
    }
    printf("view_trace_200k_distinct_slices %.4f s\n", took);
    return took <= 2.0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    char self[1024];
    snprintf(self, sizeof self, "%s", argv[0]);
    char *slash = strrchr(self, '/');
    char kscope[1100];
    snprintf(kscope, sizeof kscope, "%.*s/kscope", slash ? (int)(slash - self) : 1,
             slash ? self : ".");
    const char *bin = argc > 1 ? argv[1] : kscope;
    const char *dir = argc > 2 ? argv[2] : "/tmp";
    int rc = bench_scopes(dir);
    int rm = bench_metrics(bin, dir);
    int rv = bench_view(bin, dir);
    int worst = rc > rm ? rc : rm;
    return worst > rv ? worst : rv;
}
