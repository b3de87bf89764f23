#!/usr/bin/env bash
# cli-help.sh - every command's help: `kscope help CMD` and `kscope CMD
# --help` print the same text, starting with its usage line, and no text
# holds a printf directive (`%%`, `%s`, `%d`, ...) printed literally. The
# commands other tools name (nsys profile, perf record) point at `run`.
source "${KSCOPE_SOURCE_DIR:?}/test/read-lib.sh" || exit 1
cmds=$("$KS" help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
[ "$(wc -w <<<"$cmds")" -ge 10 ] || fail "kscope help lists too few commands: $cmds"
for c in $cmds; do
    h1=$("$KS" help "$c") || fail "kscope help $c: exit status"
    [ "$c" = help ] || { h2=$("$KS" "$c" --help) || fail "kscope $c --help: exit status"; }
    [ "$c" = help ] || [ "$h1" = "$h2" ] || fail "kscope help $c and kscope $c --help differ"
    grep -q "^usage: kscope $c" <<<"$h1" || fail "help $c: no usage line"
    stray=$(grep -nE '%%|%[-0-9.]*(s|d|l|z|u|g|f|c|x)\b' <<<"$h1")
    [ -z "$stray" ] || fail "help $c: stray format directive: $stray"
done
ok "help texts of: $(tr '\n' ' ' <<<"$cmds")"

for typed in profile record; do
    rc=0
    err=$("$KS" "$typed" -- true 2>&1) || rc=$?
    [ "$rc" = 2 ] && grep -q "Did you mean 'run'" <<<"$err" || fail "kscope $typed: $err (exit $rc)"
done
ok "profile and record suggest run"
finish
