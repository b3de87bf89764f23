# cli-run-sig-py.sh - a Python program's signals under `kscope run` are byte
# for byte what they are bare (test/faithful/sig_py.py says which cases).
source "${KSCOPE_SOURCE_DIR:?}/test/run-lib.sh" || exit 1
export KS PYTHON
"$PY" -B "$KSCOPE_SOURCE_DIR/test/faithful/sig_py.py"
