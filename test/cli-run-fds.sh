# cli-run-fds.sh - `kscope run` leaves the program's descriptors alone and
# starts no thread in a process that needs none: byte-for-byte the bare
# run (test/faithful/fds.py says which cases).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
build run-fds $KLINK
export KS PYTHON BIN=$WORK
"$PY" -B "$KSCOPE_SOURCE_DIR/test/faithful/fds.py"
