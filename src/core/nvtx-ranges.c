/*
 * nvtx-ranges.c - kscope as the NVTX injection: existing NVTX annotations
 * (C code on nvtx3, torch's nvtx module, the nvtx Python package) become
 * kscope scopes and marks on the calling thread, with the kernels they
 * launch under them.
 *
 * Under kscope run the command line points NVTX_INJECTION64_PATH at
 * libkscope.so, whose InitializeInjectionNvtx2 (run/nvtx-entry.c) also
 * starts the launcher session. In a program that starts its own session,
 * kscope_nvtx_ranges(1) points it at the library kscope is in (libkscope.so
 * or the Python extension, already loaded: nothing new is loaded), whose
 * entry is the weak one below; NVTX instances that initialize after that
 * call report to kscope. kscope_nvtx_ranges(0) has later ranges ignored.
 *
 * An NVTX instance calls InitializeInjectionNvtx2 (below) at its first
 * use with a function that returns its export tables; from the callbacks
 * table we get, per module (CORE, CORE2), an array of pointers to the
 * instance's function pointers, indexed by callback id, and store ours
 * there. The structures below follow NVTX v3's binary interface
 * (nvtxDetail/nvtxTypes.h); they are declared here so that this file
 * builds without the GPU toolkit.
 *
 * NVTX keeps one push/pop stack per domain and lets start/end ranges
 * overlap or end on another thread; kscope has one scope stack per thread.
 * Each thread therefore keeps the NVTX ranges it opened, innermost last. A
 * range whose end arrives while ranges opened after it are still open is
 * marked ended and left when it becomes the innermost again; a start/end
 * range ended on another thread is handed back to its own thread, which
 * leaves it at its next NVTX call (or at finalize).
 */
#define _GNU_SOURCE
#include "core/core.h"

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
typedef const void *nvtx_domain; /* our handle: the interned domain name */

/* ------------------------------------------------------- open ranges */

#define OPEN_MAX   256
#define CROSS_ENDS 64
/* The default domain's handle: one object, so handles compare by address
 * (two "" literals need not be one object). */
static const char default_domain_name[] = "";
#define DEFAULT_DOM ((nvtx_domain)default_domain_name)

typedef struct open_range {
    nvtx_domain domain;
    nvtx_range_id id; /* start/end ranges; 0 for push/pop */
    int depth;        /* kscope depth right after entering; 0: not entered */
    int ended;
} open_range;

#define CLOSED_IDS 16

typedef struct nvtx_thread {
    open_range r[OPEN_MAX];
    int n;
    int overflow; /* pushes beyond OPEN_MAX still to be popped */
    int ignored;  /* pushes made while ranges were off, still to be popped */
    /* Start/end ranges closed early by an enclosing pop (see range_pop):
     * their own end, when it comes, has nothing left to do. */
    nvtx_range_id closed[CLOSED_IDS];
    unsigned nclosed;
} nvtx_thread;

static __thread nvtx_thread tls_nvtx;
static _Atomic uint64_t next_range_id = 1;
/* Whether new ranges and marks become scopes (kscope_nvtx_ranges). */
static _Atomic int ranges_on = 1;
/* A start/end range started while ranges were off: its end is ignored. */
#define IGNORED_ID (1ull << 63)
/* Start/end ranges ended on a thread other than their own. */
static _Atomic nvtx_range_id cross_ends[CROSS_ENDS];
static _Atomic int cross_pending;

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

/* Leave every range at the top of the thread's list that has ended and is
 * the innermost kscope scope. */
static void sweep(nvtx_thread *t)
{
    while (t->n > 0) {
        open_range *top = &t->r[t->n - 1];
        if (!top->ended)
            break;
        if (top->depth) {
            if (kscope_depth() != top->depth)
                break;
            kscope_exit(NULL);
        }
        t->n--;
    }
}

/* Collect ends that other threads recorded for this thread's ranges. */
static void take_cross_ends(nvtx_thread *t)
{
    if (!atomic_load_explicit(&cross_pending, memory_order_relaxed))
        return;
    for (int i = 0; i < t->n; i++) {
        if (!t->r[i].id || t->r[i].ended)
            continue;
        for (int k = 0; k < CROSS_ENDS; k++) {
            nvtx_range_id want = t->r[i].id;
            if (atomic_compare_exchange_strong(&cross_ends[k], &want, 0)) {
                t->r[i].ended = 1;
                atomic_fetch_sub(&cross_pending, 1);
                break;
            }
        }
    }
}

/* Enter a scope and remember it; returns the entry index or -1. */
static int open_range_enter(nvtx_thread *t, nvtx_domain dom, nvtx_range_id id, const char *name,
                            uint32_t color)
{
    take_cross_ends(t);
    sweep(t);
    if (t->n == OPEN_MAX) {
        kscope__warn_once("nvtx-depth",
                          "more than %d NVTX ranges open on one thread; the "
                          "innermost ones are not recorded",
                          OPEN_MAX);
        t->overflow++;
        return -1;
    }
    int before = kscope_depth();
    kscope_enter_ex(name, color, 0);
    int after = kscope_depth();
    open_range *r = &t->r[t->n];
    r->domain = dom;
    r->id = id;
    r->depth = after > before ? after : 0;
    r->ended = 0;
    return t->n++;
}

/* Number of open, not yet ended ranges of a domain (push/pop only). */
static int domain_level(const nvtx_thread *t, nvtx_domain dom)
{
    int level = 0;
    for (int i = 0; i < t->n; i++)
        level += t->r[i].domain == dom && !t->r[i].id && !t->r[i].ended;
    return level;
}

static int range_push(nvtx_domain dom, const char *name, uint32_t color)
{
    nvtx_thread *t = &tls_nvtx;
    int level = domain_level(t, dom) + t->overflow + t->ignored;
    if (atomic_load_explicit(&ranges_on, memory_order_relaxed))
        open_range_enter(t, dom, 0, name, color);
    else
        t->ignored++;
    return level;
}

/* Ranges opened inside entry i and still open when i is popped. NVTX keeps
 * one stack per domain and lets start/end ranges overlap freely, but a
 * calling-context tree needs nesting: a range of another domain (say a
 * library's, left open by a call that never pops it) or a start/end range
 * still open when an enclosing push/pop range ends is closed there, so the
 * enclosing scope ends when the program says it does. */
static void close_inner(nvtx_thread *t, int i)
{
    for (int j = t->n - 1; j > i; j--) {
        if (t->r[j].ended)
            continue;
        t->r[j].ended = 1;
        if (t->r[j].id)
            t->closed[t->nclosed++ % CLOSED_IDS] = t->r[j].id;
    }
}

static int range_pop(nvtx_domain dom)
{
    nvtx_thread *t = &tls_nvtx;
    if (t->ignored > 0) { /* the innermost push was made while off */
        t->ignored--;
        return domain_level(t, dom) + t->overflow + t->ignored;
    }
    if (t->overflow > 0 && dom == DEFAULT_DOM) {
        t->overflow--;
        return domain_level(t, dom) + t->overflow;
    }
    take_cross_ends(t);
    for (int i = t->n - 1; i >= 0; i--) {
        if (t->r[i].domain == dom && !t->r[i].id && !t->r[i].ended) {
            t->r[i].ended = 1;
            close_inner(t, i);
            sweep(t);
            return domain_level(t, dom);
        }
    }
    return -1;
}

static int closed_early(const nvtx_thread *t, nvtx_range_id id)
{
    for (unsigned k = 0; k < CLOSED_IDS && k < t->nclosed; k++)
        if (t->closed[k] == id)
            return 1;
    return 0;
}

static nvtx_range_id range_start(nvtx_domain dom, const char *name, uint32_t color)
{
    nvtx_range_id id = atomic_fetch_add(&next_range_id, 1);
    if (!atomic_load_explicit(&ranges_on, memory_order_relaxed))
        return id | IGNORED_ID;
    open_range_enter(&tls_nvtx, dom, id, name, color);
    return id;
}

static void range_end(nvtx_range_id id)
{
    nvtx_thread *t = &tls_nvtx;
    if (id & IGNORED_ID)
        return;
    for (int i = t->n - 1; i >= 0; i--) {
        if (t->r[i].id == id) {
            t->r[i].ended = 1;
            take_cross_ends(t);
            sweep(t);
            return;
        }
    }
    if (closed_early(t, id))
        return;
    /* Another thread's range: leave the end for it to collect. */
    for (int k = 0; k < CROSS_ENDS; k++) {
        nvtx_range_id empty = 0;
        if (atomic_compare_exchange_strong(&cross_ends[k], &empty, id)) {
            atomic_fetch_add(&cross_pending, 1);
            return;
        }
    }
    kscope__warn_once("nvtx-cross", "too many NVTX ranges ended on other threads than their "
                                    "own; some stay open until the end of the run");
}

/* ----------------------------------------------------------- callbacks */

static void cb_mark_ex(const nvtx_attrs *a)
{
    char buf[512];
    if (atomic_load_explicit(&ranges_on, memory_order_relaxed))
        kscope_mark(attrs_name(a, buf, sizeof buf));
}

static void cb_mark_a(const char *msg)
{
    if (atomic_load_explicit(&ranges_on, memory_order_relaxed))
        kscope_mark(msg ? msg : "");
}

static void cb_mark_w(const wchar_t *msg)
{
    nvtx_attrs a = {.message_type = NVTX_MSG_UNICODE, .message.unicode = msg};
    cb_mark_ex(&a);
}

static nvtx_range_id cb_range_start_ex(const nvtx_attrs *a)
{
    char buf[512];
    return range_start(DEFAULT_DOM, attrs_name(a, buf, sizeof buf), attrs_color(a));
}

static nvtx_range_id cb_range_start_a(const char *msg)
{
    return range_start(DEFAULT_DOM, msg ? msg : "", 0);
}

static nvtx_range_id cb_range_start_w(const wchar_t *msg)
{
    nvtx_attrs a = {.message_type = NVTX_MSG_UNICODE, .message.unicode = msg};
    return cb_range_start_ex(&a);
}

static void cb_range_end(nvtx_range_id id)
{
    range_end(id);
}

static int cb_range_push_ex(const nvtx_attrs *a)
{
    char buf[512];
    return range_push(DEFAULT_DOM, attrs_name(a, buf, sizeof buf), attrs_color(a));
}

static int cb_range_push_a(const char *msg)
{
    return range_push(DEFAULT_DOM, msg ? msg : "", 0);
}

static int cb_range_push_w(const wchar_t *msg)
{
    nvtx_attrs a = {.message_type = NVTX_MSG_UNICODE, .message.unicode = msg};
    return cb_range_push_ex(&a);
}

static int cb_range_pop(void)
{
    return range_pop(DEFAULT_DOM);
}

static nvtx_domain dom_or_default(nvtx_domain d)
{
    return d ? d : DEFAULT_DOM;
}

static void cb_domain_mark_ex(nvtx_domain d, const nvtx_attrs *a)
{
    (void)d;
    cb_mark_ex(a);
}

static nvtx_range_id cb_domain_range_start_ex(nvtx_domain d, const nvtx_attrs *a)
{
    char buf[512];
    return range_start(dom_or_default(d), attrs_name(a, buf, sizeof buf), attrs_color(a));
}

static void cb_domain_range_end(nvtx_domain d, nvtx_range_id id)
{
    (void)d;
    range_end(id);
}

static int cb_domain_range_push_ex(nvtx_domain d, const nvtx_attrs *a)
{
    char buf[512];
    return range_push(dom_or_default(d), attrs_name(a, buf, sizeof buf), attrs_color(a));
}

static int cb_domain_range_pop(nvtx_domain d)
{
    return range_pop(dom_or_default(d));
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
    return id ? kscope__name(id) : DEFAULT_DOM;
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
    atomic_store(&ranges_on, on != 0);
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

/* NVTX_INJECTION64_PATH entry of the library kscope is in, called by each
 * NVTX instance at its first use. libkscope.so has a strong one that also
 * starts kscope run's session (run/nvtx-entry.c). */
__attribute__((weak)) KSCOPE_EXTERN int
InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));
__attribute__((weak)) KSCOPE_EXTERN int
InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
    return kscope__nvtx_attach(get_export_table);
}
