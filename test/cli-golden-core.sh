#!/usr/bin/env bash
# Golden files for the writers: the bundled example's tree (.hatchet and
# .hatchet_msgpack) and trace, and a trace `kscope merge` writes from fixed
# inputs, normalized by test/support/normalize.py (host times of trees
# zeroed; a live trace's times kept as their order, so the golden holds the
# order and nesting of its events; the merged trace's times exact).
# normalize.py reads .hatchet_msgpack with msgpack: it runs with the tests'
# Python (KSCOPE_PYTHON, the venv tools/test.sh makes), never the system's.
# What the example prints is checked too: its own line on stdout (kscope
# writes nothing there), and on stderr kscope's notes only, none with
# KSCOPE_QUIET=1. proton-viewer's view of these goldens:
# python/tests/test_peer_viewer.py.
# KSCOPE_UPDATE_GOLDEN=1 rewrites the golden files.
set -euo pipefail
src=${KSCOPE_SOURCE_DIR:?}
bin=${KSCOPE_BINARY_DIR:?}
ks=${KSCOPE_CLI:?}
PY=${KSCOPE_PYTHON:-python3} # CTest gives the tests' venv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() { # name file [normalize.py options]
    local golden=$src/test/golden/$1 file=$2
    shift 2
    "$PY" "$src/test/support/normalize.py" "$@" "$file" >"$work/$(basename "$golden")"
    if [ "${KSCOPE_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$work/$(basename "$golden")" "$golden"
    fi
    diff -u "$golden" "$work/$(basename "$golden")"
}
# example ARGS...: run it quietly; its stdout is its own line, stderr empty
example() {
    KSCOPE_QUIET=1 "$bin/example" "$@" >"$work/out" 2>"$work/err"
    grep -qx 'example: done (checksum [0-9.]*)' "$work/out" || {
        echo "FAIL: example $*: stdout is not its own line alone:"
        cat "$work/out"
        exit 1
    }
    [ ! -s "$work/err" ] || {
        echo "FAIL: example $*: KSCOPE_QUIET=1 but stderr holds:"
        cat "$work/err"
        exit 1
    }
}
example "$work/tree" tree
example "$work/tree" tree hatchet_msgpack
example "$work/trace" trace
check example.hatchet.json "$work/tree.hatchet"
check example.hatchet.json "$work/tree.hatchet_msgpack"
check example.chrome_trace.json "$work/trace.chrome_trace"
# without KSCOPE_QUIET, every line kscope adds on stderr is a note of its own
"$bin/example" "$work/loud" >/dev/null 2>"$work/err"
if grep -v '^kscope: ' "$work/err"; then
    echo "FAIL: the example's stderr holds lines that are no kscope note"
    exit 1
fi
# relative paths: process names hold them, and the golden must not hold
# where the checkout is
(cd "$src" && "$ks" merge -o "$work/merged.chrome_trace" test/data/proton/rich_trace.chrome_trace \
    test/data/kscope/trace_host.json) 2>"$work/err"
[ "$(wc -l <"$work/err")" = 1 ] && grep -qx "kscope merge: wrote $work/merged.chrome_trace (.*)" "$work/err" ||
    { echo "FAIL: merge printed on stderr more than what it wrote: $(cat "$work/err")"; exit 1; }
check merged.chrome_trace.json "$work/merged.chrome_trace" --times exact
echo "golden: 4 outputs match, stdout and stderr as promised"
