#!/bin/bash
# cli-top-diff.sh - `kscope top` and `kscope diff`: golden output for every
# option, on Proton's files and on kscope-shaped files.
source "$(dirname "$0")/read-lib.sh"

golden top-kscope "$KS" top kscope/run_a.hatchet
golden top-limit "$KS" top -n 1 proton/rich_tree.hatchet
golden top-all "$KS" top --limit 0 proton/rich_trace.chrome_trace
golden top-proton-run "$KS" top proton/proton_run.hatchet
golden top-frames "$KS" top kscope/frames.hatchet
echo '[{"frame": {"name": "ROOT"}, "children": [{"frame": {"name": "host"}, "metrics": {"calls": 1}}]}, {}]' \
    >"$WORK/host-only.hatchet"
golden top-no-kernels "$KS" top "$WORK/host-only.hatchet"
golden top-color "$KS" top --color=always kscope/run_a.hatchet
golden diff-default "$KS" diff kscope/run_a.hatchet kscope/run_b.hatchet
golden diff-metric "$KS" diff -m count --all kscope/run_a.hatchet kscope/run_b.hatchet
golden diff-limit "$KS" diff -m time/us -n 3 proton/rich_tree.hatchet proton/rich_trace.chrome_trace
golden diff-same "$KS" diff proton/rich_tree.hatchet proton/rich_tree.hatchet
for c in top diff; do
    h1=$("$KS" help $c) && h2=$("$KS" $c --help) || fail "help $c exit status"
    [ "$h1" = "$h2" ] && ok "help $c == $c --help" || fail "$c help texts differ"
done
for opt in --limit --color; do
    grep -qF -- "$opt" <<<"$("$KS" help top)" && ok "top help: $opt" || fail "top help: $opt"
done
for opt in --metric --limit --all; do
    grep -qF -- "$opt" <<<"$("$KS" help diff)" && ok "diff help: $opt" || fail "diff help: $opt"
done
finish
