/*
 * test-run.c - unit tests of the launcher's library side: process naming by
 * rank and pid, output-name reservation (with and without a manifest) and
 * the names that cannot be had, the manifest lines, the NVTX injection's
 * callback tables (wide-character calls, unnamed events, the limits on open
 * ranges and on ends from other threads), and the test of whether a
 * process recorded anything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kscope.h"
#include "gpu/nvtx/nvtx.h"
#include "kscope-internal.h"
#include "run/run.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wchar.h>

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

    /* a manifest that is gone (its kscope run was killed and its folder
     * swept): names are reserved on disk, never replacing a file */
    unlink(manifest);
    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 1, out, sizeof out), 0);
    snprintf(want, sizeof want, "%s.pid1", base);
    assert_string_equal(out, want);
    snprintf(want, sizeof want, "%s.pid1.hatchet", base);
    assert_int_equal(access(want, F_OK), 0);
    /* and a line cannot be added to it: an error naming it */
    assert_int_equal(kscope__run_manifest_add(manifest, "x", 1, "y"), KSCOPE_EIO);
    assert_non_null(strstr(kscope_last_error(), manifest));
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

/* Names that cannot be had: each a code and a message naming the path. */
static void test_claim_errors(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char manifest[128], base[128], out[256], small[8];
    snprintf(manifest, sizeof manifest, "%s/manifest", dir);
    snprintf(base, sizeof base, "%s/k", dir);
    close(open(manifest, O_CREAT | O_WRONLY, 0600));

    /* the path does not fit the caller's buffer */
    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 1, small, sizeof small),
                     KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "is too long"));
    assert_int_equal(kscope__run_claim(NULL, base, ".hatchet", 1, small, sizeof small),
                     KSCOPE_EINVAL);
    assert_non_null(strstr(kscope_last_error(), "is too long"));

    /* a folder that is a file: the reason, not a retry */
    char under_file[256];
    snprintf(under_file, sizeof under_file, "%s/k", manifest);
    assert_int_equal(kscope__run_claim(NULL, under_file, ".hatchet", 1, out, sizeof out),
                     KSCOPE_EIO);
    assert_non_null(strstr(kscope_last_error(), "Not a directory"));

    /* a thousand processes of one name: the next is told, in both modes */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 9, out, sizeof out), 0);
    assert_int_equal(kscope__run_claim(manifest, base, ".hatchet", 9, out, sizeof out), KSCOPE_EIO);
    assert_non_null(strstr(kscope_last_error(), "no free output name for"));
    for (int i = 0; i < 1000; i++)
        assert_int_equal(kscope__run_claim(NULL, base, ".x", 9, out, sizeof out), 0);
    assert_int_equal(kscope__run_claim(NULL, base, ".x", 9, out, sizeof out), KSCOPE_EIO);
    assert_non_null(strstr(kscope_last_error(), "no free output name for"));

    /* a manifest line longer than a line may be is cut, still one line */
    char long_text[6000];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;
    unlink(manifest);
    close(open(manifest, O_CREAT | O_WRONLY, 0600));
    assert_int_equal(kscope__run_manifest_add(manifest, KSCOPE_RUN_TAG_ERROR, 1, long_text), 0);
    char *text = slurp(manifest);
    assert_int_equal(strncmp(text, "error\t1\txxx", 11), 0);
    assert_true(strlen(text) < 4200);
    assert_ptr_equal(strchr(text, '\n'), text + strlen(text) - 1);
    rm_rf(dir);
}

/* Without kscope run's session the launcher's own calls refuse. */
static void test_launcher_calls_need_a_session(void **state)
{
    (void)state;
    assert_int_equal(kscope__launcher_rename("x"), KSCOPE_ENOSESSION);
    assert_non_null(strstr(kscope_last_error(), "no launcher session to rename"));
    assert_int_equal(kscope__launcher_fork_child(), KSCOPE_ENOSESSION);
    assert_non_null(strstr(kscope_last_error(), "no launcher session"));
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

typedef int (*push_a_fn)(const char *);
typedef int (*pop_fn)(void);
typedef uint64_t (*start_a_fn)(const char *);
typedef void (*end_fn)(uint64_t);
typedef void (*mark_a_fn)(const char *);
typedef const void *(*create_a_fn)(const char *);
typedef const void *(*register_a_fn)(const void *, const char *);
typedef int (*dpop_fn)(const void *);
typedef void (*mark_w_fn)(const wchar_t *);
typedef uint64_t (*start_w_fn)(const wchar_t *);
typedef int (*push_w_fn)(const wchar_t *);
typedef const void *(*create_w_fn)(const wchar_t *);
typedef const void *(*register_w_fn)(const void *, const wchar_t *);
typedef int (*push_ex_fn)(const void *);
typedef void (*mark_ex_fn)(const void *);
typedef int (*dpush_fn)(const void *, const void *);
typedef void (*init_fn)(const void *);

/* The NVTX entry points kscope filled in, by name (their slots in the
 * core and core2 tables are NVTX's). */
static struct {
    mark_ex_fn mark_ex;
    mark_a_fn mark;
    mark_w_fn mark_w;
    start_a_fn start;
    start_w_fn start_w;
    end_fn end;
    push_ex_fn push_ex;
    push_a_fn push;
    push_w_fn push_w;
    pop_fn pop;
    dpush_fn dpush;
    dpop_fn dpop;
    register_a_fn reg;
    register_w_fn reg_w;
    create_a_fn create;
    create_w_fn create_w;
    init_fn init;
} nv;

static void attach_fake(void)
{
    for (int i = 0; i < 16; i++) {
        core_fns[i] = core2_fns[i] = NULL;
        core_table[i] = &core_fns[i];
        core2_table[i] = &core2_fns[i];
    }
    core_table[0] = core2_table[0] = NULL;
    assert_int_equal(kscope__nvtx_attach(fake_export_table), 1);
    nv.mark_ex = (mark_ex_fn)core_fns[1];
    nv.mark = (mark_a_fn)core_fns[2];
    nv.mark_w = (mark_w_fn)core_fns[3];
    nv.start = (start_a_fn)core_fns[5];
    nv.start_w = (start_w_fn)core_fns[6];
    nv.end = (end_fn)core_fns[7];
    nv.push_ex = (push_ex_fn)core_fns[8];
    nv.push = (push_a_fn)core_fns[9];
    nv.push_w = (push_w_fn)core_fns[10];
    nv.pop = (pop_fn)core_fns[11];
    nv.dpush = (dpush_fn)core2_fns[4];
    nv.dpop = (dpop_fn)core2_fns[5];
    nv.reg = (register_a_fn)core2_fns[10];
    nv.reg_w = (register_w_fn)core2_fns[11];
    nv.create = (create_a_fn)core2_fns[12];
    nv.create_w = (create_w_fn)core2_fns[13];
    nv.init = (init_fn)core2_fns[15];
}

/* The session an NVTX test records into: the fake NVTX instance attached
 * and the session started in setup, finalized and its file removed in
 * teardown. Each test names its own session (cmocka's initial state). */
typedef struct nvtx_session {
    const char *name; /* the session's name, a path under /tmp */
    int sid;
} nvtx_session;

static int nvtx_setup(void **state)
{
    nvtx_session *ns = *state;
    attach_fake();
    ns->sid = kscope_start(&(kscope_session_opts){.name = ns->name});
    assert_true(ns->sid >= 0);
    return 0;
}

static int nvtx_teardown(void **state)
{
    nvtx_session *ns = *state;
    char path[256];
    assert_int_equal(kscope_finalize(ns->sid, NULL), 0);
    snprintf(path, sizeof path, "%s.hatchet", ns->name);
    unlink(path);
    return 0;
}

static void test_nvtx_attach_rejects(void **state)
{
    (void)state;
    assert_int_equal(kscope__nvtx_attach(NULL), 0);
    assert_int_equal(kscope__nvtx_attach(no_callbacks_table), 0);
}

/* nvtxEventAttributes_t as NVTX lays it out. */
typedef struct fake_attrs {
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type;
    const void *message;
} fake_attrs;

static void test_nvtx_ranges(void **state)
{
    int sid = ((nvtx_session *)*state)->sid;
    assert_int_equal(version_set, 2);
    for (int i = 1; i <= 11; i++)
        assert_non_null(core_fns[i]);
    assert_null(core_fns[12]); /* categories and thread names: not ours */
    assert_non_null(core2_fns[10]);

    push_a_fn push = nv.push;
    pop_fn pop = nv.pop;
    start_a_fn start = nv.start;
    end_fn end = nv.end;
    mark_a_fn mark = nv.mark;

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
    create_a_fn create = nv.create;
    register_a_fn reg = nv.reg;
    dpop_fn dpop = nv.dpop;
    const void *dom = create("lib");
    assert_ptr_equal(dom, create("lib"));
    assert_ptr_not_equal(dom, create("other"));
    const char *s1 = reg(dom, "op");
    assert_string_equal(s1, "op");
    assert_ptr_equal(s1, reg(dom, "op"));
    push("outer");
    fake_attrs attrs = {3, sizeof attrs, 0, 1, 0xFF123456u, 0, 0, 0, 3, s1};
    dpush_fn dpush = nv.dpush;
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
}

static char *session_json(int sid)
{
    char *json = NULL;
    size_t len = 0;
    assert_int_equal(kscope_data(sid, "hatchet", &json, &len), 0);
    return json;
}

/* The wide-character entry points, and events without a usable name. */
static void test_nvtx_wide_and_unnamed(void **state)
{
    int sid = ((nvtx_session *)*state)->sid;
    push_w_fn push_w = nv.push_w;
    mark_w_fn mark_w = nv.mark_w;
    start_w_fn start_w = nv.start_w;
    end_fn end = nv.end;
    pop_fn pop = nv.pop;
    create_a_fn create = nv.create;
    create_w_fn create_w = nv.create_w;
    register_w_fn reg_w = nv.reg_w;
    push_ex_fn push_ex = nv.push_ex;
    mark_ex_fn mark_ex = nv.mark_ex;
    nv.init(NULL); /* nvtxInitialize: nothing to do */

    int d0 = kscope_depth();
    assert_int_equal(push_w(L"wide-push"), 0);
    mark_w(L"wide-mark");
    uint64_t id = start_w(L"wide-start");
    assert_int_equal(kscope_depth(), d0 + 2);
    end(id);
    assert_int_equal(pop(), 0);
    assert_int_equal(kscope_depth(), d0);

    const void *dom = create_w(L"wide-lib");
    assert_ptr_equal(dom, create("wide-lib"));
    assert_ptr_equal(create_w(NULL), create(""));
    assert_string_equal(reg_w(dom, L"wide-reg"), "wide-reg");
    assert_string_equal(reg_w(dom, NULL), "");

    /* no attributes, an unknown message type, text the locale cannot
     * narrow: marks and ranges without a name, still balanced */
    mark_ex(NULL);
    fake_attrs odd = {3, sizeof odd, 0, 0, 0, 0, 0, 0, 9, "ignored"};
    assert_int_equal(push_ex(&odd), 0);
    fake_attrs wide = {3, sizeof wide, 0, 0, 0, 0, 0, 0, 2, L"caf\u00e9"};
    assert_int_equal(push_ex(&wide), 1);
    assert_int_equal(pop(), 1);
    assert_int_equal(pop(), 0);
    assert_int_equal(kscope_depth(), d0);

    char *json = session_json(sid);
    assert_non_null(strstr(json, "\"wide-push\""));
    assert_non_null(strstr(json, "\"wide-mark\""));
    assert_non_null(strstr(json, "\"wide-start\""));
    kscope_free(json);
}

/* More ranges open than a thread keeps, a kscope scope between a range
 * and its end, more ends from other threads than are kept. */
static uint64_t cross_ids[65];

static void *end_all(void *arg)
{
    end_fn end = (end_fn)(uintptr_t)arg;
    for (int i = 0; i < 65; i++)
        end(cross_ids[i]);
    return NULL;
}

static void test_nvtx_limits(void **state)
{
    (void)state;
    push_a_fn push = nv.push;
    pop_fn pop = nv.pop;
    start_a_fn start = nv.start;
    end_fn end = nv.end;
    int d0 = kscope_depth();

    /* 258 pushes: the last two are not kept, yet every level is right */
    for (int i = 0; i < 256; i++)
        assert_int_equal(push("deep"), i);
    assert_int_equal(push("beyond"), 256);
    assert_int_equal(push("beyond"), 257);
    for (int i = 257; i >= 0; i--)
        assert_int_equal(pop(), i);
    assert_int_equal(kscope_depth(), d0);

    /* a range whose end comes while a kscope scope opened inside it is
     * still open ends when that scope has ended, at the next NVTX call */
    assert_int_equal(push("a"), 0);
    kscope_enter("inside");
    assert_int_equal(pop(), 0);
    assert_int_equal(kscope_depth(), d0 + 2);
    kscope_exit("inside");
    assert_int_equal(kscope_depth(), d0 + 1);
    assert_int_equal(push("b"), 0);
    assert_int_equal(kscope_depth(), d0 + 1);
    assert_int_equal(pop(), 0);
    assert_int_equal(kscope_depth(), d0);

    /* 65 ranges ended on another thread: 64 are handed back, the last
     * one's end is lost (with a warning) and it stays open until its own
     * thread ends it again */
    for (int i = 0; i < 65; i++)
        cross_ids[i] = start("cross");
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, end_all, (void *)(uintptr_t)end), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(push("collect"), 0); /* collects the 64 ends handed back */
    assert_int_equal(pop(), 0);
    assert_int_equal(kscope_depth(), d0 + 65);
    end(cross_ids[64]);
    assert_int_equal(kscope_depth(), d0);
}

/* An NVTX instance without the CORE2 module's table is refused. */
static int core_only_table(int module, fnp ***out, unsigned int *size)
{
    return module == 1 ? fake_module_table(module, out, size) : 0;
}

static struct {
    size_t size;
    int (*get)(int, fnp ***, unsigned int *);
} core_only_callbacks = {sizeof core_only_callbacks, core_only_table};

static const void *core_only_export_table(uint32_t id)
{
    return id == 1 ? (const void *)&core_only_callbacks : NULL;
}

static void test_nvtx_attach_needs_both_modules(void **state)
{
    (void)state;
    assert_int_equal(kscope__nvtx_attach(core_only_export_table), 0);
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

/* An NVTX test with its own session, named PATH. */
#define NVTX_TEST(f, path)                                                                         \
    cmocka_unit_test_prestate_setup_teardown(f, nvtx_setup, nvtx_teardown,                         \
                                             &(nvtx_session){.name = (path)})

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ident_rank_order),
        cmocka_unit_test(test_ident_main),
        cmocka_unit_test(test_base_path),
        cmocka_unit_test(test_claim_manifest),
        cmocka_unit_test(test_claim_exclusive),
        cmocka_unit_test(test_nvtx_attach_rejects),
        NVTX_TEST(test_nvtx_ranges, "/tmp/kscope-test-run-nvtx"),
        cmocka_unit_test(test_recorded),
        cmocka_unit_test(test_claim_errors),
        cmocka_unit_test(test_launcher_calls_need_a_session),
        NVTX_TEST(test_nvtx_wide_and_unnamed, "/tmp/kscope-test-run-nvtx-w"),
        NVTX_TEST(test_nvtx_limits, "/tmp/kscope-test-run-nvtx-l"),
        cmocka_unit_test(test_nvtx_attach_needs_both_modules),
        cmocka_unit_test(test_not_launched),
        cmocka_unit_test(test_shared_library_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
