/*
 * test-demangle.c - the readers demangle C++ names (read/demangle.c):
 * Proton keeps kernel names mangled, kscope's recorder demangles them, so
 * a reader that shows and pairs them must read both the same way. Names
 * that only look mangled stay as written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "support/readutil.h"

/* proton_run.hatchet's kernel, as the C++ runtime demangles it. */
#define TORCH_KERNEL                                                                               \
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<float>, " \
    "std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, "   \
    "2ul>)"

static int need_demangler(void **state)
{
    (void)state;
    if (!kscope__demangle_available()) {
        print_message("SKIP: no C++ runtime demangler (libstdc++.so.6) in this process\n");
        skip();
    }
    return 0;
}

static void test_proton_fixture_reads_demangled(void **state)
{
    (void)state;
    kscope__ptree *t = read_ok("proton/proton_run.hatchet");
    assert_string_equal(t->root->children[0]->name, TORCH_KERNEL);
    kscope__ptree_free(t);
}

static void test_tree_names(void **state)
{
    (void)state;
    kscope__ptree *t = json_ok(
        "[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"count\":0},\"children\":["
        "{\"frame\":{\"name\":\"_Z3foov\"},\"metrics\":{\"count\":1}},"
        "{\"frame\":{\"name\":\"_Zno_such_thing\"},\"metrics\":{\"count\":1}},"
        "{\"frame\":{\"name\":\"add_kernel\",\"type\":\"_Z3foov\"},\"metrics\":{\"count\":1}},"
        "{\"frame\":{\"name\":\"_Z\"},\"metrics\":{\"count\":1}}]},{}]");
    assert_string_equal(t->root->children[0]->name, "foo()");
    assert_string_equal(t->root->children[1]->name, "_Zno_such_thing"); /* not C++ */
    assert_string_equal(t->root->children[2]->name, "add_kernel");
    assert_string_equal(kscope__pnode_type(t->root->children[2]), "_Z3foov"); /* only names */
    assert_string_equal(t->root->children[3]->name, "_Z");
    kscope__ptree_free(t);
}

/* PC-sampling frames below a kernel name its function too: Proton's keep
 * it mangled, kscope's recorder demangles it; an offset stays as written. */
static void test_line_frames(void **state)
{
    (void)state;
    kscope__ptree *t = json_ok(
        "[{\"frame\":{\"name\":\"ROOT\"},\"metrics\":{\"num_samples\":0},\"children\":["
        "{\"frame\":{\"name\":\"_Z6kernelPf\"},\"metrics\":{\"count\":1},\"children\":["
        "{\"frame\":{\"name\":\"/src/k.cu:41@_Z6kernelPf\"},\"metrics\":{\"num_samples\":3}},"
        "{\"frame\":{\"name\":\"_Z6kernelPf+0x1a0\"},\"metrics\":{\"num_samples\":2}},"
        "{\"frame\":{\"name\":\"/src/k.cu:9@_Zbad\"},\"metrics\":{\"num_samples\":1}},"
        "{\"frame\":{\"name\":\"a@b:3@_Z3foov+0x10\"},\"metrics\":{\"num_samples\":1}}"
        "]}]},{}]");
    kscope__pnode *k = t->root->children[0];
    assert_string_equal(k->name, "kernel(float*)");
    assert_string_equal(k->children[0]->name, "/src/k.cu:41@kernel(float*)");
    assert_string_equal(k->children[1]->name, "kernel(float*)+0x1a0");
    assert_string_equal(k->children[2]->name, "/src/k.cu:9@_Zbad"); /* not C++ */
    assert_string_equal(k->children[3]->name, "a@b:3@foo()+0x10");
    kscope__ptree_free(t);
}

/* A trace names a kernel in its events and its call stacks; both read
 * demangled, so the stack and the event meet in one node. */
static void test_trace_names(void **state)
{
    (void)state;
    const char *text =
        "{\"traceEvents\":["
        "{\"name\":\"_Z6kernelPf\",\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":0,\"dur\":2,"
        "\"pid\":0,\"tid\":1,\"args\":{\"call_stack\":[\"ROOT\",\"_Z4stepv\",\"_Z6kernelPf\"]}},"
        "{\"name\":\"_Z6kernelPf\",\"ph\":\"X\",\"cat\":\"kernel\",\"ts\":5,\"dur\":3,"
        "\"pid\":0,\"tid\":1}]}";
    char err[KSCOPE__READ_ERRLEN];
    kscope__ptree *t = NULL;
    if (kscope__read_chrome_trace(text, strlen(text), &t, err, sizeof err) < 0)
        fail_msg("%s", err);
    assert_close(metric(PATH(t, "step()", "kernel(float*)"), "time (ns)"), 2000);
    assert_close(metric(PATH(t, "kernel(float*)"), "time (ns)"), 3000);
    kscope__ptree_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_proton_fixture_reads_demangled, need_demangler),
        cmocka_unit_test_setup(test_tree_names, need_demangler),
        cmocka_unit_test_setup(test_trace_names, need_demangler),
        cmocka_unit_test_setup(test_line_frames, need_demangler),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
