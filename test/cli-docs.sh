#!/usr/bin/env bash
# The documentation's promises (test/docs_check.py has each rule): README.md
# at most 400 lines with a "Quick start" heading in its first 60 and the two
# set-up commands (tools/demo.sh, tools/test.sh) verbatim at its top, every
# docs/*.md page in its table of contents, and every relative link of
# README.md, python/README.md and docs/*.md naming a file that exists and,
# into a Markdown file, one of its headings. Then each rule is broken in a
# copy of the pages, to show that the check fails on it. Last, the README's
# C quick start: the bundled example and `kscope view` print what it shows,
# times aside (the Python quick start: python/tests/test_readme_examples.py).
set -uo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
cli=${KSCOPE_CLI:?}
py=${KSCOPE_PYTHON:-python3}
check=$src/test/docs_check.py
fails=0
fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

"$py" "$check" "$src" || fail "the documentation breaks its rules (lines above)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy() {
    rm -rf "$tmp/s" && mkdir -p "$tmp/s/python" "$tmp/s/tools"
    cp -r "$src/docs" "$tmp/s/docs"
    cp -r "$src/examples" "$tmp/s/examples"
    cp "$src/README.md" "$tmp/s/"
    cp "$src/python/README.md" "$tmp/s/python/"
    cp "$src/tools/demo.sh" "$src/tools/test.sh" "$tmp/s/tools/"
}
# expect WHAT PATTERN: the check fails on the copy, naming PATTERN
expect() {
    local out
    if out=$("$py" "$check" "$tmp/s" 2>&1); then
        fail "$1: the check passes"
    elif ! grep -q -- "$2" <<<"$out"; then
        fail "$1: the check does not say '$2': $out"
    fi
}

copy
"$py" "$check" "$tmp/s" || fail "a copy of the pages breaks the rules"

copy
yes 'padding' | head -400 >>"$tmp/s/README.md"
expect "a README of over 400 lines" "more than 400"

copy
awk 'NR == 10 { for (i = 0; i < 60; i++) print "" } { print }' "$src/README.md" >"$tmp/s/README.md"
expect "Quick start moved below line 60" "Quick start"

copy
grep -v '^bash tools/test.sh ' "$src/README.md" >"$tmp/s/README.md"
expect "the test command gone from the top" "lose the set-up command: bash tools/test.sh"

copy
rm "$tmp/s/tools/demo.sh"
expect "a set-up command naming a missing script" "names tools/demo.sh"

copy
echo "[new](docs/new.md)" >"$tmp/s/docs/new.md"
sed -i '/docs\/new.md/d' "$tmp/s/README.md"
expect "a docs page not in the README's contents" "docs/new.md is not in its table of contents"

copy
echo "See [nowhere](cli.md#no-such-heading)." >>"$tmp/s/docs/gpu.md"
expect "a link to a missing anchor" "docs/gpu.md:.*missing anchor: cli.md#no-such-heading"

copy
echo "See [the GPU](../README.md#gpu)." >>"$tmp/s/python/README.md"
expect "a link to a README anchor that moved" "python/README.md:.*missing anchor: ../README.md#gpu"

copy
echo "See [gone](docs/gone.md)." >>"$tmp/s/README.md"
expect "a link to a missing file" "README.md:.*missing file: docs/gone.md"

mkdir "$tmp/c"
cmd='./example && kscope view -m wall_time/ms -m calls -m tokens example.hatchet'
if want=$("$py" "$check" --shown "$src" "$cmd"); then
    got=$(cd "$tmp/c" && KSCOPE_QUIET=1 "$bin/example" && "$cli" view -m wall_time/ms -m calls -m tokens example.hatchet)
    got=$("$py" "$check" --mask <<<"$got")
    [ "$got" = "$want" ] || fail "README's C quick start: \`$cmd\` prints
$got
where the README shows
$want"
else
    fail "README's C quick start: no \`$ $cmd\`"
fi

[ "$fails" -eq 0 ] || exit 1
echo "cli-docs: ok"
