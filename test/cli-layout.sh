#!/usr/bin/env bash
# The layout's promises (docs/ARCHITECTURE.md), checked on the build and
# the sources:
#  - libkscope.so exports only kscope_* and kscope run's entry points, and
#    loads no library beyond libc, libpthread, libdl and libm; libkscope.a
#    does not define libc's signal calls;
#  - no file outside src/format/ names a format by its name or extension;
#  - no GPU vendor's name (cupti, cuda, nvtx, nvml, rocm, roctx, hip) in an
#    identifier or a string outside the seam's places: src/gpu/<folder>/,
#    src/diag/<vendor>.c, cmake/<vendor>.cmake, include/kscope/device.h and
#    the registration lists (test/layout_vendors.py has the rule, its
#    allowlist and the reason for each entry); over src/, include/kscope.h,
#    python/ (package and extension), CMakeLists.txt and cmake/;
#  - core includes nothing from diag, run or the readers; util/ nothing
#    from any other folder; run/fork.c
#    nothing from core's private headers;
#  - no source file is longer than 800 lines;
#  - no CLI shell test says it skips a part and then passes: it calls skip
#    (read-lib.sh, run-lib.sh, monitor-lib.sh), which ends it with exit 77
#    (CTest's "Skipped"), or exits 77 itself, with the reason.
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

lib=$bin/libkscope.so
# The entry points CUDA, NVTX and the dynamic loader look up by name, and
# libc's calls that set signal dispositions (src/run/preload/signals.c).
entry='^(InitializeInjection|InitializeInjectionNvtx2|_exit|_Exit|cudaProfilerStart|cudaProfilerStop|cuProfilerStart|cuProfilerStop|cuptiSubscribe)$'
entry=${entry%)\$}'|sigaction|__sigaction|signal|bsd_signal|ssignal|sysv_signal|__sysv_signal|sigset|sigignore|siginterrupt)$'
# ... and the static library none of those: a copy linked into a program
# leaves libc's calls alone.
static_sig=$(nm --defined-only "$bin/libkscope.a" 2>/dev/null | awk '$2 == "T" || $2 == "W" {print $3}' |
    grep -Ex '(__)?sigaction|signal|bsd_signal|ssignal|(__)?sysv_signal|sigset|sigignore|siginterrupt')
[ -z "$static_sig" ] || fail "libkscope.a defines libc's signal calls: $static_sig"

others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^kscope_' | grep -Ev "$entry")
[ -z "$others" ] || fail "libkscope.so exports more than kscope_* and its entry points: $others"
nm -D --defined-only "$lib" | grep -q ' kscope_start$' || fail "libkscope.so does not export kscope_start"
needed=$(objdump -p "$lib" | awk '/NEEDED/ {print $2}' |
    grep -Ev '^(libc|libpthread|libdl|libm|libasan|libubsan|libgcc_s|libstdc\+\+)\.so' || true)
[ -z "$needed" ] || fail "libkscope.so needs more than libc, libpthread, libdl, libm: $needed"
# libstdc++ and libgcc_s come in only with a sanitizer build's runtime.
if ! objdump -p "$lib" | grep -q 'NEEDED.*libasan'; then
    objdump -p "$lib" | grep -Eq 'NEEDED.*(libstdc|libgcc_s)' && fail "libkscope.so needs the C++ runtime"
fi
ldd "$lib" | grep -Ei 'yajl|msgpack' && fail "libkscope.so loads a JSON or MessagePack library"

cd "$src" || exit 1
# A format name or extension as a whole string literal on a line that
# compares or lists: strcmp, ends_with, ==, !=, endswith, choices, a list of
# names. Passing a name through to the table's look-up is fine.
names='"(\.?(hatchet|hatchet_msgpack|chrome_trace|msgpack)|\.json|\.trace)"'
compare='strcmp|ends_with|endswith|==|!=|choices|[[(,] *"[a-z_.]+" *,'
hits=$(grep -rEn "$names" src python/kscope python/src --include=*.c --include=*.h \
    --include=*.py | grep -v '^src/format/' | grep -E "$compare")
[ -z "$hits" ] || fail "format names compared outside src/format/:
$hits"

hits=$(python3 "$src/test/layout_vendors.py" "$src")
[ -z "$hits" ] || fail "GPU vendors named outside the seam (docs/ARCHITECTURE.md, where to add a vendor):
$hits"
# The rule itself: a planted vendor name in an identifier and in a string
# is found, one in a comment or a docstring is not.
plant=$(mktemp -d "${TMPDIR:-/tmp}/kscope-layout.XXXXXX")
mkdir -p "$plant/src/core" "$plant/python/kscope" "$plant/cmake" "$plant/include"
: >"$plant/include/kscope.h"
: >"$plant/CMakeLists.txt"
printf '/* CUDA in a comment */\nint use_cuda;\n' >"$plant/src/core/a.c"
printf 'const char *lib = "libroctx64.so"; // ROCm\nint sigprocmask_ok, ship;\n' >"$plant/src/core/b.c"
printf '"""Docstring: NVML."""\n# NVTX comment\nLIB = "libnvidia-ml" + "_nvml"\n' >"$plant/python/kscope/c.py"
printf '# CUPTI\nset(HIP_PATH x)\n' >"$plant/cmake/d.cmake"
planted=$(python3 "$src/test/layout_vendors.py" "$plant" | cut -d: -f1,2 | tr '\n' ' ')
[ "$planted" = "src/core/a.c:2 src/core/b.c:1 python/kscope/c.py:3 cmake/d.cmake:2 " ] ||
    fail "the vendor rule found '$planted' in the planted tree"
rm -rf "$plant"

hits=$(grep -rEn '#include "(diag|run|read|cli)/' src/core src/attrib src/trace src/sampled src/format src/profile)
[ -z "$hits" ] || fail "core, format or profile include a part that depends on them:
$hits"
grep -n '#include "core/' src/run/*.c src/run/preload/*.c && fail "run/ includes core's private headers"
# util/ is the bottom layer: every folder may use it, it uses none of them.
hits=$(grep -rEn '#include "' src/util | grep -v '#include "util/')
[ -z "$hits" ] || fail "util/ includes a header of another part:
$hits"

long=$(find src python/src test -name '*.[ch]' -print0 | xargs -0 wc -l |
    awk '$2 != "total" && $1 > 800 {print $2 " (" $1 " lines)"}')
[ -z "$long" ] || fail "source files over 800 lines: $long"

hits=$(grep -nEi '^[^#]*echo "skip[: ]' test/cli-*.sh |
    while IFS=: read -r f n _; do
        sed -n "$n,$((n + 3))p" "$f" | grep -q 'exit 77' || echo "$f:$n"
    done)
[ -z "$hits" ] || fail "shell tests that print a skip and pass (call skip, or exit 77):
$hits"

[ "$fails" -eq 0 ] || exit 1
echo "layout: all checks passed"
