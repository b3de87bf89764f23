/*
 * test-gpu-nvtx.c - at the `detailed` level, host scopes become NVTX
 * ranges with their names and colours (what Nsight Systems shows).
 *
 * The test is its own NVTX tool: it defines NVTX's static-injection hook,
 * which the NVTX loader inside libkscope finds when no injection library
 * is named in the environment, and records every push and pop.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* This file defines NVTX's static-injection hook (below); NVTX's inline
 * loader, merged with libkscope's copy, must still look for it. */
extern int (*InitializeInjectionNvtx2_fnptr)(const void *(*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <nvtx3/nvToolsExt.h>

#include "kscope.h"
#include "support/session-util.h"

static char pushed[16][64];
static uint32_t colors[16];
static int npush, npop, depth, max_depth;

static int NVTX_API on_push(const nvtxEventAttributes_t *a)
{
    if (npush < 16) {
        snprintf(pushed[npush], sizeof pushed[npush], "%s",
                 a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?");
        colors[npush] = a->colorType == NVTX_COLOR_ARGB ? a->color : 0;
    }
    npush++;
    if (++depth > max_depth)
        max_depth = depth;
    return depth;
}

static int NVTX_API on_pop(void)
{
    npop++;
    return depth--;
}

static int NVTX_API init_tool(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size))
        return 0;
    *table[NVTX_CBID_CORE_RangePushEx] = (NvtxFunctionPointer)on_push;
    *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)on_pop;
    return 1;
}

/* NVTX's static injection hook: a strong definition wins over its weak one. */
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = init_tool;

static void test_detailed_emits_ranges(void **state)
{
    (void)state;
    unsetenv("NVTX_INJECTION64_PATH");
    assert_int_equal(kscope_set_profiling(KSCOPE_PROFILING_DETAILED), 0);
    int s = tu_start("/tmp/kscope-test-gpu-nvtx", NULL);
    assert_int_equal(kscope_enter_ex("outer", 0x00FF00, 0), 0);
    assert_int_equal(kscope_enter("inner"), 0);
    assert_int_equal(kscope_exit("inner"), 0);
    assert_int_equal(kscope_exit("outer"), 0);
    assert_int_equal(npush, 2);
    assert_int_equal(npop, 2);
    assert_int_equal(max_depth, 2);
    assert_int_equal(depth, 0);
    assert_string_equal(pushed[0], "outer");
    assert_int_equal(colors[0], 0xFF00FF00u); /* opaque ARGB */
    assert_string_equal(pushed[1], "inner");
    assert_int_equal(colors[1], 0); /* no colour: the tool's default */
    assert_int_equal(kscope_finalize(s, "hatchet"), 0);
    unlink("/tmp/kscope-test-gpu-nvtx.hatchet");
}

static void test_on_level_emits_nothing(void **state)
{
    (void)state;
    int before = npush;
    assert_int_equal(kscope_set_profiling(KSCOPE_PROFILING_ON), 0);
    int s = tu_start("/tmp/kscope-test-gpu-nvtx", NULL);
    assert_int_equal(kscope_enter("quiet"), 0);
    assert_int_equal(kscope_exit("quiet"), 0);
    assert_int_equal(npush, before);
    assert_int_equal(kscope_finalize(s, "hatchet"), 0);
    unlink("/tmp/kscope-test-gpu-nvtx.hatchet");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_detailed_emits_ranges),
        cmocka_unit_test(test_on_level_emits_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
