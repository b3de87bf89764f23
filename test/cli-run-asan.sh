# cli-run-asan.sh - a program built with -fsanitize=address runs under
# `kscope run` as it does bare (its sanitizer runtime is preloaded before
# libkscope), and its children do not inherit that runtime in LD_PRELOAD.
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
cd "$WORK"
if ! cc -fsanitize=address -g -o run-asan "$PROGS/run-asan.c" 2>cc.err; then
    echo "skip: cc cannot build with -fsanitize=address here: $(head -1 cc.err)"
    exit 77
fi
./run-asan >/dev/null 2>&1
if [ $? -ne 3 ]; then
    echo "skip: a -fsanitize=address program does not run here: $(./run-asan 2>&1 | head -1)"
    exit 77
fi
export KS PYTHON BIN=$WORK
"$PY" -B - <<'PY'
import os, sys
sys.path.insert(0, os.path.join(os.environ["KSCOPE_SOURCE_DIR"], "test", "faithful"))
from same_run import cleanup, finish, same_both
same_both("an AddressSanitizer program", [os.path.join(os.environ["BIN"], "run-asan")])
cleanup()
finish()
PY
