# check-lib.sh - what the shell tests' helper libraries share (sourced by
# run-lib.sh, monitor-lib.sh and read-lib.sh, which a test sources in
# turn, or by a test itself): the kscope command and the checks' Python,
# "ok:" and "FAIL:" lines with a count of the failures, the reasons for
# skipped parts, and finish, which ends the test with its exit status.
# Needs KSCOPE_CLI.
#
#   fail WHAT / ok WHAT / skip REASON ... finish

KS=${KSCOPE_CLI:?}
# The Python for checks and helpers: CTest's KSCOPE_PYTHON (the venv
# tools/test.sh makes), else python3; used with the standard library only
# unless the venv is there.
PY=${KSCOPE_PYTHON:-python3}
FAILS=0

fail() {
    echo "FAIL: $*" >&2
    FAILS=$((FAILS + 1))
}

ok() {
    echo "ok: $*"
}

# skip REASON: a part this machine cannot run; the test then ends as
# skipped (exit 77, CTest's "Skipped") with every reason, unless one failed.
SKIPS=()
skip() {
    echo "skip: $*"
    SKIPS+=("$*")
}

# finish: exit 1 when a check failed, else 77 when a part was skipped,
# else 0 after "all checks passed".
finish() {
    if [ "$FAILS" -ne 0 ]; then
        echo "$FAILS check(s) failed" >&2
        exit 1
    fi
    if [ ${#SKIPS[@]} -ne 0 ]; then
        printf 'SKIPPED (the rest passed): %s\n' "${SKIPS[@]}"
        exit 77
    fi
    echo "all checks passed"
}
