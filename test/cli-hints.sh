#!/bin/bash
# cli-hints.sh - the commands kscope prints for the user to type next:
# plain `kscope` when the first kscope on PATH is this binary (a link to it,
# or the wheel's Python launcher of it), else the binary's path, quoted for
# the shell when it must be; the launcher's variable never reaches a
# profiled program; and one quoting style for commands in messages and
# help texts (backquotes), never 'kscope ...'.
source "$(dirname "$0")/read-lib.sh"

W=$WORK
echo '[{"frame": {"name": "ROOT"}, "children": [{"frame": {"name": "host"}, "metrics": {"calls": 1}}]}, {}]' \
    >"$W/h.hatchet"
REAL=$(realpath "$KS")

# hint_of [PATH=...] BINARY: the command `kscope top` offers for a
# profile without GPU work ("<kscope> view h.hatchet")
hint_of() {
    (cd "$W" && "$@" top h.hatchet 2>&1 >/dev/null) |
        sed -n 's/^kscope top: no GPU work in this profile; its scopes: //p'
}
expect_hint() { # expect_hint WHAT WANT CMD...
    local what=$1 want=$2 got
    shift 2
    got=$(hint_of "$@")
    [ "$got" = "$want" ] && ok "$what: $got" || fail "$what: '$got', want '$want'"
}

mkdir -p "$W/onpath" "$W/other" "$W/my dir"
ln -s "$REAL" "$W/onpath/kscope"
printf '#!/bin/sh\necho another kscope\n' >"$W/other/kscope"
chmod +x "$W/other/kscope"
cp "$REAL" "$W/my dir/kscope"

expect_hint "off PATH: the binary's path" "$REAL view h.hatchet" env PATH=/usr/bin:/bin "$KS"
expect_hint "PATH's kscope links to it: plain kscope" "kscope view h.hatchet" \
    env PATH="$W/onpath:/usr/bin:/bin" "$KS"
expect_hint "another kscope first on PATH: the path" "$REAL view h.hatchet" \
    env PATH="$W/other:$W/onpath:/usr/bin:/bin" "$KS"
expect_hint "a path with a space: quoted" "'$W/my dir/kscope' view h.hatchet" \
    env PATH=/usr/bin:/bin "$W/my dir/kscope"

# The wheel's layout: the package's bin/kscope and the `kscope` launcher
# pip makes (a Python script calling kscope.cli:main), first on PATH.
mkdir -p "$W/site/kscope/bin" "$W/venv/bin"
cp "$KSCOPE_SOURCE_DIR/python/kscope/cli.py" "$W/site/kscope/cli.py"
ln -s "$REAL" "$W/site/kscope/bin/kscope"
cat >"$W/venv/bin/kscope" <<EOF
#!$(command -v "$PY")
import importlib.util, sys
spec = importlib.util.spec_from_file_location("kscope_cli", "$W/site/kscope/cli.py")
cli = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cli)
sys.exit(cli.main())
EOF
chmod +x "$W/venv/bin/kscope"
expect_hint "the wheel's launcher first on PATH: plain kscope" "kscope view h.hatchet" \
    env PATH="$W/venv/bin:/usr/bin:/bin" kscope
expect_hint "the wheel's binary run directly, launcher not on PATH: the path" \
    "$REAL view h.hatchet" env PATH=/usr/bin:/bin "$W/site/kscope/bin/kscope"
# the run summary, through the launcher: the command as the user types it
# (a sanitizer build's libkscope.so needs its runtime first in a process)
asan=()
if ldd "$KSCOPE_BINARY_DIR/libkscope.so" 2>/dev/null | grep -q libasan; then
    asan=(LD_PRELOAD="$(cc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0)
fi
mkdir -p "$W/r"
(cd "$W/r" && env "${asan[@]}" PATH="$W/venv/bin:/usr/bin:/bin" kscope run -- "$KSCOPE_BINARY_DIR/example" x) \
    >/dev/null 2>"$W/run.err"
grep -qx "view it with: kscope view kscope.hatchet" "$W/run.err" &&
    ok "the run summary through the launcher says plain kscope" ||
    fail "the run summary through the launcher: $(grep 'view it' "$W/run.err")"
got=$(env "${asan[@]}" PATH="$W/venv/bin:/usr/bin:/bin" kscope run -b none -- sh -c 'echo "${KSCOPE_LAUNCHER-unset}"' 2>/dev/null)
[ "$got" = unset ] && ok "the launcher's variable does not reach the program" ||
    fail "the program sees KSCOPE_LAUNCHER=$got"

# One quoting style: commands in backquotes, never in single quotes.
src=$KSCOPE_SOURCE_DIR
hits=$(grep -rnE "'kscope [a-z-]+[^']*'" "$src/src" "$src/python/kscope" --include=*.c --include=*.h \
    --include=*.py | grep -v '^.*src/report/page/' || true)
[ -z "$hits" ] && ok "no command quoted 'kscope ...' in the sources" ||
    fail "commands in single quotes (use backquotes): $hits"
quoted=""
for cmd in "" $("$KS" help | sed -n 's/^  \([a-z]*\) .*/\1/p'); do
    "$KS" help $cmd | grep -qE "'kscope [a-z-]+[^']*'" && quoted="$quoted ${cmd:-(overview)}"
done
[ -z "$quoted" ] && ok "no help text quotes a command in single quotes" ||
    fail "help texts quoting a command in single quotes:$quoted"
finish
