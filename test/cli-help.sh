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

# no command: the overview on stderr, exit 2; -h/--help and -V/--version
# are help and version; a word that is no command is one line, exit 2.
rc=0
"$KS" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 2 ] && [ ! -s "$WORK/out" ] && grep -q "^usage: kscope <command>" "$WORK/err" &&
    ok "no command: usage on stderr, exit 2" || fail "no command: exit $rc, $(head -3 "$WORK/err")"
for flag in -h --help; do
    [ "$("$KS" $flag)" = "$("$KS" help)" ] || fail "kscope $flag is not kscope help"
done
for flag in -V --version; do
    v=$("$KS" $flag) && [ "$v" = "$("$KS" version)" ] && grep -q "^kscope [0-9]" <<<"$v" ||
        fail "kscope $flag: $v"
done
ok "-h, --help, -V, --version"
for args in "frobnicate" "help frobnicate"; do
    rc=0
    # shellcheck disable=SC2086
    err=$("$KS" $args 2>&1 >/dev/null) || rc=$?
    [ "$rc" = 2 ] && [ "$err" = "kscope: 'frobnicate' is not a command. See \`kscope help\`." ] ||
        fail "kscope $args: $err (exit $rc)"
done
ok "an unknown command: one line, exit 2"

for typed in profile record; do
    rc=0
    err=$("$KS" "$typed" -- true 2>&1) || rc=$?
    [ "$rc" = 2 ] && grep -q "Did you mean 'run'" <<<"$err" || fail "kscope $typed: $err (exit $rc)"
done
ok "profile and record suggest run"
finish
