# monitor-lib.sh - helpers for the `kscope monitor` and `kscope pids`
# shell tests (sourced). Needs KSCOPE_SOURCE_DIR, KSCOPE_BINARY_DIR and
# KSCOPE_CLI from CTest.
set -u
: "${KSCOPE_SOURCE_DIR:?}" "${KSCOPE_BINARY_DIR:?}" "${KSCOPE_CLI:?}"

source "$KSCOPE_SOURCE_DIR/test/check-lib.sh"
FAKE_NVML=$KSCOPE_BINARY_DIR/test/libkscope_fake_nvml.so
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kscope-monitor-test.XXXXXX")
BG_PIDS=""
cleanup() {
    for p in $BG_PIDS; do { kill -9 "$p" && wait "$p"; } 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
# Keep the host's NVML and ROCm SMI out of the way unless a test asks for one.
export KSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
export KSCOPE_ROCM_SMI_LIBRARY=/nonexistent/librocm_smi64.so

# expect_rc WANT DESCRIPTION CMD...: run CMD, compare its exit status.
expect_rc() {
    local want=$1 what=$2
    shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok "$what (exit $rc)"; else
        fail "$what: exit $rc, expected $want; stderr: $(cat "$WORK/err")"
    fi
}

# expect_err TEXT DESCRIPTION: the last command's stderr holds TEXT.
expect_err() {
    if grep -qF -- "$1" "$WORK/err"; then ok "$2"; else
        fail "$2: stderr lacks '$1': $(cat "$WORK/err")"
    fi
}

# A TCP server on loopback (family 4 or 6) with one child; prints
# "PORT SERVER_PID CHILD_PID" into the file $2 once listening.
start_server() {
    local family=$1 out=$2
    "$PY" -c '
import os, socket, sys, time
fam = socket.AF_INET if sys.argv[1] == "4" else socket.AF_INET6
s = socket.socket(fam, socket.SOCK_STREAM)
s.bind(("127.0.0.1" if sys.argv[1] == "4" else "::1", 0))
s.listen(4)
child = os.fork()
if child == 0:
    s.close()
    time.sleep(120)
    os._exit(0)
with open(sys.argv[2] + ".tmp", "w") as f:
    f.write("%d %d %d\n" % (s.getsockname()[1], os.getpid(), child))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
time.sleep(120)
' "$family" "$out" &
    BG_PIDS="$BG_PIDS $!"
    for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.05; done
    [ -s "$out" ] || return 1
    BG_PIDS="$BG_PIDS $(cut -d' ' -f3 "$out")"
}

# A process busy on one core (until killed), or an idle one; pid into $!.
start_busy() {
    "$PY" -c 'while True: pass' &
    BG_PIDS="$BG_PIDS $!"
}
start_idle() {
    sleep 120 &
    BG_PIDS="$BG_PIDS $!"
}
