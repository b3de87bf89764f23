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
# a profile without GPU work: said on stdout, and on stderr the command
# that shows its scopes, as the user types it (kscope on PATH here)
rc=0
(cd "$WORK" && PATH=$(dirname "$KS"):$PATH "$KS" top host-only.hatchet) >"$WORK/nk.out" \
    2>"$WORK/nk.err" || rc=$?
[ $rc = 0 ] && [ "$(cat "$WORK/nk.out")" = "no GPU kernels or copies in this profile" ] &&
    [ "$(cat "$WORK/nk.err")" = "kscope top: no GPU work in this profile; its scopes: kscope view host-only.hatchet" ] &&
    ok "top-no-kernels: says so, points at kscope view" ||
    fail "top-no-kernels: exit $rc, stdout $(cat "$WORK/nk.out"), stderr $(cat "$WORK/nk.err")"
golden top-color "$KS" top --color=always kscope/run_a.hatchet
golden diff-default "$KS" diff kscope/run_a.hatchet kscope/run_b.hatchet
golden diff-metric "$KS" diff -m count --all kscope/run_a.hatchet kscope/run_b.hatchet
golden diff-limit "$KS" diff -m time/us -n 3 proton/rich_tree.hatchet proton/rich_trace.chrome_trace
golden diff-same "$KS" diff proton/rich_tree.hatchet proton/rich_tree.hatchet
# Proton keeps kernel names mangled, kscope's recorder demangles them
# (kscope/torch.hatchet: test/progs/viewer-files.c): the readers demangle, so
# the kernel pairs up in diff and merge
golden diff-proton-kscope "$KS" diff proton/proton_run.hatchet kscope/torch.hatchet
"$KS" merge -o "$WORK/pk.hatchet" "$DATA/proton/proton_run.hatchet" "$DATA/kscope/torch.hatchet"
golden merge-proton-kscope "$KS" view --full-names -m time/us,count "$WORK/pk.hatchet"
# long kernel names: folded in top and view tables, whole with --full-names
"$PY" - "$WORK" <<'PY'
import json, sys
tmpl = "void gemm<cutlass::GemmShape<64, 64, 32>, Epilogue<float, 8>, " + "x" * 300 + ">(Params<int>::type, int)"
plain = "k" * 150  # nothing to fold: kept whole
kernels = [{"frame": {"name": n, "type": "function"}, "children": [],
            "metrics": {"time (ns)": t, "count": 1, "device_id": "0", "device_type": "CUDA"}}
           for n, t in ((tmpl, 2000), (plain, 1000))]
doc = [{"frame": {"name": "ROOT", "type": "function"}, "metrics": {"time (ns)": 0, "count": 0},
        "children": [{"frame": {"name": "step/" + "h" * 120, "type": "function"},
                      "metrics": {"calls": 1}, "children": kernels}]}, {}]
json.dump(doc, open(sys.argv[1] + "/long.hatchet", "w"))
open(sys.argv[1] + "/tmpl.txt", "w").write(tmpl)
PY
tmpl=$(cat "$WORK/tmpl.txt")
out=$("$KS" top "$WORK/long.hatchet")
grep -q '  void gemm<...>(...)$' <<<"$out" && grep -q "  $(printf 'k%.0s' {1..150})$" <<<"$out" &&
    ok "top folds long names" || fail "top long names: $out"
out=$("$KS" view "$WORK/long.hatchet")
grep -q '─ void gemm<...>(...)$' <<<"$out" && grep -q "step/$(printf 'h%.0s' {1..120})$" <<<"$out" &&
    ok "view folds long kernel names, keeps host frames" || fail "view long names: $out"
for c in top view; do
    "$KS" $c --full-names "$WORK/long.hatchet" | grep -qF -- "$tmpl" && ok "$c --full-names" ||
        fail "$c --full-names does not show the name whole"
done
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
