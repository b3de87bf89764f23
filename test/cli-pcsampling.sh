#!/bin/bash
# cli-pcsampling.sh - PC sampling on the command line, without a GPU:
# `kscope top --lines` and `kscope view --lines` (golden output on a
# profile with samples; a clear error on one without), the sample metrics
# in `kscope view`, and `kscope run --pc-sampling[=N]`: the mode it passes
# to the program, and every bad value or combination refused with exit 2.
source "$(dirname "$0")/read-lib.sh"

golden top-lines "$KS" top --lines kscope/pcsampling.hatchet
golden top-lines-limit "$KS" top --lines -n 1 kscope/pcsampling.hatchet
golden view-lines "$KS" view --lines kscope/pcsampling.hatchet
golden view-samples "$KS" view -m num_samples,stalled_long_scoreboard kscope/pcsampling.hatchet
# Proton's PC-sampling frames name the kernel mangled ("file:line@_Z...",
# "_Z...+0xOFFSET"): read demangled, so diff and merge pair them with
# kscope's, and the merged lines add up.
golden diff-lines "$KS" diff -m num_samples kscope/pcsampling.hatchet proton/pcsampling.hatchet
golden merge-lines sh -c "'$KS' merge -o '$WORK/merged-pcs.hatchet' kscope/pcsampling.hatchet \
    proton/pcsampling.hatchet >/dev/null 2>&1 && '$KS' view --lines '$WORK/merged-pcs.hatchet'"
bad top-lines-none "has no PC samples (record with \`kscope run --pc-sampling\`)" \
    "$KS" top --lines kscope/run_a.hatchet
bad view-lines-none "has no PC samples" "$KS" view --lines kscope/run_a.hatchet

# kscope run: the option becomes the session's mode, checked before the
# command starts.
# (A sanitizer build's libkscope.so needs its runtime preloaded first, as
# in run-lib.sh.)
RUN=$KS
if ldd "$(dirname "$KS")/libkscope.so" 2>/dev/null | grep libasan >/dev/null; then
    export ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
    printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$(cc -print-file-name=libasan.so)" "$KS" \
        >"$WORK/ks"
    chmod +x "$WORK/ks"
    RUN=$WORK/ks
fi
out=$(cd "$WORK" && "$RUN" run --pc-sampling -- sh -c 'echo "mode=$KSCOPE_RUN_MODE"' 2>/dev/null)
[ "$out" = "mode=pcsampling" ] && ok "--pc-sampling: default interval" || fail "--pc-sampling: $out"
out=$(cd "$WORK" && "$RUN" run --pc-sampling=2048 -- sh -c 'echo "mode=$KSCOPE_RUN_MODE"' 2>/dev/null)
[ "$out" = "mode=pcsampling:interval=2048" ] && ok "--pc-sampling=2048" || fail "--pc-sampling=N: $out"
out=$(cd "$WORK" && "$RUN" run -m pc_sampling:interval=64 -- sh -c 'echo "mode=$KSCOPE_RUN_MODE"' 2>/dev/null)
[ "$out" = "mode=pc_sampling:interval=64" ] && ok "-m pc_sampling:interval=64" || fail "-m: $out"
bad run-pcs-word "--pc-sampling: 'abc' is not a number of cycles from 32 to 2147483648" \
    "$KS" run --pc-sampling=abc -- true
bad run-pcs-small "'16' is not a number of cycles" "$KS" run --pc-sampling=16 -- true
bad run-pcs-empty "'' is not a number of cycles" "$KS" run --pc-sampling= -- true
bad run-pcs-mode "--pc-sampling and --mode periodic_flushing cannot be combined" \
    "$KS" run --pc-sampling -m periodic_flushing -- true
bad run-pcs-trace "PC sampling records into a tree: leave out -d trace" \
    "$KS" run --pc-sampling -d trace -- true
bad run-mode-option "unknown option 'every=3' (pcsampling takes interval=CYCLES)" \
    "$KS" run -m pcsampling:every=3 -- true
bad run-mode-bad "mode 'bogus' is not periodic_flushing or pcsampling" "$KS" run -m bogus -- true
for opt in --pc-sampling pcsampling; do
    grep -qF -- "$opt" <<<"$("$KS" help run)" && ok "run help: $opt" || fail "run help: $opt"
done
grep -qF -- "--lines" <<<"$("$KS" help top)" && ok "top help: --lines" || fail "top help: --lines"
grep -qF -- "--lines" <<<"$("$KS" help view)" && ok "view help: --lines" || fail "view help: --lines"
finish
