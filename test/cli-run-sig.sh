# cli-run-sig.sh - a C program's signals under `kscope run` are byte for
# byte what they are bare (test/faithful/sig_c.py says which cases).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-sig $KLINK -lpthread
build run-stuck $KLINK -lpthread
export KS BIN=$WORK
"$PY" -B "$KSCOPE_SOURCE_DIR/test/faithful/sig_c.py"
