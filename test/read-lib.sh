# read-lib.sh - helpers shared by the shell tests of the reading commands
# (view, top, diff, merge, convert); sourced. Needs KSCOPE_SOURCE_DIR and
# KSCOPE_CLI from CTest. KSCOPE_UPDATE_GOLDEN=1 rewrites the golden files
# instead of comparing (review the diff before committing them).
set -u
: "${KSCOPE_SOURCE_DIR:?}" "${KSCOPE_CLI:?}"

source "$KSCOPE_SOURCE_DIR/test/check-lib.sh"
DATA=$KSCOPE_SOURCE_DIR/test/data
GOLDEN=$KSCOPE_SOURCE_DIR/test/golden/read
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kscope-read-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# golden NAME CMD...: CMD's stdout, exit status and stderr must equal
# test/golden/read/NAME.txt (paths under the data folder print as "DATA");
# stderr is part of what a command promises (nothing, on success), so its
# lines follow the exit status, each prefixed "stderr: ".
golden() {
    local name=$1
    shift
    local out=$WORK/$name.out rc=0
    (cd "$DATA" && "$@") >"$out" 2>"$WORK/$name.err" || rc=$?
    echo "exit $rc" >>"$out"
    sed 's/^/stderr: /' "$WORK/$name.err" >>"$out"
    if [ "${KSCOPE_UPDATE_GOLDEN:-0}" = 1 ]; then
        mkdir -p "$GOLDEN"
        cp "$out" "$GOLDEN/$name.txt"
        ok "$name (golden written)"
    elif ! diff -u "$GOLDEN/$name.txt" "$out" >"$WORK/$name.diff" 2>&1; then
        fail "$name differs from its golden file:"
        head -40 "$WORK/$name.diff" >&2
    else
        ok "$name"
    fi
}

# bad NAME WANT CMD...: CMD must exit 2 with exactly one line on stderr
# containing WANT, and print nothing on stdout.
bad() {
    local name=$1 want=$2
    shift 2
    local rc=0
    (cd "$DATA" && "$@") >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    local lines
    lines=$(wc -l <"$WORK/$name.err")
    if [ "$rc" != 2 ]; then
        fail "$name: exit $rc, want 2 (stderr: $(head -c 300 "$WORK/$name.err"))"
    elif [ "$lines" != 1 ]; then
        fail "$name: $lines lines on stderr, want 1: $(head -c 300 "$WORK/$name.err")"
    elif ! grep -qF -- "$want" "$WORK/$name.err"; then
        fail "$name: stderr '$(cat "$WORK/$name.err")' does not mention '$want'"
    elif [ -s "$WORK/$name.out" ]; then
        fail "$name: printed on stdout: $(head -c 200 "$WORK/$name.out")"
    else
        ok "$name: $(cat "$WORK/$name.err")"
    fi
}
