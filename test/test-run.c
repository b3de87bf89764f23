/*
 * test-run.c - unit tests of the launcher's library side: process naming by
 * rank and pid, output-name reservation (with and without a manifest), the
 * manifest lines, the NVTX injection's callback tables, and the test of
 * whether a process recorded anything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "kscope-internal.h"
#include "run/run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID",
                                        KSCOPE_RUN_ENV_MAIN_PID};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++)
        unsetenv(rank_vars[i]);
}

static char *temp_dir(void)
{
    static char dir[64];
    strcpy(dir, "/tmp/kscope-test-run.XXXXXX");
    assert_non_null(mkdtemp(dir));
    return dir;
}

static void rm_rf(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* ------------------------------------------------------------ identity */

static void test_ident_rank_order(void **state)
{
    (void)state;
    kscope__run_ident id;
    clear_env();
    kscope__run_ident_get(&id);
    assert_false(id.has_rank);
    assert_false(id.is_main);
    assert_int_equal(id.pid, (long)getpid());

    setenv("SLURM_PROCID", "9", 1);
    kscope__run_ident_get(&id);
    assert_true(id.has_rank);
    assert_int_equal(id.rank, 9);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    kscope__run_ident_get(&id);
    assert_int_equal(id.rank, 3);
    setenv("RANK", "1", 1);
    kscope__run_ident_get(&id);
    assert_int_equal(id.rank, 1);
    /* a value that is not a rank is skipped, not taken as 0 */
    setenv("RANK", "abc", 1);
    kscope__run_ident_get(&id);
    assert_int_equal(id.rank, 3);
    setenv("RANK", "-2", 1);
    setenv("OMPI_COMM_WORLD_RANK", "", 1);
    kscope__run_ident_get(&id);
    assert_int_equal(id.rank, 9);
    clear_env();
}

static void test_ident_main(void **state)
{
    (void)state;
    kscope__run_ident id;
    char pid[32];
    clear_env();
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv(KSCOPE_RUN_ENV_MAIN_PID, pid, 1);
    kscope__run_ident_get(&id);
    assert_true(id.is_main);
    setenv(KSCOPE_RUN_ENV_MAIN_PID, "1", 1);
    kscope__run_ident_get(&id);
    assert_false(id.is_main);
    clear_env();
}

static void test_base_path(void **state)
{
    (void)state;
    char buf[256];
    kscope__run_ident id = {.pid = 42, .is_main = 1};
    assert_int_equal(kscope__run_base_path(buf, sizeof buf, "/out", "prof", &id), 9);
    assert_string_equal(buf, "/out/prof");
    kscope__run_base_path(buf, sizeof buf, NULL, "prof", &id);
    assert_string_equal(buf, "prof");
    kscope__run_base_path(buf, sizeof buf, "", "prof", &id);
    assert_string_equal(buf, "prof");
    id.is_main = 0;
    kscope__run_base_path(buf, sizeof buf, "d", "prof", &id);
    assert_string_equal(buf, "d/prof.pid42");
    id.has_rank = 1;
    id.rank = 7;
    kscope__run_base_path(buf, sizeof buf, "d", "prof", &id);
    assert_string_equal(buf, "d/prof.rank7");
    assert_int_equal(kscope__run_base_path(buf, 8, "d", "prof", &id), -1);

    kscope__run_alt_path(buf, sizeof buf, "d/prof.rank7", 42, 0);
    assert_string_equal(buf, "d/prof.rank7.pid42");
    kscope__run_alt_path(buf, sizeof buf, "d/prof.rank7", 42, 2);
    assert_string_equal(buf, "d/prof.rank7.pid42.2");
    assert_int_equal(kscope__run_alt_path(buf, 4, "d/prof", 42, 0), -1);
}

/* --------------------------------------------------------- reservation */

static void test_claim_manifest(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char manifest[128], base[128], out[256];
    snprintf(manifest, sizeof manifest, "%s/manifest", dir);
    snprintf(base, sizeof base, "%s/k", dir);
    close(open(manifest, O_CREAT | O_WRONLY, 0600));

    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 100, out, sizeof out), 0);
    assert_string_equal(out, base);
    /* a second process with the same base gets its pid form, a third too */
    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 200, out, sizeof out), 0);
    char want[256];
    snprintf(want, sizeof want, "%s.pid200", base);
    assert_string_equal(out, want);
    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 200, out, sizeof out), 0);
    snprintf(want, sizeof want, "%s.pid200.1", base);
    assert_string_equal(out, want);

    /* a file left by an earlier run does not block the name */
    char old[256];
    snprintf(old, sizeof old, "%s/fresh.hatchet", dir);
    close(open(old, O_CREAT | O_WRONLY, 0600));
    snprintf(base, sizeof base, "%s/fresh", dir);
    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 300, out, sizeof out), 0);
    assert_string_equal(out, base);

    assert_int_equal(kscope__run_manifest_add(manifest, KSCOPE_RUN_TAG_PROFILE, 300, "x y"), 0);
    char *text = slurp(manifest);
    assert_non_null(strstr(text, "claim\t100\t"));
    assert_non_null(strstr(text, "claim\t200\t"));
    assert_non_null(strstr(text, "profile\t300\tx y\n"));
    assert_int_equal(kscope__run_manifest_add(NULL, "x", 1, "y"), 0);

    /* a manifest that is gone is an error naming it */
    unlink(manifest);
    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 1, out, sizeof out), KSCOPE_EIO);
    assert_non_null(strstr(kscope_last_error(), manifest));
    assert_int_equal(kscope__run_manifest_add(manifest, "x", 1, "y"), KSCOPE_EIO);
    assert_int_equal(kscope__run_claim(manifest, NULL, ".hatchet", 1, out, sizeof out),
                     KSCOPE_EINVAL);
    rm_rf(dir);
}

static void test_claim_exclusive(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char base[128], out[256], want[256];
    snprintf(base, sizeof base, "%s/k", dir);
    assert_int_equal(kscope__run_claim(NULL, base, ".hatchet", 5, out, sizeof out), 0);
    assert_string_equal(out, base);
    snprintf(want, sizeof want, "%s.hatchet", base);
    assert_int_equal(access(want, F_OK), 0); /* reserved on disk */
    /* an existing file is never replaced */
    assert_int_equal(kscope__run_claim(NULL, base, ".hatchet", 5, out, sizeof out), 0);
    snprintf(want, sizeof want, "%s.pid5", base);
    assert_string_equal(out, want);

    char missing[256];
    snprintf(missing, sizeof missing, "%s/no/such/dir/k", dir);
    assert_int_equal(kscope__run_claim("", missing, ".hatchet", 5, out, sizeof out), KSCOPE_EACCES);
    assert_non_null(strstr(kscope_last_error(), "no/such/dir"));
    rm_rf(dir);
}

/* ------------------------------------------------------------------ NVTX */

typedef void (*fnp)(void);

/* A fake NVTX instance: the pointers NVTX would call through. */
static fnp core_fns[16], core2_fns[16];
static fnp *core_table[17], *core2_table[17];
static int version_set;

static int fake_module_table(int module, fnp ***out, unsigned int *size)
{
    if (module == 1) {
        *out = core_table;
        *size = 16;
        return 1;
    }
    if (module == 5) {
        *out = core2_table;
        *size = 16;
        return 1;
    }
    return 0;
}

static void fake_set_version(uint32_t v)
{
    version_set = (int)v;
}

static struct {
    size_t size;
    int (*get)(int, fnp ***, unsigned int *);
} fake_callbacks = {sizeof fake_callbacks, fake_module_table};

static struct {
    size_t size;
    uint32_t version, reserved;
    void (*set)(uint32_t);
} fake_version = {sizeof fake_version, 3, 0, fake_set_version};

static const void *fake_export_table(uint32_t id)
{
    return id == 1 ? (const void *)&fake_callbacks : id == 3 ? (const void *)&fake_version : NULL;
}

static const void *no_callbacks_table(uint32_t id)
{
    (void)id;
    return NULL;
}

static void attach_fake(void)
{
    for (int i = 0; i < 16; i++) {
        core_fns[i] = core2_fns[i] = NULL;
        core_table[i] = &core_fns[i];
        core2_table[i] = &core2_fns[i];
    }
    core_table[0] = core2_table[0] = NULL;
    assert_int_equal(kscope__nvtx_attach(fake_export_table), 1);
}

typedef int (*push_a_fn)(const char *);
typedef int (*pop_fn)(void);
typedef uint64_t (*start_a_fn)(const char *);
typedef void (*end_fn)(uint64_t);
typedef void (*mark_a_fn)(const char *);
typedef const void *(*create_a_fn)(const char *);
typedef const void *(*register_a_fn)(const void *, const char *);
typedef int (*dpop_fn)(const void *);

static void test_nvtx_attach_rejects(void **state)
{
    (void)state;
    assert_int_equal(kscope__nvtx_attach(NULL), 0);
    assert_int_equal(kscope__nvtx_attach(no_callbacks_table), 0);
}

static void test_nvtx_ranges(void **state)
{
    (void)state;
    attach_fake();
    assert_int_equal(version_set, 2);
    for (int i = 1; i <= 11; i++)
        assert_non_null(core_fns[i]);
    assert_null(core_fns[12]); /* categories and thread names: not ours */
    assert_non_null(core2_fns[10]);

    int sid = kscope_start(&(kscope_session_opts){.name = "/tmp/kscope-test-run-nvtx"});
    assert_true(sid >= 0);
    push_a_fn push = (push_a_fn)core_fns[9];
    pop_fn pop = (pop_fn)core_fns[11];
    start_a_fn start = (start_a_fn)core_fns[5];
    end_fn end = (end_fn)core_fns[7];
    mark_a_fn mark = (mark_a_fn)core_fns[2];

    int d0 = kscope_depth();
    assert_int_equal(push("a"), 0);
    assert_int_equal(push("b"), 1);
    mark("m");
    assert_int_equal(kscope_depth(), d0 + 2);
    assert_int_equal(pop(), 1);
    assert_int_equal(pop(), 0);
    assert_int_equal(pop(), -1); /* nothing open */
    assert_int_equal(kscope_depth(), d0);

    /* overlapping start/end: the first ends while the second is open */
    uint64_t x = start("x"), y = start("y");
    assert_true(x != 0 && y != 0 && x != y);
    end(x);
    assert_int_equal(kscope_depth(), d0 + 2); /* x waits for y */
    end(y);
    assert_int_equal(kscope_depth(), d0);

    /* a domain push/pop does not pop the default domain's range */
    create_a_fn create = (create_a_fn)core2_fns[12];
    register_a_fn reg = (register_a_fn)core2_fns[10];
    dpop_fn dpop = (dpop_fn)core2_fns[5];
    const void *dom = create("lib");
    assert_ptr_equal(dom, create("lib"));
    assert_ptr_not_equal(dom, create("other"));
    const char *s1 = reg(dom, "op");
    assert_string_equal(s1, "op");
    assert_ptr_equal(s1, reg(dom, "op"));
    push("outer");
    struct {
        uint16_t version, size;
        uint32_t category;
        int32_t color_type;
        uint32_t color;
        int32_t payload_type, reserved0;
        uint64_t payload;
        int32_t message_type;
        const void *message;
    } attrs = {3, sizeof attrs, 0, 1, 0xFF123456u, 0, 0, 0, 3, s1};
    int (*dpush)(const void *, const void *) = (int (*)(const void *, const void *))core2_fns[4];
    assert_int_equal(dpush(dom, &attrs), 0);
    assert_int_equal(kscope_depth(), d0 + 2);
    assert_int_equal(dpop(dom), 0);
    assert_int_equal(kscope_depth(), d0 + 1);
    assert_int_equal(dpop(dom), -1);
    assert_int_equal(pop(), 0);
    assert_int_equal(kscope_depth(), d0);

    /* A library's range left open inside a program's range, and a start/end
     * range still open there, are closed when the program's range ends. */
    push("step");
    assert_int_equal(dpush(dom, &attrs), 0);
    uint64_t z = start("z");
    assert_int_equal(kscope_depth(), d0 + 3);
    assert_int_equal(pop(), 0);
    assert_int_equal(kscope_depth(), d0);
    assert_int_equal(dpop(dom), -1); /* its late pop finds nothing open */
    end(z);                          /* and its late end changes nothing */
    assert_int_equal(kscope_depth(), d0);
    push("next");
    assert_int_equal(kscope_depth(), d0 + 1);
    assert_int_equal(pop(), 0);

    char *json = NULL;
    size_t len = 0;
    assert_int_equal(kscope_data(sid, "hatchet", &json, &len), 0);
    static const char *const names[] = {"\"a\"", "\"b\"",     "\"m\"", "\"x\"",
                                        "\"y\"", "\"outer\"", "\"op\""};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        assert_non_null(strstr(json, names[i]));
    /* the domain range sits under the default-domain range it was opened in */
    assert_non_null(strstr(json, "\"outer\",\"type\":\"function\"},\"metrics\":{\"calls\":1"));
    kscope_free(json);
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    unlink("/tmp/kscope-test-run-nvtx.hatchet");
}

/* ------------------------------------------------------------ recorded */

static void test_recorded(void **state)
{
    (void)state;
    int sid = kscope_start(&(kscope_session_opts){.name = "/tmp/kscope-test-run-rec"});
    assert_true(sid >= 0);
    assert_false(kscope__run_recorded(sid));
    kscope_mark("something");
    assert_true(kscope__run_recorded(sid));
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    unlink("/tmp/kscope-test-run-rec.hatchet");

    sid = kscope_start(&(kscope_session_opts){.name = "/tmp/kscope-test-run-rec", .data = "trace"});
    assert_true(sid >= 0);
    assert_false(kscope__run_recorded(sid));
    kscope_enter("t");
    kscope_exit("t");
    assert_true(kscope__run_recorded(sid));
    assert_int_equal(kscope_finalize(sid, NULL), 0);
    unlink("/tmp/kscope-test-run-rec.chrome_trace");
    assert_false(kscope__run_recorded(-1));
}

static void test_shared_library_name(void **state)
{
    (void)state;
    assert_true(kscope__run_is_shared_library("/opt/lib/libkscope.so.0.1.0"));
    assert_true(kscope__run_is_shared_library("libkscope.so"));
    assert_false(kscope__run_is_shared_library("/home/u/libkscope/build/kscope"));
    assert_false(kscope__run_is_shared_library("/usr/lib/libkscope.a"));
}

/* Outside `kscope run` the entry points start nothing. */
static void test_not_launched(void **state)
{
    (void)state;
    unsetenv(KSCOPE_RUN_ENV_ON);
    assert_int_equal(kscope__run_start(), 0);
    assert_false(kscope__run_active());
    kscope__run_profiler_api(1); /* ignored */
    kscope__run_finish();        /* nothing to finish */
    assert_false(kscope__run_active());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ident_rank_order), cmocka_unit_test(test_ident_main),
        cmocka_unit_test(test_base_path),        cmocka_unit_test(test_claim_manifest),
        cmocka_unit_test(test_claim_exclusive),  cmocka_unit_test(test_nvtx_attach_rejects),
        cmocka_unit_test(test_nvtx_ranges),      cmocka_unit_test(test_recorded),
        cmocka_unit_test(test_not_launched),     cmocka_unit_test(test_shared_library_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
