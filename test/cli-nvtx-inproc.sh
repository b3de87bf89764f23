# cli-nvtx-inproc.sh - NVTX ranges as scopes without kscope run: a program
# linked with libkscope.so calls kscope_nvtx_ranges(1) before NVTX's first
# call (NVTX_INJECTION64_PATH is set to libkscope.so, already loaded);
# kscope_nvtx_ranges(0) has ranges ignored; another tool's injection and
# a static link are refused with one line each.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
NVTX_INC=${CUDA_HOME:-/usr/local/cuda}/include
if [ ! -f "$NVTX_INC/nvtx3/nvToolsExt.h" ]; then
    echo "SKIP: nvtx3 headers not found in $NVTX_INC (set CUDA_HOME)"
    exit 77
fi
build nvtx-inproc -I"$NVTX_INC" $KLINK -ldl
cd "$WORK"
unset NVTX_INJECTION64_PATH KSCOPE_RUN

./nvtx-inproc on >out.txt 2>err.txt || fail "on: exit $?: $(cat err.txt)"
grep -qx "kscope_nvtx_ranges: 0" out.txt || fail "on: $(cat out.txt)"
[ "$(parent_of nvtx-inproc.hatchet outer)" = program ] || fail "on: outer not under program"
[ "$(parent_of nvtx-inproc.hatchet inner)" = outer ] || fail "on: inner not under outer"
[ "$(parent_of nvtx-inproc.hatchet mark)" = inner ] || fail "on: mark not under inner"
ok "ranges on: NVTX ranges are scopes in-process"

./nvtx-inproc off >out.txt 2>err.txt || fail "off: exit $?: $(cat err.txt)"
has nvtx-inproc.hatchet program || fail "off: the program's scope is missing"
! has nvtx-inproc.hatchet outer || fail "off: NVTX range recorded"
! has nvtx-inproc.hatchet mark || fail "off: NVTX mark recorded"
ok "ranges off: ignored"

./nvtx-inproc mixed >out.txt 2>err.txt || fail "mixed: exit $?: $(cat err.txt)"
for n in outer again again-inner; do
    [ -n "$(parent_of nvtx-inproc.hatchet "$n")" ] || fail "mixed: $n missing"
done
[ "$(parent_of nvtx-inproc.hatchet again)" = program ] ||
    fail "mixed: a pop made while off closed another range (again under $(parent_of nvtx-inproc.hatchet again))"
for n in hidden hidden-inner hidden-start; do
    ! has nvtx-inproc.hatchet "$n" || fail "mixed: $n recorded while off"
done
ok "ranges switched off and on again"

NVTX_INJECTION64_PATH=/opt/other-tool/libinject.so ./nvtx-inproc on >out.txt 2>err.txt ||
    fail "other tool: exit $?"
grep -q "kscope_nvtx_ranges: -[0-9]* NVTX ranges: NVTX_INJECTION64_PATH names another tool (/opt/other-tool/libinject.so)" out.txt ||
    fail "other tool: $(cat out.txt)"
ok "another tool's NVTX injection is refused with one line"

build nvtx-inproc -I"$NVTX_INC" $KSTATIC
./nvtx-inproc on >out.txt 2>err.txt || fail "static: exit $?"
grep -q "kscope_nvtx_ranges: -[0-9]* NVTX ranges: kscope is linked into the program itself" out.txt ||
    fail "static: $(cat out.txt)"
ok "a static link is refused with one line"
finish
