# cli-run-parent.sh - `kscope run` passes every signal sent to it to the
# program once, ends by the signal the program died of, stops and continues
# with it, and never leaves it behind (test/faithful/parent.py says which
# cases).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-sig $KLINK -lpthread
export KS BIN=$WORK
"$PY" -B "$KSCOPE_SOURCE_DIR/test/faithful/parent.py"
