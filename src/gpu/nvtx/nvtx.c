/*
 * nvtx.c - NVTX as a range source: kscope as the NVTX injection, so
 * existing NVTX annotations (C code on nvtx3, torch's nvtx module, the
 * nvtx Python package) become kscope scopes and marks on the calling
 * thread, with the kernels they launch under them (attrib/ranges.c keeps
 * them nested).
 *
 * Under kscope run the command line points NVTX_INJECTION64_PATH at
 * libkscope.so (the range source's inject_env); NVTX calls the entry below
 * at each instance's first use, which also starts the launcher session
 * (kscope__ranges_injected). In a program that starts its own session,
 * kscope_nvtx_ranges(1) points it at the library kscope is in (libkscope.so
 * or the Python extension, already loaded: nothing new is loaded); NVTX
 * instances that initialize after that call report to kscope.
 * kscope_nvtx_ranges(0) has later ranges ignored.
 *
 * An NVTX instance calls InitializeInjectionNvtx2 (below) at its first
 * use with a function that returns its export tables; from the callbacks
 * table we get, per module (CORE, CORE2), an array of pointers to the
 * instance's function pointers, indexed by callback id, and store ours
 * there. The structures below follow NVTX v3's binary interface
 * (nvtxDetail/nvtxTypes.h); they are declared here so that this file
 * builds without the GPU toolkit.
 */
#define _GNU_SOURCE
#include "gpu/nvtx/nvtx.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ------------------------------------------------ NVTX binary interface */

enum { NVTX_MODULE_CORE = 1, NVTX_MODULE_CORE2 = 5 };
enum { NVTX_TABLE_CALLBACKS = 1, NVTX_TABLE_VERSIONINFO = 3 };

enum {
    CORE_MarkEx = 1,
    CORE_MarkA = 2,
    CORE_MarkW = 3,
    CORE_RangeStartEx = 4,
    CORE_RangeStartA = 5,
    CORE_RangeStartW = 6,
    CORE_RangeEnd = 7,
    CORE_RangePushEx = 8,
    CORE_RangePushA = 9,
    CORE_RangePushW = 10,
    CORE_RangePop = 11,
};

enum {
    CORE2_DomainMarkEx = 1,
    CORE2_DomainRangeStartEx = 2,
    CORE2_DomainRangeEnd = 3,
    CORE2_DomainRangePushEx = 4,
    CORE2_DomainRangePop = 5,
    CORE2_DomainRegisterStringA = 10,
    CORE2_DomainRegisterStringW = 11,
    CORE2_DomainCreateA = 12,
    CORE2_DomainCreateW = 13,
    CORE2_DomainDestroy = 14,
    CORE2_Initialize = 15,
};

enum { NVTX_COLOR_ARGB = 1 };
enum { NVTX_MSG_ASCII = 1, NVTX_MSG_UNICODE = 2, NVTX_MSG_REGISTERED = 3 };

typedef void (*nvtx_fn)(void);
typedef nvtx_fn **nvtx_table; /* table[cbid] points at the instance's pointer */

typedef struct nvtx_callbacks_table {
    size_t struct_size;
    int (*get_module_function_table)(int module, nvtx_table *out, unsigned int *out_size);
} nvtx_callbacks_table;

typedef struct nvtx_version_table {
    size_t struct_size;
    uint32_t version;
    uint32_t reserved0;
    void (*set_injection_version)(uint32_t version);
} nvtx_version_table;

/* nvtxEventAttributes_t, version 2 */
typedef struct nvtx_attrs {
    uint16_t version;
    uint16_t size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type;
    int32_t reserved0;
    union {
        uint64_t u64;
        double d;
    } payload;
    int32_t message_type;
    union {
        const char *ascii;
        const wchar_t *unicode;
        const void *registered;
    } message;
} nvtx_attrs;

typedef uint64_t nvtx_range_id;
/* Our handle: the interned domain name; NULL: the default. */
typedef kscope__range_domain nvtx_domain;

/* Name of an event from its attributes; wide text is narrowed into buf. */
static const char *attrs_name(const nvtx_attrs *a, char *buf, size_t size)
{
    if (!a)
        return "";
    switch (a->message_type) {
    case NVTX_MSG_ASCII:
        return a->message.ascii ? a->message.ascii : "";
    case NVTX_MSG_REGISTERED:
        return a->message.registered ? (const char *)a->message.registered : "";
    case NVTX_MSG_UNICODE:
        if (a->message.unicode && wcstombs(buf, a->message.unicode, size) < size)
            return buf;
        return "";
    default:
        return "";
    }
}

static uint32_t attrs_color(const nvtx_attrs *a)
{
    return a && a->color_type == NVTX_COLOR_ARGB ? (a->color & 0xFFFFFFu) : 0;
}

/* ----------------------------------------------------------- callbacks */

static void cb_mark_ex(const nvtx_attrs *a)
{
    char buf[512];
    kscope__ranges_mark(attrs_name(a, buf, sizeof buf));
}

static void cb_mark_a(const char *msg)
{
    kscope__ranges_mark(msg);
}

static void cb_mark_w(const wchar_t *msg)
{
    nvtx_attrs a = {.message_type = NVTX_MSG_UNICODE, .message.unicode = msg};
    cb_mark_ex(&a);
}

/* A range call's forms: in domain d (NULL: the default one) from
 * attributes, and in the default domain from attributes, ASCII text or
 * wide text. */
static nvtx_range_id cb_domain_range_start_ex(nvtx_domain d, const nvtx_attrs *a)
{
    char buf[512];
    return kscope__ranges_start(d, attrs_name(a, buf, sizeof buf), attrs_color(a));
}

static nvtx_range_id cb_range_start_ex(const nvtx_attrs *a)
{
    return cb_domain_range_start_ex(NULL, a);
}

static nvtx_range_id cb_range_start_a(const char *msg)
{
    return kscope__ranges_start(NULL, msg, 0);
}

static nvtx_range_id cb_range_start_w(const wchar_t *msg)
{
    nvtx_attrs a = {.message_type = NVTX_MSG_UNICODE, .message.unicode = msg};
    return cb_range_start_ex(&a);
}

static void cb_range_end(nvtx_range_id id)
{
    kscope__ranges_end(id);
}

static int cb_domain_range_push_ex(nvtx_domain d, const nvtx_attrs *a)
{
    char buf[512];
    return kscope__ranges_push(d, attrs_name(a, buf, sizeof buf), attrs_color(a));
}

static int cb_range_push_ex(const nvtx_attrs *a)
{
    return cb_domain_range_push_ex(NULL, a);
}

static int cb_range_push_a(const char *msg)
{
    return kscope__ranges_push(NULL, msg, 0);
}

static int cb_range_push_w(const wchar_t *msg)
{
    nvtx_attrs a = {.message_type = NVTX_MSG_UNICODE, .message.unicode = msg};
    return cb_range_push_ex(&a);
}

static int cb_range_pop(void)
{
    return kscope__ranges_pop(NULL);
}

static void cb_domain_mark_ex(nvtx_domain d, const nvtx_attrs *a)
{
    (void)d;
    cb_mark_ex(a);
}

static void cb_domain_range_end(nvtx_domain d, nvtx_range_id id)
{
    (void)d;
    kscope__ranges_end(id);
}

static int cb_domain_range_pop(nvtx_domain d)
{
    return kscope__ranges_pop(d);
}

/* A registered string is its interned copy: stable for the process, and
 * the scope code finds it by pointer at once. */
static const void *cb_register_string_a(nvtx_domain d, const char *s)
{
    (void)d;
    uint32_t id = kscope__intern(s ? s : "");
    return id ? kscope__name(id) : "";
}

static const void *cb_register_string_w(nvtx_domain d, const wchar_t *s)
{
    char buf[512];
    if (!s || wcstombs(buf, s, sizeof buf) >= sizeof buf)
        buf[0] = 0;
    return cb_register_string_a(d, buf);
}

/* Domain handles are distinct per name and never freed. */
static nvtx_domain cb_domain_create_a(const char *name)
{
    char key[512];
    snprintf(key, sizeof key, "nvtx-domain:%s", name ? name : "");
    uint32_t id = kscope__intern(key);
    return id ? kscope__name(id) : NULL;
}

static nvtx_domain cb_domain_create_w(const wchar_t *name)
{
    char buf[480];
    if (!name || wcstombs(buf, name, sizeof buf) >= sizeof buf)
        buf[0] = 0;
    return cb_domain_create_a(buf);
}

static void cb_domain_destroy(nvtx_domain d)
{
    (void)d;
}

static void cb_initialize(const void *reserved)
{
    (void)reserved;
}

/* --------------------------------------------------------------- attach */

typedef struct slot {
    int id;
    nvtx_fn fn;
} slot;

#define FN(f) ((nvtx_fn)(void (*)(void))(f))

static const slot core_slots[] = {
    {CORE_MarkEx, FN(cb_mark_ex)},
    {CORE_MarkA, FN(cb_mark_a)},
    {CORE_MarkW, FN(cb_mark_w)},
    {CORE_RangeStartEx, FN(cb_range_start_ex)},
    {CORE_RangeStartA, FN(cb_range_start_a)},
    {CORE_RangeStartW, FN(cb_range_start_w)},
    {CORE_RangeEnd, FN(cb_range_end)},
    {CORE_RangePushEx, FN(cb_range_push_ex)},
    {CORE_RangePushA, FN(cb_range_push_a)},
    {CORE_RangePushW, FN(cb_range_push_w)},
    {CORE_RangePop, FN(cb_range_pop)},
};

static const slot core2_slots[] = {
    {CORE2_DomainMarkEx, FN(cb_domain_mark_ex)},
    {CORE2_DomainRangeStartEx, FN(cb_domain_range_start_ex)},
    {CORE2_DomainRangeEnd, FN(cb_domain_range_end)},
    {CORE2_DomainRangePushEx, FN(cb_domain_range_push_ex)},
    {CORE2_DomainRangePop, FN(cb_domain_range_pop)},
    {CORE2_DomainRegisterStringA, FN(cb_register_string_a)},
    {CORE2_DomainRegisterStringW, FN(cb_register_string_w)},
    {CORE2_DomainCreateA, FN(cb_domain_create_a)},
    {CORE2_DomainCreateW, FN(cb_domain_create_w)},
    {CORE2_DomainDestroy, FN(cb_domain_destroy)},
    {CORE2_Initialize, FN(cb_initialize)},
};

static int fill_module(const nvtx_callbacks_table *cb, int module, const slot *slots, size_t n)
{
    nvtx_table table = NULL;
    unsigned int size = 0;
    if (!cb->get_module_function_table(module, &table, &size) || !table)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned int)slots[i].id < size && table[slots[i].id])
            *table[slots[i].id] = slots[i].fn;
    return 1;
}

/* Whether the object at `path` is the program itself (kscope linked
 * statically into it), not a shared object. */
static int is_main_program(const char *path)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (!path || !*path)
        return 1; /* dladdr names the main program "" on some systems */
    return realpath(path, a) && realpath("/proc/self/exe", b) && strcmp(a, b) == 0;
}

/* The NVTX instance compiled into the shared object kscope is in (it emits
 * host scopes as NVTX ranges for Nsight) must not call back into kscope.
 * In a program linked with the static library, the program's instance is
 * also its own annotations': that one is attached. */
static int is_own_instance(const void *get_export_table)
{
    Dl_info self, other;
    if (!dladdr((void *)&is_own_instance, &self) ||
        !dladdr((void *)(uintptr_t)get_export_table, &other))
        return 0;
    return self.dli_fbase == other.dli_fbase && !is_main_program(self.dli_fname);
}

int kscope__nvtx_attach(const void *(*get_export_table)(uint32_t id))
{
    if (!get_export_table || is_own_instance((const void *)(uintptr_t)get_export_table))
        return 0;
    const nvtx_callbacks_table *cb = get_export_table(NVTX_TABLE_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_function_table)
        return 0;
    const nvtx_version_table *ver = get_export_table(NVTX_TABLE_VERSIONINFO);
    if (ver && ver->struct_size >= sizeof *ver && ver->set_injection_version)
        ver->set_injection_version(2);
    int ok = fill_module(cb, NVTX_MODULE_CORE, core_slots, sizeof core_slots / sizeof *core_slots);
    ok &= fill_module(cb, NVTX_MODULE_CORE2, core2_slots, sizeof core2_slots / sizeof *core2_slots);
    return ok;
}

/* Whether the shared object at `path` is a kscope (it has this call). */
static int is_kscope(const char *path)
{
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    int yes = h && dlsym(h, "kscope_nvtx_ranges");
    if (h)
        dlclose(h);
    return yes;
}

int kscope_nvtx_ranges(int on)
{
    kscope__ranges_enable(on);
    if (!on)
        return 0;
    Dl_info self;
    if (!dladdr((void *)&kscope_nvtx_ranges, &self) || is_main_program(self.dli_fname))
        return kscope__fail(KSCOPE_ENOTSUP,
                            "NVTX ranges: kscope is linked into the program itself, which "
                            "NVTX cannot load as its injection; link libkscope.so or use "
                            "kscope run");
    const char *cur = getenv("NVTX_INJECTION64_PATH");
    if (cur && *cur && strcmp(cur, self.dli_fname) != 0 && !is_kscope(cur))
        return kscope__fail(KSCOPE_ESTATE,
                            "NVTX ranges: NVTX_INJECTION64_PATH names another tool (%.300s); "
                            "NVTX reports to it, not to kscope",
                            cur);
    if (!cur || !*cur)
        setenv("NVTX_INJECTION64_PATH", self.dli_fname, 1);
    return 0;
}

/* NVTX_INJECTION64_PATH entry of the library kscope is in (libkscope.so
 * or the Python extension), called by each NVTX instance at its first use;
 * under kscope run the launcher session starts first. */
KSCOPE_EXTERN int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));
KSCOPE_EXTERN int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
    kscope__ranges_injected();
    return kscope__nvtx_attach(get_export_table);
}

/* The variables that make NVTX load libkscope as its tool. */
static const char *const inject_env[] = {"NVTX_INJECTION64_PATH", NULL};

const kscope__range_source kscope__nvtx_source = {
    .name = "NVTX",
    .inject_env = inject_env,
    .enable = kscope_nvtx_ranges,
};
