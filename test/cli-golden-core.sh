#!/usr/bin/env bash
# Golden files for the writers: the bundled example's tree (.hatchet and
# .hatchet_msgpack) and trace, with run-to-run values (times, ids) zeroed.
# KSCOPE_UPDATE_GOLDEN=1 rewrites the golden files.
set -euo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
norm() { python3 "$src/test/support/normalize.py" "$1"; }
check() { # name file
    local golden=$src/test/golden/$1
    norm "$2" >"$work/$1"
    if [ "${KSCOPE_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$work/$1" "$golden"
    fi
    diff -u "$golden" "$work/$1"
}
"$bin/example" "$work/tree" tree >/dev/null
"$bin/example" "$work/tree" tree hatchet_msgpack >/dev/null
"$bin/example" "$work/trace" trace >/dev/null
check example.hatchet.json "$work/tree.hatchet"
check example.hatchet.json "$work/tree.hatchet_msgpack"
check example.chrome_trace.json "$work/trace.chrome_trace"
echo "golden: 3 outputs match"
