#!/usr/bin/env bash
# cli-empty.sh - one rule for empty profiles: a run that recorded nothing
# (KSCOPE_PROFILING=off, the last part of a periodic session after its last
# flush) still writes a valid file, and every reading command takes it:
# `view` shows a bare ROOT and exits 0 (any -m column empty), `diff` compares it (no differences
# with another empty one), `top` and `report` say there is nothing. `diff`
# on CPU-only profiles picks the metric `view` picks (wall_time).
# (`python -m kscope` on an unannotated script: python/tests/test_launcher.py.)
source "${KSCOPE_SOURCE_DIR:?}/test/read-lib.sh" || exit 1
bin=${KSCOPE_BINARY_DIR:?}
cd "$WORK"
export KSCOPE_QUIET=1
san=()
ldd "$bin/libkscope.so" | grep libasan >/dev/null && san=(-fsanitize=address,undefined)

# empty_view FILE: a bare ROOT, exit 0
empty_view() {
    local out rc=0
    out=$("$KS" view "$1" 2>&1) || rc=$?
    [ "$rc" = 0 ] && [ "$(tail -1 <<<"$out")" = ROOT ] && [ "$(wc -l <<<"$out")" = 2 ] ||
        fail "view $1: exit $rc: $out"
}

KSCOPE_PROFILING=off "$bin/example" off >/dev/null
empty_view off.hatchet
"$KS" convert off.hatchet off.hatchet_msgpack && empty_view off.hatchet_msgpack
out=$("$KS" view -m wall_time/ms -m calls off.hatchet) &&
    [ "$(tail -1 <<<"$out" | tr -s ' ')" = " - - ROOT" ] || fail "view -m of an empty profile: $out"
ok "KSCOPE_PROFILING=off: an empty profile that view shows as ROOT, with or without -m"

cat >periodic.c <<'C'
/* One phase flushed, then nothing before finalize: the last part is empty. */
#include <kscope.h>
int main(void)
{
    kscope_session_opts o = {.name = "per", .mode = "periodic_flushing"};
    int s = kscope_start(&o);
    kscope_enter("phase0");
    kscope_exit("phase0");
    kscope_deactivate(s, 1);
    kscope_activate(s);
    return kscope_finalize(s, NULL) < 0;
}
C
cc "${san[@]}" -o periodic periodic.c -I"$KSCOPE_SOURCE_DIR/include" -L"$bin" -Wl,-rpath,"$bin" -lkscope
./periodic || fail "periodic program failed"
parts=$(ls per.part_*.hatchet 2>/dev/null | sort -V)
[ "$(wc -w <<<"$parts")" -ge 2 ] || fail "expected at least two parts: $(ls)"
last=$(tail -1 <<<"$parts")
empty_view "$last"
"$KS" view "$(head -1 <<<"$parts")" | grep -q phase0 || fail "first part lacks phase0"
ok "periodic session: the empty last part shows as ROOT"

out=$("$KS" diff off.hatchet "$last") && grep -q "(no differences)" <<<"$out" ||
    fail "diff of two empty profiles: $out"
out=$("$KS" top off.hatchet) && grep -q "no GPU kernels" <<<"$out" || fail "top of empty: $out"
"$KS" report off.hatchet >/dev/null || fail "report of an empty profile"
ok "diff, top and report take empty profiles"

"$bin/example" a >/dev/null && "$bin/example" b >/dev/null
out=$("$KS" diff a.hatchet b.hatchet 2>&1) && grep -q "^metric: wall_time/ms" <<<"$out" ||
    fail "diff of CPU-only profiles does not pick wall_time: $out"
ok "diff of CPU-only profiles compares wall_time, as view shows"
finish
